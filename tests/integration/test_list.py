"""`sparkprof list`: the JVMs on this node with their user, JDK, helper state,
frame-pointer flag, main class and, for Spark executors, app and executor ids.

Real JVMs on JDK 17 and the newest JDK, started by the test, checked against
what the test knows about them.
"""
import json
import os
import subprocess
import zipfile

import pytest

# Helpers and fixtures shared with the attach tests.
from test_attach import JDKS, Jvm, compile_probe, ns_pid  # noqa: F401
from test_attach import java_classes, jvms, work_dir  # noqa: F401 (fixtures)


def run_list(sparkprof_bin, *args):
    r = subprocess.run([sparkprof_bin, "list", *args], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return r


def table_rows(out):
    lines = out.splitlines()
    header = lines[0].split()
    assert header == ["PID", "USER", "JDK", "HELPER", "FP", "WALK", "APP", "EXECUTOR", "MAIN"], lines[0]
    rows = {}
    for line in lines[1:]:
        if not line:
            break  # then the Python processes no JVM started
        if line.startswith("  "):
            continue  # a Python process under the JVM above
        cols = line.split(None, len(header) - 1)
        rows[int(cols[0])] = dict(zip(header, cols))
    return rows


def json_rows(sparkprof_bin):
    r = run_list(sparkprof_bin, "--json")
    data = json.loads(r.stdout)
    assert isinstance(data, list)
    return {j["pid"]: j for j in data}


def make_jar(java_classes, work_dir):
    """A runnable jar whose Main-Class is Idle."""
    jar = os.path.join(work_dir, "idle-app.jar")
    with zipfile.ZipFile(jar, "w") as z:
        z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nMain-Class: Idle\n\n")
        z.write(os.path.join(java_classes, "Idle.class"), "Idle.class")
    os.chmod(jar, 0o644)
    return jar


def test_list_shows_jvms(jdks, newest_jdk, java_classes, work_dir, jvms, sparkprof_bin):
    newest = max(jdks)
    fp17 = Jvm(jdks[17], ["-XX:+PreserveFramePointer", "-cp", java_classes, "Idle"], work_dir)
    jvms.append(fp17)
    jar = make_jar(java_classes, work_dir)
    jar_new = Jvm(newest_jdk, ["-Xmx64m", "-jar", jar], work_dir, user="nobody")
    jvms.append(jar_new)
    env_fp = Jvm(jdks[17], ["--add-opens", "java.base/java.lang=ALL-UNNAMED", "-cp",
                            java_classes, "Idle", "some", "args"], work_dir,
                 env={"JAVA_TOOL_OPTIONS": "-XX:+PreserveFramePointer"})
    jvms.append(env_fp)
    executor = Jvm(jdks[17], ["-cp", java_classes,
                              "org.apache.spark.executor.CoarseGrainedExecutorBackend",
                              "--driver-url", "spark://CoarseGrainedScheduler@127.0.0.1:7077",
                              "--executor-id", "3", "--hostname", "127.0.0.1", "--cores", "1",
                              "--app-id", "app-20251122031500-0007"], work_dir)
    jvms.append(executor)
    boxed = Jvm(newest_jdk, ["-cp", java_classes, "Idle"], work_dir, container=True)
    jvms.append(boxed)
    fp_new = Jvm(newest_jdk, ["-XX:+PreserveFramePointer", "-cp", java_classes, "Idle"],
                 work_dir)
    jvms.append(fp_new)
    sleeper = subprocess.Popen(["sleep", "300"])
    try:
        r = run_list(sparkprof_bin)
        rows = table_rows(r.stdout)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert sleeper.pid not in rows, "a non-JVM is listed"
    expect = {
        fp17.pid: dict(USER="root", JDK="17", HELPER="-", FP="yes", WALK="full", MAIN="Idle"),
        fp_new.pid: dict(JDK=str(newest), FP="yes", WALK="full"),
        # Without frame pointers too: compiled frames are stepped over by size.
        jar_new.pid: dict(USER="nobody", JDK=str(newest), HELPER="-", FP="no", WALK="full",
                          MAIN=f"-jar {jar}"),
        env_fp.pid: dict(USER="root", JDK="17", FP="yes", WALK="full", MAIN="Idle"),
        executor.pid: dict(JDK="17", FP="no", WALK="full", APP="app-20251122031500-0007",
                           EXECUTOR="3",
                           MAIN="org.apache.spark.executor.CoarseGrainedExecutorBackend"),
        boxed.pid: dict(USER="root", JDK=str(newest), MAIN="Idle"),
    }
    for pid, want in expect.items():
        assert pid in rows, f"pid {pid} missing from:\n{r.stdout}"
        got = {k: rows[pid][k] for k in want}
        assert got == want, (pid, rows[pid])
    assert rows[fp17.pid]["APP"] == "-" and rows[fp17.pid]["EXECUTOR"] == "-"
    # This kernel walks every JVM in full: no warning of cut stacks (the
    # kernel matrix's 5.10 has none, and walks by frame pointers only).
    assert "PreserveFramePointer" not in r.stderr, r.stderr

    js = json_rows(sparkprof_bin)
    j = js[fp17.pid]
    assert j["jdk_major"] == 17 and j["jdk_version"].startswith("17.")
    assert j["jdk_home"] == os.path.realpath(jdks[17])
    assert j["preserve_frame_pointer"] is True and j["helper_loaded"] is False
    assert j["stack_walk"] == "full"
    assert j["main"] == "Idle" and j["main_kind"] == "class" and j["spark"] is None
    assert j["user"] == "root" and j["uid"] == 0 and j["ns_pid"] == fp17.pid
    j = js[jar_new.pid]
    assert j["main_kind"] == "jar" and j["main"] == jar and j["user"] == "nobody"
    assert j["jdk_major"] == newest and j["preserve_frame_pointer"] is False
    j = js[executor.pid]
    assert j["spark"]["backend"] == "standalone"
    assert j["spark"]["app_id"] == "app-20251122031500-0007"
    assert j["spark"]["executor_id"] == "3"
    j = js[boxed.pid]
    assert j["ns_pid"] == ns_pid(boxed.pid) != boxed.pid
    assert j["jdk_home"] == os.path.realpath(newest_jdk)


@pytest.mark.parametrize("major", JDKS)
def test_list_helper_state(major, jdks, java_classes, work_dir, jvms, sparkprof_bin):
    """HELPER flips to 'loaded' once a library named libsparkprof-agent.so is
    mapped (here the probe agent under that name, loaded by attach)."""
    jvm = Jvm(jdks[major], ["-cp", java_classes, "Idle"], work_dir)
    jvms.append(jvm)
    assert table_rows(run_list(sparkprof_bin).stdout)[jvm.pid]["HELPER"] == "-"
    helper = compile_probe(jdks[17], work_dir, "libsparkprof-agent.so")
    r = subprocess.run([sparkprof_bin, "attach", "--agent", helper, str(jvm.pid)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rows = table_rows(run_list(sparkprof_bin).stdout)
    assert rows[jvm.pid]["HELPER"] == "loaded"
    assert rows[jvm.pid]["JDK"] == str(major)
    assert json_rows(sparkprof_bin)[jvm.pid]["helper_loaded"] is True


def test_list_odd_and_long_names(jdks, java_classes, work_dir, jvms, sparkprof_bin):
    """A jar path with quotes, a backslash and non-ASCII still yields valid
    JSON; a long one is cut from the left in the table, keeping its end."""
    odd_dir = os.path.join(work_dir, 'we"ird\\dir\xe9', "a-rather-long-directory-name" * 2)
    os.makedirs(odd_dir)
    jar = make_jar(java_classes, odd_dir)
    jvm = Jvm(jdks[17], ["-jar", jar], work_dir)
    jvms.append(jvm)
    js = json_rows(sparkprof_bin)
    assert js[jvm.pid]["main"] == jar
    main = table_rows(run_list(sparkprof_bin).stdout)[jvm.pid]["MAIN"]
    assert len(main) == 60 and main.startswith("...") and main.endswith("/idle-app.jar"), main


def test_list_usage(sparkprof_bin):
    r = subprocess.run([sparkprof_bin, "list", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "usage: sparkprof list" in r.stdout
    r = subprocess.run([sparkprof_bin, "list", "extra"], capture_output=True, text=True)
    assert r.returncode == 2 and "unexpected argument 'extra'" in r.stderr

"""The node-agent image, built with `make image` and run with podman as a
DaemonSet runs it (privileged, host PID namespace, /sys mounted):

- it profiles a JVM in another container (its own rootfs, the JDK mounted
  at another path, a private /tmp) and names its Java frames, its thread
  names, and its libc frames from the host's debug symbols;
- `install-helper` puts the helper where executors load it, and an executor
  running in a container gets its stage files;
- continuous mode through the image: consecutive interval folders, and
  `podman stop` (SIGTERM) leaves complete outputs.

Targets run from the same Debian base image as the agent (tools/install-deps.sh
imports it), with this host's JDK mounted read-only.
"""
import json
import os
import shutil
import subprocess
import time
import uuid

import pytest

import rotation_check
import spark_sim
from testlib import ROOT, SPARKPROF, read_folded, read_summary, samples_with

IMAGE = "localhost/sparkprof:latest"
BASE_IMAGE = "localhost/sparkprof-base:bookworm"
HOT_SRC = os.path.join(ROOT, "tests", "java", "HotMethods.java")


def podman(*args, timeout=300, check=True):
    proc = subprocess.run(["podman", *args], capture_output=True, text=True, timeout=timeout)
    if check:
        assert proc.returncode == 0, f"podman {' '.join(args)}: {proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def image():
    """`make image`, once for this module."""
    assert shutil.which("podman"), "podman is missing: run `make deps`"
    assert podman("image", "exists", BASE_IMAGE, check=False).returncode == 0, \
        f"the base image {BASE_IMAGE} is missing: run `make deps`"
    proc = subprocess.run(["make", "-C", ROOT, "image"], capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return IMAGE


@pytest.fixture
def names():
    """Unique container names; every container is removed afterwards."""
    made = []

    def make(kind):
        made.append(f"sparkprof-test-{kind}-{uuid.uuid4().hex[:8]}")
        return made[-1]
    yield make
    for name in made:
        podman("rm", "-f", "-t", "0", name, check=False)


@pytest.fixture(scope="module")
def installed_helper(image, tmp_path_factory, agent_path):
    """The helper, copied by the image's `install-helper` into a host folder,
    as the DaemonSet's init container does."""
    host_dir = tmp_path_factory.mktemp("helper")
    proc = podman("run", "--rm", "-v", f"{host_dir}:/opt/sparkprof", image,
                  "install-helper", "/opt/sparkprof")
    assert "-agentpath:/opt/sparkprof/libsparkprof-agent.so" in proc.stdout, proc.stdout
    return str(host_dir)


def agent_run(image, *args, mounts=(), env=(), detach_name=None, timeout=300):
    """Runs the image as the DaemonSet does; returns the CompletedProcess
    (or the container id when detached)."""
    cmd = ["run", "--privileged", "--pid=host", "-v", "/sys:/sys"]
    for m in mounts:
        cmd += ["-v", m]
    for e in env:
        cmd += ["-e", e]
    cmd += ["-d", "--name", detach_name] if detach_name else ["--rm"]
    return podman(*cmd, image, *args, timeout=timeout)


def target_container(name, jdk_home, helper_dir, app_dir, command, extra=()):
    """A JVM in its own container: the base rootfs, the JDK at /opt/jdk,
    the helper at /opt/sparkprof, the application at /opt/app, a private
    /tmp. Returns its host pid."""
    # Debian's JDK links its configuration to /etc/java-N-openjdk.
    conf = os.path.realpath(os.path.join(jdk_home, "conf", "security", "java.security"))
    if not conf.startswith(os.path.realpath(jdk_home) + "/"):
        etc = os.path.dirname(os.path.dirname(conf))
        extra = [*extra, "-v", f"{etc}:{etc}:ro"]
    podman("run", "-d", "--name", name,
           "-v", f"{jdk_home}:/opt/jdk:ro", "-v", f"{helper_dir}:/opt/sparkprof:ro",
           "-v", f"{app_dir}:/opt/app:ro", "--tmpfs", "/tmp", *extra, BASE_IMAGE, *command)
    pid = int(podman("inspect", "-f", "{{.State.Pid}}", name).stdout.strip())
    assert pid > 0, name
    return pid


def wait_for_log(name, text, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        logs = podman("logs", name, check=False)
        if text in logs.stdout + logs.stderr:
            return logs.stdout
        time.sleep(0.2)
    raise AssertionError(f"{name}: no {text!r} in its output: {logs.stdout[-2000:]}")


def test_install_helper_through_the_image(installed_helper, agent_path):
    path = os.path.join(installed_helper, "libsparkprof-agent.so")
    with open(path, "rb") as a, open(agent_path, "rb") as b:
        assert a.read() == b.read()
    assert os.stat(path).st_mode & 0o777 == 0o644


def test_image_entrypoint(image):
    out = podman("run", "--rm", image, "--version").stdout
    assert out.startswith("sparkprof "), out


@pytest.fixture(scope="module")
def hot_classes(tmp_path_factory, jdks):
    out = tmp_path_factory.mktemp("hot")
    subprocess.run([os.path.join(jdks[17], "bin", "javac"), "-d", str(out), HOT_SRC],
                   check=True)
    return str(out)


def libc_frames(stacks):
    """(samples with start_thread, samples with an unnamed libc frame)."""
    named = samples_with(stacks, "start_thread")
    unnamed = sum(c for s, c in stacks.items()
                  if any(f.startswith("libc.so.6+0x") for f in s.split(";")))
    return named, unnamed


def test_profiles_a_jvm_in_another_container(image, names, installed_helper, hot_classes,
                                             jdks, tmp_path):
    jvm = names("jvm")
    pid = target_container(jvm, jdks[17], installed_helper, hot_classes,
                           ["/opt/jdk/bin/java", "-XX:+PreserveFramePointer",
                            "-agentpath:/opt/sparkprof/libsparkprof-agent.so",
                            "-cp", "/opt/app", "HotMethods", "60", "2", "0"])
    # It sees itself as pid 1, its own /tmp holds the helper's log.
    assert "pid 1" in wait_for_log(jvm, "name 1")
    wait_for_log(jvm, "hot-worker-1")

    runs = {}
    for label, env in (("container", ()), ("no host root", ("SPARKPROF_HOST_ROOT=/nonexistent",))):
        out = tmp_path / label.replace(" ", "-")
        out.mkdir()
        agent_run(image, "record", "-p", str(pid), "-d", "5", "-t", "-o", "/out",
                  mounts=[f"{out}:/out"], env=env)
        runs[label] = out
    host_out = tmp_path / "host"
    subprocess.run([SPARKPROF, "record", "-p", str(pid), "-d", "5", "-t", "-o", str(host_out)],
                   check=True, capture_output=True, timeout=120)

    stacks = read_folded(runs["container"] / "all.folded")
    total = sum(stacks.values())
    assert total > 100, total
    # Java frames named from the helper's log in the target's own /tmp,
    # under the threads' Java names.
    java = samples_with(stacks, "HotAlpha.spin") + samples_with(stacks, "HotBeta.spin")
    assert java > 0.5 * total, stacks.most_common(5)
    assert samples_with(stacks, "hot-worker-0", "HotAlpha.spin") > 0, stacks.most_common(5)
    summary = read_summary(runs["container"])
    proc = next(p for p in summary["processes"] if p["pid"] == pid)
    assert proc["jvm"] and proc["helper"], proc

    # libc frames named from the host's debug symbols, as on the host.
    named, unnamed = libc_frames(stacks)
    host_named, host_unnamed = libc_frames(read_folded(host_out / "all.folded"))
    assert host_named > 0 and named > 0, (named, host_named)
    assert unnamed == 0 and host_unnamed == 0, (unnamed, host_unnamed)
    # Without the host's root they are not: the host lookup is what names them.
    off_named, off_unnamed = libc_frames(read_folded(runs["no host root"] / "all.folded"))
    assert off_named == 0 and off_unnamed > 0, (off_named, off_unnamed)


def test_stage_files_for_an_executor_in_a_container(image, names, installed_helper, jdks,
                                                    build_dir, tmp_path):
    classpath = spark_sim.compile_sim(build_dir)
    truth_dir = tmp_path / "truth"
    truth_dir.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    agent = names("agent")
    agent_run(image, "record", "-a", "-F", "199", "-o", "/out", mounts=[f"{out}:/out"],
              detach_name=agent)
    time.sleep(2)  # BPF loaded before the executor starts
    executor = names("executor")
    cmd = spark_sim.sim_command("/opt/app", "/truth/truth.json", java="/opt/jdk/bin/java",
                                jvm_args=["-agentpath:/opt/sparkprof/libsparkprof-agent.so",
                                          "-XX:+PreserveFramePointer"],
                                scale=0.5, linger_ms=3000)
    target_container(executor, jdks[17], installed_helper, classpath, cmd,
                     extra=["-v", f"{truth_dir}:/truth"])
    deadline = time.time() + 300
    while not (truth_dir / "truth.json").exists() and time.time() < deadline:
        running = podman("inspect", "-f", "{{.State.Running}}", executor).stdout.strip()
        assert running == "true" or (truth_dir / "truth.json").exists(), \
            podman("logs", executor, check=False).stderr[-3000:]
        time.sleep(0.5)
    assert (truth_dir / "truth.json").exists(), podman("logs", executor, check=False).stderr
    time.sleep(4)  # the linger, and the resolve delay
    podman("stop", "-t", "30", agent, timeout=60)
    assert podman("wait", agent).stdout.strip() == "0", podman("logs", agent).stderr

    truth = spark_sim.load_truth(truth_dir / "truth.json")
    exec_dir = out / spark_sim.APP_ID / "exec-1"
    assert exec_dir.is_dir(), (os.listdir(out), podman("logs", agent).stderr[-2000:])
    files = sorted(os.listdir(exec_dir))
    stages = {(s["stage"], s["attempt"]) for s in truth["stages"]}
    stage_files = {f for f in files if f.startswith("stage-") and f.endswith(".folded")}
    expected = {f"stage-{s}.folded" if a == 0 else f"stage-{s}.{a}.folded" for s, a in stages}
    # Every stage file is a true stage, and most stages got samples.
    assert stage_files <= expected, (stage_files, expected)
    assert len(stage_files) >= len(expected) // 2, (stage_files, expected)
    # Found as an executor, with its helper (its log in the container's own /tmp).
    summary = read_summary(out)
    ex = [e for e in summary["executors"] if e.get("app_id") == spark_sim.APP_ID]
    assert len(ex) == 1 and ex[0]["helper"] and ex[0]["attribution"] == "thread", \
        json.dumps(summary["executors"])[:2000]


def test_rotation_and_sigterm_through_the_image(image, names, busy_cpus, jfr_tools, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    agent = names("rotate")
    agent_run(image, "record", "-a", "-F", "199", "--rotate", "2s", "--keep", "100",
              "-o", "/out/node", mounts=[f"{out}:/out"], detach_name=agent)
    node = out / "node"
    deadline = time.time() + 90
    while time.time() < deadline and len(rotation_check.complete_folders(node)) < 3:
        time.sleep(0.2)
    assert len(rotation_check.complete_folders(node)) >= 3, podman("logs", agent).stderr
    time.sleep(0.8)  # in the middle of an interval
    sent = time.monotonic()
    podman("stop", "-t", "30", agent, timeout=60)
    took = time.monotonic() - sent
    assert podman("wait", agent).stdout.strip() == "0", podman("logs", agent).stderr
    assert took < 10, took  # SIGTERM, not the SIGKILL after 30 s
    intervals = rotation_check.read_intervals(node)
    assert len(intervals) >= 4
    assert intervals[-1]["end_monotonic_ns"] - intervals[-1]["start_monotonic_ns"] < 2e9
    rotation_check.check_consecutive(intervals, jfr=jfr_tools["jdk17"])

"""`sparkprof attach`: loads a JVMTI agent into running JVMs through HotSpot's
attach protocol, as the JVM's user, also across pid and mount namespaces.

Real JVMs (JDK 17 and the newest JDK), a real test agent (tests/agents/
probe_agent.c, whose Agent_OnAttach writes a marker file from inside the JVM)
and the real sparkprof helper. Refusals must be one clear line, exit non-zero,
and leave the target alive.
"""
import glob
import os
import pwd
import re
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

IDLE_JAVA = """
public class Idle {
    public static void main(String[] args) throws Exception {
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        while (true) Thread.sleep(1000);
    }
}
"""

# A stand-in for Spark's executor main class: a real JVM whose command line
# is an executor's (the list test checks the APP and EXECUTOR columns).
FAKE_EXECUTOR_JAVA = """
package org.apache.spark.executor;
public class CoarseGrainedExecutorBackend {
    public static void main(String[] args) throws Exception {
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        while (true) Thread.sleep(1000);
    }
}
"""


def compile_probe(jdk_home, out_dir, name="libprobe.so"):
    """Builds the probe agent into out_dir/name (mode 0755 file)."""
    out = os.path.join(out_dir, name)
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror",
                    "-I" + os.path.join(jdk_home, "include"),
                    "-I" + os.path.join(jdk_home, "include", "linux"),
                    "-o", out, os.path.join(ROOT, "tests", "agents", "probe_agent.c")],
                   check=True)
    os.chmod(out, 0o755)
    return out


def build_java_classes(build_dir, jdk17):
    """Compiles the test programs into build/attach-java (outside /tmp, so a
    'container' with its own /tmp still sees them). Returns the class dir."""
    src = os.path.join(build_dir, "attach-java-src")
    out = os.path.join(build_dir, "attach-java")
    os.makedirs(os.path.join(src, "org", "apache", "spark", "executor"), exist_ok=True)
    with open(os.path.join(src, "Idle.java"), "w") as f:
        f.write(IDLE_JAVA)
    with open(os.path.join(src, "org/apache/spark/executor/CoarseGrainedExecutorBackend.java"),
              "w") as f:
        f.write(FAKE_EXECUTOR_JAVA)
    subprocess.run([os.path.join(jdk17, "bin", "javac"), "--release", "17", "-d", out,
                    os.path.join(src, "Idle.java"),
                    os.path.join(src, "org/apache/spark/executor/CoarseGrainedExecutorBackend.java")],
                   check=True)
    for d, _, files in os.walk(out):
        os.chmod(d, 0o755)
        for f in files:
            os.chmod(os.path.join(d, f), 0o644)
    return out


def children(pid):
    kids = []
    for task in glob.glob(f"/proc/{pid}/task/*/children"):
        with open(task) as f:
            kids += [int(x) for x in f.read().split()]
    return kids


def ns_pid(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("NStgid:"):
                return int(line.split()[-1])
    raise AssertionError(f"no NStgid for {pid}")


def maps_text(pid):
    with open(f"/proc/{pid}/maps") as f:
        return f.read()


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] not in "ZX"
    except FileNotFoundError:
        return False


class Jvm:
    """A JVM started for a test: java_args after `java`, optionally as
    another user or inside new pid+mount namespaces with a private /tmp."""

    def __init__(self, java_home, args, log_dir, user=None, container=False, env=None,
                 cwd=None):
        self.log = os.path.join(log_dir, f"jvm-{time.monotonic_ns()}.out")
        java = os.path.join(java_home, "bin", "java")
        cmd = [java] + args
        if user:
            cmd = ["setpriv", f"--reuid={user}", f"--regid={pwd.getpwnam(user).pw_gid}",
                   "--clear-groups"] + cmd
        if container:
            # The class path is bound to /mnt first: the private /tmp would
            # hide it when it lives under /tmp.
            classes = args[args.index("-cp") + 1]
            cmd[cmd.index(classes)] = "/mnt"
            inner = (f"mount --bind '{classes}' /mnt && mount -t tmpfs tmpfs /tmp && cd / && "
                     "exec " + " ".join("'" + a.replace("'", "'\\''") + "'" for a in cmd))
            cmd = ["unshare", "--pid", "--fork", "--mount", "--mount-proc", "sh", "-c", inner]
        full_env = dict(os.environ)
        full_env.update(env or {})
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True, env=full_env,
                                         cwd=cwd or log_dir)
        self.pid = self.proc.pid
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if container:
                kids = children(self.proc.pid)
                if kids:
                    self.pid = kids[0]
            if "ready" in self.output():
                break
            if self.proc.poll() is not None:
                raise AssertionError(f"JVM exited: {self.output()}")
            time.sleep(0.05)
        else:
            raise AssertionError(f"JVM did not start: {self.output()}")
        assert os.path.basename(os.readlink(f"/proc/{self.pid}/exe")) == "java"

    def output(self):
        with open(self.log, errors="replace") as f:
            return f.read()

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)


@pytest.fixture(scope="session")
def java_classes(build_dir, jdks):
    return build_java_classes(build_dir, jdks[17])


@pytest.fixture
def work_dir():
    """A world-writable scratch dir (JVMs run as nobody write markers there)."""
    d = tempfile.mkdtemp(prefix="sparkprof-attach-")
    os.chmod(d, 0o777)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def probe(jdks, work_dir):
    """The probe agent in a world-readable place."""
    return compile_probe(jdks[17], work_dir)


@pytest.fixture
def jvms():
    started = []
    yield started
    for j in started:
        j.stop()


def attach(sparkprof_bin, *args, timeout=120):
    return subprocess.run([sparkprof_bin, "attach", *[str(a) for a in args]],
                          capture_output=True, text=True, timeout=timeout)


def marker_text(path, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path):
            with open(path) as f:
                text = f.read()
            if text.endswith("\n"):
                return text
        time.sleep(0.05)
    raise AssertionError(f"the agent wrote no marker {path}")


def jdk_params():
    from conftest import jdk_homes
    homes = jdk_homes()
    return sorted({17, max(homes)}) if homes else [17]


JDKS = jdk_params()


@pytest.mark.parametrize("major", JDKS)
def test_attach_probe_as_root(major, jdks, java_classes, probe, work_dir, jvms, sparkprof_bin):
    jvm = Jvm(jdks[major], ["-cp", java_classes, "Idle"], work_dir)
    jvms.append(jvm)
    marker = os.path.join(work_dir, "marker")
    r = attach(sparkprof_bin, "--agent", probe, "--options", f"marker={marker},rc=0", jvm.pid)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"pid {jvm.pid}: loaded {probe}"
    text = marker_text(marker)
    assert text.startswith(f"loaded pid={jvm.pid} via=attach java.vm.version={major}")
    assert f"options=marker={marker},rc=0" in text
    assert probe in maps_text(jvm.pid)
    assert alive(jvm.pid)
    # No trigger file left behind, in the JVM's cwd or /tmp.
    assert not os.path.exists(os.path.join(work_dir, f".attach_pid{jvm.pid}"))
    assert not os.path.exists(f"/tmp/.attach_pid{jvm.pid}")

    # A second attach must not load a second copy: it reports and succeeds.
    os.unlink(marker)
    r = attach(sparkprof_bin, "--agent", probe, "--options", f"marker={marker}", jvm.pid)
    assert r.returncode == 0, r.stderr
    assert "already loaded" in r.stdout
    time.sleep(0.2)
    assert not os.path.exists(marker), "the agent ran a second time"


@pytest.mark.parametrize("major", JDKS)
def test_attach_as_unprivileged_user(major, jdks, java_classes, work_dir, jvms, sparkprof_bin):
    jvm = Jvm(jdks[major], ["-cp", java_classes, "Idle"], work_dir, user="nobody")
    jvms.append(jvm)
    nobody = pwd.getpwnam("nobody")
    # The agent in a root-only directory: nobody's JVM cannot read it, so
    # sparkprof must hand it a copy in its /tmp.
    private = tempfile.mkdtemp(prefix="sparkprof-private-")
    try:
        os.chmod(private, 0o700)
        agent = compile_probe(jdks[17], private)
        marker = os.path.join(work_dir, "marker-nobody")
        r = attach(sparkprof_bin, "--agent", agent, "--options", f"marker={marker}", jvm.pid)
        assert r.returncode == 0, r.stderr
        marker_text(marker)
        st = os.stat(marker)
        assert st.st_uid == nobody.pw_uid, "the agent did not run as the JVM's user"
        maps = maps_text(jvm.pid)
        assert private not in maps
        copies = re.findall(r"(/tmp/sparkprof-[^/\s]+)/libprobe\.so \(deleted\)", maps)
        assert copies, "the copy of the agent is not mapped"
        assert not os.path.exists(copies[0]), "the copy's directory was left behind"
        assert alive(jvm.pid)
    finally:
        shutil.rmtree(private, ignore_errors=True)


@pytest.mark.parametrize("major", JDKS)
def test_attach_into_container(major, jdks, java_classes, probe, work_dir, jvms, sparkprof_bin):
    """A JVM in its own pid and mount namespaces with a private /tmp, as in a
    container: the socket is /tmp/.java_pid<its own pid> in its /tmp."""
    jvm = Jvm(jdks[major], ["-cp", java_classes, "Idle"], work_dir, container=True)
    jvms.append(jvm)
    inner = ns_pid(jvm.pid)
    assert inner != jvm.pid
    r = attach(sparkprof_bin, "--agent", probe, "--options", "marker=/tmp/probe-marker", jvm.pid)
    assert r.returncode == 0, r.stderr
    root_tmp = f"/proc/{jvm.pid}/root/tmp"
    text = marker_text(os.path.join(root_tmp, "probe-marker"))
    assert text.startswith(f"loaded pid={inner} via=attach"), text
    assert re.search(r"/tmp/sparkprof-[^/\s]+/libprobe\.so \(deleted\)", maps_text(jvm.pid))
    left = sorted(os.listdir(root_tmp))
    assert f".java_pid{inner}" in left
    assert not [f for f in left if f.startswith("sparkprof-") or f.startswith(".attach_pid")], left
    assert not os.path.exists("/tmp/probe-marker"), "the marker escaped the container"
    assert alive(jvm.pid)


def test_attach_real_helper(jdks, newest_jdk, java_classes, work_dir, jvms, sparkprof_bin,
                            agent_path):
    """The sparkprof helper itself, found beside the binary (no --agent),
    into a root JVM (JDK 17) and a container JVM as nobody (newest JDK)."""
    plain = Jvm(jdks[17], ["-XX:+PreserveFramePointer", "-cp", java_classes, "Idle"], work_dir)
    jvms.append(plain)
    boxed = Jvm(newest_jdk, ["-cp", java_classes, "Idle"], work_dir, user="nobody",
                container=True)
    jvms.append(boxed)
    r = attach(sparkprof_bin, plain.pid, boxed.pid)
    assert r.returncode == 0, r.stderr
    real = os.path.realpath(agent_path)
    assert f"pid {plain.pid}: loaded {real}" in r.stdout
    assert f"pid {boxed.pid}: loaded {real}" in r.stdout
    for jvm in (plain, boxed):
        assert "libsparkprof-agent.so" in maps_text(jvm.pid)
        log = f"/proc/{jvm.pid}/root/tmp/sparkprof-{ns_pid(jvm.pid)}.log"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not os.path.exists(log):
            time.sleep(0.05)
        with open(log) as f:
            assert f.readline().startswith("H "), "the helper wrote no header"
        assert alive(jvm.pid)
    assert os.stat(f"/proc/{boxed.pid}/root/tmp/sparkprof-{ns_pid(boxed.pid)}.log").st_uid == \
        pwd.getpwnam("nobody").pw_uid

    # Attaching again is harmless.
    r = attach(sparkprof_bin, plain.pid)
    assert r.returncode == 0 and "already loaded" in r.stdout, r.stdout + r.stderr


def test_helper_bad_options(jdks, java_classes, work_dir, jvms, sparkprof_bin, agent_path):
    jvm = Jvm(jdks[17], ["-cp", java_classes, "Idle"], work_dir)
    jvms.append(jvm)
    r = attach(sparkprof_bin, "--agent", agent_path, "--options", "nosuchoption=1", jvm.pid)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert f"pid {jvm.pid}: agent" in lines[0] and "Agent_OnAttach returned" in lines[0]
    assert alive(jvm.pid)
    assert "unknown option" in jvm.output()


def one_error_line(r, pid, needle):
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"sparkprof: error: pid {pid}: "), lines[0]
    assert needle in lines[0], lines[0]
    return lines[0]


def test_not_a_jvm(probe, sparkprof_bin):
    proc = subprocess.Popen(["sleep", "300"])
    try:
        r = attach(sparkprof_bin, "--agent", probe, proc.pid)
        one_error_line(r, proc.pid, "not a JVM")
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


def test_no_such_process(probe, sparkprof_bin):
    with open("/proc/sys/kernel/pid_max") as f:
        pid = int(f.read()) + 1
    r = attach(sparkprof_bin, "--agent", probe, pid)
    one_error_line(r, pid, "no such process")


@pytest.mark.parametrize("major", JDKS)
def test_attach_disabled(major, jdks, java_classes, probe, work_dir, jvms, sparkprof_bin):
    jvm = Jvm(jdks[major], ["-XX:+DisableAttachMechanism", "-cp", java_classes, "Idle"],
              work_dir)
    jvms.append(jvm)
    r = attach(sparkprof_bin, "--agent", probe, jvm.pid)
    one_error_line(r, jvm.pid, "-XX:+DisableAttachMechanism")
    assert alive(jvm.pid)
    assert "Full thread dump" not in jvm.output(), "the JVM was signalled"
    assert "libprobe" not in maps_text(jvm.pid)


def test_attach_disabled_through_environment(jdks, java_classes, probe, work_dir, jvms,
                                             sparkprof_bin):
    jvm = Jvm(jdks[17], ["-cp", java_classes, "Idle"], work_dir,
              env={"JAVA_TOOL_OPTIONS": "-XX:+DisableAttachMechanism"})
    jvms.append(jvm)
    r = attach(sparkprof_bin, "--agent", probe, jvm.pid)
    one_error_line(r, jvm.pid, "attach is disabled")
    assert alive(jvm.pid)


@pytest.mark.parametrize("major", JDKS)
def test_agent_failure_is_reported(major, jdks, java_classes, probe, work_dir, jvms,
                                   sparkprof_bin):
    jvm = Jvm(jdks[major], ["-cp", java_classes, "Idle"], work_dir)
    jvms.append(jvm)
    marker = os.path.join(work_dir, "m")
    r = attach(sparkprof_bin, "--agent", probe, "--options", f"marker={marker},rc=7", jvm.pid)
    one_error_line(r, jvm.pid, "Agent_OnAttach returned 7")
    marker_text(marker)  # it did run
    assert alive(jvm.pid)

    junk = os.path.join(work_dir, "libjunk.so")
    with open(junk, "w") as f:
        f.write("not an ELF file\n")
    r = attach(sparkprof_bin, "--agent", junk, jvm.pid)
    line = one_error_line(r, jvm.pid, f"the JVM could not load {junk}")
    assert "too short" in line or "invalid ELF" in line, line
    assert alive(jvm.pid)


def test_reduced_signals_jvm(jdks, java_classes, probe, work_dir, jvms, sparkprof_bin):
    """-Xrs: SIGQUIT is not handled, but the listener starts with the JVM, so
    the socket is there and no signal is needed."""
    jvm = Jvm(jdks[17], ["-Xrs", "-cp", java_classes, "Idle"], work_dir)
    jvms.append(jvm)
    marker = os.path.join(work_dir, "m-xrs")
    r = attach(sparkprof_bin, "--agent", probe, "--options", f"marker={marker}", jvm.pid)
    assert r.returncode == 0, r.stderr
    marker_text(marker)
    assert alive(jvm.pid)


@pytest.fixture
def fake_libjvm(work_dir):
    """An empty library named libjvm.so: preloaded into a non-JVM, it makes
    that process look like a JVM (libjvm.so in its maps)."""
    d = os.path.join(work_dir, "fake")
    os.makedirs(d)
    src = os.path.join(d, "empty.c")
    with open(src, "w") as f:
        f.write("int sparkprof_fake_libjvm;\n")
    lib = os.path.join(d, "libjvm.so")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", lib, src], check=True)
    return lib


def test_refuses_to_signal_without_sigquit_handler(fake_libjvm, probe, sparkprof_bin):
    """A 'JVM' that does not catch SIGQUIT (one still starting) would die of
    the signal: attach must refuse and not signal it."""
    proc = subprocess.Popen(["sleep", "300"], env=dict(os.environ, LD_PRELOAD=fake_libjvm))
    try:
        deadline = time.monotonic() + 10
        while "libjvm.so" not in maps_text(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        r = attach(sparkprof_bin, "--agent", probe, proc.pid)
        one_error_line(r, proc.pid, "does not handle SIGQUIT")
        time.sleep(0.2)
        assert proc.poll() is None, "the process was killed"
    finally:
        proc.kill()
        proc.wait()


def test_times_out_when_no_socket_appears(fake_libjvm, probe, work_dir, sparkprof_bin):
    """A process that catches SIGQUIT but never opens the attach socket: a
    bounded wait, a clear timeout, and the trigger file removed."""
    script = ("import signal, sys, time\n"
              "signal.signal(signal.SIGQUIT, lambda *a: None)\n"
              "print('ready', flush=True)\n"
              "time.sleep(300)\n")
    proc = subprocess.Popen(["python3", "-c", script], cwd=work_dir, stdout=subprocess.PIPE,
                            text=True, env=dict(os.environ, LD_PRELOAD=fake_libjvm))
    try:
        assert proc.stdout.readline().strip() == "ready"
        t0 = time.monotonic()
        r = attach(sparkprof_bin, "--agent", probe, proc.pid)
        elapsed = time.monotonic() - t0
        one_error_line(r, proc.pid, "timed out")
        assert elapsed < 30
        assert proc.poll() is None
        assert not os.path.exists(os.path.join(work_dir, f".attach_pid{proc.pid}"))
        assert not os.path.exists(f"/tmp/.attach_pid{proc.pid}")
    finally:
        proc.kill()
        proc.wait()


def test_several_pids_some_failing(jdks, java_classes, probe, work_dir, jvms, sparkprof_bin):
    jvm = Jvm(jdks[17], ["-cp", java_classes, "Idle"], work_dir)
    jvms.append(jvm)
    with open("/proc/sys/kernel/pid_max") as f:
        missing = int(f.read()) + 1
    marker = os.path.join(work_dir, "m-several")
    r = attach(sparkprof_bin, "--agent", probe, "--options", f"marker={marker}", missing,
               jvm.pid)
    assert r.returncode == 1
    assert f"pid {jvm.pid}: loaded" in r.stdout
    assert f"pid {missing}: no such process" in r.stderr
    marker_text(marker)


def test_usage_errors(sparkprof_bin, probe):
    r = attach(sparkprof_bin, "--help")
    assert r.returncode == 0 and "usage: sparkprof attach" in r.stdout
    r = attach(sparkprof_bin)
    assert r.returncode == 2 and "no PID" in r.stderr
    r = attach(sparkprof_bin, "--agent", probe, "12x")
    assert r.returncode == 2 and "'12x' is not a process id" in r.stderr
    r = attach(sparkprof_bin, "--agent", "/nonexistent/lib.so", os.getpid())
    assert r.returncode == 1 and "/nonexistent/lib.so: No such file or directory" in r.stderr


def test_dynamic_agent_loading_disabled(newest_jdk, jdks, java_classes, probe, work_dir, jvms,
                                        sparkprof_bin):
    """JDK 21+ with -XX:-EnableDynamicAgentLoading: the JVM refuses the load
    and says why; we pass its words on in one line."""
    if max(jdks) < 21:
        pytest.skip("needs JDK 21+")
    jvm = Jvm(newest_jdk, ["-XX:-EnableDynamicAgentLoading", "-cp", java_classes, "Idle"],
              work_dir)
    jvms.append(jvm)
    r = attach(sparkprof_bin, "--agent", probe, jvm.pid)
    one_error_line(r, jvm.pid, "Dynamic agent loading is not enabled")
    assert alive(jvm.pid)
    assert "libprobe" not in maps_text(jvm.pid)


def test_attach_into_chroot(jdks, java_classes, probe, work_dir, sparkprof_bin):
    """A JVM chrooted inside its own mount namespace (its root is not the
    namespace's root) with a private /tmp under that root: the socket and
    the agent copy must be found under the JVM's root."""
    log = os.path.join(work_dir, "chroot-jvm.out")
    classes = java_classes
    inner = ("mount --rbind / /mnt && mount -t tmpfs tmpfs /mnt/tmp && "
             f"mount --bind '{classes}' /mnt/media && "
             f"exec chroot /mnt '{os.path.join(jdks[17], 'bin', 'java')}' -cp /media Idle")
    with open(log, "w") as out:
        proc = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                                 inner], stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with open(log) as f:
                if "ready" in f.read():
                    break
            assert proc.poll() is None, open(log).read()
            time.sleep(0.05)
        assert os.readlink(f"/proc/{proc.pid}/root") == "/mnt"
        r = attach(sparkprof_bin, "--agent", probe, "--options", "marker=/tmp/chroot-marker",
                   proc.pid)
        assert r.returncode == 0, r.stderr
        text = marker_text(f"/proc/{proc.pid}/root/tmp/chroot-marker")
        assert text.startswith(f"loaded pid={proc.pid} via=attach")
        assert not os.path.exists("/tmp/chroot-marker")
        assert alive(proc.pid)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)

"""Files an unprivileged user plants for their own JVM cost only that JVM's
names, never the node's recording (issue: a FIFO at /tmp/perf-PID.map or
/tmp/sparkprof-PID.log blocked `record -a` in open(2))."""
import os
import pwd
import shutil
import subprocess
import tempfile
import time

import pytest

from testlib import read_folded, record

BUSY_JAVA = """
public class Busy {
    public static void main(String[] args) throws Exception {
        System.out.println("ready");
        System.out.flush();
        long end = System.nanoTime() + 60_000_000_000L;
        double x = 0;
        while (System.nanoTime() < end) x += Math.sqrt(x + 1);
        System.out.println(x);
    }
}
"""


@pytest.fixture
def nobody_jvm(jdks):
    """A busy JVM run by nobody; yields its pid."""
    classes = tempfile.mkdtemp(prefix="sparkprof-hostile-")  # nobody must read it
    os.chmod(classes, 0o755)
    with open(os.path.join(classes, "Busy.java"), "w") as f:
        f.write(BUSY_JAVA)
    subprocess.run([os.path.join(jdks[17], "bin", "javac"), "-d", classes,
                    os.path.join(classes, "Busy.java")], check=True)
    os.chmod(os.path.join(classes, "Busy.class"), 0o644)
    nobody = pwd.getpwnam("nobody")
    proc = subprocess.Popen(["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}",
                             "--clear-groups", os.path.join(jdks[17], "bin", "java"),
                             "-XX:+PreserveFramePointer", "-cp", classes, "Busy"],
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert proc.stdout.readline().strip() == "ready"
    yield proc.pid
    proc.kill()
    proc.wait()
    shutil.rmtree(classes, ignore_errors=True)


@pytest.mark.parametrize("planted", ["/tmp/perf-{pid}.map", "/tmp/sparkprof-{pid}.log"])
def test_a_fifo_in_tmp_does_not_stall_the_recording(tmp_path, nobody_jvm, planted):
    path = planted.format(pid=nobody_jvm)
    if os.path.lexists(path):  # left by an earlier JVM with the same pid
        os.unlink(path)
    subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                    "mkfifo", path], check=True)
    try:
        start = time.monotonic()
        record(tmp_path / "out", "-a", "-d", "3", timeout=60)
        elapsed = time.monotonic() - start
    finally:
        os.unlink(path)
    # Start-up and writing take about 2 s here; a blocked open never returns.
    assert elapsed < 8, f"record -d 3 took {elapsed:.1f} s"
    stacks = read_folded(tmp_path / "out" / "all.folded")
    assert sum(c for s, c in stacks.items() if s.startswith(f"java-{nobody_jvm};")) > 50, \
        "the JVM's samples were recorded"

"""Files an unprivileged user plants for their own JVM cost only that JVM's
names, never the node's recording (issue: a FIFO at /tmp/perf-PID.map or
/tmp/sparkprof-PID.log blocked `record -a` in open(2))."""
import os
import pwd
import shutil
import subprocess
import tempfile

import pytest

from testlib import read_folded, read_summary, record, record_measured

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


# The same recording without a planted map peaks near 58 MiB here; before
# the bounds, these maps took it to 574 and 433 MiB.
RSS_BOUND_MIB = 96


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


def record_past(tmp_path, jvm_pid, planted_path, seconds=3, min_jvm_samples=50):
    """Records the node for `seconds` with planted_path in place (removed
    after), checks the recording was not stalled or bloated by it and kept
    the JVM's samples; returns summary.json."""
    try:
        proc, wall, rss_mib = record_measured(tmp_path / "out", "-a", "-d", seconds, timeout=60)
    finally:
        os.unlink(planted_path)
    assert proc.returncode == 0, proc.stderr
    summary = read_summary(tmp_path / "out")
    # A blocked open never returns; an unblocked one ends within a second
    # of -d, beyond the start-up summary.json reports.
    assert wall < seconds + summary["startup_s"] + 1, (wall, summary["startup_s"])
    assert rss_mib < RSS_BOUND_MIB, f"peak RSS {rss_mib:.0f} MiB"
    stacks = read_folded(tmp_path / "out" / "all.folded")
    assert sum(c for s, c in stacks.items() if s.startswith(f"java-{jvm_pid};")) > min_jvm_samples, \
        "the JVM's samples were recorded"
    return summary


@pytest.mark.parametrize("planted", ["/tmp/perf-{pid}.map", "/tmp/sparkprof-{pid}.log"])
def test_a_fifo_in_tmp_does_not_stall_the_recording(tmp_path, nobody_jvm, planted):
    path = planted.format(pid=nobody_jvm)
    if os.path.lexists(path):  # left by an earlier JVM with the same pid
        os.unlink(path)
    subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                    "mkfifo", path], check=True)
    record_past(tmp_path, nobody_jvm, path)


def plant_as_nobody(path, write):
    """Makes path as the nobody user (it is their JVM's file) with write(f)."""
    if os.path.lexists(path):  # left by an earlier JVM with the same pid
        os.unlink(path)
    with open(path, "wb") as f:
        write(f)
    nobody = pwd.getpwnam("nobody")
    os.chown(path, nobody.pw_uid, nobody.pw_gid)


def sparse_gigabyte(f):
    f.write(b"1000 10 Planted.first\n")
    f.truncate(1 << 30)
    f.seek(0, os.SEEK_END)
    f.write(b"\n2000 10 Planted.last\n")


def millions_of_lines(f):
    # 3M entries, about 80 MB, nowhere near the JVM's code: they name nothing.
    line = b"%x 10 org/hostile/Planted%07d.method\n"
    for chunk in range(30):
        f.write(b"".join(line % (0x10000 + i * 16, i)
                         for i in range(chunk * 100000, (chunk + 1) * 100000)))


@pytest.mark.parametrize("planted", [sparse_gigabyte, millions_of_lines],
                         ids=["1GB-sparse", "3M-lines"])
def test_a_huge_perf_map_costs_bounded_memory_and_time(tmp_path, nobody_jvm, planted):
    path = f"/tmp/perf-{nobody_jvm}.map"
    plant_as_nobody(path, planted)
    summary = record_past(tmp_path, nobody_jvm, path)
    jvm = [p for p in summary["processes"] if p["pid"] == nobody_jvm]
    assert jvm and jvm[0]["jvm"], summary["processes"]
    perf_map = jvm[0]["perf_map"]
    # What was left out is counted for this process.
    assert perf_map and (perf_map["bytes_skipped"] > 0 or perf_map["entries_dropped"] > 0), perf_map
    if planted is sparse_gigabyte:
        assert perf_map["bytes_skipped"] >= (1 << 30) - (8 << 20), perf_map
        assert perf_map["entries"] == 1, perf_map
    else:
        # The last 8 MiB hold more lines than the entry bound.
        assert perf_map["entries"] == 128 * 1024 and perf_map["entries_dropped"] > 0, perf_map
        assert perf_map["bytes_skipped"] > 100_000_000, perf_map


@pytest.mark.parametrize("planted", ["/tmp/perf-{pid}.map", "/tmp/sparkprof-{pid}.log"])
def test_a_symlink_in_tmp_is_not_followed(tmp_path, nobody_jvm, planted):
    """nobody links their JVM's map (or helper log) to a root-only file
    whose lines look like a map: we must not read it on their behalf."""
    secret = tmp_path / "root-only.map"
    secret.write_text("".join(f"{0x10000 + i * 16:x} 10 Secret.line{i}\n" for i in range(100)))
    os.chmod(secret, 0o600)
    path = planted.format(pid=nobody_jvm)
    if os.path.lexists(path):
        os.unlink(path)
    subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                    "ln", "-s", str(secret), path], check=True)
    summary = record_past(tmp_path, nobody_jvm, path, seconds=2, min_jvm_samples=30)
    jvm = [p for p in summary["processes"] if p["pid"] == nobody_jvm]
    assert jvm and jvm[0]["jvm"] and jvm[0]["perf_map"] is None and not jvm[0]["helper"], jvm
    stacks = read_folded(tmp_path / "out" / "all.folded")
    assert not any("Secret." in s for s in stacks)

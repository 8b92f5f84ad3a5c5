"""Continuous mode, `record --rotate DUR --keep N`, on the host binary:
consecutive interval folders whose samples neither overlap nor leave a gap,
pruning beyond --keep, SIGTERM that leaves complete outputs, and memory that
stays flat across intervals."""
import os
import signal
import subprocess
import time

import pytest

from testlib import SPARKPROF, read_folded, record, remove_helper_files, start_prog
import rotation_check

JAVA_SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "java",
                        "HotMethods.java")


def test_rotation_intervals_are_consecutive(tmp_path, busy_cpus, jfr_tools):
    out = tmp_path / "out"
    proc = record(out, "-a", "-F", "199", "--rotate", "2s", "--keep", "100", "-d", "9")
    intervals = rotation_check.read_intervals(out)
    # About 9 s (and the BPF set-up before -d counts) in 2 s intervals: full
    # ones, and the last, ended by -d.
    span = intervals[-1]["end_monotonic_ns"] - intervals[0]["start_monotonic_ns"]
    assert 9e9 <= span < 12e9, span
    assert len(intervals) == -(-span // 2_000_000_000), (os.listdir(out), proc.stderr)
    for iv in intervals[:-1]:
        assert iv["end_monotonic_ns"] - iv["start_monotonic_ns"] == 2_000_000_000
    assert intervals[-1]["end_monotonic_ns"] - intervals[-1]["start_monotonic_ns"] <= 2e9
    assert sum(iv["records_too_late"] for iv in intervals) == 0
    rotation_check.check_consecutive(intervals, jfr=jfr_tools["jdk17"])
    # The spinners are in every interval, under their own names.
    for iv in intervals:
        stacks = read_folded(os.path.join(iv["dir"], "all.folded"))
        spinning = sum(c for s, c in stacks.items()
                       if s.startswith("hot_functions-") and "spin" in s.split(";"))
        assert spinning > 0, (iv["dir"], stacks.most_common(3))


def test_rotation_prunes_beyond_keep(tmp_path):
    out = tmp_path / "out"
    # A previous run's interval folder (pruned: it is the oldest) and a
    # folder of the user's (never touched).
    os.makedirs(out / "20200101T000000Z")
    (out / "20200101T000000Z" / "all.folded").write_text("x 1\n")
    os.makedirs(out / "notes")
    record(out, "-a", "--rotate", "2s", "--keep", "2", "-d", "9")
    left = rotation_check.interval_folders(out)
    assert len(left) == 2, left
    assert "20200101T000000Z" not in left
    assert (out / "notes").is_dir()
    intervals = rotation_check.read_intervals(out)
    # The two kept are the last two of the run, also when the node is idle
    # (no busy program here): the clock ends intervals that no record did.
    assert [iv["index"] for iv in intervals] == [3, 4], intervals


def test_sigterm_finishes_the_current_interval(tmp_path, busy_cpus, jfr_tools):
    out = tmp_path / "out"
    proc = subprocess.Popen([SPARKPROF, "record", "-a", "-F", "199", "--rotate", "2s",
                             "-o", str(out)], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and len(rotation_check.complete_folders(out)) < 2:
            time.sleep(0.1)
        assert len(rotation_check.complete_folders(out)) >= 2
        time.sleep(0.7)  # in the middle of an interval
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    # Well within a pod's default 30 s grace period.
    assert took < 10, took
    intervals = rotation_check.read_intervals(out)
    assert len(intervals) >= 3, intervals
    last = intervals[-1]
    assert last["end_monotonic_ns"] - last["start_monotonic_ns"] < 2_000_000_000
    rotation_check.check_consecutive(intervals, jfr=jfr_tools["jdk17"])
    for iv in intervals:
        assert {"all.folded", "all.jfr", "summary.json", "interval.json"} <= \
            set(os.listdir(iv["dir"])), iv["dir"]
        assert not [f for f in os.listdir(iv["dir"]) if f.endswith(".tmp")], iv["dir"]


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def test_memory_stays_flat_across_intervals(tmp_path, jdks, agent_path):
    """About 15 intervals of 2 s with a JVM (helper, JIT churn from tasks)
    and a native spinner: the resident size after the warm-up does not grow
    from the first half of the intervals to the second.  Medians: an
    interval's start loads libjvm's symbol table again, a spike of about
    10 MB for a fraction of a second that a 0.25 s poll catches in one half
    or the other, now that the steady size is about 10 MB."""
    classes = tmp_path / "classes"
    subprocess.run([os.path.join(jdks[17], "bin", "javac"), "-d", str(classes), JAVA_SRC],
                   check=True)
    java = subprocess.Popen([os.path.join(jdks[17], "bin", "java"), "-XX:+PreserveFramePointer",
                             f"-agentpath:{agent_path}", "-cp", str(classes), "HotMethods",
                             "60", "2", "20"], stdout=subprocess.DEVNULL)
    spinner, _ = start_prog("hot_functions", 60)
    out = tmp_path / "out"
    rec = subprocess.Popen([SPARKPROF, "record", "-a", "--rotate", "2s", "--keep", "3",
                            "-d", "32", "-o", str(out)], stderr=subprocess.PIPE, text=True)
    samples = []
    try:
        start = time.monotonic()
        while rec.poll() is None:
            rss = rss_kib(rec.pid)
            if rss:
                samples.append((time.monotonic() - start, rss))
            time.sleep(0.25)
        _, err = rec.communicate(timeout=60)
    finally:
        for p in (rec, java, spinner):
            if p.poll() is None:
                p.kill()
                p.wait()
        remove_helper_files([java.pid])
    assert rec.returncode == 0, err
    assert len(rotation_check.complete_folders(out)) == 3
    early = sorted(r for t, r in samples if 6 <= t < 18)
    late = sorted(r for t, r in samples if 18 <= t < 31)
    print(f"RSS median (peak), intervals 4-9: {early[len(early) // 2]} ({early[-1]}) KiB; "
          f"intervals 10-16: {late[len(late) // 2]} ({late[-1]}) KiB")
    assert late[len(late) // 2] <= early[len(early) // 2] * 1.10 + 4096, (early, late)

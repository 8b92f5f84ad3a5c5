"""Wall-clock and off-CPU profiles (`record --wall`, `--off-cpu`): shares of
sleeping time, the Java frame a blocked thread waits in, and agreement
between the CPU profile and the on-CPU part of the wall profile."""
import collections
import json
import os
import re
import subprocess
import time

import pytest

from testlib import PROGS, ROOT, read_folded, record

JAVA_SRC = os.path.join(ROOT, "tests", "java", "BlockedReader.java")


def thread_stacks(stacks, thread):
    """Stacks of one thread in -t output: {frames tuple: count}."""
    return {tuple(s.split(";")[2:]): c for s, c in stacks.items()
            if s.split(";")[1:2] == [thread]}


@pytest.fixture(scope="module")
def sleepy_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("wall")
    proc = record(out, "--wall", "--off-cpu", "-t", "-F", 499, "--",
                  os.path.join(PROGS, "sleep_share"), 4, 20, 20)
    share = float(re.search(r"sleep_share ([0-9.]+)", proc.stdout).group(1))
    return out, share


def test_wall_profile_shows_the_sleeping_share(sleepy_run):
    out, share = sleepy_run
    sleepy = thread_stacks(read_folded(out / "all.wall.folded"), "sleepy")
    total = sum(sleepy.values())
    asleep = sum(c for frames, c in sleepy.items() if "sleep_phase" in frames)
    # The thread lived about 4 s: 400 units of 10 ms.
    assert 360 <= total <= 440, total
    assert abs(asleep / total - share) <= 0.1 * share, (asleep, total, share)
    # Sleeping stacks end in the kernel's nanosleep.
    for frames in sleepy:
        if "sleep_phase" in frames:
            assert any(f.startswith("hrtimer_nanosleep") for f in frames), frames


def test_off_cpu_profile_counts_milliseconds(sleepy_run):
    out, share = sleepy_run
    sleepy = thread_stacks(read_folded(out / "all.offcpu.folded"), "sleepy")
    asleep_ms = sum(c for frames, c in sleepy.items() if "sleep_phase" in frames)
    assert abs(asleep_ms - share * 4000) <= 0.1 * share * 4000, (asleep_ms, share)


def jfr_events(jfr_tool, path, event):
    out = subprocess.run([jfr_tool, "print", "--json", "--events", event, str(path)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["recording"]["events"]


def test_cpu_profile_agrees_with_on_cpu_part_of_wall(sleepy_run, jdks):
    out, _ = sleepy_run
    jfr_tool = os.path.join(jdks[max(jdks)], "bin", "jfr")
    cpu = collections.Counter()
    for e in jfr_events(jfr_tool, out / "all.jfr", "jdk.ExecutionSample"):
        cpu[e["values"]["sampledThread"]["osName"]] += 1
    running = collections.Counter()
    for e in jfr_events(jfr_tool, out / "all.jfr", "profiler.WallClockSample"):
        v = e["values"]
        if v["state"] == "STATE_RUNNABLE":
            running[v["eventThread"]["osName"]] += v["samples"]
    # One CPU sample stands for 1/499 s; one wall sample for 10 ms.
    cpu_ms = cpu["sleepy"] * 1000 / 499
    wall_ms = running["sleepy"] * 10
    assert cpu["sleepy"] > 200, cpu
    assert abs(cpu_ms - wall_ms) <= 0.05 * cpu_ms + 10, (cpu_ms, wall_ms)
    # And the folded CPU profile has the same samples as the JFR file.
    folded = thread_stacks(read_folded(out / "all.folded"), "sleepy")
    assert sum(folded.values()) == cpu["sleepy"]


@pytest.fixture(scope="module")
def blocked_classes(tmp_path_factory, jdks):
    out = tmp_path_factory.mktemp("blocked")
    subprocess.run([os.path.join(jdks[min(jdks)], "bin", "javac"), "-d", str(out), JAVA_SRC],
                   check=True)
    return str(out)


@pytest.mark.parametrize("which", ["oldest", "newest"])
def test_blocked_java_thread_shows_the_frame_it_waits_in(tmp_path, jdks, blocked_classes,
                                                         agent_path, which):
    jdk = jdks[min(jdks)] if which == "oldest" else jdks[max(jdks)]
    java = subprocess.Popen([os.path.join(jdk, "bin", "java"), "-XX:+PreserveFramePointer",
                             f"-agentpath:{agent_path}", "-cp", blocked_classes,
                             "BlockedReader", "12"], stdout=subprocess.PIPE, text=True)
    try:
        pid = int(java.stdout.readline().split()[1])
        time.sleep(3)  # readOne gets compiled
        record(tmp_path, "-p", pid, "--wall", "-t", "-F", 499, "-d", 4)
    finally:
        java.kill()
        java.wait()
    reader = thread_stacks(read_folded(tmp_path / "all.wall.folded"), "blocked-reader")
    total = sum(reader.values())
    in_read = sum(c for frames, c in reader.items() if "BlockedReader.readOne" in frames)
    assert total >= 300, total
    assert in_read / total >= 0.9, sorted(reader.items(), key=lambda kv: -kv[1])[:3]

"""`sparkprof record` on native workloads: names, ratios, kernel frames,
process selection, command mode, exits mid-recording, errors."""
import collections
import json
import os
import signal
import subprocess
import time

import pytest

from testlib import (PROGS, SPARKPROF, read_folded, read_summary, record, samples_with,
                     start_prog, wait_gone, process_root)


@pytest.fixture(scope="module")
def node_recording(tmp_path_factory):
    """One whole-node recording shared by several checks: hot_functions runs
    throughout, and a short-lived copy exits in the middle."""
    out = tmp_path_factory.mktemp("node")
    long_proc, long_pid = start_prog("hot_functions", 10)
    rec = subprocess.Popen([SPARKPROF, "record", "-o", str(out), "-a", "-F", "999", "-d", "7"],
                           stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(2)
        # Starts and exits while the recording runs.
        short_proc, short_pid = start_prog("hot_functions", 2.5)
        wait_gone(short_proc)
        _, stderr = rec.communicate(timeout=120)
    finally:
        wait_gone(long_proc)
    assert rec.returncode == 0, stderr
    stacks = read_folded(out / "all.folded")
    return {"out": out, "stacks": stacks, "long": long_pid, "short": short_pid,
            "stderr": stderr}


def test_hot_functions_are_named_in_their_ratio(node_recording):
    stacks = node_recording["stacks"]
    root = process_root(stacks, node_recording["long"])
    assert root == f"hot_functions-{node_recording['long']}", root
    heavy = samples_with(stacks, "burn_heavy", "spin", root=root)
    light = samples_with(stacks, "burn_light", "spin", root=root)
    assert heavy > 600 and light > 200, (heavy, light)
    # burn_heavy does three times the work of burn_light.
    assert 2.4 <= heavy / light <= 3.6, (heavy, light)
    # Every spin under burn_heavy is under main too; a sample may also land
    # in burn_heavy's own few instructions (the call around spin).
    under_main = samples_with(stacks, "main", "burn_heavy", root=root)
    assert heavy <= under_main <= heavy + max(2, heavy // 100), (heavy, under_main)


def test_syscall_time_has_kernel_frames_under_it(node_recording):
    stacks = node_recording["stacks"]
    root = f"hot_functions-{node_recording['long']}"
    reader = {s: c for s, c in stacks.items()
              if s.startswith(root + ";") and "syscall_reader" in s.split(";")}
    total = sum(reader.values())
    assert total > 100, total
    in_kernel = 0
    for stack, count in reader.items():
        frames = stack.split(";")
        below = frames[frames.index("syscall_reader") + 1:]
        if any(f.endswith("_[k]") for f in below) and "vfs_read_[k]" in below:
            in_kernel += count
    # Reading /dev/zero spends nearly all its time in the kernel.
    assert in_kernel / total > 0.8, (in_kernel, total)
    # No kernel frame above a user frame: kernel frames are the leaf end.
    for stack in reader:
        frames = stack.split(";")
        kernel = [i for i, f in enumerate(frames) if f.endswith("_[k]")]
        if kernel:
            assert all(f.endswith("_[k]") for f in frames[kernel[0]:]), stack


def test_process_that_exits_mid_recording_is_named(node_recording):
    stacks = node_recording["stacks"]
    root = f"hot_functions-{node_recording['short']}"
    assert samples_with(stacks, "burn_heavy", root=root) > 50
    assert samples_with(stacks, "[unknown]", root=root) <= 0.02 * sum(
        c for s, c in stacks.items() if s.startswith(root + ";"))


def test_summary_describes_the_recording(node_recording):
    summary = read_summary(node_recording["out"])
    assert summary["frequency_hz"] == 999
    assert 6.5 <= summary["duration_s"] <= 9
    assert summary["samples"] >= sum(node_recording["stacks"].values())
    for cause in ("ring_buffer_full", "undecodable_records"):
        assert cause in summary["lost"]
    assert "start_time" in summary and summary["start_time"].endswith("Z")
    # The ring holds about a second of 512-byte records at -F on every CPU.
    ring = summary["ring_buffer"]
    assert ring["bytes"] == ring_bytes(os.sysconf("SC_NPROCESSORS_CONF") * 999 * 512), ring
    assert 0 < ring["peak_fill_bytes"] <= ring["bytes"], ring
    by_pid = {p["pid"]: p for p in summary["processes"]}
    assert by_pid[node_recording["long"]]["samples"] > 500
    assert by_pid[node_recording["long"]]["comm"] == "hot_functions"


def ring_bytes(want):
    """A power of two, at least 1 MiB: the kernel's rule and our floor."""
    size = 1 << 20
    while size < want:
        size <<= 1
    return size


@pytest.mark.parametrize("options, want", [
    # --wall adds about 1,000 off-CPU intervals a second per CPU.
    (["--wall"], lambda cpus: cpus * (99 + 1000) * 512),
    (["--off-cpu", "-F", "49"], lambda cpus: cpus * (49 + 1000) * 512),
    (["--ring-buffer", "3"], lambda cpus: 3 << 20),
])
def test_ring_buffer_is_sized_for_the_rate(tmp_path, options, want):
    rec = subprocess.run([SPARKPROF, "record", "-o", str(tmp_path), "-a", "-d", "1", *options],
                         capture_output=True, text=True, timeout=60)
    assert rec.returncode == 0, rec.stderr
    ring = read_summary(tmp_path)["ring_buffer"]
    assert ring["bytes"] == ring_bytes(want(os.sysconf("SC_NPROCESSORS_CONF"))), ring
    assert ring["peak_fill_bytes"] <= ring["bytes"], ring


def test_duration_is_kept_with_every_cpu_busy(tmp_path):
    """Loading kernel symbols must not hold the loop up when busy work
    starves low-priority threads: -d ends the recording on time, and a
    process that starts and exits meanwhile is still named."""
    hogs = [start_prog("hot_functions", 12)[0] for _ in range(3)]
    try:
        time.sleep(0.5)
        rec = subprocess.Popen([SPARKPROF, "record", "-o", str(tmp_path), "-a", "-F", "999",
                                "-d", "3"], stderr=subprocess.PIPE, text=True)
        started = time.monotonic()
        # Once sampling runs: loading the programs takes longer on a busy node.
        head = ""
        while "recording into" not in head and rec.poll() is None:
            head += rec.stderr.readline()
        short, short_pid = start_prog("hot_functions", 1)
        wait_gone(short)
        stderr = head + rec.communicate(timeout=60)[1]
        wall = time.monotonic() - started
    finally:
        for h in hogs:
            h.kill()
            wait_gone(h)
    assert rec.returncode == 0, stderr
    summary = read_summary(tmp_path)
    assert wall < 3 + summary["startup_s"] + 1.5, (wall, summary["startup_s"])
    assert summary["duration_s"] < 4, summary["duration_s"]
    stacks = read_folded(tmp_path / "all.folded")
    assert samples_with(stacks, "burn_heavy", root=f"hot_functions-{short_pid}") > 20


def test_exited_processes_are_freed_after_their_samples_are_named(tmp_path):
    """A whole-node recording frees the tables of each process it sees gone
    (a node starts thousands in an hour), but only once every sample of it
    is named: six processes of half a second each are named as well as one
    that runs throughout, and the summary says which ones exited."""
    long_proc, long_pid = start_prog("hot_functions", 16)
    rec = subprocess.Popen([SPARKPROF, "record", "-o", str(tmp_path), "-a", "-F", "999",
                            "-d", "12"], stderr=subprocess.PIPE, text=True)
    shorts = []
    try:
        time.sleep(2)
        for _ in range(6):
            proc, pid = start_prog("hot_functions", 0.5)
            wait_gone(proc)
            shorts.append(pid)
        _, stderr = rec.communicate(timeout=120)
    finally:
        long_proc.kill()
        wait_gone(long_proc)
    assert rec.returncode == 0, stderr
    stacks = read_folded(tmp_path / "all.folded")
    for pid in shorts + [long_pid]:
        root = f"hot_functions-{pid}"
        total = sum(c for s, c in stacks.items() if s.startswith(root + ";"))
        assert samples_with(stacks, "burn_heavy", root=root) > 0.3 * total > 50, (pid, total)
        assert samples_with(stacks, "[unknown]", root=root) <= 0.02 * total, \
            (pid, [(s, c) for s, c in stacks.items() if s.startswith(root + ";")][:4])
    # A fork sampled before its exec has an entry of its own (a sample or
    # two): the program's entry is the one with its samples.
    by_pid = {}
    for p in read_summary(tmp_path)["processes"]:
        if p["samples"] > by_pid.get(p["pid"], {"samples": -1})["samples"]:
            by_pid[p["pid"]] = p
    assert all(by_pid[pid]["exited"] for pid in shorts), \
        json.dumps([by_pid.get(pid) for pid in shorts])
    assert not by_pid[long_pid]["exited"], by_pid[long_pid]


def test_pid_filter_leaves_other_processes_out(tmp_path):
    wanted, wanted_pid = start_prog("hot_functions", 5)
    other, other_pid = start_prog("hot_functions", 5)
    try:
        record(tmp_path, "-p", wanted_pid, "-F", 999, "-d", 3)
    finally:
        wait_gone(wanted)
        wait_gone(other)
    stacks = read_folded(tmp_path / "all.folded")
    roots = {s.split(";", 1)[0] for s in stacks}
    assert roots == {f"hot_functions-{wanted_pid}"}, roots
    assert samples_with(stacks, "burn_heavy") > 100


def test_pid_mode_ends_when_every_target_has_exited(tmp_path):
    short, short_pid = start_prog("hot_functions", 3)
    longer, longer_pid = start_prog("hot_functions", 5)
    started = time.monotonic()
    try:
        record(tmp_path, "-p", f"{short_pid},{longer_pid}", "-F", 999, "-d", 60, timeout=90)
    finally:
        wait_gone(short)
        wait_gone(longer)
    elapsed = time.monotonic() - started
    # It outlives the longer target (5 s) and stops well before -d 60.
    assert 4.5 <= elapsed < 20, elapsed
    stacks = read_folded(tmp_path / "all.folded")
    roots = {s.split(";", 1)[0] for s in stacks}
    # Start-up may take longer than the short one lives: it is there or not.
    assert f"hot_functions-{longer_pid}" in roots, roots
    assert roots <= {f"hot_functions-{short_pid}", f"hot_functions-{longer_pid}"}, roots
    assert read_summary(tmp_path)["samples"] > 0


def test_command_mode_profiles_the_command_until_it_exits(tmp_path):
    started = time.monotonic()
    proc = record(tmp_path, "-F", 999, "--", os.path.join("build", "progs", "hot_functions"), 2)
    assert time.monotonic() - started < 15
    stacks = read_folded(tmp_path / "all.folded")
    roots = {s.split(";", 1)[0] for s in stacks}
    assert len(roots) == 1 and roots.pop().startswith("hot_functions-"), stacks.keys()
    assert samples_with(stacks, "burn_heavy") > 50
    assert "wrote" in proc.stderr


def test_each_exec_gives_its_pid_one_entry_for_the_new_program(tmp_path):
    """A shell starts a short program 300 times. Each child is sampled around
    its exec: before it (as sh, read by /proc once the exec ran), inside it,
    and after it. Every child must have one hot_functions entry, not a second
    one of a sample or two that the exec report closed. Each child works
    25 ms of its CPU time, so that a busy machine does not shrink its work
    (named under main) beside its fixed start-up (exec, the dynamic loader)."""
    script = f"for i in $(seq 300); do {PROGS}/hot_functions 0.025 cpu >/dev/null; done"
    record(tmp_path, "-F", 999, "--off-cpu", "--no-html", "--no-jfr", "--", "sh", "-c", script)
    entries = collections.Counter(p["pid"] for p in read_summary(tmp_path)["processes"]
                                  if p["comm"] == "hot_functions")
    assert len(entries) >= 250, f"{len(entries)} children seen"
    twice = {pid: n for pid, n in entries.items() if n > 1}
    assert not twice, f"{len(twice)} children with two hot_functions entries: {twice}"
    stacks = read_folded(tmp_path / "all.folded")
    # Entries that waited for the exec were inspected: the children's code is named.
    named = samples_with(stacks, "main") + samples_with(stacks, "reader_main")
    children = sum(n for s, n in stacks.items() if s.startswith("hot_functions-"))
    assert named > 0.8 * children, (named, children)


def test_anonymous_code_of_any_process_is_named_by_its_perf_map(tmp_path):
    """A process that is not a JVM and runs code it made (CPython with -X
    perf, node): its /tmp/perf-PID.map names that code."""
    proc = record(tmp_path, "-F", 999, "--", os.path.join("build", "progs", "anon_code"), 2)
    stacks = read_folded(tmp_path / "all.folded")
    total = sum(stacks.values())
    named = sum(n for s, n in stacks.items() if "anon_spin" in s.split(";"))
    assert total > 100 and named >= 0.9 * total, (named, total, proc.stderr)


def test_pid_mode_follows_the_targets_children(tmp_path):
    """A PySpark executor's Python workers are its children (forked before
    and during the recording): `-p EXECUTOR` profiles them too."""
    script = ("import os, sys, time\n"
              "until = time.time() + 6\n"
              "def burn():\n    while time.time() < until:\n        pass\n"
              "early = os.fork()\n"
              "if early == 0:\n    burn(); os._exit(0)\n"
              "print('ready', flush=True)\n"
              "time.sleep(2)\n"
              "late = os.fork()\n"
              "if late == 0:\n    burn(); os._exit(0)\n"
              "print(early, late, flush=True)\n"
              "os.waitpid(early, 0); os.waitpid(late, 0)\n")
    parent = subprocess.Popen(["python3", "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout.readline().strip() == "ready"
        record(tmp_path, "-p", parent.pid, "-F", 199, "-d", 4)
        early, late = map(int, parent.stdout.readline().split())
    finally:
        parent.wait(timeout=30)
    roots = collections.Counter()
    for stack, n in read_folded(tmp_path / "all.folded").items():
        roots[stack.split(";", 1)[0]] += n
    for pid in (early, late):
        assert sum(n for r, n in roots.items() if r.endswith(f"-{pid}")) > 100, roots


def test_sigint_still_writes_what_was_recorded(tmp_path):
    prog, pid = start_prog("hot_functions", 8)
    rec = subprocess.Popen([SPARKPROF, "record", "-o", str(tmp_path), "-F", "999", "-p", str(pid)],
                           stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(3)
        rec.send_signal(signal.SIGINT)
        _, err = rec.communicate(timeout=60)
    finally:
        wait_gone(prog)
    assert rec.returncode == 0, err
    assert samples_with(read_folded(tmp_path / "all.folded"), "burn_heavy") > 50
    assert read_summary(tmp_path)["samples"] > 0


def run_bad(*args, user=None):
    cmd = [SPARKPROF, "record", *map(str, args)]
    if user:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups",
               "--inh-caps=-all", *cmd]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    return proc.returncode, lines


@pytest.mark.parametrize("args,needle", [
    (["-p", "999999999"], "-p"),
    (["-p", "4194000"], "no process with pid 4194000"),
    (["-F", "0"], "-F"),
    (["-F", "abc"], "-F"),
    (["-d", "-3"], "-d"),
    (["--bogus"], "--bogus"),
    (["--wall=xyz"], "--wall"),
    (["--threads", "some"], "--threads"),
    (["--executors", "1-"], "--executors"),
    (["-o", "/proc/sparkprof-cannot-be-here", "-d", "1"], "/proc/sparkprof-cannot-be-here"),
])
def test_bad_input_gets_one_clear_line(args, needle):
    code, lines = run_bad(*args)
    assert code != 0
    assert len(lines) == 1 and lines[0].startswith("sparkprof: error: "), lines
    assert needle in lines[0], lines


def test_not_root_is_refused_clearly(tmp_path):
    os.chmod(tmp_path, 0o777)
    code, lines = run_bad("-o", tmp_path / "out", "-d", "1", user=65534)
    assert code != 0
    assert len(lines) == 1 and "needs root" in lines[0], lines


def test_recording_without_samples_still_writes_every_file(tmp_path, jdks):
    idle = subprocess.Popen(["sleep", "30"])
    try:
        record(tmp_path, "-p", idle.pid, "-d", 1)
    finally:
        idle.kill()
        idle.wait()
    assert read_folded(tmp_path / "all.folded") == {}
    assert read_summary(tmp_path)["samples"] == 0
    jfr = os.path.join(jdks[min(jdks)], "bin", "jfr")
    out = subprocess.run([jfr, "summary", str(tmp_path / "all.jfr")], capture_output=True,
                         text=True)
    assert out.returncode == 0 and "spark.ProfileLabel" in out.stdout, out.stdout + out.stderr

"""`sparkprof record` on real JVMs: Java frames named from the helper's live
JIT symbols, full thread names (renames included), helper loaded at start or
attached late, on JDK 17 and the newest JDK on the machine."""
import json
import os
import re
import subprocess
import sys
import threading
import time

import pytest

from testlib import ROOT, SPARKPROF, read_folded, read_summary, record, remove_helper_files

sys.path.insert(0, os.path.join(ROOT, "tests", "jfr"))
import jfrtest  # noqa: E402

JAVA_SRC = os.path.join(ROOT, "tests", "java", "HotMethods.java")
SHARES_SRC = os.path.join(ROOT, "tests", "java", "JitShares.java")
HOT = {0: "HotAlpha.spin", 1: "HotBeta.spin", 2: "HotGamma.spin"}


@pytest.fixture(scope="module")
def hot_classes(tmp_path_factory, jdks):
    """HotMethods and JitShares compiled once with the oldest JDK, so every
    JDK runs them."""
    out = tmp_path_factory.mktemp("hotmethods")
    javac = os.path.join(jdks[min(jdks)], "bin", "javac")
    subprocess.run([javac, "-d", str(out), JAVA_SRC, SHARES_SRC], check=True)
    return str(out)


class JavaWorkload:
    """A running HotMethods; collects what it prints (pid, thread names)."""

    def __init__(self, jdk_home, classes, seconds, workers, tasks_per_s, agent=None,
                 wrapper=()):
        cmd = [*wrapper, os.path.join(jdk_home, "bin", "java"), "-XX:+PreserveFramePointer"]
        if agent:
            cmd.append(f"-agentpath:{agent}")
        cmd += ["-cp", classes, "HotMethods", str(seconds), str(workers), str(tasks_per_s)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)
        self.names = set()
        self.lines = []
        first = self.proc.stdout.readline()
        assert first.startswith("pid "), first
        self.pid = int(first.split()[1])
        if wrapper:  # the pid it printed is its own namespace's: find ours
            self.pid = host_pid_of(self.proc.pid)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)
            m = re.match(r"name \d+ (.*)$", line.rstrip("\n"))
            if m:
                self.names.add(m.group(1))

    def finish(self):
        try:
            self.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(timeout=10)
        remove_helper_files([self.pid])

    def record_after(self, warmup_s, out, *args):
        """`sparkprof record -p PID ARGS` into out after warmup_s seconds;
        the workload is then waited for, whatever happened."""
        try:
            time.sleep(warmup_s)
            return record(out, "-p", self.pid, *args)
        finally:
            self.finish()


def host_pid_of(wrapper_pid):
    """The java process started (as a descendant) by wrapper_pid."""
    for _ in range(100):
        out = subprocess.run(["pgrep", "-x", "java", "-P", str(wrapper_pid)],
                             capture_output=True, text=True).stdout.split()
        if not out:  # unshare --fork: java is a grandchild
            for child in subprocess.run(["pgrep", "-P", str(wrapper_pid)], capture_output=True,
                                        text=True).stdout.split():
                out += subprocess.run(["pgrep", "-x", "java", "-P", child],
                                      capture_output=True, text=True).stdout.split()
        if out:
            return int(out[0])
        time.sleep(0.1)
    raise AssertionError(f"no java under {wrapper_pid}")


def thread_samples(stacks, pid):
    """{thread name: Counter of stacks below it} for process pid (-t output)."""
    by_thread = {}
    prefix = f"java-{pid};"
    for stack, count in stacks.items():
        if not stack.startswith(prefix):
            continue
        parts = stack.split(";")
        by_thread.setdefault(parts[1], []).append((parts[2:], count))
    return by_thread


TASK_PREFIX = "Executor task launch worker for task"


def assert_task_names_exact(by_thread, work, minimum):
    """At least `minimum` renamed task threads, each named exactly as the
    program named it, character for character. Returns their names."""
    task_names = [t for t in by_thread if t.startswith(TASK_PREFIX)]
    assert len(task_names) >= minimum, sorted(by_thread)
    unknown = [t for t in task_names if t not in work.names]
    assert not unknown, unknown[:5]
    return task_names


def assert_workers_named(stacks, pid, workers, min_share=0.95):
    by_thread = thread_samples(stacks, pid)
    for i in range(workers):
        samples = by_thread.get(f"hot-worker-{i}", [])
        total = sum(c for _, c in samples)
        named = sum(c for frames, c in samples if HOT[i % 3] in frames)
        assert total >= 100, (i, total, sorted(by_thread))
        # After warm-up nearly every sample of a worker is in its hot method.
        assert named / total >= min_share, (i, named, total,
                                       sorted(samples, key=lambda s: -s[1])[:5])


@pytest.mark.parametrize("which", ["oldest", "newest"])
def test_java_methods_named_with_helper_at_start(tmp_path, jdks, hot_classes, agent_path, which):
    jdk = jdks[min(jdks)] if which == "oldest" else jdks[max(jdks)]
    work = JavaWorkload(jdk, hot_classes, 14, 3, 0, agent=agent_path)
    work.record_after(4, tmp_path, "-t", "-F", 499, "-d", 5)  # 4 s: the hot methods get compiled
    assert_workers_named(read_folded(tmp_path / "all.folded"), work.pid, 3)


def test_summary_says_where_memory_went(tmp_path, jdks, hot_classes, agent_path):
    """summary.json's memory: the heap bytes of each owner when sampling
    stopped, so a user can tell what a long recording's memory holds."""
    work = JavaWorkload(jdks[max(jdks)], hot_classes, 10, 2, 0, agent=agent_path)
    work.record_after(3, tmp_path, "--wall", "-F", 499, "-d", 4)
    with open(tmp_path / "summary.json") as f:
        mem = json.load(f)["memory"]
    owners = ["sample_store", "jit", "thread_histories", "address_names", "elf_symbols",
              "kernel_symbols", "queued_records"]
    assert all(mem[k] > 0 for k in owners), mem
    # the JIT store describes the workload's compiled methods: over 64 KiB
    assert mem["jit"] > 64 << 10, mem
    # kallsyms alone is megabytes; the parts are heap bytes within the RSS
    assert mem["kernel_symbols"] > 1 << 20, mem
    assert 8 << 10 < mem["rss_kib"] and sum(mem[k] for k in owners) < mem["rss_kib"] * 1024, mem
    # a short recording is one segment of the store, under the default 16 MiB
    assert mem["store_segments"] == 1 and mem["store_samples_lost"] == 0, mem
    assert 0 < mem["sample_store"] < 16 << 20 and mem["store_file_bytes"] > 0, mem
    assert mem["longest_segment_close_ms"] <= mem["segment_close_ms"], mem


def test_store_in_many_segments_keeps_every_sample(tmp_path, jdks, hot_classes, agent_path,
                                                  jfr_tools):
    """--stack-memory 24K: a busy JVM's samples pass it within a second, so
    the recording writes its store in many segments.  The folded files,
    written from them merged, still hold every sample (the JFR file, written
    from them in time order, counts the same), wall time included, and the
    Java workers stay named."""
    work = JavaWorkload(jdks[max(jdks)], hot_classes, 11, 2, 10, agent=agent_path)
    work.record_after(3, tmp_path, "-t", "--wall", "-F", 999, "-d", 5,
                      "--stack-memory", "24K")
    with open(tmp_path / "summary.json") as f:
        summary = json.load(f)
    mem = summary["memory"]
    assert mem["store_segments"] >= 3 and mem["store_samples_lost"] == 0, mem
    assert mem["longest_segment_close_ms"] <= mem["segment_close_ms"], mem
    stacks = read_folded(tmp_path / "all.folded")
    assert sum(stacks.values()) == summary["samples"], (sum(stacks.values()), summary["samples"])
    for label, tool in jfr_tools.items():
        chunks, counts = jfrtest.jfr_summary(tool, str(tmp_path / "all.jfr"))
        # a chunk ends with each segment
        assert chunks >= mem["store_segments"], (label, chunks)
        assert counts["jdk.ExecutionSample"] == summary["samples"], (label, counts)
    # wall: on-CPU samples and off-CPU time in 10 ms units, each line
    # rounded (lines under half a unit are left out, hence the 1%)
    node = [o for o in summary["outputs"] if o["name"] == "all"][0]
    wall = read_folded(tmp_path / "all.wall.folded")
    want = (summary["samples"] * 1e9 / 999 / 1e7) + node["off_cpu_ms"] / 10
    assert abs(sum(wall.values()) - want) <= len(wall) / 2 + 1 + want / 100, \
        (sum(wall.values()), want)
    assert_workers_named(stacks, work.pid, 2)
    assert (tmp_path / "all.html").stat().st_size > 0
    assert (tmp_path / "all.wall.html").stat().st_size > 0


@pytest.mark.parametrize("which", ["oldest", "newest"])
def test_java_methods_named_after_late_attach(tmp_path, jdks, hot_classes, agent_path, which):
    jdk = jdks[min(jdks)] if which == "oldest" else jdks[max(jdks)]
    work = JavaWorkload(jdk, hot_classes, 16, 3, 0)
    # 4 s: the code is compiled before the helper arrives
    proc = work.record_after(4, tmp_path, "--attach", "--agent", agent_path, "-t",
                             "-F", 499, "-d", 5)
    assert "attached the helper" in proc.stderr, proc.stderr
    assert_workers_named(read_folded(tmp_path / "all.folded"), work.pid, 3)


def test_thread_names_match_java_names_with_renames(tmp_path, jdks, hot_classes, agent_path):
    work = JavaWorkload(jdks[max(jdks)], hot_classes, 12, 1, 20, agent=agent_path)
    work.record_after(3, tmp_path, "-t", "-F", 999, "-d", 5)
    by_thread = thread_samples(read_folded(tmp_path / "all.folded"), work.pid)
    task_names = assert_task_names_exact(by_thread, work, 10)
    # Samples of a renamed task thread run the task's method.
    in_task = sum(c for t in task_names for frames, c in by_thread[t] if "HotDelta.spin" in frames)
    total = sum(c for t in task_names for _, c in by_thread[t])
    assert in_task / total >= 0.8, (in_task, total)


def test_thread_names_in_another_pid_namespace(tmp_path, jdks, hot_classes, agent_path):
    """A JVM in its own pid namespace (as in a container) publishes its own
    thread ids; the profiler translates them."""
    work = JavaWorkload(jdks[min(jdks)], hot_classes, 12, 1, 20, agent=agent_path,
                        wrapper=("unshare", "--pid", "--fork", "--mount-proc"))
    try:
        with open(f"/proc/{work.pid}/status") as f:
            nstgid = [l for l in f if l.startswith("NStgid:")][0].split()[1:]
        assert len(nstgid) == 2 and nstgid[1] != str(work.pid), nstgid
        time.sleep(3)
        record(tmp_path, "-p", work.pid, "-t", "-F", 999, "-d", 4)
    finally:
        work.finish()
    by_thread = thread_samples(read_folded(tmp_path / "all.folded"), work.pid)
    assert_task_names_exact(by_thread, work, 5)
    assert_workers_named(read_folded(tmp_path / "all.folded"), work.pid, 1)


def test_process_that_execs_into_a_jvm_is_inspected_again(tmp_path, jdks, hot_classes,
                                                          agent_path):
    """A launcher that burns CPU (so it is sampled and inspected as a shell)
    and then execs a JVM, as Spark's worker scripts do: the JVM's frames and
    full thread names are still found."""
    java = os.path.join(jdks[min(jdks)], "bin", "java")
    script = ("i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; "
              f"exec {java} -XX:+PreserveFramePointer -agentpath:{agent_path} "
              f"-cp {hot_classes} HotMethods 7 1 20")
    proc = record(tmp_path, "-t", "-F", 499, "--", "sh", "-c", script)
    stacks = read_folded(tmp_path / "all.folded")
    roots = {s.split(";", 1)[0] for s in stacks}
    pid = int(re.search(r"^pid (\d+)", proc.stdout, re.M).group(1))
    assert f"sh-{pid}" in roots and f"java-{pid}" in roots, roots
    by_thread = thread_samples(stacks, pid)
    assert [t for t in by_thread if t.startswith(TASK_PREFIX)], sorted(by_thread)
    # This JVM starts inside the recording: its first seconds run
    # interpreted, so the share of named samples is lower than after warm-up.
    assert_workers_named(stacks, pid, 1, min_share=0.6)


def test_jvm_that_exits_mid_recording_keeps_its_names(tmp_path, jdks, hot_classes, agent_path):
    work = JavaWorkload(jdks[max(jdks)], hot_classes, 6, 2, 0, agent=agent_path)
    try:
        time.sleep(2)
        # The JVM exits about 4 s into this 8 s recording.
        record(tmp_path, "-p", work.pid, "-t", "-F", 499, "-d", 8)
    finally:
        work.finish()
    assert_workers_named(read_folded(tmp_path / "all.folded"), work.pid, 2)


def test_short_jvms_with_the_helper_are_named(tmp_path, jdks, hot_classes, agent_path):
    """JVMs that live about 1.5 s: each one's helper log is found while it
    lives, so its JIT frames are named (the log used to be looked for every
    2 s, and 3-5 of 8 such JVMs had no Java frame named)."""
    rec = subprocess.Popen([SPARKPROF, "record", "-o", str(tmp_path), "-a", "-t", "-F", "499",
                            "-d", "25"], stderr=subprocess.PIPE, text=True)
    pids = []
    try:
        time.sleep(2)  # start-up
        for _ in range(8):
            work = JavaWorkload(jdks[min(jdks)], hot_classes, 1.2, 1, 0, agent=agent_path)
            work.finish()
            pids.append(work.pid)
    finally:
        _, err = rec.communicate(timeout=120)
    assert rec.returncode == 0, err
    stacks = read_folded(tmp_path / "all.folded")
    for pid in pids:
        frames = [f for stack, _ in thread_samples(stacks, pid).get("hot-worker-0", [])
                  for f in stack]
        assert len(frames) > 0, (pid, "no samples of its worker")
        assert "HotAlpha.spin" in frames, (pid, sorted(set(frames))[:20])
    # Each was seen gone while the recording ran, and its tables freed
    # (named first: the names above come from them).
    jvms = {p["pid"]: p for p in read_summary(tmp_path)["processes"] if p["jvm"]}
    assert all(jvms[pid]["exited"] and jvms[pid]["helper"] for pid in pids), \
        [jvms.get(pid) for pid in pids]


def test_malformed_perf_map_without_helper_is_survived(tmp_path, jdks, hot_classes):
    """A JVM without the helper whose /tmp/perf-PID.map is garbage: the
    recording goes on, JIT frames read [unknown], never a name from the
    garbage, and the JVM's native frames are still named."""
    work = JavaWorkload(jdks[min(jdks)], hot_classes, 10, 1, 0)
    map_path = f"/tmp/perf-{work.pid}.map"
    try:
        with open(map_path, "w") as f:
            f.write("zzzz not hex at all\n0 0\n\x00\x01\x02\n"
                    "7fffffffffffffff ffffffffffffffff overflow\n" + "x" * 100000 + "\n")
        time.sleep(2)
        record(tmp_path, "-p", work.pid, "-t", "-F", 499, "-d", 3)
    finally:
        work.finish()  # removes the map too
    by_thread = thread_samples(read_folded(tmp_path / "all.folded"), work.pid)
    worker = by_thread.get("hot-worker-0", [])
    assert sum(c for _, c in worker) > 100, sorted(by_thread)
    leaves = {frames[-1] for frames, _ in worker if frames}
    assert "[unknown]" in leaves, leaves
    # Exact names, not substrings: libjvm has real frames such as
    # InterpreterRuntime::frequency_counter_overflow_inner.
    garbage = {"overflow", "x" * 100000, "zzzz not hex at all", "not hex at all",
               "hex at all", "at all", "all", "0", "\x00\x01\x02"}
    frames_seen = {f for frames, _ in worker for f in frames}
    assert not frames_seen & garbage, frames_seen & garbage
    assert any("JavaThread::" in f for frames, _ in worker for f in frames)


KERNELS = ("KernelOne.run", "KernelTwo.run", "KernelThree.run", "KernelFour.run")


@pytest.mark.parametrize("which", ["oldest", "newest"])
def test_late_attach_on_a_busy_node_keeps_the_kernels_shares(tmp_path, jdks, hot_classes,
                                                             agent_path, busy_cpus, which):
    """JitShares gives four kernels 10/20/30/40% of one thread's CPU time.
    The helper is attached while they are still being compiled, with every
    CPU busy, to a JVM without -XX:+PreserveFramePointer (as an executor
    started without our options runs): compiled frames are stepped over by
    their size, so each sample keeps its kernel whatever the JIT inlined."""
    jdk = jdks[min(jdks)] if which == "oldest" else jdks[max(jdks)]
    java = subprocess.Popen([os.path.join(jdk, "bin", "java"), "-cp", hot_classes,
                             "JitShares", "14"], stdout=subprocess.PIPE, text=True)
    pid = java.pid
    try:
        pid = int(java.stdout.readline().split()[1])
        time.sleep(0.5)
        proc = record(tmp_path, "-p", pid, "--attach", "--agent", agent_path, "-t",
                      "-F", 999, "-d", 8)
        measured = [int(x) for x in java.communicate(timeout=120)[0].split("cpu ")[1].split()[:4]]
    finally:
        if java.poll() is None:
            java.kill()
            java.wait()
        remove_helper_files([pid])
    assert "attached the helper" in proc.stderr, proc.stderr
    # The workload's own split, by the thread CPU clock.
    for i, ns in enumerate(measured):
        assert abs(ns / sum(measured) - (i + 1) / 10) < 0.01, measured
    worker = thread_samples(read_folded(tmp_path / "all.folded"), pid)["shares-worker"]
    total = sum(c for _, c in worker)
    by_kernel = {k: 0 for k in KERNELS}
    unnamed = whole = 0
    for frames, count in worker:
        found = [k for k in KERNELS if k in frames]
        assert len(found) <= 1, frames
        if found:
            by_kernel[found[0]] += count
        else:
            unnamed += count
        whole += count if "java/lang/Thread.run" in frames else 0
    named = sum(by_kernel.values())
    # (1,000 samples: what a 10% share needs to be measured to 10%.)
    assert total >= 1000 and unnamed <= 0.03 * total, (total, unnamed, worker[:5])
    assert whole >= 0.95 * total, (whole, total)
    for i, kernel in enumerate(KERNELS):
        want = (i + 1) / 10
        assert abs(by_kernel[kernel] / named - want) <= 0.1 * want, by_kernel

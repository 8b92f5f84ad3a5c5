"""Complete Java stacks (docs/stack-walker.md): interpreted frames named,
waits keep their Java callers, stacks deeper than 127 frames, on JDK 17 and
the newest JDK, with and without the helper."""
import json
import os
import subprocess
import time

import pytest

from testlib import ROOT, read_folded, read_summary, record, remove_helper_files

JAVA_SRC = os.path.join(ROOT, "tests", "java", "JavaStacks.java")
INTERP_CHAIN = ["JavaStacks$InterpChain.outer", "JavaStacks$InterpChain.middle",
                "JavaStacks$InterpChain.inner"]


@pytest.fixture(scope="module")
def classes(tmp_path_factory, jdks):
    out = tmp_path_factory.mktemp("javastacks")
    subprocess.run([os.path.join(jdks[min(jdks)], "bin", "javac"), "-d", str(out), JAVA_SRC],
                   check=True)
    return str(out)


class Workload:
    def __init__(self, jdk, classes, mode, seconds, *jvm_args, agent=None, extra=(),
                 frame_pointers=True):
        cmd = [os.path.join(jdk, "bin", "java"), *jvm_args]
        if frame_pointers:
            cmd.insert(1, "-XX:+PreserveFramePointer")
        if agent:
            cmd.append(f"-agentpath:{agent}")
        cmd += ["-cp", classes, "JavaStacks", mode, str(seconds), *extra]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True)
        first = self.proc.stdout.readline()
        assert first.startswith("pid "), first
        self.pid = int(first.split()[1])
        line = self.proc.stdout.readline()
        assert line.strip() == "ready", line

    def finish(self):
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        remove_helper_files([self.pid])


def thread_stacks(stacks, pid, thread):
    """[(frames below the thread frame, count)] of one thread (-t output)."""
    prefix = f"java-{pid};{thread};"
    return [(s[len(prefix):].split(";"), c) for s, c in stacks.items() if s.startswith(prefix)]


def has_run(frames, run):
    """Whether run's frames follow each other somewhere in frames."""
    return any(frames[i:i + len(run)] == run for i in range(len(frames)))


def record_thread(tmp_path, work, thread, warmup_s, hz, seconds):
    """Records work's JVM with -t after warmup_s, ends the workload, and
    returns (samples of one thread, their total)."""
    try:
        time.sleep(warmup_s)
        record(tmp_path, "-p", work.pid, "-t", "-F", hz, "-d", seconds)
    finally:
        work.finish()
    samples = thread_stacks(read_folded(tmp_path / "all.folded"), work.pid, thread)
    return samples, sum(c for _, c in samples)


def jdk_of(jdks, which):
    return jdks[min(jdks)] if which == "oldest" else jdks[max(jdks)]


@pytest.mark.parametrize("helper", ["helper", "no-helper"])
@pytest.mark.parametrize("which", ["oldest", "newest"])
def test_interpreted_methods_are_named(tmp_path, jdks, classes, agent_path, which, helper):
    work = Workload(jdk_of(jdks, which), classes, "interp", 8,
                    "-XX:CompileCommand=quiet", "-XX:CompileCommand=exclude,JavaStacks$InterpChain::*",
                    agent=agent_path if helper == "helper" else None)
    samples, total = record_thread(tmp_path, work, "interp-chain", 1, 499, 4)
    assert total >= 500, total
    summary = read_summary(tmp_path)
    assert summary["frames"]["interpreted"] >= total * 3
    # Frames sampled before the walker had the JVM's layout are unnamed:
    # on a busy node that takes longer, so the thread's share of that time
    # is allowed beside the limits.
    jvm = next(p for p in summary["processes"] if p["pid"] == work.pid)
    walked = jvm["java_walked_s"]
    assert walked is not None and walked < summary["duration_s"] / 2, (walked, summary["duration_s"])
    before = total * walked / summary["duration_s"]
    # Root first in folded stacks: outer;middle;inner in that order.
    chained = sum(c for frames, c in samples if has_run(frames, INTERP_CHAIN))
    assert chained >= 0.95 * total - before, (chained, total, walked, samples[:3])
    anonymous = sum(c for frames, c in samples if "Interpreter" in frames)
    assert anonymous <= 0.02 * total + before, (anonymous, total, walked)


@pytest.mark.parametrize("which", ["oldest", "newest"])
def test_compiled_callers_of_interpreted_methods_reach_the_root(tmp_path, jdks, classes,
                                                                agent_path, which):
    """Compiled code calls a method kept in the interpreter through a c2i
    adapter, whose arguments lie between the two frames. Without
    PreserveFramePointer only the compiled frame's size leads on, counted
    from the interpreted frame's saved sender sp."""
    work = Workload(jdk_of(jdks, which), classes, "mixed", 9, "-XX:CompileCommand=quiet",
                    "-XX:CompileCommand=exclude,JavaStacks$MixedCallee::*",
                    agent=agent_path, frame_pointers=False)
    # 3 s: step gets compiled
    samples, total = record_thread(tmp_path, work, "mixed-calls", 3, 499, 4)
    assert total >= 500, total
    chain = ["JavaStacks$Mixed.step", "JavaStacks$MixedCallee.work"]
    in_callee = [(frames, c) for frames, c in samples if chain[1] in frames]
    called = sum(c for _, c in in_callee)
    whole = sum(c for frames, c in in_callee
                if frames[0] == "start_thread" and has_run(frames, chain))
    assert called / total >= 0.8, (called, total)
    assert whole / called >= 0.95, (whole, called, sorted(in_callee, key=lambda s: -s[1])[:3])


@pytest.mark.parametrize("which", ["oldest", "newest"])
def test_inlined_methods_are_named_under_their_callers(tmp_path, jdks, classes, agent_path, which):
    """The helper's J and N records (numbered names) give the frames C2
    inlined, in their callers' order, in folded stacks and JFR."""
    work = Workload(jdk_of(jdks, which), classes, "inline", 9, agent=agent_path)
    # 3 s: loop gets compiled, with middle and leaf inlined
    samples, total = record_thread(tmp_path, work, "inline-loop", 3, 499, 4)
    assert total >= 500, total
    chain = ["JavaStacks$Inlined.loop", "JavaStacks$Inlined.middle"]
    inlined = sum(c for frames, c in samples if has_run(frames, chain))
    assert inlined / total >= 0.3, (inlined, total, sorted(samples, key=lambda s: -s[1])[:3])
    # JFR says which frames were inlined: middle (and leaf) are, the
    # compiled method that holds them is not.
    out = subprocess.run([os.path.join(jdk_of(jdks, "newest"), "bin", "jfr"), "print", "--json",
                          "--events", "jdk.ExecutionSample", str(tmp_path / "all.jfr")],
                         capture_output=True, text=True, check=True).stdout
    types = {}
    for e in json.loads(out)["recording"]["events"]:
        for f in e["values"]["stackTrace"]["frames"]:
            m = f["method"]
            if m["type"]["name"] == "JavaStacks$Inlined":
                types.setdefault(m["name"], set()).add(f["type"])
    assert types.get("middle") == {"Inlined"} and types.get("leaf") == {"Inlined"}, types
    assert "JIT compiled" in types.get("loop", set()) | types.get("run", set()), types


@pytest.mark.parametrize("which", ["oldest", "newest"])
def test_recursion_deeper_than_1000_frames_reaches_the_thread_root(tmp_path, jdks, classes,
                                                                   agent_path, which):
    work = Workload(jdk_of(jdks, which), classes, "deep", 10, agent=agent_path)
    # 2 s: the recursion gets compiled
    samples, total = record_thread(tmp_path, work, "deep-recursion", 2, 199, 4)
    assert total >= 200, total
    whole = sum(c for frames, c in samples
                if frames.count("JavaStacks$Deep.recurse") >= 1200 and frames[0] == "start_thread")
    assert whole / total >= 0.9, (whole, total, [len(f) for f, _ in samples[:5]])


def test_stacks_deeper_than_the_walker_are_cut_and_counted(tmp_path, jdks, classes, agent_path):
    """The walker stops at 2048 frames: a 2500-deep recursion keeps its leaf
    side and ends in a marker frame, and summary.json counts it."""
    work = Workload(jdks[max(jdks)], classes, "deep", 10, "-Xint", "-Xss64m", agent=agent_path,
                    extra=["2500"])
    samples, total = record_thread(tmp_path, work, "deep-recursion", 2, 99, 3)
    # A share of what it got: a busy node gives the thread less CPU.
    assert total >= 50, (total, read_summary(tmp_path).get("lost"))
    cut = [(f, c) for f, c in samples if f[0] == "[truncated: deeper frames not walked]"]
    assert sum(c for _, c in cut) / total >= 0.9, (total, [f[:2] for f, _ in samples[:5]])
    # The leaf side is kept: the spinning method or the recursion within the
    # last user frames (clock reads may sit below it; a page fault or an
    # interrupt adds a dozen kernel frames under any of them).
    user = [([x for x in f if not x.endswith("_[k]")], f) for f, _ in cut]
    lost_leaf = [f[-16:] for u, f in user
                 if "JavaStacks.spinFor" not in u[-10:] and "JavaStacks$Deep.recurse" not in u[-10:]]
    assert not lost_leaf, lost_leaf[:3]
    assert read_summary(tmp_path)["partial_stacks"]["user_stack_truncated"] > 0


WAITS = {
    "w-sleep": "JavaStacks$Waits.sleepLoop",
    "w-park": "JavaStacks$Waits.parkLoop",
    "w-wait": "JavaStacks$Waits.waitLoop",
    "w-monitor": "JavaStacks$Waits.enterMonitor",
    "w-read": "JavaStacks$Waits.readLoop",
}


@pytest.mark.parametrize("which", ["oldest", "newest"])
def test_every_wait_keeps_its_java_callers(tmp_path, jdks, classes, agent_path, which):
    work = Workload(jdk_of(jdks, which), classes, "waits", 10, agent=agent_path)
    try:
        record(tmp_path, "-p", work.pid, "-t", "--wall", "-F", 99, "-d", 4)
    finally:
        work.finish()
    stacks = read_folded(tmp_path / "all.wall.folded")
    for thread, method in WAITS.items():
        samples = thread_stacks(stacks, work.pid, thread)
        total = sum(c for _, c in samples)
        # Each thread spends the whole recording in its wait: 4 s of wall
        # time in 10 ms units, nearly all of it under its Java method.
        assert total >= 300, (thread, total)
        under = sum(c for frames, c in samples if method in frames)
        assert under / total >= 0.9, (thread, under, total,
                                      sorted(samples, key=lambda s: -s[1])[:2])
    assert read_summary(tmp_path)["java_stacks_continued_from_last_java_frame"] > 0

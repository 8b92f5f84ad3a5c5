#!/usr/bin/env python3
"""BPF handler cost per sample against Java stack depth (issue: complete Java
stacks). A JVM runs tests/java/JavaStacks.java's recursion at each depth,
interpreted (-Xint: one physical frame per Java frame, each named from its
Method*) and compiled (frames as the JIT lays them out; with frame
pointers, and without: each compiled frame then stepped over by its size),
and sparkprof samples only that JVM; the sampling program's run time per sample comes from
BPF run-time statistics (kernel.bpf_stats_enabled, bpftool). The same JVM
without the walker's layout (plain bpf_get_stack, 127 frames at most) is in
the last column (`record --no-java-walker`).

Beside it, sparkprof's own CPU per sample on the steady path: two
recordings of the same JVM, of 2 s and of 2 + N s, and the difference of
their user+sys CPU over the difference of their samples (start-up cancels
out).

Usage: bench/walker_depth.py [--seconds N] [--depths 32,128,512,2048]
                             [--sparkprof PATH] (another build, to compare)
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_cost import BpfStats  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPARKPROF = os.path.join(ROOT, "sparkprof")
JAVA_SRC = os.path.join(ROOT, "tests", "java", "JavaStacks.java")


def jdk_homes():
    """Every JDK with a javac (links to one are skipped)."""
    jvms = "/usr/lib/jvm"
    return [os.path.join(jvms, d) for d in sorted(os.listdir(jvms))
            if os.path.exists(os.path.join(jvms, d, "bin", "javac"))
            and not os.path.islink(os.path.join(jvms, d))]


def record_cpu(sparkprof, pid, seconds, record_args, out):
    """One recording of pid: (its user+sys CPU seconds, samples)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sparkprof, "record", "-p", str(pid), "-F", "999", "-d", str(seconds),
                    "-o", out, *record_args], check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(os.path.join(out, "summary.json")) as f:
        samples = json.load(f)["samples"]
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, samples)


def measure(sparkprof, jdk, classes, depth, mode, seconds, record_args):
    args = [os.path.join(jdk, "bin", "java"), "-Xss256m"]
    if mode != "compiled, no frame pointers":
        args.append("-XX:+PreserveFramePointer")
    if mode == "interpreted":
        args.append("-Xint")
    args += ["-cp", classes, "JavaStacks", "deep", str(seconds + 12), str(depth)]
    jvm = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    pid = int(jvm.stdout.readline().split()[1])
    jvm.stdout.readline()  # ready
    time.sleep(2)
    with tempfile.TemporaryDirectory() as short_out:
        short_cpu, short_samples = record_cpu(sparkprof, pid, 2, record_args, short_out)
    stats = BpfStats("sample_cpu_fp" if "--no-java-walker" in record_args else "sample_cpu")
    stats.start()
    with tempfile.TemporaryDirectory() as out:
        cpu, samples = record_cpu(sparkprof, pid, 2 + seconds, record_args, out)
        frames = []
        with open(os.path.join(out, "all.folded")) as f:
            for line in f:
                stack, _, count = line.rstrip("\n").rpartition(" ")
                frames += [stack.count(";")] * int(count)
    stats.stop = True
    stats.join()
    jvm.kill()
    jvm.wait()
    run_ns, runs = stats.last or (0, 1)
    steady_us = (cpu - short_cpu) / max(samples - short_samples, 1) * 1e6
    return run_ns / runs / 1000, steady_us, statistics.median(frames) if frames else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=6)
    ap.add_argument("--depths", default="32,128,512,2048")
    ap.add_argument("--sparkprof", default=SPARKPROF, help="the sparkprof binary to measure")
    opts = ap.parse_args()
    subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=1"], check=True)
    try:
        for jdk in jdk_homes():
            with tempfile.TemporaryDirectory() as classes:
                subprocess.run([os.path.join(jdk, "bin", "javac"), "-d", classes, JAVA_SRC],
                               check=True)
                print(f"\n{os.path.basename(jdk)}: BPF handler µs / sparkprof steady user+sys µs "
                      "per sample (median frames named per sample)")
                print("| Java depth | interpreted, walker | compiled, walker | compiled without "
                      "-XX:+PreserveFramePointer, walker | compiled, frame pointers only |")
                print("|---|---|---|---|---|")
                for depth in map(int, opts.depths.split(",")):
                    cells = []
                    for mode, args in (("interpreted", []), ("compiled", []),
                                       ("compiled, no frame pointers", []),
                                       ("compiled", ["--no-java-walker"])):
                        us, user_us, frames = measure(opts.sparkprof, jdk, classes, depth, mode,
                                                      opts.seconds, args)
                        cells.append(f"{us:.1f} / {user_us:.1f} ({frames:.0f})")
                    print(f"| {depth} | " + " | ".join(cells) + " |", flush=True)
    finally:
        subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=0"])


if __name__ == "__main__":
    main()

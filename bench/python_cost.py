#!/usr/bin/env python3
"""Cost per sample of a Python process (issue: PySpark's Python workers),
beside a JVM's. A CPython process recurses to a depth and burns there;
sparkprof samples only it at 999 Hz:
- the BPF handler's run time per sample (kernel.bpf_stats_enabled), which
  now walks the interpreter's frame chain;
- sparkprof's own CPU per sample on the steady path: two recordings, of 2 s
  and of 2 + N s, the difference of their user+sys CPU over the difference
  of their samples (start-up cancels out), as bench/walker_depth.py does;
- py-spy (the peer) on the same process at the same rate: its user+sys CPU
  per sample over the same 2 s / 2 + N s difference.
The JVM row is tests/java/JavaStacks.java at depth 128, compiled (JDK 17).

Usage: bench/python_cost.py [--seconds N] [--depths 16,64]
                            [--pythons 3.11.7,3.12.1,3.13.0]
"""
import argparse
import glob
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cpu_cost import BpfStats  # noqa: E402
from walker_depth import record_cpu  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPARKPROF = os.path.join(ROOT, "sparkprof")
JAVA_SRC = os.path.join(ROOT, "tests", "java", "JavaStacks.java")

BURN = r'''
import sys, time
def burn(n):
    h = 0
    for i in range(n):
        h = (h * 31 + i) & 0xffffffff
    return h
def down(d, until):
    if d > 1:
        return down(d - 1, until)
    while time.time() < until:
        burn(10000)
print("ready", flush=True)
down(int(sys.argv[1]), time.time() + float(sys.argv[2]))
'''


def pyenv_python(version):
    root = subprocess.run(["pyenv", "root"], capture_output=True, text=True).stdout.strip()
    return os.path.join(root or os.path.expanduser("~/.pyenv"), "versions", version, "bin",
                        "python3")


def find_py_spy():
    found = shutil.which("py-spy")
    venvs = sorted(glob.glob("/var/cache/sparkprof-deps/pyspark4-py*/bin/py-spy"))
    return found or (venvs[0] if venvs else None)


def children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def py_spy_cpu(py_spy, pid, seconds):
    """(user+sys CPU seconds, samples) of one py-spy run on pid."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "raw.txt")
        cpu0 = children_cpu()
        subprocess.run([py_spy, "record", "--pid", str(pid), "--rate", "999", "--duration",
                        str(seconds), "--format", "raw", "--nonblocking", "-o", out],
                       check=True, capture_output=True)
        cpu = children_cpu() - cpu0
        with open(out) as f:
            samples = sum(int(line.rsplit(" ", 1)[1]) for line in f if line.strip())
    return cpu, samples


def steady(measure, seconds):
    """Per-sample µs of the steady path: (2 + N s run - 2 s run) / samples."""
    short_cpu, short_samples = measure(2)
    cpu, samples = measure(2 + seconds)
    return (cpu - short_cpu) / max(samples - short_samples, 1) * 1e6


def python_row(python, depth, seconds, py_spy):
    proc = subprocess.Popen([python, "-c", BURN, str(depth), str(3 * seconds + 20)],
                            stdout=subprocess.PIPE, text=True)
    proc.stdout.readline()
    time.sleep(1)
    stats = BpfStats("sample_cpu")
    stats.start()
    with tempfile.TemporaryDirectory() as d:
        ours = steady(lambda s: record_cpu(SPARKPROF, proc.pid, s, [],
                                           tempfile.mkdtemp(dir=d)), seconds)
    stats.stop = True
    stats.join()
    theirs = steady(lambda s: py_spy_cpu(py_spy, proc.pid, s), seconds) if py_spy else None
    proc.kill()
    proc.wait()
    run_ns, runs = stats.last or (0, 1)
    return run_ns / runs / 1000, ours, theirs


def jvm_row(seconds):
    jdk = "/usr/lib/jvm/java-17-openjdk-amd64"
    with tempfile.TemporaryDirectory() as classes:
        subprocess.run([os.path.join(jdk, "bin", "javac"), "-d", classes, JAVA_SRC], check=True)
        jvm = subprocess.Popen([os.path.join(jdk, "bin", "java"), "-XX:+PreserveFramePointer",
                                "-cp", classes, "JavaStacks", "deep", str(3 * seconds + 20),
                                "128"], stdout=subprocess.PIPE, text=True)
        pid = int(jvm.stdout.readline().split()[1])
        jvm.stdout.readline()
        time.sleep(2)
        stats = BpfStats("sample_cpu")
        stats.start()
        with tempfile.TemporaryDirectory() as d:
            ours = steady(lambda s: record_cpu(SPARKPROF, pid, s, [], tempfile.mkdtemp(dir=d)),
                          seconds)
        stats.stop = True
        stats.join()
        jvm.kill()
        jvm.wait()
    run_ns, runs = stats.last or (0, 1)
    return run_ns / runs / 1000, ours


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=6)
    ap.add_argument("--depths", default="16,64")
    ap.add_argument("--pythons", default="3.11.7,3.12.1,3.13.0")
    opts = ap.parse_args()
    py_spy = find_py_spy()
    subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=1"], check=True)
    try:
        print("µs per sample at 999 Hz: sparkprof's BPF handler / sparkprof's steady user+sys "
              "/ py-spy's steady user+sys (the peer, same process, same run)")
        print("| workload | Python depth | BPF handler | sparkprof user space | py-spy |")
        print("|---|---|---|---|---|")
        for version in opts.pythons.split(","):
            for depth in map(int, opts.depths.split(",")):
                bpf_us, ours, theirs = python_row(pyenv_python(version), depth, opts.seconds,
                                                  py_spy)
                spy = f"{theirs:.1f}" if theirs is not None else "(no py-spy)"
                print(f"| CPython {version} | {depth} | {bpf_us:.1f} | {ours:.1f} | {spy} |",
                      flush=True)
        bpf_us, ours = jvm_row(opts.seconds)
        print(f"| JVM (JDK 17, Java depth 128, compiled) | – | {bpf_us:.1f} | {ours:.1f} | – |")
    finally:
        subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=0"])


if __name__ == "__main__":
    main()

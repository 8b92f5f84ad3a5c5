#!/usr/bin/env python3
"""CPU cost of sparkprof's on-CPU sampling, next to `perf record -g`.

On the same workload (one hot_functions process per CPU), at each frequency:
- kernel side: the BPF handler's run time per sample, from BPF run-time
  statistics (kernel.bpf_stats_enabled), read from `bpftool prog show`
  while the recording runs;
- user side: sparkprof's own CPU time (user + system) per sample;
- the same for `perf record -g -a` at the same frequency (its process CPU
  time, samples from `perf report --stats`, and perf.data size);
- the workload's throughput (loops done) with each, against no profiler.

Usage: bench/cpu_cost.py [--seconds N] [--freqs 99,999]
"""
import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPARKPROF = os.path.join(ROOT, "sparkprof")
WORKLOAD = os.path.join(ROOT, "build", "progs", "hot_functions")


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def start_workload(seconds):
    procs = [subprocess.Popen([WORKLOAD, str(seconds)], stdout=subprocess.PIPE, text=True)
             for _ in range(os.cpu_count() or 1)]
    for p in procs:
        p.stdout.readline()  # pid line: started
    return procs


def finish_workload(procs):
    loops = 0
    for p in procs:
        out, _ = p.communicate()
        m = re.search(r"loops (\d+)", out)
        loops += int(m.group(1)) if m else 0
    return loops


class BpfStats(threading.Thread):
    """Polls bpftool for a named program's run_time_ns / run_cnt."""

    def __init__(self, name):
        super().__init__(daemon=True)
        self.name, self.last, self.stop = name, None, False

    def run(self):
        while not self.stop:
            try:
                progs = json.loads(subprocess.run(["bpftool", "-j", "prog", "show"],
                                                  capture_output=True, text=True).stdout)
                for p in progs:
                    if p.get("name") == self.name and p.get("run_cnt"):
                        self.last = (p["run_time_ns"], p["run_cnt"])
            except (ValueError, OSError):
                pass
            time.sleep(0.5)


def run_baseline(seconds):
    procs = start_workload(seconds)
    return finish_workload(procs)


def run_sparkprof(freq, seconds, out):
    stats = BpfStats("sample_cpu")
    stats.start()
    procs = start_workload(seconds + 2)
    cpu0 = children_cpu()
    subprocess.run([SPARKPROF, "record", "-a", "-F", str(freq), "-d", str(seconds), "-o", out],
                   check=True, capture_output=True)
    cpu = children_cpu() - cpu0
    loops = finish_workload(procs)
    stats.stop = True
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    samples = summary["samples"] + summary["idle_samples"]
    run_ns, run_cnt = stats.last or (0, 1)
    return {"samples": summary["samples"], "handler_runs": run_cnt,
            "kernel_us_per_sample": run_ns / run_cnt / 1000,
            "user_us_per_sample": cpu * 1e6 / max(summary["samples"], 1),
            "cpu_s": cpu, "lost": summary["lost"]["ring_buffer_full"], "loops": loops,
            "all_samples": samples}


def run_perf(freq, seconds, out):
    data = os.path.join(out, "perf.data")
    procs = start_workload(seconds + 2)
    cpu0 = children_cpu()
    subprocess.run(["perf", "record", "-q", "-g", "-a", "-F", str(freq), "-o", data, "--",
                    "sleep", str(seconds)], check=True, capture_output=True)
    cpu = children_cpu() - cpu0
    loops = finish_workload(procs)
    stats = subprocess.run(["perf", "report", "-i", data, "--stats"], capture_output=True,
                           text=True).stdout
    m = re.search(r"SAMPLE events:\s+(\d+)", stats)
    samples = int(m.group(1)) if m else 0
    return {"samples": samples, "user_us_per_sample": cpu * 1e6 / max(samples, 1),
            "cpu_s": cpu, "bytes": os.path.getsize(data), "loops": loops}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--freqs", default="99,999")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/cpu_cost.py: run as root")
    for tool in ("bpftool", "perf"):
        if not shutil.which(tool):
            sys.exit(f"bench/cpu_cost.py: {tool} is missing (make deps)")
    with open("/proc/sys/kernel/bpf_stats_enabled") as f:
        stats_before = f.read().strip()
    subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=1"], check=True)
    work = tempfile.mkdtemp(prefix="sparkprof-bench-")
    rows = []
    try:
        for freq in [int(f) for f in args.freqs.split(",")]:
            base = run_baseline(args.seconds)
            sp = run_sparkprof(freq, args.seconds, os.path.join(work, f"sp{freq}"))
            pf = run_perf(freq, args.seconds, os.path.join(work, f"sp{freq}"))
            rows.append((freq, base, sp, pf))
    finally:
        subprocess.run(["sysctl", "-q", f"kernel.bpf_stats_enabled={stats_before}"])
        shutil.rmtree(work, ignore_errors=True)
    ncpu = os.cpu_count()
    print(f"# sparkprof vs perf record -g: {ncpu} CPUs busy, {args.seconds} s per run\n")
    print("| Hz | sparkprof samples | BPF handler µs/sample | sparkprof user+sys µs/sample "
          "| sparkprof CPU % of one core | lost | perf samples | perf user+sys µs/sample "
          "| perf CPU % | perf.data MB | workload: none / sparkprof / perf loops |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for freq, base, sp, pf in rows:
        print(f"| {freq} | {sp['samples']} | {sp['kernel_us_per_sample']:.2f} | "
              f"{sp['user_us_per_sample']:.1f} | {100 * sp['cpu_s'] / args.seconds:.2f} | "
              f"{sp['lost']} | {pf['samples']} | {pf['user_us_per_sample']:.1f} | "
              f"{100 * pf['cpu_s'] / args.seconds:.2f} | {pf['bytes'] / 1e6:.1f} | "
              f"{base} / {sp['loops']} / {pf['loops']} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""RSS of a whole-node recording on a node that keeps starting short-lived
processes (YARN container scripts, health checks, Python workers).

    bench/process_churn.py [--seconds 150] [--rate 10] [--reps 1]
                           [--distinct N [--symbols 40000]]
                           [--build LABEL=PATH/TO/sparkprof ...]

Each build runs `record -a -F 99` for --seconds while this script starts
--rate processes a second (build/progs/hot_functions, 0.1 s each); builds
take turns, --reps times.  With --distinct N they are N different programs
instead, taken in turn: copies of one with --symbols functions and no
build-id, so that each is an ELF table of its own (a node running many
programs).  Reports VmRSS at the start, halfway and at the end, the
processes the summary lists and how many it saw exit, the share of the
short processes' samples whose stack holds an unknown frame, the ELF
tables' bytes at the stop, and the recorder's CPU (utime+stime) until then.  Writes bench/results/process_churn-DATE.md.
Needs root and `make all test-progs`.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from node_cost import proc_cpu_s, vm_rss_kib  # puts tests/integration on the path
from big_symbols import many_symbols_program

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROG = os.path.join(ROOT, "build", "progs", "hot_functions")


def distinct_programs(folder, count, symbols):
    """count copies of a program with symbols one-byte functions and no
    build-id: each its own ELF table.  Returns their paths."""
    paths = [many_symbols_program(folder, "bigsyms-0", symbols)]
    for i in range(1, count):
        paths.append(os.path.join(folder, f"bigsyms-{i}"))
        shutil.copy(paths[0], paths[-1])
    return paths


def churn(stop, rate, pids, programs):
    """Starts rate short processes a second until stop is set."""
    n = 0
    while not stop.is_set():
        t = time.monotonic()
        if programs:
            p = subprocess.Popen([programs[n % len(programs)], "0.1"])
            pids.append((os.path.basename(programs[n % len(programs)]), p.pid))
        else:
            p = subprocess.Popen([PROG, "0.1"], stdout=subprocess.PIPE, text=True)
            pids.append(("hot_functions", int(p.stdout.readline())))
        p.wait()
        n += 1
        stop.wait(max(0.0, 1.0 / rate - (time.monotonic() - t)))


def run(binary, seconds, rate, programs):
    with tempfile.TemporaryDirectory(prefix="sparkprof-churn-") as out:
        sp = subprocess.Popen([binary, "record", "-a", "-F", "99", "-o", out],
                              stderr=subprocess.DEVNULL)
        time.sleep(2)
        stop, pids = threading.Event(), []
        worker = threading.Thread(target=churn, args=(stop, rate, pids, programs))
        worker.start()
        series, t0 = [], time.monotonic()
        while time.monotonic() - t0 < seconds:
            series.append((round(time.monotonic() - t0), vm_rss_kib(sp.pid)))
            time.sleep(5)
        stop.set()
        worker.join()
        series.append((round(time.monotonic() - t0), vm_rss_kib(sp.pid)))
        cpu = proc_cpu_s(sp.pid)
        sp.send_signal(signal.SIGINT)
        sp.wait(timeout=300)
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        short = {f"{comm[:15]}-{pid}" for comm, pid in pids}
        total = unknown = 0
        with open(os.path.join(out, "all.folded")) as f:
            for line in f:
                stack, count = line.rsplit(" ", 1)
                frames = stack.split(";")
                if frames[0] in short:
                    total += int(count)
                    unknown += int(count) if "[unknown]" in frames else 0
    procs, memory = summary["processes"], summary.get("memory", {})
    return {"series": series, "cpu": cpu, "started": len(pids), "processes": len(procs),
            "exited": sum(1 for p in procs if p.get("exited")),
            "short_samples": total, "short_unknown": unknown,
            "elf": memory.get("elf_symbols", 0), "files": memory.get("symbol_files"),
            "dropped": memory.get("symbol_files_dropped")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=150)
    ap.add_argument("--rate", type=float, default=10)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--distinct", type=int, default=0,
                    help="start N different programs in turn (default: one)")
    ap.add_argument("--symbols", type=int, default=40000,
                    help="functions in each of the --distinct programs")
    ap.add_argument("--build", action="append", default=[],
                    help="LABEL=PATH of a sparkprof binary (default: this tree's)")
    args = ap.parse_args()
    builds = [b.split("=", 1) for b in args.build] or [["this tree", os.path.join(ROOT, "sparkprof")]]
    rows = []
    folder = tempfile.TemporaryDirectory(prefix="sparkprof-churn-progs-")
    programs = distinct_programs(folder.name, args.distinct, args.symbols) if args.distinct else []
    for rep in range(args.reps):
        for label, binary in builds:
            r = run(binary, args.seconds, args.rate, programs)
            r["build"], r["rep"] = label, rep
            s = r["series"]
            print(f"{label}: RSS {s[0][1] // 1024} -> {s[len(s) // 2][1] // 1024} -> "
                  f"{s[-1][1] // 1024} MiB, CPU {r['cpu']:.1f} s, {r['started']} started, {r['processes']} listed, "
                  f"{r['exited']} seen exit, unknown {r['short_unknown']}/{r['short_samples']}, "
                  f"ELF {r['elf'] / 1e6:.1f} MB ({r['files']} files, {r['dropped']} dropped)",
                  flush=True)
            rows.append(r)
    date = datetime.datetime.now(datetime.timezone.utc)
    lines = [f"# sparkprof RSS under process churn\n",
             f"{date:%Y-%m-%d %H:%M} UTC, kernel {platform.release()}, {os.cpu_count()} CPUs. "
             f"`record -a -F 99` for {args.seconds} s while {args.rate:g} processes a second "
             f"start and run 0.1 s each ("
             + (f"{args.distinct} programs in turn, copies of one with {args.symbols} functions "
                "and no build-id: an ELF table each" if programs else "build/progs/hot_functions")
             + ").\n",
             "| build | rep | RSS first | at 1/2 | at end | CPU to the stop | processes started "
             "| listed in summary "
             "| seen exit | short processes' samples with an unknown frame "
             "| ELF tables at the stop (files held, dropped) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        s = r["series"]
        share = r["short_unknown"] / r["short_samples"] if r["short_samples"] else 0
        lines.append(f"| {r['build']} | {r['rep']} | {s[0][1] // 1024} MiB | "
                     f"{s[len(s) // 2][1] // 1024} MiB | {s[-1][1] // 1024} MiB | "
                     f"{r['cpu']:.1f} s | {r['started']} | "
                     f"{r['processes']} | {r['exited']} | {r['short_unknown']} of "
                     f"{r['short_samples']} ({share:.1%}) | {r['elf'] / 1e6:.1f} MB "
                     f"({r['files'] if r['files'] is not None else '–'}, "
                     f"{r['dropped'] if r['dropped'] is not None else '–'}) |")
    lines.append("\nRSS series (s: MiB): " + "; ".join(
        f"{r['build']}: " + ", ".join(f"{t}: {k // 1024}" for t, k in r["series"] if k)
        for r in rows))
    path = os.path.join(ROOT, "bench", "results", f"process_churn-{date:%Y%m%d-%H%M}.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    folder.cleanup()
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

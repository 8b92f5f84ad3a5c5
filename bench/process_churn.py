#!/usr/bin/env python3
"""RSS of a whole-node recording on a node that keeps starting short-lived
processes (YARN container scripts, health checks, Python workers).

    bench/process_churn.py [--seconds 150] [--rate 10] [--reps 1]
                           [--build LABEL=PATH/TO/sparkprof ...]

Each build runs `record -a -F 99` for --seconds while this script starts
--rate processes a second (build/progs/hot_functions, 0.1 s each); builds
take turns, --reps times.  Reports VmRSS at the start, halfway and at the
end, the processes the summary lists and how many it saw exit, and the
share of the short processes' samples whose stack holds an unknown frame.
Writes bench/results/process_churn-DATE.md.  Needs root and `make all
test-progs`.
"""
import argparse
import datetime
import json
import os
import platform
import signal
import subprocess
import tempfile
import threading
import time

from node_cost import vm_rss_kib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROG = os.path.join(ROOT, "build", "progs", "hot_functions")


def churn(stop, rate, pids):
    """Starts rate short processes a second until stop is set."""
    while not stop.is_set():
        t = time.monotonic()
        p = subprocess.Popen([PROG, "0.1"], stdout=subprocess.PIPE, text=True)
        pids.append(int(p.stdout.readline()))
        p.wait()
        stop.wait(max(0.0, 1.0 / rate - (time.monotonic() - t)))


def run(binary, seconds, rate):
    with tempfile.TemporaryDirectory(prefix="sparkprof-churn-") as out:
        sp = subprocess.Popen([binary, "record", "-a", "-F", "99", "-o", out],
                              stderr=subprocess.DEVNULL)
        time.sleep(2)
        stop, pids = threading.Event(), []
        worker = threading.Thread(target=churn, args=(stop, rate, pids))
        worker.start()
        series, t0 = [], time.monotonic()
        while time.monotonic() - t0 < seconds:
            series.append((round(time.monotonic() - t0), vm_rss_kib(sp.pid)))
            time.sleep(5)
        stop.set()
        worker.join()
        series.append((round(time.monotonic() - t0), vm_rss_kib(sp.pid)))
        sp.send_signal(signal.SIGINT)
        sp.wait(timeout=300)
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        short = {f"hot_functions-{p}" for p in pids}
        total = unknown = 0
        with open(os.path.join(out, "all.folded")) as f:
            for line in f:
                stack, count = line.rsplit(" ", 1)
                frames = stack.split(";")
                if frames[0] in short:
                    total += int(count)
                    unknown += int(count) if "[unknown]" in frames else 0
    procs = summary["processes"]
    return {"series": series, "started": len(pids), "processes": len(procs),
            "exited": sum(1 for p in procs if p.get("exited")),
            "short_samples": total, "short_unknown": unknown}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=150)
    ap.add_argument("--rate", type=float, default=10)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--build", action="append", default=[],
                    help="LABEL=PATH of a sparkprof binary (default: this tree's)")
    args = ap.parse_args()
    builds = [b.split("=", 1) for b in args.build] or [["this tree", os.path.join(ROOT, "sparkprof")]]
    rows = []
    for rep in range(args.reps):
        for label, binary in builds:
            r = run(binary, args.seconds, args.rate)
            r["build"], r["rep"] = label, rep
            s = r["series"]
            print(f"{label}: RSS {s[0][1] // 1024} -> {s[len(s) // 2][1] // 1024} -> "
                  f"{s[-1][1] // 1024} MiB, {r['started']} started, {r['processes']} listed, "
                  f"{r['exited']} seen exit, unknown {r['short_unknown']}/{r['short_samples']}",
                  flush=True)
            rows.append(r)
    date = datetime.datetime.now(datetime.timezone.utc)
    lines = [f"# sparkprof RSS under process churn\n",
             f"{date:%Y-%m-%d %H:%M} UTC, kernel {platform.release()}, {os.cpu_count()} CPUs. "
             f"`record -a -F 99` for {args.seconds} s while {args.rate:g} processes a second "
             f"start and run 0.1 s each (build/progs/hot_functions).\n",
             "| build | rep | RSS first | at 1/2 | at end | processes started | listed in summary "
             "| seen exit | short processes' samples with an unknown frame |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        s = r["series"]
        share = r["short_unknown"] / r["short_samples"] if r["short_samples"] else 0
        lines.append(f"| {r['build']} | {r['rep']} | {s[0][1] // 1024} MiB | "
                     f"{s[len(s) // 2][1] // 1024} MiB | {s[-1][1] // 1024} MiB | {r['started']} | "
                     f"{r['processes']} | {r['exited']} | {r['short_unknown']} of "
                     f"{r['short_samples']} ({share:.1%}) |")
    lines.append("\nRSS series (s: MiB): " + "; ".join(
        f"{r['build']}: " + ", ".join(f"{t}: {k // 1024}" for t, k in r["series"] if k)
        for r in rows))
    path = os.path.join(ROOT, "bench", "results", f"process_churn-{date:%Y%m%d-%H%M}.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""index.html of a long recording: what writing it costs in time and memory.

An hour of the node_cost soak leaves about 54,000 stage outputs: some
200,000 files in two executors' folders and a summary.json of 32 MB, both
of which the recorder's stop reads to write DIR/index.html. This builds a
folder of that shape (empty .html, .wall.html and .jfr files per stage, a
summary.json with one entry per stage, no .folded files so that only the
index is written) and runs `sparkprof report DIR` with each binary given,
alternating, reporting wall time and peak RSS (GNU time's %M).

usage: bench/run_index.py [--stages N] [--executors N] [--runs N] [BINARY ...]
       (default BINARY: ./sparkprof; give an older build beside it to compare)
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_folder(top, stages, executors):
    app = "app-20261127000000-0000"
    execs = []
    for e in range(executors):
        d = os.path.join(top, app, f"exec-{e}")
        os.makedirs(d)
        entries = []
        for s in range(stages // executors):
            name = f"stage-{s}"
            for suffix in (".html", ".wall.html", ".jfr"):
                open(os.path.join(d, name + suffix), "w").close()
            entries.append({"stage": s, "output": name, "samples": 17 * s % 1000,
                            "share": 0.001, "tasks_seen": 4, "off_cpu_ms": 1234.5,
                            "first_s": s * 0.06, "last_s": s * 0.06 + 0.05,
                            "samples_by_attribution": {"thread_name": 12, "epoch": 3},
                            "files": {k: f"{app}/exec-{e}/{name}{k}"
                                      for k in (".folded", ".wall.folded", ".jfr",
                                                ".html", ".wall.html")}})
        execs.append({"executor_id": str(e), "app_id": app, "pid": 1000 + e,
                      "samples": 100000, "attribution": "thread names", "stages": entries})
    for name in ("all.html", "all.wall.html", "all.jfr"):
        open(os.path.join(top, name), "w").close()
    summary = {"sparkprof_version": "bench", "duration_s": 3600.0, "frequency_hz": 99,
               "off_cpu": {"wall_interval_ns": 10000000}, "executors": execs,
               "outputs": [{"name": f"{app}/exec-{e['executor_id']}/stage-{s}",
                            "streamed_files": 0, "samples": 1}
                           for e in execs for s in range(len(e["stages"]))]}
    with open(os.path.join(top, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)


def run(binary, folder):
    # through /usr/bin/time: a child's ru_maxrss keeps what the forking
    # Python held before exec (the summary it built)
    start = time.time()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", binary, "report", folder],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       timeout=1200)
    took = time.time() - start
    lines = p.stderr.strip().splitlines()
    if p.returncode != 0 or not lines:
        sys.exit(f"{binary} report failed: {p.stderr.strip()}")
    return took, int(lines[-1]) / 1024, " ".join(lines[:-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stages", type=int, default=54000)
    ap.add_argument("--executors", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("binaries", nargs="*", default=[os.path.join(ROOT, "sparkprof")])
    args = ap.parse_args()
    top = tempfile.mkdtemp(prefix="sparkprof-index-bench-")
    try:
        make_folder(top, args.stages, args.executors)
        files = sum(len(f) for _, _, f in os.walk(top))
        size = os.path.getsize(os.path.join(top, "summary.json"))
        print(f"folder: {args.stages:,} stages in {args.executors} executors, {files:,} files, "
              f"summary.json {size / 1e6:.1f} MB")
        results = {b: [] for b in args.binaries}
        notes = {}
        for _ in range(args.runs):
            for b in args.binaries:
                took, rss, err = run(b, top)
                results[b].append((took, rss))
                notes[b] = err
        print("| binary | runs | wall s (median, range) | peak RSS MiB (median, range) | "
              "index.html MB | messages |")
        print("|---|---|---|---|---|---|")
        for b, rs in results.items():
            ts, ms = [r[0] for r in rs], [r[1] for r in rs]
            run(b, top)
            index = os.path.getsize(os.path.join(top, "index.html")) / 1e6
            print(f"| {b} | {len(rs)} | {statistics.median(ts):.2f} ({min(ts):.2f}–{max(ts):.2f}) "
                  f"| {statistics.median(ms):.1f} ({min(ms):.1f}–{max(ms):.1f}) | {index:.1f} "
                  f"| {notes[b] or '–'} |")
    finally:
        shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    main()

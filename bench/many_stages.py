#!/usr/bin/env python3
"""One executor running many short stages: what a recording writes, its
peak RSS and how long its stop takes.

The simulated executor (tests/java, --sim-short-stages N) runs N stages one
after the other, a task per core each, with the helper; `sparkprof record
-a -t --wall -d SECONDS` records the node meanwhile. Reports the files and
bytes of the recording folder and of the executor's folder, the recorder's
peak RSS (GNU time's %M) and its stop: its wall time less its start-up and
recording (summary.json).

usage: bench/many_stages.py [--stages 600] [--stage-ms 55] [--seconds 45] [--runs 1] [BINARY ...]
       (default BINARY: ./sparkprof; give an older build beside it to compare)
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import spark_sim  # noqa: E402

AGENT = os.path.join(ROOT, "build", "libsparkprof-agent.so")


def folder_size(path):
    files = size = 0
    for top, _, names in os.walk(path):
        for n in names:
            files += 1
            size += os.path.getsize(os.path.join(top, n))
    return files, size


def run(binary, stages, stage_ms, seconds, work):
    out = os.path.join(work, "out")
    truth = os.path.join(work, "truth.json")
    shutil.rmtree(out, ignore_errors=True)
    cmd = spark_sim.sim_command(spark_sim.compile_sim(os.path.join(ROOT, "build")), truth,
                                jvm_args=[f"-agentpath:{AGENT}", "-XX:+PreserveFramePointer"],
                                short_stages=stages, short_stage_ms=stage_ms,
                                start_delay_ms=2000)
    sim = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        began = time.monotonic()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", binary, "record", "-a", "-t",
                               "--wall", "-d", str(seconds), "-o", out],
                              capture_output=True, text=True, timeout=900)
        wall = time.monotonic() - began
    finally:
        sim.wait(timeout=600)
    if proc.returncode:
        sys.exit(f"{binary} failed:\n{proc.stderr[-3000:]}")
    rss_kib = int(proc.stderr.strip().splitlines()[-1])
    with open(truth) as f:
        t = json.load(f)
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    files, size = folder_size(out)
    exec_files, exec_size = folder_size(os.path.join(out, t["app_id"], f"exec-{t['executor_id']}"))
    return {"binary": binary, "files": files, "bytes": size, "exec_files": exec_files,
            "exec_bytes": exec_size, "peak_rss_mib": rss_kib / 1024,
            "stop_s": wall - summary["startup_s"] - summary["duration_s"],
            "stages_s": (t["end_ns"] - t["start_ns"]) / 1e9,
            "samples": summary["samples"], "duration_s": summary["duration_s"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--stages", type=int, default=600)
    ap.add_argument("--stage-ms", type=float, default=55)
    ap.add_argument("--seconds", type=float, default=45, help="length of the recording")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("binaries", nargs="*", default=[os.path.join(ROOT, "sparkprof")])
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="sparkprof-many-stages-")
    try:
        print("| binary | recorded (stages ran) | samples | files (executor's) | MB (executor's) "
              "| peak RSS MiB | stop s |")
        print("|---|---|---|---|---|---|---|")
        for _ in range(a.runs):
            for b in a.binaries:
                r = run(b, a.stages, a.stage_ms, a.seconds, work)
                print(f"| {r['binary']} | {r['duration_s']:.1f} s ({r['stages_s']:.1f} s) | "
                      f"{r['samples']:,} | "
                      f"{r['files']:,} ({r['exec_files']:,}) | {r['bytes'] / 1e6:.1f} "
                      f"({r['exec_bytes'] / 1e6:.1f}) | {r['peak_rss_mib']:.1f} | {r['stop_s']:.2f} |",
                      flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

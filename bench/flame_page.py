#!/usr/bin/env python3
"""Flame graph pages of a big profile: 1M samples in ~200k distinct stacks.

Writes a synthetic folded file shaped like a JVM profile (Java frames with
async-profiler's type suffixes, native and kernel leaves, 15 to 60 frames
deep, a few hot paths and a long tail), then for `sparkprof flame` and for
async-profiler's converter (jfr-converter, the same collapsed input ->
HTML) reports the time to write the page, its size, and the time headless
Chromium takes to load and draw it (navigation start to the end of the
load event; both pages draw synchronously before it).

usage: bench/flame_page.py [--samples N] [--stacks N] [--runs N]
"""
import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from browser import chromium_page, file_url, script_errors  # noqa: E402

SPARKPROF = os.path.join(ROOT, "sparkprof")
JFRCONV = "/var/cache/sparkprof-deps/jfr-converter-4.2.jar"


def make_profile(path, samples, stacks, seed=11):
    rng = random.Random(seed)
    suffixes = ["_[j]", "_[j]", "_[j]", "_[i]", "_[0]"]
    levels = [[f"org/example/pkg{d % 7}/Class{d}_{k}.method{k % 5}{rng.choice(suffixes)}"
               for k in range(40)] for d in range(60)]
    leaves = ["memcpy", "__GI___libc_read", "do_syscall_64_[k]", "JVM_Sleep",
              "SharedRuntime::resolve_helper", "copy_user_enhanced_fast_string_[k]"]
    seen = set()
    while len(seen) < stacks:
        depth = rng.randint(15, 60)
        # a Zipf-like pick per level: a few callers take most stacks
        frames = ["java-4242", "java/lang/Thread.run_[j]"]
        frames += [levels[d][min(int(rng.paretovariate(1.2)) - 1, 39)] for d in range(depth)]
        if rng.random() < 0.3:
            frames.append(rng.choice(leaves))
        seen.add(";".join(frames))
    lines = sorted(seen)
    weights = [rng.paretovariate(1.1) for _ in lines]
    scale = (samples - len(lines)) / sum(weights)
    counts = [1 + int(w * scale) for w in weights]
    counts[0] += samples - sum(counts)  # exact total
    with open(path, "w") as f:
        for line, c in zip(lines, counts):
            f.write(f"{line} {c}\n")


def timed(cmd):
    start = time.time()
    subprocess.run(cmd, check=True, capture_output=True, timeout=1200)
    return time.time() - start


def load_ms(page, path):
    page.goto(file_url(path))
    errors = script_errors(page)
    assert not errors, errors
    return page.evaluate("(() => { const n = performance.getEntriesByType('navigation')[0];"
                         " return n.loadEventEnd - n.startTime; })()")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=1000000)
    ap.add_argument("--stacks", type=int, default=200000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="sparkprof-flame-bench-")
    folded = os.path.join(tmp, "big.collapsed")
    make_profile(folded, args.samples, args.stacks)
    print(f"input: {args.samples:,} samples, {args.stacks:,} distinct stacks, "
          f"{os.path.getsize(folded) / 1e6:.1f} MB of folded text")

    tools = [("sparkprof flame", os.path.join(tmp, "sparkprof.html"),
              lambda out: [SPARKPROF, "flame", folded, "-o", out])]
    if os.path.exists(JFRCONV):
        tools.append(("async-profiler converter 4.2", os.path.join(tmp, "ap.html"),
                      lambda out: ["java", "-jar", JFRCONV, folded, out]))
        # the same pruning as sparkprof's default
        tools.append(("async-profiler converter 4.2 --minwidth 0.01",
                      os.path.join(tmp, "ap-min.html"),
                      lambda out: ["java", "-jar", JFRCONV, "--minwidth", "0.01", folded, out]))
    else:
        print(f"({JFRCONV} missing: make deps fetches it)")
    rows = []
    with chromium_page() as page:
        for name, out, cmd in tools:
            write = statistics.median(timed(cmd(out)) for _ in range(args.runs))
            loads = [load_ms(page, out) for _ in range(args.runs)]
            rows.append((name, write, os.path.getsize(out), statistics.median(loads)))
    print()
    print("| tool | write the page | page size | Chromium load + draw |")
    print("|---|---|---|---|")
    for name, write, size, load in rows:
        print(f"| {name} | {write:.2f} s | {size / 1024:.0f} KiB | {load:.0f} ms |")
    for asset in ("flame.html", "flame.css", "flame.js"):
        p = os.path.join(ROOT, "user", "output", "web", asset)
        print(f"template {asset}: {os.path.getsize(p):,} bytes")


if __name__ == "__main__":
    main()

"""Helpers for integration tests: run `sparkprof record`, read its outputs."""
import json
import os
import subprocess
import time
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPARKPROF = os.path.join(ROOT, "sparkprof")
PROGS = os.path.join(ROOT, "build", "progs")


def record(out_dir, *args, timeout=180, check=True):
    """Runs `sparkprof record -o out_dir ARGS`; returns the CompletedProcess."""
    cmd = [SPARKPROF, "record", "-o", str(out_dir), *map(str, args)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check:
        assert proc.returncode == 0, f"{cmd} failed ({proc.returncode}):\n{proc.stderr}"
    return proc


def record_measured(out_dir, *args, timeout=180):
    """Runs `sparkprof record -o out_dir ARGS` as the only child of a fresh
    Python; returns (CompletedProcess, wall seconds, peak RSS in MiB)."""
    wrapper = ("import resource, subprocess, sys, time\n"
               "t = time.monotonic()\n"
               "rc = subprocess.run(sys.argv[1:]).returncode\n"
               "print(time.monotonic() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,"
               " file=sys.stderr)\n"
               "sys.exit(rc)\n")
    cmd = ["python3", "-c", wrapper, SPARKPROF, "record", "-o", str(out_dir), *map(str, args)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    last = proc.stderr.strip().splitlines()[-1].split()
    return proc, float(last[0]), int(last[1]) / 1024


def read_folded(path):
    """Returns a Counter {stack text: count} of a folded file."""
    stacks = Counter()
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, count = line.rpartition(" ")
            assert stack and count.isdigit(), f"malformed folded line in {path}: {line!r}"
            stacks[stack] += int(count)
    return stacks


def samples_with(stacks, *frames, root=None):
    """Sum of counts of stacks containing every frame (exact frame match)."""
    total = 0
    for stack, count in stacks.items():
        parts = stack.split(";")
        if root is not None and parts[0] != root:
            continue
        if all(f in parts for f in frames):
            total += count
    return total


def read_summary(out_dir):
    with open(os.path.join(out_dir, "summary.json")) as f:
        return json.load(f)


def start_prog(name, *args):
    """Starts build/progs/NAME; returns (Popen, pid) once it printed its pid."""
    proc = subprocess.Popen([os.path.join(PROGS, name), *map(str, args)],
                            stdout=subprocess.PIPE, text=True)
    pid = int(proc.stdout.readline())
    return proc, pid


def wait_gone(proc, timeout=60):
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def process_root(stacks, pid):
    """The root frame ("comm-pid") used for pid, or None."""
    suffix = f"-{pid}"
    for stack in stacks:
        root = stack.split(";", 1)[0]
        if root.endswith(suffix):
            return root
    return None


def remove_helper_files(pids):
    """The helper's log and perf map of JVMs a test started and that are gone
    (a few MB each in /tmp; a later JVM that gets the same pid must not find
    them)."""
    for pid in pids:
        for path in (f"/tmp/sparkprof-{pid}.log", f"/tmp/perf-{pid}.map"):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

"""The simulated Spark executor (tests/java/org/apache/spark/executor/):
compile it, build its command line, read its ground truth.

Reusable by the end-to-end profiler tests: `expected_stage(truth, os_tid, ts)`
says which stage attempt a sample of a task thread belongs to.
"""
import glob
import re
import json
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCES = os.path.join(ROOT, "tests", "java", "org", "apache", "spark", "executor")
MAIN_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"
APP_ID = "app-20261122000000-0001"


def compile_sim(build_dir, javac="javac"):
    """Compiles the simulator into build_dir/java/sim-executor (once per
    source change); returns the class path."""
    out = os.path.join(build_dir, "java", "sim-executor")
    srcs = sorted(glob.glob(os.path.join(SOURCES, "*.java")))
    stamp = os.path.join(out, ".stamp")
    newest = max(os.path.getmtime(s) for s in srcs)
    if not os.path.exists(stamp) or os.path.getmtime(stamp) < newest:
        os.makedirs(out, exist_ok=True)
        # --release 11: the same classes run on every JDK the tests use
        subprocess.run([javac, "--release", "11", "-d", out, *srcs], check=True,
                       capture_output=True, timeout=300)
        open(stamp, "w").close()
    return out


def sim_command(classpath, truth_path, java="java", jvm_args=(), executor_id="1",
                app_id=APP_ID, cores=2, scale=1.0, name_format="full", idle_names=False,
                start_delay_ms=0, linger_ms=0, short_stages=0, short_stage_ms=30):
    """The simulated executor's command line, shaped like a standalone
    executor's (see shared/docs/spark-executors.md section 4)."""
    return [java, "-cp", classpath, *jvm_args, MAIN_CLASS,
            "--driver-url", "spark://CoarseGrainedScheduler@127.0.0.1:1",
            "--executor-id", str(executor_id), "--hostname", "localhost",
            "--cores", str(cores), "--app-id", app_id,
            "--sim-ground-truth", str(truth_path), "--sim-scale", str(scale),
            "--sim-name-format", name_format,
            "--sim-idle-names", "true" if idle_names else "false",
            "--sim-start-delay-ms", str(start_delay_ms), "--sim-linger-ms", str(linger_ms),
            "--sim-short-stages", str(short_stages), "--sim-short-stage-ms", str(short_stage_ms)]


def load_truth(path):
    with open(path) as f:
        return json.load(f)


def task_intervals(truth):
    """{os_tid: [(start_ns, end_ns, (stage, attempt)), ...]} of every task."""
    out = {}
    for t in truth["tasks"]:
        out.setdefault(t["os_tid"], []).append(
            (t["start_ns"], t["end_ns"], (t["stage"], t["stage_attempt"])))
    return out


def expected_stage(intervals, os_tid, ts, slack_ns=0):
    """The stage attempt the task on os_tid ran at ts, or None when the
    thread ran no task then (slack_ns shrinks each interval at both ends, to
    keep rename-time races out of an accuracy measure)."""
    for start, end, key in intervals.get(os_tid, ()):
        if start + slack_ns <= ts <= end - slack_ns:
            return key
    return None


# Stage<N>Work.burn, or Stage<N>Attempt<A>Work.burn for a retried attempt
STAGE_FRAME = re.compile(r"(?:^|;)org/apache/spark/executor/Stage(\d+)(?:Attempt(\d+))?Work\.burn(?:;|$)")
STAGE_FILE = re.compile(r"^stage-(\d+)(?:\.(\d+))?\.folded$")


def stage_file_key(filename):
    """(stage, attempt) of "stage-S.folded" / "stage-S.A.folded", None for
    no-stage.folded, False for any other file."""
    if filename == "no-stage.folded":
        return None
    m = STAGE_FILE.match(filename)
    return (int(m.group(1)), int(m.group(2) or 0)) if m else False


def stage_files(exec_dir):
    """{(stage, attempt): file name} of an executor's per-stage folded files."""
    return {stage_file_key(f): f for f in os.listdir(exec_dir)
            if f.endswith(".folded") and stage_file_key(f)}


def task_sample_placement(exec_dir):
    """Where the task-thread samples of a simulated executor landed.

    A sample whose stack holds StageNWork.burn (attempt 0) or
    StageNAttemptAWork.burn was taken while a task of that stage attempt ran
    (only tasks run those methods).  Returns {(true stage, attempt): {file key: samples}} over the
    executor's per-stage files (all.folded excluded)."""
    placement = {}
    for name in sorted(os.listdir(exec_dir)):
        key = stage_file_key(name)
        if key is False:
            continue
        with open(os.path.join(exec_dir, name), encoding="utf-8", errors="replace") as f:
            for line in f:
                stack, _, count = line.rstrip("\n").rpartition(" ")
                s = STAGE_FRAME.search(stack)
                if not s or not count.isdigit():
                    continue
                truth = (int(s.group(1)), int(s.group(2) or 0))
                per = placement.setdefault(truth, {})
                per[key] = per.get(key, 0) + int(count)
    return placement


def accuracy(placement):
    """(samples in their true stage's file, all task samples)."""
    right = sum(c for truth, per in placement.items() for k, c in per.items() if k == truth)
    total = sum(c for per in placement.values() for c in per.values())
    return right, total

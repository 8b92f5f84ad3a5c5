"""Python frames of real PySpark 4.0.1 workers and of plain CPython
processes, checked against py-spy on the same processes in the same run.

1. One local-cluster application per CPython (3.11 and 3.12, the venvs
   tools/install-deps.sh builds under /var/cache/sparkprof-deps): two
   executors of one core with the helper, one job of three UDF stages,
   each busy for a few seconds in functions of the driver script (a plain
   @udf over pure Python, probe_inner_hash; a @pandas_udf, pandas_score; a
   @udf over numpy, numpy_kernel), recorded with `sparkprof record -a -t
   --wall` from before the application to the end of the job, and one
   worker of executor 0 by py-spy meanwhile. The workers wait at their
   first row until py-spy samples (a gate file), so both see the same UDF
   work. What must hold:
   - >= 90% of the workers' samples walk down to pyspark's worker.py main,
     and no frame-pointer garbage passes for a Python frame;
   - each UDF function is named, and its share of the py-spy'd worker's
     samples is within 5 points of py-spy's. py-spy samples wall-clock
     time (a thread waiting for a CPU counts, and its idle filter is a
     guess), so it keeps every sample (--idle) and is compared with
     sparkprof's wall-clock profile of the worker's main thread; the
     shares of sparkprof's CPU samples are printed beside;
   - >= 90% of the workers' samples are in their executor's files, under
     "[python worker PID]", and >= 90% of each UDF's worker samples in the
     file of the stage that ran it (the event log's chain of stages);
   - summary.json: each worker's version, the executor it serves, its
     samples by attribution summing to its samples.
2. A plain CPU-bound script (nested functions, a generator) on pyenv's
   3.10 to 3.13 and Debian's 3.11, recorded with -p PID -d 6 -F 499 while py-spy
   samples it: >= 90% of samples with Python frames, the innermost Python
   frame the hot function's, function shares within 5 points of py-spy's.

The figures are printed (pytest -s) so they can be quoted.
"""
import json
import os
import re
import signal
import subprocess
import threading
import time
from collections import Counter

import pytest

import spark_cluster
from testlib import SPARKPROF, read_folded, read_summary, remove_helper_files

DEPS = "/var/cache/sparkprof-deps"
PYENV = os.path.expanduser(os.environ.get("PYENV_ROOT", "~/.pyenv"))
UDF_FUNCTIONS = ("probe_inner_hash", "pandas_score", "numpy_kernel")
WORKER_MAIN = re.compile(r"^main \(worker\.py:\d+\)_\[p\]$")
STAGE_FILE = re.compile(r"^stage-(\d+)(?:\.(\d+))?\.folded$")
SHARE_POINTS = 5.0
# The node, each thread's stack (-t), and wall-clock time in 1 ms units with
# off-CPU intervals from 100 us: all.wall.folded rounds each stack's time to
# whole units and --min-off-cpu drops shorter waits, so at the defaults
# (10 ms, 1 ms) a busy node's many short waits in many distinct stacks
# (pandas') go missing (2.75 s of a 4 s stage), and py-spy's samples of the
# same time with them.
RECORD_ARGS = ["-a", "-t", "--wall=1ms", "--min-off-cpu", "100us"]

# The driver: waits for its executors, says so, waits for the go-ahead, runs
# one job of three UDF stages (separated by round-robin shuffles, then a
# final aggregation), prints its result and waits to be released.  Each UDF
# stage's task works for STAGE_SECONDS (timed by perf_counter, which makes
# no system call); the first stage's tasks wait for the gate file at each
# row first (py-spy attached).
DRIVER = r'''
import json, os, sys, time
import numpy as np
import pandas as pd
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.functions import pandas_udf, udf
from pyspark.sql.types import DoubleType, LongType

event_dir, java_opts, release, master, go, gate = sys.argv[1:7]
STAGE_SECONDS = float(sys.argv[7])
ROWS_PER_TASK = 8


def wait_for_gate():
    deadline = time.time() + 120
    while not os.path.exists(gate) and time.time() < deadline:
        time.sleep(0.02)


def probe_inner_hash(x, rounds):
    h = x & 0xFFFFFFFF
    for i in range(rounds):
        h = ((h ^ i) * 16777619) & 0xFFFFFFFF
    return h


def probe_row(x):
    wait_for_gate()
    until = time.perf_counter() + STAGE_SECONDS / ROWS_PER_TASK
    h = x
    while time.perf_counter() < until:
        h = probe_inner_hash(h, 2000)
    return h


def pandas_score(s):
    out = (s.astype("float64") % 1000.0).repeat(200).reset_index(drop=True)
    for _ in range(20):
        out = (out * 1.0001 + 1.0).rolling(7, min_periods=1).mean()
    return float(out.sum())


def pandas_batch(s):
    until = time.perf_counter() + STAGE_SECONDS
    score = 0.0
    while time.perf_counter() < until:
        score += pandas_score(s)
    return s.astype("float64") + score


def numpy_kernel(x, n):
    a = np.arange(n, dtype=np.float64) + float(x % 97)
    for _ in range(20):
        a = np.sqrt(a * a + 1.0)
    return float(a.sum())


def numpy_row(x):
    until = time.perf_counter() + STAGE_SECONDS / ROWS_PER_TASK
    total = 0.0
    while time.perf_counter() < until:
        total += numpy_kernel(x, 20000)
    return total


probe_udf = udf(probe_row, LongType())
pandas_udf_ = pandas_udf(pandas_batch, DoubleType())
numpy_udf = udf(numpy_row, DoubleType())

spark = (SparkSession.builder.master(master).appName("sparkprof-pyspark-test")
         .config("spark.eventLog.enabled", "true")
         .config("spark.eventLog.dir", "file://" + event_dir)
         .config("spark.eventLog.compress", "false")
         .config("spark.eventLog.rolling.enabled", "false")
         .config("spark.executor.memory", "512m")
         .config("spark.driver.memory", "768m")
         .config("spark.executor.extraJavaOptions", java_opts)
         .config("spark.python.worker.reuse", "true")
         .config("spark.sql.shuffle.partitions", "2")
         .config("spark.sql.adaptive.enabled", "false")
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .getOrCreate())
sc = spark.sparkContext
want = int(master.split("[")[1].split(",")[0])
deadline = time.time() + 600
while sc._jsc.sc().getExecutorMemoryStatus().size() < want + 1 and time.time() < deadline:
    time.sleep(0.2)
print(json.dumps({"ready": sc.applicationId}), flush=True)
while not os.path.exists(go) and time.time() < deadline:
    time.sleep(0.1)
df = spark.range(0, 2 * ROWS_PER_TASK, numPartitions=2)
s1 = df.select("id", probe_udf("id").alias("h")).repartition(2)
s2 = s1.select("id", "h", pandas_udf_("h").alias("p")).repartition(2)
s3 = s2.select("h", "p", numpy_udf("id").alias("q"))
row = s3.agg(F.count("*").alias("n"), F.sum("h").alias("h"), F.sum("p").alias("p"),
             F.sum("q").alias("q")).collect()[0]
print(json.dumps({"app_id": sc.applicationId, "rows": row["n"]}), flush=True)
deadline = time.time() + 600
while not os.path.exists(release) and time.time() < deadline:
    time.sleep(0.2)
spark.stop()
'''

# A plain CPU-bound script: hot (most of the time) and warm, called from a
# generator, under two nested callers.
PLAIN = r'''
import sys, time

def hot(n):
    x = 0
    for i in range(n):
        x = (x * 1103515245 + i) & 0x7FFFFFFF
    return x

def warm(n):
    x = 0
    for i in range(n):
        x ^= i * 7
    return x

def produce(rounds):
    for r in range(rounds):
        if not TIMED:
            yield hot(3000) + warm(1500)
            continue
        a = time.thread_time()
        h = hot(3000)
        b = time.thread_time()
        w = warm(1500)
        SPLIT["hot"] += b - a
        SPLIT["warm"] += time.thread_time() - b
        yield h + w

def middle():
    return sum(produce(20))

def outer(until):
    total = 0
    while time.time() < until:
        total += middle()
    return total

# "timed": the CPU time in hot and in warm, by the thread's clock (a system
# call each, which would draw a waiting thread's samples: not while profiled)
TIMED = sys.argv[2:] == ["timed"]
SPLIT = {"hot": 0.0, "warm": 0.0}
print("ready", flush=True)
outer(time.time() + float(sys.argv[1]))
if TIMED:
    total = SPLIT["hot"] + SPLIT["warm"]
    print("split hot %.2f warm %.2f" % (100 * SPLIT["hot"] / total, 100 * SPLIT["warm"] / total))
'''


# ---------------------------------------------------------------- helpers

def venv_python(minor):
    path = os.path.join(DEPS, f"pyspark4-py{minor}", "bin", "python3")
    if not os.path.exists(path):
        pytest.skip(f"run `make deps`: {path} is missing")
    return path


def py_spy(minor="3.12"):
    for m in (minor, "3.12", "3.11"):
        path = os.path.join(DEPS, f"pyspark4-py{m}", "bin", "py-spy")
        if os.path.exists(path):
            return path
    pytest.skip("run `make deps`: py-spy is missing")


def children(pid):
    """Pids whose parent is pid (from /proc/PID/stat)."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        if int(stat.rpartition(")")[2].split()[1]) == pid:
            out.append(int(p))
    return out


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def wait_for_text(path, text, timeout, proc=None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if os.path.exists(path) and text in open(path, errors="replace").read():
            return True
        if proc is not None and proc.poll() is not None:
            return False
        time.sleep(0.05)
    return False


def function_name(frame):
    """The function of a frame: "f (file.py:12)_[p]" (sparkprof) or
    "f (file.py:12)" (py-spy) -> "f"."""
    if frame.endswith("_[p]"):
        frame = frame[:-4]
    return frame.rsplit(" (", 1)[0] if frame.endswith(")") else frame


def python_frames(stack):
    return [f for f in stack.split(";") if f.endswith("_[p]")]


def shares_containing(stacks, functions, python_only):
    """{function: % of the samples of stacks whose stack holds it}."""
    total = sum(stacks.values())
    out = {}
    for fn in functions:
        n = 0
        for stack, count in stacks.items():
            frames = python_frames(stack) if python_only else stack.split(";")
            if any(function_name(f) == fn for f in frames):
                n += count
        out[fn] = 100.0 * n / total if total else 0.0
    return out


def innermost_shares(stacks, python_only):
    """{innermost Python function: % of samples} (py-spy's stacks hold only
    Python frames; sparkprof's, the Python ones ending in _[p])."""
    total = sum(stacks.values())
    leaves = Counter()
    for stack, count in stacks.items():
        frames = python_frames(stack) if python_only else stack.split(";")
        if frames:
            leaves[function_name(frames[-1])] += count
    return {fn: 100.0 * n / total for fn, n in leaves.items()} if total else {}


def read_py_spy(path):
    """py-spy's raw output: {stack: count}, frames "f (file.py:N)", root
    first; a sample without frames has an empty stack (" 6")."""
    stacks = Counter()
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                stack, _, count = line.rpartition(" ")
                assert count.isdigit(), f"malformed line in {path}: {line!r}"
                stacks[stack] += int(count)
    return stacks


def start_py_spy(pid, out_path, log_path, rate=100, duration=None, idle=False):
    """py-spy record on pid.  Not --nonblocking: reading a running
    interpreter's frames, py-spy fails on many samples of a deep, quickly
    changing stack (a PySpark worker: 280 errors in 1478 samples, nearly all
    in the pandas UDF, whose share fell from 33% to 12%); it stops the
    process for each sample instead.  idle: every sample, also of threads it
    takes as idle (--idle).  At a higher priority than the job: on a busy
    node a starved peer samples unevenly, and its shares stop being a
    reference."""
    cmd = ["nice", "-n", "-10", py_spy(), "record", "--pid", str(pid), "--rate", str(rate),
           "--format", "raw", "-o", str(out_path)]
    if idle:
        cmd.append("--idle")
    if duration:
        cmd += ["--duration", str(duration)]
    log = open(log_path, "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    log.close()
    return proc


def stop(proc, sig=signal.SIGINT, timeout=120):
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return proc.returncode


# ----------------------------------------------------- the PySpark job

class PysparkRun:
    pass


def private_spark_home(work_dir, python):
    """A SPARK_HOME of symlinks to the venv's pyspark (spark_cluster's, for
    another interpreter)."""
    real = subprocess.run([python, "-c", "import os, pyspark; print(os.path.dirname("
                           "pyspark.__file__))"], capture_output=True, text=True,
                          check=True).stdout.strip()
    home = os.path.join(work_dir, "spark-home")
    os.makedirs(os.path.join(home, "work"), exist_ok=True)
    for name in os.listdir(real):
        link = os.path.join(home, name)
        if name != "work" and not os.path.lexists(link):
            os.symlink(os.path.join(real, name), link)
    return home


def find_worker(executor_pid, timeout):
    """(daemon pid, first worker pid) of an executor's pyspark.daemon."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        for d in children(executor_pid):
            if "pyspark.daemon" in cmdline(d):
                workers = children(d)
                if workers:
                    return d, min(workers)
        time.sleep(0.02)
    return None, None


def run_pyspark_job(work_dir, python, agent_path, java_home, stage_seconds=4.0):
    """Records the node (sparkprof) around a PySpark application, py-spy on
    executor 0's first Python worker; returns a PysparkRun."""
    work_dir = str(work_dir)
    run = PysparkRun()
    run.rec_dir = os.path.join(work_dir, "rec")
    run.py_spy_out = os.path.join(work_dir, "py-spy.txt")
    event_dir = os.path.join(work_dir, "events")
    os.makedirs(event_dir, exist_ok=True)
    files = {k: os.path.join(work_dir, k) for k in ("release", "go", "gate")}
    script = os.path.join(work_dir, "job.py")
    with open(script, "w") as f:
        f.write(DRIVER)
    env = dict(os.environ, JAVA_HOME=java_home,
               SPARK_HOME=private_spark_home(work_dir, python),
               PYSPARK_PYTHON=python, PYSPARK_DRIVER_PYTHON=python,
               SPARK_LOCAL_IP="127.0.0.1", SPARK_LOCAL_DIRS=os.path.join(work_dir, "local"))
    env["PATH"] = os.path.join(java_home, "bin") + ":" + env.get("PATH", "")
    java_opts = f"-agentpath:{agent_path} -XX:+PreserveFramePointer"

    rec_log = os.path.join(work_dir, "record.log")
    with open(rec_log, "w") as log:
        rec = subprocess.Popen([SPARKPROF, "record", *RECORD_ARGS, "-o", run.rec_dir],
                               stdout=log, stderr=subprocess.STDOUT)
    driver = spy = None
    driver_log = open(os.path.join(work_dir, "driver.log"), "w+")
    t0 = time.monotonic()
    try:
        assert wait_for_text(rec_log, "recording into", 120, rec), open(rec_log).read()
        driver = subprocess.Popen([python, script, event_dir, java_opts, files["release"],
                                   "local-cluster[2,1,1024]", files["go"], files["gate"],
                                   str(stage_seconds)],
                                  stdout=subprocess.PIPE, stderr=driver_log, text=True, env=env,
                                  cwd=work_dir, start_new_session=True)

        def next_line():
            line = driver.stdout.readline()
            if not line:
                driver.wait(timeout=60)
                driver_log.seek(0)
                raise AssertionError(f"Spark job failed ({driver.returncode}):\n"
                                     f"{driver_log.read()[-6000:]}")
            return json.loads(line)

        run.app_id = next_line()["ready"]
        run.event_log = os.path.join(event_dir, run.app_id)
        run.executors = spark_cluster.executor_pids(run.app_id)
        assert set(run.executors) == {"0", "1"}, run.executors

        # executor 0's first worker: py-spy from its first row on
        spied = {}

        def spy_on_worker():
            try:
                spied["daemon"], spied["worker"] = find_worker(run.executors["0"], 180)
                if spied["worker"]:
                    spied["proc"] = start_py_spy(spied["worker"], run.py_spy_out,
                                                 os.path.join(work_dir, "py-spy.log"), idle=True)
                    spied["sampling"] = wait_for_text(os.path.join(work_dir, "py-spy.log"),
                                                      "Sampling process", 30, spied["proc"])
                    time.sleep(0.2)
            finally:
                open(files["gate"], "w").close()

        watcher = threading.Thread(target=spy_on_worker, daemon=True)
        watcher.start()
        t_job = time.monotonic()
        open(files["go"], "w").close()
        run.result = next_line()
        run.job_seconds = time.monotonic() - t_job
        watcher.join(timeout=60)
        spy = spied.get("proc")
        assert spy is not None, f"no Python worker of executor 0 found: {spied}"
        assert spied.get("sampling"), open(os.path.join(work_dir, "py-spy.log")).read()
        run.spied_worker, run.daemon = spied["worker"], spied["daemon"]
        stop(spy)
        run.py_spy_log = open(os.path.join(work_dir, "py-spy.log")).read()
        stop(rec, timeout=300)
        run.record_rc = rec.returncode
        run.record_log = open(rec_log).read()
        open(files["release"], "w").close()
        driver.wait(timeout=300)
        assert driver.returncode == 0, f"driver exited {driver.returncode}"
        deadline = time.time() + 60
        while spark_cluster.executor_pids(run.app_id) and time.time() < deadline:
            time.sleep(0.5)
        run.seconds = time.monotonic() - t0
        return run
    finally:
        for p in (spy, rec):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
        if driver is not None and driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
            driver.wait(timeout=60)
        if getattr(run, "app_id", None):
            for pid in spark_cluster.executor_pids(run.app_id).values():
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            remove_helper_files(getattr(run, "executors", {}).values())
        driver_log.close()


def udf_stages(event_log):
    """{UDF function: (stage, attempt)}: the job's chain of stages, each the
    parent of the next, in order: probe, pandas, numpy, final aggregation."""
    stages = {}
    with open(event_log) as f:
        for line in f:
            ev = json.loads(line)
            if ev.get("Event") == "SparkListenerStageSubmitted":
                info = ev["Stage Info"]
                stages[info["Stage ID"]] = (info["Stage Attempt ID"], info["Parent IDs"])
    ids = sorted(stages)
    assert len(ids) == 4, stages
    for parent, child in zip(ids, ids[1:]):
        assert stages[child][1] == [parent], stages
    return {fn: (ids[i], stages[ids[i]][0]) for i, fn in enumerate(UDF_FUNCTIONS)}


def worker_roots(summary, executors):
    """{worker pid: (root frame, executor pid, process entry)} from
    summary.json, of the workers serving executors ({id: pid}; the
    recording is the node's: another application's too)."""
    out = {}
    for p in summary["processes"]:
        py = p.get("python") or {}
        if str(py.get("root_frame", "")).startswith("[python worker") and \
                py["serves_executor_pid"] in executors.values():
            out[p["pid"]] = (py["root_frame"], py["serves_executor_pid"], p)
    return out


@pytest.fixture(scope="module", params=["3.11", "3.12"])
def pyspark_run(request, tmp_path_factory, agent_path, jdks):
    python = venv_python(request.param)
    work = tmp_path_factory.mktemp(f"pyspark4-py{request.param}")
    run = run_pyspark_job(work, python, agent_path, jdks[17])
    run.minor = request.param
    assert run.record_rc == 0, run.record_log
    run.summary = read_summary(run.rec_dir)
    run.node = read_folded(os.path.join(run.rec_dir, "all.folded"))
    run.workers = worker_roots(run.summary, run.executors)
    pid_to_exec = {pid: e for e, pid in run.executors.items()}
    run.worker_exec = {w: pid_to_exec.get(epid) for w, (_, epid, _) in run.workers.items()}
    print(f"\n[py{run.minor}] app {run.app_id}: job {run.job_seconds:.1f} s, "
          f"run {run.seconds:.1f} s; executors {run.executors}; workers "
          f"{ {w: (r, run.worker_exec[w], e['samples']) for w, (r, _, e) in run.workers.items()} }")
    return run


def node_worker_stacks(run, pid):
    root = run.workers[pid][0]
    return Counter({s: n for s, n in run.node.items() if s.split(";", 1)[0] == root})


def unnamed_leaf(stacks):
    """Samples whose innermost Python frame is unnamed ("[python]")."""
    return sum(n for s, n in stacks.items() if python_frames(s)[-1:] == ["[python]_[p]"])


def test_workers_walk_down_to_worker_main(pyspark_run):
    run = pyspark_run
    print()
    assert run.result["rows"] == 16
    assert run.workers, "no Python worker in summary.json"
    total = with_main = unnamed = 0
    for pid in run.workers:
        stacks = node_worker_stacks(run, pid)
        n = sum(stacks.values())
        m = sum(c for s, c in stacks.items() if any(WORKER_MAIN.match(f) for f in s.split(";")))
        u = unnamed_leaf(stacks)
        print(f"[py{run.minor}] worker {pid}: {m}/{n} samples reach worker.py main "
              f"({100.0 * m / max(n, 1):.1f}%); innermost Python frame unnamed in {u}")
        total += n
        with_main += m
        unnamed += u
    print(f"[py{run.minor}] all workers: {with_main}/{total} samples reach worker.py main "
          f"({100.0 * with_main / max(total, 1):.1f}%)")
    assert total >= 600, total
    assert with_main >= 0.9 * total, (with_main, total)
    # a frame-pointer walk into numpy's loops reads doubles, some with the
    # bit that tags Python frames: none may pass for one (they made an
    # unnamed innermost frame in 84% of numpy_kernel's samples)
    assert unnamed <= 0.01 * total, (unnamed, total)


def main_thread_wall(run, pid):
    """The wall-clock stacks (all.wall.folded) of a worker's main thread:
    the thread frame (-t) of its stacks with Python frames."""
    root = run.workers[pid][0]
    wall = Counter({s: n for s, n in
                    read_folded(os.path.join(run.rec_dir, "all.wall.folded")).items()
                    if s.split(";", 1)[0] == root})
    threads = Counter()
    for s, n in wall.items():
        if python_frames(s):
            threads[s.split(";")[1]] += n
    main = threads.most_common(1)[0][0]
    return Counter({s: n for s, n in wall.items() if s.split(";")[1] == main})


def without_gate(stacks, python_only):
    """stacks less the worker's wait at the gate (py-spy attaching: before
    its first sample, sparkprof's wall profile already counts it)."""
    return Counter({s: n for s, n in stacks.items()
                    if "wait_for_gate" not in {function_name(f) for f in
                                               (python_frames(s) if python_only
                                                else s.split(";"))}})


def test_udf_functions_named_and_shares_match_py_spy(pyspark_run):
    """Each UDF function's share of the py-spy'd worker's samples, by py-spy
    and by sparkprof, in the same run.  py-spy samples wall-clock time, and
    tells active from idle by a guess (in its blocking mode it counts the
    worker blocked on its socket between tasks as active); so py-spy keeps
    every sample (--idle) and is compared with sparkprof's wall-clock
    profile of the worker's main thread (all.wall.folded, on and off CPU),
    both less the wait at the gate.  sparkprof's CPU shares are printed."""
    run = pyspark_run
    w = run.spied_worker
    assert w in run.workers, (w, list(run.workers))
    cpu = node_worker_stacks(run, w)
    wall = main_thread_wall(run, w)
    ours = without_gate(wall, python_only=True)
    theirs = without_gate(read_py_spy(run.py_spy_out), python_only=False)
    cpu_shares = shares_containing(cpu, UDF_FUNCTIONS, python_only=True)
    our_shares = shares_containing(ours, UDF_FUNCTIONS, python_only=True)
    their_shares = shares_containing(theirs, UDF_FUNCTIONS, python_only=False)
    errors = re.search(r"Errors: (\d+)", run.py_spy_log)
    print(f"\n[py{run.minor}] worker {w} of executor 0: py-spy {sum(theirs.values())} samples "
          f"at 100 Hz ({errors.group(1) if errors else '?'} errors); sparkprof "
          f"{sum(ours.values())} ms of wall time (its main thread), {sum(cpu.values())} "
          f"CPU samples; both less the gate")
    for fn in UDF_FUNCTIONS:
        print(f"[py{run.minor}]   {fn}: py-spy {their_shares[fn]:.1f}%  sparkprof wall "
              f"{our_shares[fn]:.1f}% ({our_shares[fn] - their_shares[fn]:+.1f})  "
              f"[sparkprof CPU {cpu_shares[fn]:.1f}%]")
    # every UDF function is named in every worker
    for pid in run.workers:
        stacks = node_worker_stacks(run, pid)
        named = {function_name(f) for s in stacks for f in python_frames(s)}
        assert set(UDF_FUNCTIONS) <= named, (pid, sorted(named)[:50])
    assert sum(theirs.values()) >= 1000, run.py_spy_log
    for fn in UDF_FUNCTIONS:
        assert their_shares[fn] >= 5, (fn, their_shares)
        assert abs(our_shares[fn] - their_shares[fn]) <= SHARE_POINTS, \
            (fn, our_shares, their_shares)


def exec_dir(run, exec_id):
    return os.path.join(run.rec_dir, run.app_id, f"exec-{exec_id}")


def test_worker_samples_in_their_executors_and_stages(pyspark_run):
    run = pyspark_run
    stage_of = udf_stages(run.event_log)
    print(f"\n[py{run.minor}] UDF stages (event log): {stage_of}")
    node_total = exec_total = 0
    udf_total = Counter()
    udf_right = Counter()
    for pid, (root, _, entry) in run.workers.items():
        exec_id = run.worker_exec[pid]
        assert exec_id is not None, (pid, run.workers[pid], run.executors)
        node = sum(node_worker_stacks(run, pid).values())
        d = exec_dir(run, exec_id)
        in_exec = sum(n for s, n in read_folded(os.path.join(d, "all.folded")).items()
                      if s.split(";", 1)[0] == root)
        print(f"[py{run.minor}] worker {pid} (exec {exec_id}): {in_exec}/{entry['samples']} "
              f"samples in exec-{exec_id}/all.folded, {node} in the node's all.folded under {root}")
        node_total += entry["samples"]
        exec_total += in_exec
        # per stage: the samples naming each UDF function, by stage file
        for name in os.listdir(d):
            m = STAGE_FILE.match(name)
            if not m and name != "no-stage.folded":
                continue
            key = (int(m.group(1)), int(m.group(2) or 0)) if m else None
            for s, n in read_folded(os.path.join(d, name)).items():
                if s.split(";", 1)[0] != root:
                    continue
                named = {function_name(f) for f in python_frames(s)}
                for fn in UDF_FUNCTIONS:
                    if fn in named:
                        udf_total[fn] += n
                        if key == stage_of[fn]:
                            udf_right[fn] += n
    print(f"[py{run.minor}] workers: {exec_total}/{node_total} samples in their executor's files "
          f"({100.0 * exec_total / max(node_total, 1):.1f}%)")
    for fn in UDF_FUNCTIONS:
        print(f"[py{run.minor}]   {fn}: {udf_right[fn]}/{udf_total[fn]} worker samples in "
              f"stage {stage_of[fn]}'s file ({100.0 * udf_right[fn] / max(udf_total[fn], 1):.1f}%)")
    assert exec_total >= 0.9 * node_total, (exec_total, node_total)
    for fn in UDF_FUNCTIONS:
        assert udf_total[fn] >= 100, (fn, udf_total)
        assert udf_right[fn] >= 0.9 * udf_total[fn], (fn, udf_right, udf_total)


def test_summary_describes_the_workers(pyspark_run):
    run = pyspark_run
    executor_pids = set(run.executors.values())
    served = set()
    print()
    for p in run.summary["processes"]:
        py = p.get("python")
        if not py or py.get("serves_executor_pid") not in executor_pids:
            continue  # not a Python process of this application's executors
        by = py["samples_by_attribution"]
        print(f"[py{run.minor}] {py['root_frame']}: version {py['version']}, serves "
              f"{py['serves_executor_pid']}, {p['samples']} samples, by attribution {by}, "
              f"frames named {py['frames_named']} unnamed {py['frames_unnamed']}, "
              f"code objects {py['code_objects_read']}")
        assert py["version"] == run.minor, py
        assert py["serves_executor_pid"] in executor_pids, (py, executor_pids)
        assert sum(by.values()) == p["samples"], (p["pid"], by, p["samples"])
        served.add(py["serves_executor_pid"])
    # both executors' workers, and py-spy's worker among them
    assert served == executor_pids, (served, executor_pids)
    assert run.spied_worker in run.workers
    for _, epid, entry in run.workers.values():
        assert entry["python"]["samples_by_attribution"]["python-sole-task"] > 0, entry


# ------------------------------------------------- plain CPython scripts

PLAIN_PYTHONS = {
    "3.10.13": os.path.join(PYENV, "versions", "3.10.13", "bin", "python3"),
    "3.11.7": os.path.join(PYENV, "versions", "3.11.7", "bin", "python3"),
    "3.12.1": os.path.join(PYENV, "versions", "3.12.1", "bin", "python3"),
    "3.13.0": os.path.join(PYENV, "versions", "3.13.0", "bin", "python3"),
    "debian-3.11": "/usr/bin/python3.11",
}


@pytest.mark.parametrize("label", list(PLAIN_PYTHONS))
def test_plain_script_frames_match_py_spy(tmp_path, label):
    python = PLAIN_PYTHONS[label]
    if not os.path.exists(python):
        pytest.skip(f"{python} missing")
    script = tmp_path / "plain.py"
    script.write_text(PLAIN)
    timed = subprocess.run([python, str(script), "3", "timed"], capture_output=True, text=True,
                           timeout=60)
    split = re.search(r"^split hot ([\d.]+) warm ([\d.]+)$", timed.stdout, re.M)
    assert split, timed.stdout + timed.stderr
    truth = {"hot": float(split.group(1)), "warm": float(split.group(2))}
    proc = subprocess.Popen([python, str(script), "30"], stdout=subprocess.PIPE, text=True)
    spy = rec = None
    rec_log = tmp_path / "record.log"
    try:
        assert proc.stdout.readline().strip() == "ready"
        # sparkprof for 6 s at 499 Hz; py-spy for 5 s at 250 Hz inside it
        with open(rec_log, "w") as log:
            rec = subprocess.Popen([SPARKPROF, "record", "-p", str(proc.pid), "-d", "6",
                                    "-F", "499", "-o", str(tmp_path / "rec")],
                                   stdout=log, stderr=subprocess.STDOUT)
        assert wait_for_text(rec_log, "recording into", 60, rec), open(rec_log).read()
        spy = start_py_spy(proc.pid, tmp_path / "py-spy.txt", tmp_path / "py-spy.log",
                           rate=250, duration=5)
        assert spy.wait(timeout=60) == 0, open(tmp_path / "py-spy.log").read()
        assert rec.wait(timeout=60) == 0, open(rec_log).read()
    finally:
        for p in (spy, rec, proc):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
    ours = read_folded(tmp_path / "rec" / "all.folded")
    ours = Counter({s: n for s, n in ours.items() if s.split(";", 1)[0].endswith(f"-{proc.pid}")})
    theirs = read_py_spy(tmp_path / "py-spy.txt")
    total = sum(ours.values())
    with_python = sum(n for s, n in ours.items() if python_frames(s))
    functions = ("hot", "warm", "produce", "middle", "outer")
    ours_in = shares_containing(ours, functions, python_only=True)
    theirs_in = shares_containing(theirs, functions, python_only=False)
    ours_leaf = innermost_shares(ours, python_only=True)
    theirs_leaf = innermost_shares(theirs, python_only=False)
    summary = read_summary(tmp_path / "rec")
    entry = [p for p in summary["processes"] if p["pid"] == proc.pid]
    print(f"\n[{label}] {with_python}/{total} samples with Python frames "
          f"({100.0 * with_python / max(total, 1):.1f}%); py-spy {sum(theirs.values())} samples; "
          f"summary python: {entry[0].get('python') if entry else None}")
    for fn in functions:
        print(f"[{label}]   {fn}: in stack sparkprof {ours_in[fn]:.1f}% py-spy {theirs_in[fn]:.1f}%"
              f"; innermost sparkprof {ours_leaf.get(fn, 0):.1f}% py-spy "
              f"{theirs_leaf.get(fn, 0):.1f}%")
    # (How many it gets depends on how busy the node is: shares are compared.)
    assert total >= 400, total
    assert with_python >= 0.9 * total, (with_python, total)
    assert unnamed_leaf(ours) <= 0.01 * total, [s for s in ours if "[python]_[p]" in s][:5]
    # the innermost Python frame is the hot function's in most samples, at
    # one of its lines
    assert ours_leaf.get("hot", 0) >= 50, ours_leaf
    hot_lines = {f for s in ours for f in python_frames(s)[-1:] if function_name(f) == "hot"}
    assert all(re.match(r"^hot \(plain\.py:(4|5|6|7|8)\)_\[p\]$", f) for f in hot_lines), hot_lines
    # whole stacks: the generator between middle and hot
    chain = [function_name(f) for f in python_frames(max(ours, key=ours.get))]
    assert chain[-4:] == ["outer", "middle", "produce", "hot"], chain
    assert sum(theirs.values()) >= 1000
    # hot's and warm's shares (in the stack and innermost: both are leaf
    # functions) against the script's own CPU time in each, timed just
    # before; the callers' against py-spy. py-spy samples a thread waiting
    # for a CPU as well as a running one, so on a busy node its split of hot
    # and warm strays further: there it is held to twice the bound.
    print(f"[{label}]   the script's own CPU split: {truth}")
    for fn in functions:
        in_ref = truth.get(fn, theirs_in[fn])
        leaf_ref = truth.get(fn, theirs_leaf.get(fn, 0))
        assert abs(ours_in[fn] - in_ref) <= SHARE_POINTS, (fn, ours_in, truth, theirs_in)
        assert abs(ours_leaf.get(fn, 0) - leaf_ref) <= SHARE_POINTS, \
            (fn, ours_leaf, truth, theirs_leaf)
        assert abs(ours_in[fn] - theirs_in[fn]) <= 2 * SHARE_POINTS, (fn, ours_in, theirs_in)

"""A real Spark application on this machine, for tests: pyspark from PyPI
(tools/install-deps.sh), a `local-cluster[2,1,1024]` master (a standalone
master and two workers inside the driver JVM, each worker starting one real
executor JVM: org.apache.spark.executor.CoarseGrainedExecutorBackend, its
logs in WORK_DIR/spark-home/work/APP/EXEC/stderr), a job
of several stages (two scans, a shuffle join, an aggregation), and event
logging on.

    run = run_job(tmp_path, executor_java_options="-agentpath:... -XX:+PreserveFramePointer",
                  while_running=lambda run: ...)
    run.app_id, run.executors ({executor id: pid}), run.event_log,
    run.stages_by_executor ({executor id: {(stage, attempt), ...}})

`before_job(run)` is called once the executors have registered, before the
job starts (a recording of the running executors can be started there);
`while_running(run)` after the job finished and before the application
stops, while the executor JVMs are still alive (a recording can be stopped
there, executors inspected, ...).  run.result is None in before_job.
"""
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXECUTOR_MAIN = "org.apache.spark.executor.CoarseGrainedExecutorBackend"

# The driver program, run by a separate python3 so that the JVMs it starts
# belong to it and are stopped with it.
DRIVER = r'''
import json, os, sys, time
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

event_dir, java_opts, release, master, go = sys.argv[1:6]
spark = (SparkSession.builder.master(master).appName("sparkprof-test")
         .config("spark.eventLog.enabled", "true")
         .config("spark.eventLog.dir", "file://" + event_dir)
         .config("spark.eventLog.compress", "false")
         .config("spark.executor.memory", "512m")
         .config("spark.driver.memory", "768m")
         .config("spark.executor.extraJavaOptions", java_opts)
         .config("spark.sql.shuffle.partitions", "4")
         .config("spark.sql.adaptive.enabled", "false")
         .config("spark.sql.autoBroadcastJoinThreshold", "-1")
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .getOrCreate())
sc = spark.sparkContext
# wait for the executors (local-cluster[N,...]: N of them) to register, say
# so, and wait for the go-ahead
want = int(master.split("[")[1].split(",")[0]) if master.startswith("local-cluster[") else 0
deadline = time.time() + 600
while sc._jsc.sc().getExecutorMemoryStatus().size() < want + 1 and time.time() < deadline:
    time.sleep(0.2)
print(json.dumps({"ready": sc.applicationId}), flush=True)
while not os.path.exists(go) and time.time() < deadline:
    time.sleep(0.1)
facts = spark.range(0, 1500000, numPartitions=4).selectExpr(
    "id", "id % 1000 as k", "sha2(cast(id as string), 256) as h")
dims = spark.range(0, 1000, numPartitions=2).selectExpr("id as k", "id * 2 as v")
rows = (facts.join(dims, "k").groupBy((F.col("k") % 10).alias("g"))
        .agg(F.count("*").alias("n"), F.sum("v").alias("s"), F.max("h").alias("m"))
        .orderBy("g").collect())
print(json.dumps({"app_id": sc.applicationId, "groups": len(rows),
                  "rows": sum(r["n"] for r in rows)}), flush=True)
deadline = time.time() + 1800
while not os.path.exists(release) and time.time() < deadline:
    time.sleep(0.2)
spark.stop()
'''


class SparkRun:
    def __init__(self, app_id, event_log, executors, driver_pid, result):
        self.app_id = app_id
        self.driver_pid = driver_pid        # the SparkSubmit JVM, while running
        self.event_log = event_log
        self.executors = executors          # {executor id: pid}, while running
        self.result = result                # what the job returned
        self.stages_by_executor = {}        # filled after the application ended


def spark_home():
    import pyspark
    return os.path.dirname(pyspark.__file__)


def private_spark_home(work_dir):
    """A SPARK_HOME of symlinks to pyspark's files, so that the workers'
    folder ($SPARK_HOME/work: executor logs, app files) is the test's own,
    not inside the installed package."""
    home = os.path.join(work_dir, "spark-home")
    os.makedirs(os.path.join(home, "work"), exist_ok=True)
    real = spark_home()
    for name in os.listdir(real):
        link = os.path.join(home, name)
        if name != "work" and not os.path.lexists(link):
            os.symlink(os.path.join(real, name), link)
    return home


def executor_pids(app_id):
    """{executor id: pid} of this machine's executor JVMs of app_id, read
    from /proc/PID/cmdline here in Python (independently of the C module)."""
    found = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        argv = [a.decode(errors="replace") for a in argv]
        if EXECUTOR_MAIN not in argv:
            continue
        args = argv[argv.index(EXECUTOR_MAIN) + 1:]
        opts = dict(zip(args[0::2], args[1::2]))
        if opts.get("--app-id") == app_id and "--executor-id" in opts:
            found[opts["--executor-id"]] = int(pid)
    return found


def driver_pid(session):
    """The SparkSubmit JVM in process session `session`, or None."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.getsid(int(pid)) != session:
                continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"org.apache.spark.deploy.SparkSubmit" in f.read().split(b"\0"):
                    return int(pid)
        except OSError:
            continue
    return None


def stages_by_executor(event_log):
    """{executor id: {(stage id, stage attempt), ...}} from the event log's
    SparkListenerTaskStart events."""
    out = {}
    with open(event_log) as f:
        for line in f:
            ev = json.loads(line)
            if ev.get("Event") != "SparkListenerTaskStart":
                continue
            exec_id = ev["Task Info"]["Executor ID"]
            out.setdefault(exec_id, set()).add((ev["Stage ID"], ev["Stage Attempt ID"]))
    return out


def run_job(work_dir, executor_java_options="", master="local-cluster[2,1,1024]",
            java_home="/usr/lib/jvm/java-17-openjdk-amd64", before_job=None,
            while_running=None, timeout=900, driver=DRIVER):
    """Runs the job (driver: a program of DRIVER's arguments and protocol);
    returns a SparkRun.  Raises AssertionError with the driver's output on
    failure.  Leaves no JVM behind."""
    work_dir = str(work_dir)
    event_dir = os.path.join(work_dir, "events")
    os.makedirs(event_dir, exist_ok=True)
    release = os.path.join(work_dir, "release")
    go = os.path.join(work_dir, "go")
    script = os.path.join(work_dir, "driver.py")
    with open(script, "w") as f:
        f.write(driver)
    env = dict(os.environ, JAVA_HOME=java_home, SPARK_HOME=private_spark_home(work_dir),
               PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_LOCAL_IP="127.0.0.1", SPARK_LOCAL_DIRS=os.path.join(work_dir, "local"))
    env["PATH"] = os.path.join(java_home, "bin") + ":" + env.get("PATH", "")
    log = open(os.path.join(work_dir, "driver.log"), "w+")
    proc = subprocess.Popen([sys.executable, script, event_dir, executor_java_options, release,
                             master, go], stdout=subprocess.PIPE, stderr=log, text=True,
                            env=env, cwd=work_dir, start_new_session=True)
    run = None

    def next_line():
        line = proc.stdout.readline()  # blocks until the driver says something
        if not line:
            proc.wait(timeout=60)
            log.seek(0)
            raise AssertionError(f"Spark job failed ({proc.returncode}):\n{log.read()[-6000:]}")
        return json.loads(line)

    try:
        app_id = next_line()["ready"]
        run = SparkRun(app_id, os.path.join(event_dir, app_id), executor_pids(app_id),
                       driver_pid(proc.pid), None)
        if before_job:
            before_job(run)
        open(go, "w").close()
        run.result = next_line()
        if while_running:
            while_running(run)
        open(release, "w").close()
        proc.wait(timeout=timeout)
        assert proc.returncode == 0, f"driver exited {proc.returncode}"
        deadline = time.time() + 60
        while executor_pids(app_id) and time.time() < deadline:
            time.sleep(0.5)  # executors are stopped by the workers
        assert os.path.exists(run.event_log), os.listdir(event_dir)
        run.stages_by_executor = stages_by_executor(run.event_log)
        return run
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the driver's session: its JVMs too
            proc.wait(timeout=60)
        if run:
            for pid in executor_pids(run.app_id).values():
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        log.close()

"""spark_rest_read (user/spark/spark_rest.c) against a real running driver:
pyspark 3.5.3 in local[2] with its UI on 127.0.0.1 and an event log, a
job with a shuffle under a job description and a SQL aggregation.  While
the application is alive, the record its REST API gives is the one its
(in-progress) event log gives, entry for entry
(build/tests/test_spark_app_record --dump-rest / --dump-log)."""
import json
import os
import signal
import subprocess
import sys
import time

DRIVER = r'''
import json, os, sys, time
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

event_dir, release = sys.argv[1:3]
spark = (SparkSession.builder.master("local[2]").appName("sparkprof-rest-test")
         .config("spark.eventLog.enabled", "true")
         .config("spark.eventLog.dir", "file://" + event_dir)
         .config("spark.eventLog.compress", "false")
         .config("spark.ui.enabled", "true")
         .config("spark.ui.port", "0")
         .config("spark.driver.host", "127.0.0.1")
         .config("spark.sql.shuffle.partitions", "2")
         .config("spark.sql.adaptive.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .getOrCreate())
sc = spark.sparkContext
sc.setJobDescription("rest test: word count")
sc.parallelize(["a b", "b c", "c d"], 3).flatMap(str.split).map(lambda w: (w, 1)) \
    .reduceByKey(lambda a, b: a + b, 2).collect()
sc.setJobDescription(None)
spark.range(0, 1000, numPartitions=2).groupBy((F.col("id") % 7).alias("k")).count().collect()
print(json.dumps({"app_id": sc.applicationId, "ui": sc.uiWebUrl}), flush=True)
deadline = time.time() + 120
while not os.path.exists(release) and time.time() < deadline:
    time.sleep(0.1)
spark.stop()
'''


def dump(build_dir, *args):
    proc = subprocess.run([os.path.join(build_dir, "tests", "test_spark_app_record"), *args],
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, no_proxy="127.0.0.1,localhost"))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    return [l for l in lines if not l.startswith("truncated ")]


def test_rest_matches_event_log(tmp_path, build_dir):
    event_dir = tmp_path / "events"
    event_dir.mkdir()
    release = tmp_path / "release"
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_LOCAL_IP="127.0.0.1", JAVA_HOME="/usr/lib/jvm/java-17-openjdk-amd64")
    log = open(tmp_path / "driver.log", "w+")
    proc = subprocess.Popen([sys.executable, str(script), str(event_dir), str(release)],
                            stdout=subprocess.PIPE, stderr=log, text=True, env=env,
                            cwd=tmp_path, start_new_session=True)
    try:
        line = proc.stdout.readline()
        if not line:
            proc.wait(timeout=60)
            log.seek(0)
            raise AssertionError(f"driver failed ({proc.returncode}):\n{log.read()[-6000:]}")
        ready = json.loads(line)
        assert ready["ui"].startswith("http://127.0.0.1:"), ready
        event_log = event_dir / (ready["app_id"] + ".inprogress")
        # The UI's store and the event log are fed by listeners of their
        # own: wait until both have every ended task.
        deadline = time.time() + 30
        while True:
            rest = dump(build_dir, "--dump-rest", ready["ui"])
            from_log = dump(build_dir, "--dump-log", str(event_log))
            if rest == from_log or time.time() > deadline:
                break
            time.sleep(0.5)
        assert rest == from_log, "\n".join(
            ["REST only:"] + sorted(set(rest) - set(from_log)) +
            ["event log only:"] + sorted(set(from_log) - set(rest)))
        assert rest[0].startswith(f"app {ready['app_id']} name=sparkprof-rest-test ")
        assert "version=3.5.3" in rest[0]
        tasks = [l for l in rest if l.startswith("task ")]
        stages = [l for l in rest if l.startswith("stage ")]
        assert len(tasks) == 3 + 2 + 2 + 2, rest
        assert sum("desc=rest test: word count" in s for s in stages) == 2, stages
        sql = [s for s in stages if " sql=-1 " not in s]
        assert len(sql) == 2 and all("desc=collect at " in s for s in sql), stages
        assert any("shuffle_write=0 " not in t for t in tasks), tasks
        # The same through the application's id, and a wrong one.
        assert dump(build_dir, "--dump-rest", ready["ui"] + "/", ready["app_id"]) == rest
        bad = subprocess.run([os.path.join(build_dir, "tests", "test_spark_app_record"),
                              "--dump-rest", ready["ui"], "app-none"],
                             capture_output=True, text=True, timeout=60,
                             env=dict(os.environ, no_proxy="127.0.0.1,localhost"))
        assert bad.returncode == 1 and "no application app-none" in bad.stderr, bad.stderr
    finally:
        release.touch()
        try:
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=60)
            log.close()

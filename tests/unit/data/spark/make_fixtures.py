#!/usr/bin/env python3
"""Makes the event log fixtures of tests/unit/test_spark_app_record.c from
real Spark applications (pyspark 3.5.3 from tools/install-deps.sh, JDK 17):

    python3 tests/unit/data/spark/make_fixtures.py [SCRATCH_DIR]

One small application (local[2,2]: a word count with a shuffle under a job
description, a SQL aggregation without one, and a job whose first task
attempt fails; eight task attempts) is run once per event log setting:
plain, compressed with zstd, lz4 and snappy, and rolling.  Each real log is
checked to be in its codec's framing, and all are kept in SCRATCH_DIR (not
here) for test_spark_app_record --dump-log.

The plain run also serves its REST API while it runs: rest/ holds the
replies (applications, jobs, sql, stages, each stage attempt's taskList)
taken once every task had ended.

Kept here, small: the plain run's log as `eventlog`, its lines in Spark's
key order and spelling, made smaller where the reader does not look: the
environment event (90 KB of class path and system properties) is left
out, "Accumulables" and "RDD Info" lists are emptied, "Task Executor
Metrics" dropped, "Properties" keep the job description, SQL execution id,
call site and job group, a failed task's stack traces keep their first
lines, and the SQL plan is cut to its root; the same
lines compressed by Spark's own codec classes (ZStd/LZ4/SnappyCompressionCodec
.compressedContinuousOutputStream, flushed after job and stage events as
EventLoggingListener does), as eventlog.zstd/.lz4/.snappy, so that every
codec must give the same record; `rolled/`, those lines in a rolling log's
layout (events_1_APP and events_2_APP, appstatus_APP as Spark leaves it);
`truncated.zstd.inprogress` (eventlog.zstd cut inside a frame),
`truncated.inprogress` (eventlog cut inside a line) and `malformed`
(eventlog's lines up to its first task end, whose Task Info is turned
into a list).
"""
import glob
import json
import os
import shutil
import socket
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
DROP = {"SparkListenerEnvironmentUpdate"}
KEEP_PROPERTIES = {"spark.job.description", "spark.sql.execution.id", "callSite.short",
                   "spark.jobGroup.id"}
FLUSHED = {"SparkListenerJobStart", "SparkListenerJobEnd", "SparkListenerStageCompleted",
           "SparkListenerStageSubmitted", "SparkListenerApplicationStart",
           "SparkListenerApplicationEnd"}
MAGIC = {"zstd": b"\x28\xb5\x2f\xfd", "lz4": b"LZ4Block", "snappy": b"\x82SNAPPY\x00"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fail_first(x):
    from pyspark import TaskContext
    ctx = TaskContext.get()
    if ctx.partitionId() == 0 and ctx.attemptNumber() == 0:
        raise RuntimeError("sparkprof fixture: first attempt fails")
    return x


def run_app(spark):
    from pyspark.sql import functions as F
    sc = spark.sparkContext
    sc.setJobDescription("sparkprof fixture: word count")
    words = sc.parallelize(["a b", "b c", "c d", "a a"], 2)
    counts = words.flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(
        lambda a, b: a + b, 1).collect()
    sc.setJobDescription(None)
    groups = spark.range(0, 100, numPartitions=2).groupBy(
        (F.col("id") % 3).alias("k")).count().collect()
    sc.setJobDescription("sparkprof fixture: retried task")
    retried = sc.parallelize([1, 2], 1).map(fail_first).collect()
    sc.setJobDescription(None)
    return len(counts), len(groups), len(retried)


def session(event_dir, conf, ui_port=None):
    from pyspark.sql import SparkSession
    b = (SparkSession.builder.master("local[2,2]").appName("sparkprof-fixture")
         .config("spark.eventLog.enabled", "true")
         .config("spark.eventLog.dir", "file://" + event_dir)
         .config("spark.sql.shuffle.partitions", "1")
         .config("spark.eventLog.compress", "false")
         .config("spark.eventLog.rolling.enabled", "false")
         .config("spark.sql.adaptive.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.ui.enabled", "true" if ui_port else "false"))
    if ui_port:
        b = b.config("spark.ui.port", str(ui_port)).config("spark.driver.host", "127.0.0.1")
    for k, v in conf.items():
        b = b.config(k, v)
    return b.getOrCreate()


def get(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read()


def capture_rest(port, out_dir):
    """The REST replies once every stage is complete and every task ended."""
    root = f"http://127.0.0.1:{port}/api/v1/applications"
    app = json.loads(get(root))[0]["id"]
    base = f"{root}/{app}"
    for _ in range(100):
        stages = json.loads(get(base + "/stages?details=false"))
        jobs = json.loads(get(base + "/jobs"))
        if all(s["status"] in ("COMPLETE", "SKIPPED", "FAILED") for s in stages) and \
                all(j["status"] != "RUNNING" for j in jobs) and len(jobs) >= 3:
            break
        time.sleep(0.2)
    os.makedirs(out_dir, exist_ok=True)
    replies = {"applications.json": root, "jobs.json": base + "/jobs",
               "sql.json": base + "/sql?details=false&planDescription=false&offset=0&length=1000",
               "stages.json": base + "/stages?details=false"}
    for s in stages:
        if s["status"] in ("COMPLETE", "FAILED", "ACTIVE"):
            replies[f"tasks_{s['stageId']}_{s['attemptId']}.json"] = (
                f"{base}/stages/{s['stageId']}/{s['attemptId']}/taskList?offset=0&length=1000")
    for name, url in replies.items():
        body = json.loads(get(url))
        with open(os.path.join(out_dir, name), "w") as f:
            json.dump(body, f, indent=1)
            f.write("\n")


def run_setting(scratch, name, conf, ui_port=None):
    event_dir = os.path.join(scratch, name)
    os.makedirs(event_dir)
    spark = session(event_dir, conf, ui_port)
    print(name, spark.sparkContext.applicationId, run_app(spark), flush=True)
    if ui_port:
        capture_rest(ui_port, os.path.join(scratch, "rest"))
    spark.stop()
    logs = os.listdir(event_dir)
    assert len(logs) == 1, logs
    return os.path.join(event_dir, logs[0])


def check_real(path, codec):
    files = sorted(glob.glob(path + "/events_*")) if os.path.isdir(path) else [path]
    for f in files:
        with open(f, "rb") as fh:
            head = fh.read(8)
        if codec:
            assert f.endswith("." + codec) and head.startswith(MAGIC[codec]), (f, head)
        else:
            assert head.startswith(b'{"Event"'), (f, head)
        print(f"  {os.path.relpath(f, os.path.dirname(path))}: {os.path.getsize(f)} bytes")


def encode(jvm, codec_class, lines, path):
    codec = getattr(jvm.org.apache.spark.io, codec_class)(jvm.org.apache.spark.SparkConf())
    out = codec.compressedContinuousOutputStream(jvm.java.io.FileOutputStream(path))
    for line in lines:
        out.write(bytearray(line))
        if json.loads(line)["Event"] in FLUSHED:
            out.flush()
    out.close()


def prune(ev):
    """ev without what the reader never looks at, as one line."""
    ev.pop("Task Executor Metrics", None)
    reason = ev.get("Task End Reason", {})
    if "Stack Trace" in reason:
        reason["Stack Trace"] = reason["Stack Trace"][:2]
        reason["Full Stack Trace"] = reason["Full Stack Trace"].split("\n")[0]
    infos = [ev[k] for k in ("Task Info", "Stage Info") if k in ev] + ev.get("Stage Infos", [])
    for info in infos:
        if "Accumulables" in info:
            info["Accumulables"] = []
        if "RDD Info" in info:
            info["RDD Info"] = []
    if "Properties" in ev:
        ev["Properties"] = {k: v for k, v in ev["Properties"].items() if k in KEEP_PROPERTIES}
    if "sparkPlanInfo" in ev:
        ev["sparkPlanInfo"]["children"] = []
        ev["physicalPlanDescription"] = ev["physicalPlanDescription"].split("\n")[0]
    return (json.dumps(ev, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def main():
    scratch = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="spark-logs-")
    os.makedirs(scratch, exist_ok=True)
    port = free_port()
    plain = run_setting(scratch, "plain", {"spark.eventLog.compress": "false"}, port)
    check_real(plain, None)
    for codec in ("zstd", "lz4", "snappy"):
        real = run_setting(scratch, codec, {"spark.eventLog.compress": "true",
                                            "spark.eventLog.compression.codec": codec})
        check_real(real, codec)
    rolled_real = run_setting(scratch, "rolling", {"spark.eventLog.compress": "false",
                                                   "spark.eventLog.rolling.enabled": "true",
                                                   "spark.eventLog.rolling.maxFileSize": "10m"})
    check_real(rolled_real, None)
    print("  rolled folder:", os.path.basename(rolled_real), sorted(os.listdir(rolled_real)))

    with open(plain, "rb") as f:
        lines = [prune(json.loads(l)) for l in f.read().splitlines()
                 if json.loads(l)["Event"] not in DROP]
    text = b"".join(lines)
    write(os.path.join(HERE, "eventlog"), text)
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
             .config("spark.eventLog.enabled", "false").getOrCreate())
    jvm = spark.sparkContext._jvm
    for codec, cls in (("zstd", "ZStdCompressionCodec"), ("lz4", "LZ4CompressionCodec"),
                       ("snappy", "SnappyCompressionCodec")):
        encode(jvm, cls, lines, os.path.join(HERE, "eventlog." + codec))
    spark.stop()

    app = os.path.basename(plain)
    rolled = os.path.join(HERE, "rolled")
    shutil.rmtree(rolled, ignore_errors=True)
    os.makedirs(rolled)
    half = len(lines) // 2
    write(os.path.join(rolled, f"events_1_{app}"), b"".join(lines[:half]))
    write(os.path.join(rolled, f"events_2_{app}"), b"".join(lines[half:]))
    for f in os.listdir(rolled_real):
        if f.startswith("appstatus_"):
            shutil.copy(os.path.join(rolled_real, f), os.path.join(rolled, f"appstatus_{app}"))

    with open(os.path.join(HERE, "eventlog.zstd"), "rb") as f:
        z = f.read()
    write(os.path.join(HERE, "truncated.zstd.inprogress"), z[:len(z) * 3 // 5])
    cut = len(text) * 3 // 5
    cut += text[cut - 1:cut] == b"\n"
    write(os.path.join(HERE, "truncated.inprogress"), text[:cut])
    i = next(i for i, l in enumerate(lines) if b'"SparkListenerTaskEnd"' in l)
    bad = lines[:i] + [lines[i].replace(b'"Task Info":{', b'"Task Info":[', 1)]
    write(os.path.join(HERE, "malformed"), b"".join(bad))
    print("malformed line", i + 1)
    shutil.rmtree(os.path.join(HERE, "rest"), ignore_errors=True)
    shutil.copytree(os.path.join(scratch, "rest"), os.path.join(HERE, "rest"))
    print("scratch:", scratch)


if __name__ == "__main__":
    main()

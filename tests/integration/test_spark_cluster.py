"""The real-Spark harness (spark_cluster.py) and executor discovery on real
Spark JVMs: a local-cluster application with two executor JVMs, discovered
by the C module (spark_executor_identify, through the unit-test binary's
--identify mode), and its event log parsed into the stages each executor ran.
"""
import os
import subprocess

import pytest

import spark_cluster

pyspark = pytest.importorskip("pyspark", reason="run `make deps`: pyspark is missing")


def identify(build_dir, pid):
    """[ret, backend, app id, app id known, executor id] from the C module."""
    out = subprocess.run([os.path.join(build_dir, "tests", "test_spark_executor"), "--identify",
                          str(pid)], capture_output=True, text=True, timeout=60, check=True)
    return out.stdout.split()[1:]


def test_local_cluster_executors_and_event_log(tmp_path, build_dir, jdks):
    seen = {}

    def while_running(run):
        seen["executors"] = {e: identify(build_dir, pid) for e, pid in run.executors.items()}
        seen["driver"] = identify(build_dir, run.driver_pid) if run.driver_pid else None

    run = spark_cluster.run_job(tmp_path, java_home=jdks[17], while_running=while_running)

    assert run.result["rows"] == 1500000 and run.result["groups"] == 10
    assert run.app_id.startswith("app-")
    # two executor JVMs, found from /proc by Python and by the C module alike
    assert set(run.executors) == {"0", "1"}
    for exec_id, ident in seen["executors"].items():
        assert ident == ["1", "standalone", run.app_id, "1", exec_id], (exec_id, ident)
    # the local-cluster driver (SparkSubmit, master local-cluster[...]) runs no tasks
    assert seen["driver"] == ["0", "none", "-", "0", "-"], seen["driver"]

    # the event log: both executors ran tasks of the scans, the join and the
    # aggregation; every submitted stage ran somewhere
    by_exec = run.stages_by_executor
    assert set(by_exec) == {"0", "1"}, by_exec
    for exec_id, stages in by_exec.items():
        assert len(stages) >= 3, (exec_id, stages)
    submitted = set()
    with open(run.event_log) as f:
        import json
        for line in f:
            ev = json.loads(line)
            if ev["Event"] == "SparkListenerStageSubmitted":
                info = ev["Stage Info"]
                submitted.add((info["Stage ID"], info["Stage Attempt ID"]))
    assert len(submitted) >= 4
    assert set().union(*by_exec.values()) == submitted
    assert not spark_cluster.executor_pids(run.app_id), "executor JVMs left behind"


def test_local_mode_driver_is_executor_driver(tmp_path, build_dir, jdks):
    """In local mode the driver JVM runs the tasks: executor id "driver";
    the app id (local-<millis>) is not on its command line, so the C module
    gives the placeholder and says it is unknown."""
    seen = {}

    def while_running(run):
        seen["driver"] = identify(build_dir, run.driver_pid)
        with open(f"/proc/{run.driver_pid}/cmdline", "rb") as f:
            seen["argv"] = f.read().split(b"\0")

    run = spark_cluster.run_job(tmp_path, master="local[2]", java_home=jdks[17],
                                while_running=while_running)
    assert run.app_id.startswith("local-")
    assert b"spark.master=local[2]" in seen["argv"], seen["argv"]
    assert seen["driver"] == ["1", "local", "local", "0", "driver"], seen["driver"]
    assert set(run.stages_by_executor) == {"driver"}
    assert len(run.stages_by_executor["driver"]) >= 4

"""End to end: `sparkprof record` splits Spark executors' samples by stage.

1. The simulated executor (tests/java/..., spark_sim.py) with the helper:
   in thread mode at least 99% of task-thread samples land in their true
   stage attempt's file (the truth: the StageNWork.burn frames that only
   tasks of that stage attempt run); epoch mode, on a run of
   the same workload, is reported and must do worse (it merges concurrent
   stages).
2. Real Spark (spark_cluster.py, local-cluster with two executors, the
   helper in spark.executor.extraJavaOptions): per-stage files for each
   executor, whose stage ids are the stages the event log says ran on that
   executor, whose busy stages hold Java frames named through the helper,
   and some of them Spark's own (org/apache/spark/...). Interpreted frames
   are named (at most 2% of samples keep "Interpreter"), and the task threads'
   off-CPU time keeps its Java frames (the walker continues waits from the
   thread's last Java frame).
"""
import json
import os
import re
import signal
import subprocess
import time
from collections import Counter

import pytest

import spark_sim
from testlib import SPARKPROF, read_folded, read_summary, record, remove_helper_files

SPARK_FRAME = "org/apache/spark/"
TASK_THREAD = "Executor task launch worker"
# A Java method as the helper names it: package/Class.method
JAVA_FRAME = re.compile(r"^[A-Za-z_$][\w$]*(?:/[\w$]+)+\.[\w$<>]+")


@pytest.fixture(scope="module")
def sim_classpath(build_dir):
    return spark_sim.compile_sim(build_dir)


def record_sim(out_dir, tmp_path, classpath, agent_path, java_home, *record_args, scale=1.0,
               linger_ms=0):
    truth_path = tmp_path / f"truth-{os.path.basename(out_dir)}.json"
    cmd = spark_sim.sim_command(classpath, truth_path, java=os.path.join(java_home, "bin", "java"),
                                jvm_args=[f"-agentpath:{agent_path}", "-XX:+PreserveFramePointer"],
                                scale=scale, linger_ms=linger_ms)
    record(out_dir, "-F", "199", *record_args, "--", *cmd, timeout=600)
    truth = spark_sim.load_truth(truth_path)
    remove_helper_files([truth["pid"]])
    return truth


def exec_dir(out_dir):
    return os.path.join(out_dir, spark_sim.APP_ID, "exec-1")


@pytest.mark.parametrize("jdk", [17, "newest"])
def test_sim_executor_thread_mode(tmp_path, sim_classpath, agent_path, jdks, newest_jdk, jdk):
    java_home = jdks[17] if jdk == 17 else newest_jdk
    out = tmp_path / "thread"
    truth = record_sim(out, tmp_path, sim_classpath, agent_path, java_home)
    placement = spark_sim.task_sample_placement(exec_dir(out))
    right, total = spark_sim.accuracy(placement)
    print(f"thread mode, JDK {jdk}: {right}/{total} task samples in their stage "
          f"({100.0 * right / max(total, 1):.2f}%)")
    assert total >= 500, placement
    assert right >= 0.99 * total, placement

    # every stage attempt of the ground truth got its own file and samples
    stages = {(s["stage"], s["attempt"]) for s in truth["stages"]}
    assert set(placement) == stages
    for key in stages:
        assert placement[key].get(key, 0) > 0, (key, placement[key])

    # summary.json: per stage, tasks seen = the ground truth's, attribution by name
    summary = read_summary(out)
    ex = [e for e in summary["executors"] if e["executor_id"] == "1"]
    assert len(ex) == 1 and ex[0]["helper"] and ex[0]["attribution"] == "thread", ex
    tasks = {(s["stage"], s["attempt"]): s["tasks"] for s in truth["stages"]}
    by_stage = {(s["stage"], s["attempt"]): s for s in ex[0]["stages"] if s["stage"] is not None}
    for key, n in tasks.items():
        assert by_stage[key]["tasks_seen"] == n, (key, by_stage[key])
        assert by_stage[key]["samples_by_attribution"]["thread-name"] > 0
    # the background threads' samples go by the epoch rule
    assert sum(s["samples_by_attribution"]["epoch"] for s in ex[0]["stages"]) > 0
    # and the stage files hold the background threads' work (shuffle,
    # heartbeat, RPC: SimBackground.spin), not only task frames
    background = sum(spark_sim_count(os.path.join(exec_dir(out), f), "SimBackground.spin")
                     for f in os.listdir(exec_dir(out)) if spark_sim.stage_file_key(f) is not False)
    assert background > 0


def test_sim_executor_stages_over_many_segments(tmp_path, sim_classpath, agent_path, jdks):
    """--stack-memory 16K: the store closes a segment every few hundred
    samples, so stages run over many segments, and the executor lingers
    after its last stage.  Every stage attempt is listed once, with its
    true task count, and its file holds every task sample of it (no
    sample in another stage's file, none lost), as in one segment."""
    out = tmp_path / "segments"
    truth = record_sim(out, tmp_path, sim_classpath, agent_path, jdks[17],
                       "--stack-memory", "16K", scale=0.5, linger_ms=3000)
    summary = read_summary(out)
    assert summary["memory"]["store_segments"] >= 10, summary["memory"]
    stages = [(s["stage"], s["attempt"]) for s in truth["stages"]]
    ex = [e for e in summary["executors"] if e["executor_id"] == "1"]
    assert len(ex) == 1, summary["executors"]
    listed = [(s["stage"], s["attempt"]) for s in ex[0]["stages"] if s["stage"] is not None]
    assert len(listed) == len(set(listed)) and set(listed) == set(stages), listed
    tasks = {(s["stage"], s["attempt"]): s["tasks"] for s in truth["stages"]}
    by_stage = {(s["stage"], s["attempt"]): s for s in ex[0]["stages"] if s["stage"] is not None}
    for key, n in tasks.items():
        assert by_stage[key]["tasks_seen"] == n, (key, by_stage[key])
        assert by_stage[key]["samples_by_attribution"]["thread-name"] > 0, by_stage[key]
        assert by_stage[key]["first_s"] <= by_stage[key]["last_s"], by_stage[key]
    placement = spark_sim.task_sample_placement(exec_dir(out))
    right, total = spark_sim.accuracy(placement)
    assert total >= 300 and right >= 0.99 * total, placement
    # each stage's file sums what summary.json counted for it
    for key, st in by_stage.items():
        stacks = read_folded(os.path.join(exec_dir(out), st["output"] + ".folded"))
        assert sum(stacks.values()) == st["samples"], (key, st)
    # nothing temporary is left in the output folder
    assert not [f for f in os.listdir(out) if f.startswith(".") or f.endswith(".tmp")]


def spark_sim_count(path, frame_suffix):
    return sum(c for stack, c in read_folded(path).items()
               if any(fr.endswith(frame_suffix) for fr in stack.split(";")))


def test_sim_executor_epoch_mode(tmp_path, sim_classpath, agent_path, jdks):
    """Epoch mode on the same workload: reported, and worse than thread mode
    because two or three stages run at once in most waves."""
    out = tmp_path / "epoch"
    record_sim(out, tmp_path, sim_classpath, agent_path, jdks[17], "--attribution", "epoch")
    placement = spark_sim.task_sample_placement(exec_dir(out))
    right, total = spark_sim.accuracy(placement)
    print(f"epoch mode (5 s): {right}/{total} task samples in their stage "
          f"({100.0 * right / max(total, 1):.2f}%)")
    assert total >= 500
    assert right < 0.9 * total, placement
    summary = read_summary(out)
    ex = [e for e in summary["executors"] if e["executor_id"] == "1"][0]
    assert ex["attribution"] == "epoch"
    assert all(s["samples_by_attribution"]["thread-name"] == 0 for s in ex["stages"])


def test_real_spark_per_stage_files(tmp_path, agent_path, jdks):
    pytest.importorskip("pyspark", reason="run `make deps`: pyspark is missing")
    import spark_cluster

    out = tmp_path / "rec"
    recorder = {}

    def stop_recording(run):
        recorder["proc"].send_signal(signal.SIGINT)
        recorder["proc"].wait(timeout=300)

    # The recording starts before the cluster does: executors that start
    # during a recording (forked by the worker, then exec'd into java) must
    # be picked up, with their helper.
    recorder["proc"] = subprocess.Popen(
        [SPARKPROF, "record", "-o", str(out), "-F", "199", "-a", "-t", "--off-cpu"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(3)
    assert recorder["proc"].poll() is None, recorder["proc"].stderr.read()
    try:
        run = spark_cluster.run_job(
            tmp_path / "spark", java_home=jdks[17], while_running=stop_recording,
            executor_java_options=f"-agentpath:{agent_path} -XX:+PreserveFramePointer")
    finally:
        rec = recorder.get("proc")
        if rec and rec.poll() is None:
            rec.kill()
            rec.wait()
    err = rec.stderr.read()
    remove_helper_files(run.executors.values())
    assert rec.returncode == 0, err

    app_dir = out / run.app_id
    assert set(os.listdir(app_dir)) == {"exec-0", "exec-1"}, (os.listdir(app_dir), err)
    summary = read_summary(out)
    for exec_id, ran in run.stages_by_executor.items():
        d = app_dir / f"exec-{exec_id}"
        files = spark_sim.stage_files(d)
        # every per-stage file is a stage the event log has on this executor
        assert set(files) <= ran, (exec_id, sorted(files), sorted(ran))
        assert len(files) >= min(3, len(ran)), (exec_id, sorted(files), sorted(ran))
        ex = [e for e in summary["executors"] if e["executor_id"] == exec_id
              and e["app_id"] == run.app_id]
        assert len(ex) == 1 and ex[0]["helper"], \
            f"executor {exec_id}: the recording did not use its helper log: {ex}"
        # Java frames named through the helper in the stages with real task
        # work (>= 100 samples attributed by thread name).  Spark's own
        # frames are only required somewhere: the first stage of a cold JVM
        # spends its task time loading classes and in interpreted code
        # ("Interpreter" frames), and a tiny stage's tasks likewise.
        by_name = {(s["stage"], s["attempt"]): s["samples_by_attribution"]["thread-name"]
                   for s in ex[0]["stages"] if s["stage"] is not None}
        busy = [key for key in files if by_name.get(key, 0) >= 100]
        assert len(busy) >= 2, (exec_id, by_name)
        spark_samples = {}
        for key in busy:
            stacks = read_folded(d / files[key])
            java = sum(c for s, c in stacks.items() if any(JAVA_FRAME.match(fr)
                                                          for fr in s.split(";")))
            assert java > 0, (exec_id, files[key])
            spark_samples[key] = sum(c for s, c in stacks.items()
                                     if any(fr.startswith(SPARK_FRAME) for fr in s.split(";")))
        assert max(spark_samples.values()) > 0, (exec_id, spark_samples)
        # Task threads' interpreted frames are named once the recorder has
        # described the JVM to the walker (java_walked_s): "Interpreter" is
        # left where a method could not be read (a frame being built). The
        # stages that began before then are left out: a busy node describes
        # it later.
        walked = ex[0]["java_walked_s"]
        assert walked is not None, (exec_id, ex[0])
        first = {(s["stage"], s["attempt"]): s.get("first_s")
                 for s in ex[0]["stages"] if s["stage"] is not None}
        after = [key for key in files if first.get(key) is not None and first[key] >= walked]
        assert set(busy) & set(after), (exec_id, walked, first)
        tasks = Counter()
        for key in after:
            for s, c in read_folded(d / files[key]).items():
                if s.split(";")[1].startswith(TASK_THREAD):
                    tasks[s] += c
        total = sum(tasks.values())
        unnamed = Counter({s: c for s, c in tasks.items() if "Interpreter" in s.split(";")})
        assert total > 0 and sum(unnamed.values()) <= 0.02 * total, \
            (exec_id, sum(unnamed.values()), total, unnamed.most_common(5))
        # Task threads' waits keep their Java callers.
        off = read_folded(d / "all.offcpu.folded")
        task_off = {s: c for s, c in off.items() if s.split(";")[1].startswith(TASK_THREAD)}
        with_java = sum(c for s, c in task_off.items()
                        if any(JAVA_FRAME.match(fr) for fr in s.split(";")))
        assert sum(task_off.values()) > 0 and with_java >= 0.95 * sum(task_off.values()), \
            (exec_id, with_java, sum(task_off.values()))
        seen = {(s["stage"], s["attempt"]) for s in ex[0]["stages"]
                if s["stage"] is not None and s["tasks_seen"] > 0}
        assert seen == ran, (exec_id, sorted(seen), sorted(ran))

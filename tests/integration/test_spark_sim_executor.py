"""The simulated Spark executor itself: it looks like an executor from
outside (command line, thread names, comm), its task threads carry Spark's
names as the C parser reads them, and its ground truth is consistent.

The end-to-end attribution test (>= 99% of task-thread samples in the right
stage) builds on spark_sim.py once `sparkprof record` splits by stage.
"""
import os
import re
import subprocess
import time

import pytest

import spark_sim


@pytest.fixture(scope="module")
def sim_classpath(build_dir):
    return spark_sim.compile_sim(build_dir)


def jstack_names(java_home, pid):
    """{os tid: Java thread name} from `jcmd PID Thread.print`."""
    out = subprocess.run([os.path.join(java_home, "bin", "jcmd"), str(pid), "Thread.print"],
                         capture_output=True, text=True, timeout=120).stdout
    names = {}
    for m in re.finditer(r'^"(.*)" #\d+.* nid=(0x[0-9a-f]+|\d+) ', out, re.M):
        names[int(m.group(2), 0)] = m.group(1)
    return names


def parse_names(build_dir, names):
    out = subprocess.run([os.path.join(build_dir, "tests", "test_task_thread_name"), "--parse",
                          *names], capture_output=True, text=True, timeout=60, check=True).stdout
    return [line.split() for line in out.splitlines()]


def run_sim(tmp_path, classpath, build_dir, java_home, **kw):
    """Starts the simulator with a linger time, waits for its ground truth,
    and returns (proc, truth, {os tid: name}, {os tid: comm}) captured while it
    lingers."""
    truth_path = tmp_path / "truth.json"
    cmd = spark_sim.sim_command(classpath, truth_path, java=os.path.join(java_home, "bin", "java"),
                                linger_ms=60000, **kw)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 240
        while not truth_path.exists() and proc.poll() is None and time.time() < deadline:
            time.sleep(0.2)
        assert truth_path.exists(), f"no ground truth; stderr: {proc.stderr.read() if proc.poll() is not None else ''}"
        time.sleep(0.5)  # the file is written in one go; let it close
        truth = spark_sim.load_truth(truth_path)
        names = jstack_names(java_home, proc.pid)
        comms = {}
        for tid in os.listdir(f"/proc/{proc.pid}/task"):
            try:
                with open(f"/proc/{proc.pid}/task/{tid}/comm") as f:
                    comms[int(tid)] = f.read().strip()
            except FileNotFoundError:
                pass  # a thread that just exited
        identify = subprocess.run([os.path.join(build_dir, "tests", "test_spark_executor"),
                                   "--identify", str(proc.pid)],
                                  capture_output=True, text=True, timeout=60, check=True).stdout
        return truth, names, comms, identify.split()
    finally:
        proc.kill()
        proc.wait(timeout=60)


def test_sim_executor_full_names(tmp_path, sim_classpath, build_dir, jdks):
    truth, names, comms, ident = run_sim(tmp_path, sim_classpath, build_dir, jdks[17], scale=0.25)

    # discovery by the C module: standalone backend, app id, executor id
    assert ident[1:] == ["1", "standalone", spark_sim.APP_ID, "1", "1"], ident

    tasks = truth["tasks"]
    assert len(tasks) == 33
    stages = {(s["stage"], s["attempt"]): s for s in truth["stages"]}
    assert set(stages) == {(0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (6, 0), (7, 0), (6, 1)}
    for t in tasks:
        planned = (150 if t["failed"] else 300 if t["stage"] in (3, 4, 5) else 400) * 0.25e6
        assert t["cpu_ns"] >= planned, t
        assert t["start_ns"] < t["end_ns"] and t["os_tid"] > 0, t
        retry = f"Attempt{t['stage_attempt']}" if t["stage_attempt"] else ""
        assert t["hot_method"] == f"org/apache/spark/executor/Stage{t['stage']}{retry}Work.burn"
    for key, s in stages.items():
        assert s["cpu_ns"] == sum(t["cpu_ns"] for t in tasks
                                  if (t["stage"], t["stage_attempt"]) == key)

    # waves 2-5 run two or three stages at the same time on the task slots
    for w in truth["waves"][1:]:
        in_wave = [t for t in tasks if w["start_ns"] <= t["start_ns"] <= w["end_ns"]]
        overlapping = {(a["stage"], a["stage_attempt"]) for a in in_wave for b in in_wave
                       if a["stage"] != b["stage"] and a["start_ns"] < b["end_ns"]
                       and b["start_ns"] < a["end_ns"]}
        assert len(overlapping) >= 2, (w, in_wave)

    # the task pool threads are reused: fewer threads than tasks
    pool = {t["os_tid"] for t in tasks}
    assert 2 <= len(pool) < len(tasks)

    # As seen from outside: each pool thread's comm is "Executor task l" and
    # its Java name is still its last task's (Spark < 4.2 keeps it).
    last = {}
    for t in sorted(tasks, key=lambda t: t["start_ns"]):
        last[t["os_tid"]] = t
    for tid, t in last.items():
        assert comms.get(tid) == "Executor task l", (tid, comms.get(tid))
        assert names.get(tid) == t["thread_name"], (tid, names.get(tid), t)
    parsed = parse_names(build_dir, [names[tid] for tid in last])
    for (kind, stage, attempt, spark_tid, cls), t in zip(parsed, last.values()):
        assert (kind, int(stage), int(attempt), int(spark_tid), cls) == \
            ("task", t["stage"], t["stage_attempt"], t["tid"], "task")

    # background threads are named as Spark names them, and classified
    bg = {b["name"]: b for b in truth["background"]}
    for name in ("dispatcher-event-loop-0", "executor-heartbeater", "shuffle-client-1-1"):
        assert bg[name]["cpu_ns"] > 0 and names.get(bg[name]["os_tid"]) == name
    classes = [p[4] for p in parse_names(build_dir, ["dispatcher-event-loop-0", "executor-heartbeater",
                                                     "shuffle-client-1-1"])]
    assert classes == ["rpc", "heartbeat", "shuffle"]


def test_sim_executor_old_and_idle_names(tmp_path, sim_classpath, build_dir, newest_jdk):
    """TID-only names (Spark 2.2-3.0) and 4.2+ idle names, on the newest JDK."""
    truth, names, _, _ = run_sim(tmp_path, sim_classpath, build_dir, newest_jdk, scale=0.05,
                                 name_format="tid", idle_names=True)
    pool = {t["os_tid"] for t in truth["tasks"]}
    for t in truth["tasks"]:
        assert t["thread_name"] == f"Executor task launch worker for task {t['tid']}"
    parsed = parse_names(build_dir, [t["thread_name"] for t in truth["tasks"]])
    assert all(p[0] == "tid" and int(p[3]) == t["tid"] for p, t in zip(parsed, truth["tasks"]))
    # after their tasks, the pool threads carry the idle name
    idle = parse_names(build_dir, [names[tid] for tid in pool])
    assert all(p[0] == "idle" for p in idle), [names[tid] for tid in pool]

"""Wall-clock profiles of a (simulated) Spark executor: idle task-pool
threads are told apart from tasks that wait, and `--threads tasks` keeps
only threads running a task."""
import os

import pytest

import spark_sim
from testlib import read_folded, record

IDLE = "[idle task thread: waiting for a task]"
TASK_PREFIX = "Executor task launch worker for task"


@pytest.fixture(scope="module")
def sim_classpath(build_dir):
    return spark_sim.compile_sim(build_dir)


def run_sim(out, tmp_path, classpath, agent_path, java_home, *args):
    truth_path = tmp_path / f"truth-{out.name}.json"
    # After its last wave the executor lingers 3 s with an idle task pool:
    # longer than the helper's 1 s idle check, so idle threads are seen.
    cmd = spark_sim.sim_command(classpath, truth_path, java=os.path.join(java_home, "bin", "java"),
                                jvm_args=[f"-agentpath:{agent_path}", "-XX:+PreserveFramePointer"],
                                linger_ms=3000)
    record(out, "-F", "199", "--wall", "-t", *args, "--", *cmd, timeout=600)
    pid = spark_sim.load_truth(truth_path)["pid"]
    for path in (f"/tmp/sparkprof-{pid}.log", f"/tmp/perf-{pid}.map"):
        if os.path.exists(path):
            os.unlink(path)
    return os.path.join(out, spark_sim.APP_ID, "exec-1")


def by_thread(path):
    threads = {}
    for stack, count in read_folded(path).items():
        parts = stack.split(";")
        threads.setdefault(parts[1], []).append((parts[2:], count))
    return threads


def test_idle_pool_threads_are_marked_in_wall_profiles(tmp_path, sim_classpath, agent_path,
                                                       jdks):
    exec_dir = run_sim(tmp_path / "all", tmp_path, sim_classpath, agent_path, jdks[min(jdks)])
    threads = by_thread(os.path.join(exec_dir, "all.wall.folded"))
    pool = {t: s for t, s in threads.items() if t.startswith("Executor task launch worker")}
    idle = sum(c for stacks in pool.values() for frames, c in stacks if frames[-1] == IDLE)
    working = sum(c for stacks in pool.values() for frames, c in stacks if IDLE not in frames)
    assert idle > 0 and working > 0, (idle, working)
    # The marker is only ever on task-pool threads, at the leaf.
    for thread, stacks in threads.items():
        for frames, _ in stacks:
            if IDLE in frames:
                assert thread in pool and frames[-1] == IDLE, (thread, frames)


def test_threads_tasks_keeps_only_running_tasks(tmp_path, sim_classpath, agent_path, jdks):
    exec_dir = run_sim(tmp_path / "tasks", tmp_path, sim_classpath, agent_path,
                       jdks[min(jdks)], "--threads", "tasks")
    threads = by_thread(os.path.join(exec_dir, "all.wall.folded"))
    assert threads
    assert all(t.startswith(TASK_PREFIX) for t in threads), sorted(threads)[:5]
    assert not [f for stacks in threads.values() for f, _ in stacks if IDLE in f]
    # Other threads are still in the node-wide profile.
    node = by_thread(os.path.join(os.path.dirname(os.path.dirname(exec_dir)), "all.wall.folded"))
    assert any(not t.startswith(TASK_PREFIX) for t in node)

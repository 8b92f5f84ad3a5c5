"""The application report on a real Spark application: a skewed Spark SQL
stage (one shuffle partition holds most of the rows) on two executors,
each recorded by its own `record -p` as if it ran on a node of its own.
The report joins both folders with the job's event log (plain, not
rolling: Spark 3.5's default) and with the live driver's REST API, and
also stands without either. Bad event logs give one clear line and the
report is still written."""
import json
import os
import signal
import subprocess

import pytest

import spark_cluster
from browser import chromium_page, file_url, script_errors
from testlib import SPARKPROF

SKEWED = spark_cluster.DRIVER.split("facts = spark.range")[0].replace(
    '.config("spark.ui.enabled", "false")', '.config("spark.ui.enabled", "true")'
    '.config("spark.ui.port", "0")') + r'''
sc.setJobDescription("skewed aggregation: partition 0 holds 90% of the rows")
rows = (spark.range(0, 400000, numPartitions=4)
        .selectExpr("id", "if(id % 10 < 9, 0, id % 7 + 1) as k")
        .repartition(8, "k")
        .selectExpr("k", "sha2(sha2(sha2(cast(id as string), 256), 256), 256) as h")
        .groupBy("k").agg(F.countDistinct("h").alias("n")).collect())
print(json.dumps({"app_id": sc.applicationId, "ui": sc.uiWebUrl, "groups": len(rows)}),
      flush=True)
deadline = time.time() + 1800
while not os.path.exists(release) and time.time() < deadline:
    time.sleep(0.2)
spark.stop()
'''


def start_recording(out, pid):
    return subprocess.Popen([SPARKPROF, "record", "-p", str(pid), "-F", "199", "-o", str(out)],
                            stderr=subprocess.PIPE, text=True)


def stop_recording(rec):
    rec.send_signal(signal.SIGINT)
    _, err = rec.communicate(timeout=120)
    assert rec.returncode == 0, err


def report(out, *args, check=True):
    proc = subprocess.run([SPARKPROF, "report", *map(str, args), "-o", str(out)],
                          capture_output=True, text=True, timeout=600)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture(scope="module")
def skewed(tmp_path_factory, agent_path):
    work = tmp_path_factory.mktemp("skewed")
    state = {"recs": {}}

    def before_job(run):
        for exec_id, pid in run.executors.items():
            state["recs"][exec_id] = (work / f"node-{exec_id}", start_recording(
                work / f"node-{exec_id}", pid))

    def while_running(run):
        for _, rec in state["recs"].values():
            stop_recording(rec)
        state["ui"] = report(work / "report-ui", *(d for d, _ in state["recs"].values()),
                             "--spark-ui", run.result["ui"], check=False)

    run = spark_cluster.run_job(work, f"-agentpath:{agent_path} -XX:+PreserveFramePointer",
                                before_job=before_job, while_running=while_running,
                                driver=SKEWED)
    return run, [d for d, _ in state["recs"].values()], state["ui"], work


def event_log_stages(path):
    """{(stage, attempt): (name, [(tid, duration ms)])} and job descriptions."""
    stages, descs, names = {}, {}, {}
    with open(path) as f:
        for line in f:
            ev = json.loads(line)
            if ev["Event"] == "SparkListenerJobStart":
                d = ev.get("Properties", {}).get("spark.job.description")
                for s in ev["Stage IDs"]:
                    descs[s] = d
            elif ev["Event"] == "SparkListenerStageCompleted":
                info = ev["Stage Info"]
                names[(info["Stage ID"], info["Stage Attempt ID"])] = info["Stage Name"]
            elif ev["Event"] == "SparkListenerTaskEnd":
                t = ev["Task Info"]
                stages.setdefault((ev["Stage ID"], ev["Stage Attempt ID"]), []).append(
                    (t["Task ID"], t["Finish Time"] - t["Launch Time"]))
    return {k: (names.get(k), descs.get(k[0]), v) for k, v in stages.items()}


def stage_samples(dirs, stage, attempt):
    total = 0
    for d in dirs:
        with open(os.path.join(d, "summary.json")) as f:
            summary = json.load(f)
        for e in summary.get("executors", []):
            total += sum(s["samples"] for s in e["stages"]
                         if s["stage"] == stage and s.get("attempt") == attempt)
    return total


def skewed_stage(truth):
    """The stage whose longest task is furthest beyond its median."""
    def skew(item):
        durations = sorted(d for _, d in item[1][2])
        return durations[-1] / max(durations[len(durations) // 2], 1)
    return max(((k, v) for k, v in truth.items() if len(v[2]) >= 4), key=skew)


def test_report_joins_two_nodes_with_the_event_log(skewed, tmp_path):
    run, dirs, _, _ = skewed
    out = tmp_path / "report"
    report(out, *dirs, "--event-log", run.event_log)
    data = json.loads((out / "report.json").read_text())
    app = [a for a in data["applications"] if a["app_id"] == run.app_id][0]
    truth = event_log_stages(run.event_log)
    (stage, attempt), (name, desc, tasks) = skewed_stage(truth)
    s = [s for s in app["stages"] if (s["stage"], s["attempt"]) == (stage, attempt)][0]
    assert s["name"] == name and s["description"] == desc, (s["name"], s["description"])
    assert s["samples"] == stage_samples(dirs, stage, attempt) > 0
    assert sorted(t["tid"] for t in s["tasks"]) == sorted(t for t, _ in tasks)
    longest = max(tasks, key=lambda t: t[1])[0]
    assert longest in s["stragglers"], (s["stragglers"], s["task_duration_ms"])
    task = [t for t in s["tasks"] if t["tid"] == longest][0]
    assert task["duration_ms"] == max(d for _, d in tasks)
    assert task["flame"] and (out / task["flame"]).exists()
    assert task["diff"] and (out / task["diff"]).exists()
    assert len(set(s["executors"])) == 2, s["executors"]
    with chromium_page() as page:
        for rel in ("index.html", task["flame"], task["diff"]):
            page.goto(file_url(out / rel))
            page.wait_for_timeout(300)
            assert not script_errors(page), (rel, script_errors(page))
        page.goto(file_url(out / "index.html"))
        assert name in page.inner_text("body")


def test_the_live_driver_rest_api_gives_the_same_names(skewed, tmp_path):
    run, _, ui, work = skewed
    assert ui.returncode == 0, ui.stderr
    live = json.loads((work / "report-ui" / "report.json").read_text())
    truth = event_log_stages(run.event_log)
    app = [a for a in live["applications"] if a["app_id"] == run.app_id][0]
    got = {(s["stage"], s["attempt"]): s["name"] for s in app["stages"] if s["name"]}
    want = {k: v[0] for k, v in truth.items()}
    assert got == want


def test_without_spark_record_the_report_says_so(skewed, tmp_path):
    run, dirs, _, _ = skewed
    report(tmp_path / "r", *dirs)
    app = json.loads((tmp_path / "r" / "report.json").read_text())["applications"][0]
    assert app["spark_source"] is None and all(s["name"] is None for s in app["stages"])
    (stage, attempt), (_, _, tasks) = skewed_stage(event_log_stages(run.event_log))
    s = [s for s in app["stages"] if (s["stage"], s["attempt"]) == (stage, attempt)][0]
    # Task times from the recordings: a task is seen from its thread's rename
    # to its last sample, inside the driver's launch..finish. The first wave's
    # tasks pay for code generation and can last as long as the skewed one, so
    # the longest is checked against the driver's longest, not for identity.
    truth = dict(tasks)
    got = {t["tid"]: t["duration_ms"] for t in s["tasks"]}
    assert sorted(got) == sorted(truth)
    for tid, ms in got.items():
        assert truth[tid] - max(300, truth[tid] // 4) <= ms <= truth[tid] + 100, \
            (tid, ms, truth[tid])
    assert truth[max(got, key=got.get)] >= max(truth.values()) - 300, (got, truth)


@pytest.mark.parametrize("damage", ["truncated", "malformed"])
def test_a_bad_event_log_gives_one_line_and_the_report_anyway(skewed, tmp_path, damage):
    run, dirs, _, _ = skewed
    data = open(run.event_log, "rb").read()
    bad = tmp_path / "events"
    bad.write_bytes(data[: len(data) // 2] if damage == "truncated"
                    else data[:2000] + b"{not json\n" + data[2000:])
    proc = report(tmp_path / "r", *dirs, "--event-log", bad, check=False)
    lines = [l for l in proc.stderr.splitlines() if "error" in l]
    assert (tmp_path / "r" / "index.html").exists() and (tmp_path / "r" / "report.json").exists()
    if damage == "malformed":
        assert proc.returncode == 1 and lines and str(bad) in proc.stderr, proc.stderr

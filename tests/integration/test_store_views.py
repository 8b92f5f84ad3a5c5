"""The sample store of a recording and its views: one pprof file for the
whole folder whose labels select the same totals as the stage files; one
task's flame graph; `report` writing the same files again; and a damaged
store read as far as it is whole, with a clear message.

The recording is the simulated executor (spark_sim.py) with --wall."""
import collections
import json
import os
import re
import shutil
import subprocess

import pytest

import spark_sim
from test_pprof import GO
from testlib import SPARKPROF, read_folded, read_summary, record, remove_helper_files

TID = re.compile(r"\(TID (\d+)\)$")


@pytest.fixture(scope="module")
def sim_recording(tmp_path_factory, build_dir, agent_path, jdks):
    out = tmp_path_factory.mktemp("store-views")
    truth_path = out / "truth.json.txt"
    classpath = spark_sim.compile_sim(build_dir)
    cmd = spark_sim.sim_command(classpath, truth_path, java=os.path.join(jdks[17], "bin", "java"),
                                jvm_args=[f"-agentpath:{agent_path}", "-XX:+PreserveFramePointer"],
                                scale=0.5)
    # Small segments: stages end segments before the stop, so their files
    # are written while recording (output/stage_writer.h).
    record(out, "--wall", "-F", 199, "--stack-memory", "16K", "--", *cmd, timeout=600)
    truth = spark_sim.load_truth(truth_path)
    os.unlink(truth_path)
    remove_helper_files([truth["pid"]])
    return out, truth


def exec_dir(out):
    return out / spark_sim.APP_ID / "exec-1"


def pprof_samples(path, *args):
    """[(values, labels)] of go tool pprof -raw."""
    r = subprocess.run([GO, "tool", "pprof", "-raw", *args, str(path)], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    samples, section = [], None
    for line in r.stdout.splitlines():
        if line.startswith(("Samples:", "Locations", "Mappings")):
            section = line.split()[0].rstrip(":")
            continue
        if section != "Samples":
            continue
        m = re.match(r"\s+([\d ]+?): [\d ]*$", line)
        if m:
            samples.append(([int(x) for x in m.group(1).split()], {}))
        elif samples and ":[" in line:
            samples[-1][1].update(re.findall(r"([\w.]+):\[(.*?)\]", line))
    return samples


@pytest.fixture(scope="module")
def profile(sim_recording, tmp_path_factory):
    out, _ = sim_recording
    path = tmp_path_factory.mktemp("pprof") / "all.pb.gz"
    r = subprocess.run([SPARKPROF, "convert", str(out), "-o", str(path)], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return path


def test_labels_select_each_stage_file(sim_recording, profile):
    out, truth = sim_recording
    summary = read_summary(out)
    samples = pprof_samples(profile)
    assert sum(v[0] for v, _ in samples) == summary["samples"]
    by_stage = collections.Counter()
    for values, labels in samples:
        if labels.get("spark.executor.id") == "1" and "spark.stage.id" in labels:
            by_stage[(int(labels["spark.stage.id"]), int(labels["spark.stage.attempt"]))] += values[0]
    assert set(by_stage) >= {(s["stage"], s["attempt"]) for s in truth["stages"]}
    for (stage, attempt), n in by_stage.items():
        name = f"stage-{stage}" + (f".{attempt}" if attempt else "")
        assert sum(read_folded(exec_dir(out) / f"{name}.folded").values()) == n, (stage, n)
    # --wall: the second value is wall time, every on-CPU sample one period
    period = 1e9 / 199
    cpu_wall = sum(v[1] for v, l in samples if l["thread.state"] == "running")
    assert abs(cpu_wall - summary["samples"] * period) <= summary["samples"], cpu_wall


def test_task_totals_are_the_tasks_samples(sim_recording, profile, jfr_tools):
    """Each task's samples, as its label counts them in the pprof file (from
    the store's rows), as the JFR file counts them by thread name (from its
    samples in time order), and as -tagfocus on the task gives them."""
    out, truth = sim_recording
    by_task = collections.Counter()
    for values, labels in pprof_samples(profile):
        if "spark.task.id" in labels:
            by_task[int(labels["spark.task.id"])] += values[0]
    events = json.loads(subprocess.run(
        [jfr_tools["jdk17"], "print", "--json", "--events", "jdk.ExecutionSample",
         str(exec_dir(out) / "all.jfr")],
        capture_output=True, text=True, check=True, timeout=300).stdout)["recording"]["events"]
    in_jfr = collections.Counter()
    for e in events:
        m = TID.search(e["values"]["sampledThread"]["osName"] or "")
        if m:
            in_jfr[int(m.group(1))] += 1
    assert len(by_task) >= len(truth["tasks"]) - 2 and by_task == in_jfr, (by_task, in_jfr)
    task, n = by_task.most_common(1)[0]
    focused = pprof_samples(profile, f"-tagfocus=spark.task.id=^{task}$")
    assert sum(v[0] for v, _ in focused) == n


def page_data(path):
    text = path.read_text()
    return json.loads(re.search(r"const DATA = (\{.*?\});\n</script>", text, re.S).group(1))


def test_one_task_has_its_flame_graph(sim_recording, profile, tmp_path):
    out, _ = sim_recording
    by_task = collections.Counter()
    for values, labels in pprof_samples(profile):
        if "spark.task.id" in labels:
            by_task[int(labels["spark.task.id"])] += values[0]
    task, n = by_task.most_common(1)[0]
    page = tmp_path / "task.html"
    r = subprocess.run([SPARKPROF, "flame", str(out), "--task", str(task), "-o", str(page)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    data = page_data(page)
    assert data["total"][0] == n and f"task {task}" in data["title"], (data["total"], n)
    assert any("Work.burn" in name for name in data["names"]), data["names"][:20]
    # a label no sample has: an empty page, not an error
    r = subprocess.run([SPARKPROF, "flame", str(out), "--task", "999999", "-o", str(page)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and page_data(page)["total"][0] == 0, r.stderr


def folded_files(d):
    return {os.path.relpath(os.path.join(top, f), d): open(os.path.join(top, f)).read()
            for top, _, names in os.walk(d) for f in names if f.endswith(".folded")}


def test_report_writes_the_same_files_again(sim_recording, tmp_path):
    """The record's files, many of its stages' written while it recorded,
    are those `report` writes from the store in one go."""
    out, _ = sim_recording
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    before = folded_files(copy)
    for f in before:
        os.unlink(copy / f)
    os.unlink(copy / "all.html")
    r = subprocess.run([SPARKPROF, "report", str(copy)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert folded_files(copy) == folded_files(out) and len(before) >= 10
    memory = read_summary(out)["memory"]
    assert memory["stages_written_while_recording"] >= 3, memory
    assert (copy / "all.html").stat().st_size > 0 and (copy / "index.html").exists()


def test_live_jfr_files_are_the_reports(sim_recording):
    """The node's and the executor's JFR files, written while recording a
    segment at a time, are the bytes `report` writes from the store. A JFR
    file names where it was written: report writes beside, into a folder
    whose name is as long."""
    out, _ = sim_recording
    copy = out.parent / (out.name[:-1] + ("X" if out.name[-1] != "X" else "Y"))
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(out, copy)
    jfr = ["all.jfr", exec_dir(out).relative_to(out) / "all.jfr"]
    for f in jfr:
        os.unlink(copy / f)
    r = subprocess.run([SPARKPROF, "report", str(copy)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    for f in jfr:
        live = (out / f).read_bytes().replace(str(out).encode(), b"*" * len(str(out)))
        again = (copy / f).read_bytes().replace(str(copy).encode(), b"*" * len(str(copy)))
        assert len(live) > 10000 and live == again, f
    assert "node_and_executor_jfr_write_ms" in read_summary(out)["memory"]
    shutil.rmtree(copy)


def test_damaged_store_is_read_as_far_as_it_is_whole(sim_recording, tmp_path):
    out, _ = sim_recording
    store = (out / "samples.store").read_bytes()
    cut = tmp_path / "cut"
    cut.mkdir()
    (cut / "samples.store").write_bytes(store[: len(store) * 2 // 3])
    r = subprocess.run([SPARKPROF, "convert", str(cut), "-o", str(tmp_path / "cut.pb.gz")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "cut off after its segment" in r.stderr, r.stderr
    (cut / "samples.store").write_bytes(b"not a store at all" * 10)
    r = subprocess.run([SPARKPROF, "report", str(cut)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and \
        "not a sparkprof sample store" in r.stderr, r.stderr
    # A damaged head with segments after it is not a recording that did not
    # end: the store is refused, naming the segment, not read as far as it.
    heads = [i for i in range(len(store)) if store.startswith(b"SEG1", i)]
    assert len(heads) >= 3, len(heads)
    damaged = bytearray(store)
    damaged[heads[len(heads) // 2]] ^= 0xff
    (cut / "samples.store").write_bytes(bytes(damaged))
    r = subprocess.run([SPARKPROF, "convert", str(cut), "-o", str(tmp_path / "bad.pb.gz")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and \
        f"read segment {len(heads) // 2} of " in r.stderr and "its head is damaged" in r.stderr, \
        r.stderr
    assert not (tmp_path / "bad.pb.gz").exists()
    # Zeros after the last segment (a crash before its blocks were written)
    # are a recording that did not end: every whole segment is read.
    (cut / "samples.store").write_bytes(store + bytes(5000))
    r = subprocess.run([SPARKPROF, "convert", str(cut), "-o", str(tmp_path / "zeros.pb.gz")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and f"cut off after its segment {len(heads)}" in r.stderr, r.stderr

"""OTLP profiles export to a real OpenTelemetry Collector (v0.165.0, built
by `make deps` from tools/otelcol), listening on 127.0.0.1 only, writing
what it receives as OTLP/JSON lines (contrib's file exporter).

`sparkprof convert DIR --otlp URL` sends a real recording's store: the
simulated Spark executor (spark_sim.py) with --wall --off-cpu, and a native
program in many small segments. The Collector must receive the samples of
summary.json per sample type, with the Spark and OTel attributes and the
frame types; a Collector that is down makes the sender retry and queue, and
what it cannot hold or send in time is dropped and counted; a Collector
without a profiles pipeline refuses with one clear line."""
import collections
import json
import os
import socket
import subprocess
import threading
import time

import pytest

import rotation_check
import spark_sim
from testlib import PROGS, SPARKPROF, read_folded, read_summary, record, remove_helper_files

OTELCOL = "/var/cache/sparkprof-deps/otelcol-0.165.0/otelcol"

CONFIG = """receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:{port}{tls}
exporters:
  file:
    path: {out}
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    {signal}:
      receivers: [otlp]
      exporters: [file]
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Collector:
    """The built Collector on 127.0.0.1:port, its profiles in out.jsonl."""

    def __init__(self, workdir, port=None, signal="profiles", name=None, tls=None):
        assert os.access(OTELCOL, os.X_OK), f"{OTELCOL} is missing: run `make deps`"
        self.port = port or free_port()
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}"
        name = name or str(self.port)
        self.out = os.path.join(workdir, f"received-{name}.jsonl")
        self.config = os.path.join(workdir, f"otelcol-{name}.yaml")
        self.log = os.path.join(workdir, f"otelcol-{name}.log")
        with open(self.config, "w") as f:
            tls_config = ("\n        tls:\n          cert_file: {}\n          key_file: {}"
                          .format(*tls) if tls else "")
            f.write(CONFIG.format(port=self.port, out=self.out, signal=signal, tls=tls_config))
        self.proc = None

    def start(self):
        log = open(self.log, "ab")
        self.proc = subprocess.Popen([OTELCOL, "--config", f"file:{self.config}",
                                      "--feature-gates=service.profilesSupport"],
                                     stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"the Collector exited:\n{self.read_log()}"
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.1)
        raise AssertionError(f"the Collector did not listen:\n{self.read_log()}")

    def stop(self):
        """Stops it: the file exporter has written everything then."""
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=60)

    def read_log(self):
        with open(self.log, errors="replace") as f:
            return f.read()[-4000:]

    def requests(self):
        if not os.path.exists(self.out):
            return []
        with open(self.out) as f:
            return [json.loads(line) for line in f if line.strip()]


@pytest.fixture
def collector(tmp_path):
    started = []

    def start(**kwargs):
        c = Collector(str(tmp_path), **kwargs).start()
        started.append(c)
        return c
    yield start
    for c in started:
        c.stop()


def any_value(v, strings):
    if "stringValue" in v:
        return v["stringValue"]
    if "stringValueStrindex" in v:
        return strings[v["stringValueStrindex"]]
    if "intValue" in v:
        return int(v["intValue"])
    return None


def attribute(kv, strings):
    key = kv["key"] if kv.get("key") else strings[kv.get("keyStrindex", 0)]
    return key, any_value(kv.get("value", {}), strings)


Sample = collections.namedtuple("Sample", "type unit value resource attrs frames frame_types")


def received_samples(requests):
    """Every sample the Collector wrote, resolved through its request's
    dictionary (JSON leaves out zero values: index 0, empty lists)."""
    out = []
    for req in requests:
        d = req["dictionary"]
        strings = d["stringTable"]
        attrs = [attribute(a, strings) if a.get("value") else (None, None)
                 for a in d["attributeTable"]]
        for rp in req["resourceProfiles"]:
            resource = dict(attribute(a, strings) for a in rp["resource"].get("attributes", []))
            for sp in rp["scopeProfiles"]:
                for prof in sp["profiles"]:
                    st = prof["sampleType"]
                    kind = (strings[st.get("typeStrindex", 0)], strings[st.get("unitStrindex", 0)])
                    for s in prof.get("samples", []):
                        frames, types = frames_of(d, s.get("stackIndex", 0), strings, attrs)
                        out.append(Sample(kind[0], kind[1], sum(int(v) for v in s["values"]),
                                          resource,
                                          dict(attrs[i] for i in s.get("attributeIndices", [])),
                                          frames, types))
    return out


def frames_of(d, stack_index, strings, attrs):
    """(names leaf first, their profile.frame.type values)."""
    names, types = [], []
    for li in d["stackTable"][stack_index].get("locationIndices", []):
        loc = d["locationTable"][li]
        fn = d["functionTable"][loc["lines"][0].get("functionIndex", 0)]
        names.append(strings[fn.get("nameStrindex", 0)])
        types.append(dict(attrs[i] for i in loc.get("attributeIndices", [])).get("profile.frame.type"))
    return names, types


def totals(samples):
    t = collections.Counter()
    for s in samples:
        t[(s.type, s.unit)] += s.value
    return t


def convert_otlp(out, url, *args, timeout=300):
    stats = os.path.join(str(out), "otlp-stats.json")
    r = subprocess.run([SPARKPROF, "convert", str(out), "--otlp", url, "--otlp-stats", stats,
                        *map(str, args)], capture_output=True, text=True, timeout=timeout)
    with open(stats) as f:
        return r, json.load(f)


def off_cpu_ns(summary):
    all_view = next(o for o in summary["outputs"] if o["name"] == "all")
    return all_view["off_cpu_ms"] * 1e6


@pytest.fixture(scope="module")
def sim_recording(tmp_path_factory, build_dir, agent_path, jdks):
    """The simulated executor recorded with --otlp: (folder, truth, what the
    Collector received while recording)."""
    out = tmp_path_factory.mktemp("otlp-sim")
    truth_path = out / "truth.json.txt"
    classpath = spark_sim.compile_sim(build_dir)
    cmd = spark_sim.sim_command(classpath, truth_path, java=os.path.join(jdks[17], "bin", "java"),
                                jvm_args=[f"-agentpath:{agent_path}", "-XX:+PreserveFramePointer"],
                                scale=0.5)
    c = Collector(str(tmp_path_factory.mktemp("otlp-sim-collector"))).start()
    try:
        record(out, "--wall", "--off-cpu", "-F", 199, "--otlp", c.url, "--", *cmd, timeout=600)
    finally:
        c.stop()
    truth = spark_sim.load_truth(truth_path)
    os.unlink(truth_path)
    remove_helper_files([truth["pid"]])
    return out, truth, received_samples(c.requests())


@pytest.fixture(scope="module")
def native_recording(tmp_path_factory):
    """A real recording in many segments (--stack-memory 64K)."""
    out = tmp_path_factory.mktemp("otlp-native")
    record(out, "-F", 199, "-d", 4, "--off-cpu", "--stack-memory", "64K", "--",
           os.path.join(PROGS, "hot_functions"), 4)
    assert read_summary(out)["memory"]["store_segments"] >= 5
    return out


def assert_sim_received(samples, exported, summary, truth):
    """What the Collector received of the simulated executor: summary.json's
    samples per sample type, its resource and Spark attributes, stages,
    tasks and frame types."""
    t = totals(samples)
    assert t[("samples", "count")] == summary["samples"]
    assert t[("off_cpu", "nanoseconds")] == pytest.approx(off_cpu_ns(summary), rel=1e-5)
    assert t[("off_cpu", "nanoseconds")] == exported["off_cpu_ns"]
    assert t[("wall", "nanoseconds")] == exported["wall_ns"]
    period = 1e9 / summary["frequency_hz"]
    assert t[("wall", "nanoseconds")] == pytest.approx(
        summary["samples"] * period + off_cpu_ns(summary), rel=1e-3)

    # Resource attributes: the executor's process, host and Spark ids.
    # (Its pid ran sparkprof's child before the exec: another resource.)
    executor = [s for s in samples if s.resource.get("process.pid") == truth["pid"] and
                s.resource["process.executable.name"] == "java"]
    assert executor, {tuple(s.resource.items()) for s in samples}
    res = executor[0].resource
    assert res["host.name"] == summary["host"]
    assert res["spark.app.id"] == spark_sim.APP_ID
    assert res["spark.executor.id"] == "1"
    assert all(s.resource == res for s in executor)

    # Sample attributes: each stage's CPU samples are summary.json's.
    by_stage = collections.Counter()
    for s in executor:
        if s.type == "samples":
            assert "thread.name" in s.attrs and isinstance(s.attrs["thread.id"], int)
            key = (s.attrs.get("spark.stage.id"), s.attrs.get("spark.stage.attempt"))
            by_stage[key] += s.value
    stages = summary["executors"][0]["stages"]
    want = {(st["stage"], st.get("attempt")): st["samples"] for st in stages if st["samples"]}
    # The process's samples from before it was known as an executor have no
    # stage, and are the executor's resource's all the same.
    assert by_stage.pop((None, None), 0) >= want.pop((None, None), 0)
    assert dict(by_stage) == want
    tasks = {s.attrs["spark.task.id"] for s in executor if "spark.task.id" in s.attrs}
    assert tasks and tasks <= {t["tid"] for t in truth["tasks"]}
    states = {s.attrs.get("thread.state") for s in executor if s.type == "off_cpu"}
    assert "sleeping" in states and "running" not in states

    # Frame types kept, as the semantic conventions name them.
    types = collections.Counter(ft for s in samples for ft in s.frame_types)
    assert types["jvm"] and types["native"] and types["kernel"], types
    assert None not in types


def test_record_otlp_sim_executor(sim_recording):
    """record --otlp: each segment sent as it closes; summary.json says so."""
    out, truth, samples = sim_recording
    summary = read_summary(out)
    otlp = summary["otlp"]
    assert otlp["sender"]["samples_sent"] == otlp["exported"]["samples"]
    assert otlp["sender"]["batches_sent"] == summary["memory"]["store_segments"]
    assert sum(otlp["sender"]["samples_dropped"].values()) == 0
    assert otlp["exported"]["cpu_samples"] == summary["samples"]
    assert_sim_received(samples, otlp["exported"], summary, truth)


def test_convert_otlp_sim_executor(sim_recording, collector):
    """convert DIR --otlp: the finished store sends the same."""
    out, truth, recorded = sim_recording
    summary = read_summary(out)
    c = collector()
    r, stats = convert_otlp(out, c.url)
    assert r.returncode == 0, r.stderr
    assert f"({summary['samples']} on CPU, " in r.stderr, r.stderr
    c.stop()
    samples = received_samples(c.requests())
    assert stats["sender"]["samples_sent"] == stats["exported"]["samples"]
    assert sum(stats["sender"]["samples_dropped"].values()) == 0
    assert stats["exported"] == {k: v for k, v in summary["otlp"]["exported"].items()
                                 if not k.startswith("unencoded")}
    assert_sim_received(samples, stats["exported"], summary, truth)
    assert totals(samples) == totals(recorded)


def test_native_recording_in_many_requests(native_recording, collector):
    summary = read_summary(native_recording)
    c = collector()
    r, stats = convert_otlp(native_recording, c.url)
    assert r.returncode == 0, r.stderr
    c.stop()
    requests = c.requests()
    assert len(requests) == summary["memory"]["store_segments"] == stats["sender"]["batches_sent"]
    t = totals(received_samples(requests))
    assert t[("samples", "count")] == summary["samples"]
    assert t[("off_cpu", "nanoseconds")] == pytest.approx(off_cpu_ns(summary), rel=1e-5)
    assert ("wall", "nanoseconds") not in t
    samples = received_samples(requests)
    # The command's process, and on a busy node also its wait at the gate
    # before its exec (sparkprof's child, the same pid).
    names = {s.resource["process.executable.name"]: s.resource["process.pid"] for s in samples}
    assert "hot_functions" in names and set(names) <= {"hot_functions", "sparkprof"}, names
    assert len(set(names.values())) == 1, names
    assert all("spark.stage.id" not in s.attrs for s in samples)
    # The stacks are all.folded's, frame for frame (kernel frames typed).
    stacks = collections.Counter()
    for s in samples:
        if s.type == "samples":
            names = [n + "_[k]" if ft == "kernel" else n
                     for n, ft in zip(reversed(s.frames), reversed(s.frame_types))]
            stacks[";".join(names)] += s.value
    folded = collections.Counter()
    for stack, count in read_folded(native_recording / "all.folded").items():
        folded[stack.split(";", 1)[1]] += count
    assert stacks == folded


def test_collector_down_then_up_loses_nothing(native_recording, collector):
    """The sender retries and holds the requests while nothing listens;
    once the Collector is up, every sample arrives."""
    summary = read_summary(native_recording)
    port = free_port()
    started = []
    starter = threading.Timer(3.0, lambda: started.append(collector(port=port)))
    t0 = time.monotonic()
    starter.start()
    try:
        r, stats = convert_otlp(native_recording, f"http://127.0.0.1:{port}",
                                "--otlp-give-up", 120)
    finally:
        starter.join()
    assert r.returncode == 0, r.stderr
    assert time.monotonic() - t0 >= 3
    warnings = [l for l in r.stderr.splitlines() if "warning" in l]
    assert len(warnings) == 1 and "retrying" in warnings[0], r.stderr
    assert "sending again" in r.stderr
    assert stats["sender"]["retries"] > 0
    assert sum(stats["sender"]["batches_dropped"].values()) == 0
    assert stats["sender"]["samples_sent"] == stats["exported"]["samples"]
    c = started[0]
    c.stop()
    t = totals(received_samples(c.requests()))
    assert t[("samples", "count")] == summary["samples"]


def test_collector_down_drops_past_the_queue(native_recording):
    """With nothing listening, a queue of 8 KiB takes a few requests and
    drops the rest at once; those are dropped when their time is up; every
    sample is counted, and the command ends in about the give-up time."""
    t0 = time.monotonic()
    r, stats = convert_otlp(native_recording, f"http://127.0.0.1:{free_port()}",
                            "--otlp-queue-kib", 8, "--otlp-give-up", 3, timeout=60)
    took = time.monotonic() - t0
    assert r.returncode == 1, r.stderr
    assert took < 15, took
    o = stats["sender"]
    assert o["batches_sent"] == 0 and o["retries"] > 0
    assert o["batches_dropped"]["queue_full"] > 0
    assert o["batches_dropped"]["gave_up"] > 0
    assert sum(o["samples_dropped"].values()) == stats["exported"]["samples"]
    assert o["queue_peak_bytes"] <= 8 * 1024
    assert "Couldn't connect" in o["last_error"] or "refused" in o["last_error"].lower()
    lines = r.stderr.strip().splitlines()
    assert any("queue full" in l for l in lines) and any("retrying" in l for l in lines)
    assert len(lines) <= 4, r.stderr


def test_collector_without_profiles_refuses_in_one_line(native_recording, collector):
    c = collector(signal="logs")
    r, stats = convert_otlp(native_recording, c.url)
    assert r.returncode == 1
    warnings = [l for l in r.stderr.splitlines() if "warning" in l]
    assert len(warnings) == 1, r.stderr
    assert "refused with HTTP 404" in warnings[0] and c.url in warnings[0]
    o = stats["sender"]
    assert o["batches_dropped"]["refused"] == stats["exported"]["segments"]
    assert o["samples_dropped"]["refused"] == stats["exported"]["samples"]
    assert o["retries"] == 0


def wait_for_samples(c, proc, timeout=60):
    """Whether Collector c wrote samples (its file exporter flushes every
    second) before proc ended or timeout seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if totals(received_samples(c.requests()))[("samples", "count")]:
                return True
        except json.JSONDecodeError:  # a line half written
            pass
        time.sleep(0.2)
    return False


def test_record_collector_stopped_and_restarted(tmp_path, collector):
    """A Collector that goes away in the middle of a recording and comes
    back: the requests wait in the queue and nothing is lost."""
    port = free_port()
    first = collector(port=port, name="first")
    out = tmp_path / "rec"
    proc = subprocess.Popen([SPARKPROF, "record", "-o", str(out), "-F", "199", "-d", "20",
                             "--off-cpu", "--stack-memory", "64K", "--otlp", first.url, "--",
                             os.path.join(PROGS, "hot_functions"), "20"],
                            stderr=subprocess.PIPE, text=True)
    # The first goes once it has samples: a busy node starts recording later.
    assert wait_for_samples(first, proc), first.read_log()
    first.stop()
    time.sleep(2.5)
    second = collector(port=port, name="second")
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    second.stop()
    summary = read_summary(out)
    otlp = summary["otlp"]
    assert otlp["sender"]["retries"] > 0, otlp
    assert sum(otlp["sender"]["batches_dropped"].values()) == 0, otlp
    assert otlp["sender"]["samples_sent"] == otlp["exported"]["samples"]
    got_first = totals(received_samples(first.requests()))
    got_second = totals(received_samples(second.requests()))
    assert got_first[("samples", "count")] and got_second[("samples", "count")]
    assert got_first[("samples", "count")] + got_second[("samples", "count")] == summary["samples"]
    warnings = [l for l in err.splitlines() if "warning" in l]
    assert len(warnings) == 1 and "retrying" in warnings[0], err


def test_record_refused_keeps_the_recording(tmp_path, collector):
    """A Collector that refuses: one line, the drops counted, and the
    recording's own files written as ever."""
    c = collector(signal="logs")
    out = tmp_path / "rec"
    r = record(out, "-F", 199, "-d", 2, "--otlp", c.url, "--",
               os.path.join(PROGS, "hot_functions"), 2)
    warnings = [l for l in r.stderr.splitlines() if "warning" in l]
    assert len(warnings) == 1 and "refused with HTTP 404" in warnings[0], r.stderr
    summary = read_summary(out)
    assert read_folded(out / "all.folded")
    otlp = summary["otlp"]
    assert otlp["sender"]["batches_dropped"]["refused"] == otlp["exported"]["segments"] >= 1
    assert otlp["sender"]["last_http_status"] == 404


def test_tls(native_recording, collector, tmp_path):
    """An https Collector: its certificate verified with --otlp-ca; without
    it, the request is not sent and the reason is said."""
    cert, key = str(tmp_path / "cert.pem"), str(tmp_path / "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-keyout", key, "-out", cert, "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)
    c = collector(tls=(cert, key))
    assert c.url.startswith("https://")
    r, stats = convert_otlp(native_recording, c.url, "--otlp-ca", cert)
    assert r.returncode == 0, r.stderr
    assert stats["sender"]["samples_sent"] == stats["exported"]["samples"]
    r, stats = convert_otlp(native_recording, c.url, "--otlp-give-up", 2)
    assert r.returncode == 1
    assert stats["sender"]["batches_sent"] == 0
    assert "certificate" in stats["sender"]["last_error"].lower(), stats["sender"]["last_error"]
    r, stats = convert_otlp(native_recording, c.url, "--otlp-insecure")
    assert r.returncode == 0, r.stderr
    c.stop()
    t = totals(received_samples(c.requests()))
    assert t[("samples", "count")] == 2 * read_summary(native_recording)["samples"]


def test_record_rotate_sends_every_interval(tmp_path, collector):
    """--rotate: one sender for the whole recording, every interval's
    segments sent; what the Collector got is the intervals' samples."""
    c = collector()
    out = tmp_path / "rot"
    record(out, "-a", "-F", 199, "--rotate", "2s", "--keep", 100, "-d", 7, "--otlp", c.url,
           timeout=300)
    c.stop()
    intervals = [read_summary(out / d) for d in rotation_check.complete_folders(out)]
    assert len(intervals) >= 3
    assert all("otlp" in s for s in intervals)
    t = totals(received_samples(c.requests()))
    assert t[("samples", "count")] == sum(s["samples"] for s in intervals)

"""JFR files written by sparkprof's JFR writer, read by the JDK's `jfr`
(17 and the newest installed JDK) and by async-profiler's converter: every
reader must accept them and show the samples, threads, method names, frame
types, thread states and labels that were written.

Files are produced by tests/jfr/jfr_gen.c from descriptions built here; the
expected reader output is computed from the same descriptions
(tests/jfr/jfrtest.py)."""
import collections
import os
import random
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "jfr"))
import jfrtest as jt  # noqa: E402
from jfrtest import (CPP, INLINED, INTERPRETED, JIT, KERNEL, NATIVE,  # noqa: E402
                     PREEMPTED, RUNNING, SLEEPING, UNINTERRUPTIBLE, Recording, Sample)

MS = 1_000_000


@pytest.fixture(scope="module")
def gen(build_dir):
    return jt.build_gen(build_dir)


def spark_stack(leaf_type=JIT):
    """A small executor stack, leaf first, with every frame type."""
    return [(KERNEL, b"do_syscall_64"), (NATIVE, b"__GI___libc_read"),
            (CPP, b"JVM_Sleep"), (leaf_type, b"java/lang/Thread.sleep"),
            (INLINED, b"org/apache/spark/rdd/RDD.iterator"),
            (INTERPRETED, b"org/apache/spark/scheduler/ResultTask.runTask"),
            (JIT, b"org/apache/spark/executor/Executor$TaskRunner.run"),
            (INTERPRETED, b"java/lang/Thread.run")]


def stage_recording():
    labels = [("applicationId", "app-20260101000000-0001"), ("executorId", "7"),
              ("stage", "3"), ("attempt", "0"), ("host", "worker-1"),
              ("sparkprofVersion", "0.1.0"), ("settings", "frequency=99 wall=on"),
              ("note", "ünïcödé ✓")]
    rec = Recording(labels=labels, wall_interval=10 * MS)
    worker = b"Executor task launch worker for task 3.0 in stage 3.0 (TID 17)"
    for i in range(40):
        rec.samples.append(Sample(ts=rec.start_mono + i * 10 * MS, tid=4242, thread=worker,
                                  frames=spark_stack(JIT if i % 3 else INTERPRETED)))
    for i in range(7):
        rec.samples.append(Sample(ts=rec.start_mono + 5 * MS + i * 30 * MS, tid=4243,
                                  thread=b"shuffle-client-4-1", kind="w",
                                  state=(SLEEPING, UNINTERRUPTIBLE, PREEMPTED, RUNNING)[i % 4],
                                  weight=3 + i, frames=spark_stack()[2:]))
    return rec


def test_stage_file_summary_and_json(gen, jfr_tools, tmp_path):
    rec = stage_recording()
    path = str(tmp_path / "stage-3.jfr")
    stats = jt.write(gen, rec, path)
    assert stats["samples"] == 47 and stats["chunks"] == 1
    want = collections.Counter(jt.jdk_view(s) for s in rec.samples)
    for name, jfr in jfr_tools.items():
        chunks, counts = jt.jfr_summary(jfr, path)
        assert chunks == 1, name
        assert counts["jdk.ExecutionSample"] == 40, (name, counts)
        assert counts["profiler.WallClockSample"] == 7, (name, counts)
        assert counts["spark.ProfileLabel"] == len(rec.labels), (name, counts)

        doc = jt.jfr_json(jfr, path)
        got = collections.Counter(jt.jdk_views_from_json(doc))
        assert got == want, f"{name}: samples differ:\n{got - want}\n{want - got}"

        # Every sample at its own time, on the recording's wall clock.
        times = sorted(jt.iso_to_ns(ev["values"]["startTime"])
                       for ev in doc["recording"]["events"]
                       if ev["type"] in ("jdk.ExecutionSample", "profiler.WallClockSample"))
        assert times == sorted(rec.realtime(s.ts) for s in rec.samples), name

        labels = {ev["values"]["name"]: ev["values"]["value"]
                  for ev in doc["recording"]["events"] if ev["type"] == "spark.ProfileLabel"}
        assert labels == dict(rec.labels), name
        settings = {ev["values"]["name"]: ev["values"]["value"]
                    for ev in doc["recording"]["events"] if ev["type"] == "jdk.ActiveSetting"}
        assert settings["interval"] == str(rec.cpu_interval)
        assert settings["wall"] == str(rec.wall_interval)
        assert settings["executorId"] == "7"


def test_stage_file_print_shows_label_and_frames(gen, jfr_tools, tmp_path):
    """The human-readable `jfr print` names labels, classes and methods."""
    rec = stage_recording()
    path = str(tmp_path / "stage-3.jfr")
    jt.write(gen, rec, path)
    for name, jfr in jfr_tools.items():
        out = jt.run([jfr, "print", "--stack-depth", "20", path])
        assert 'name = "applicationId"' in out and 'value = "app-20260101000000-0001"' in out
        assert 'value = "ünïcödé ✓"' in out, name
        assert "org.apache.spark.executor.Executor$TaskRunner.run()" in out, name
        assert "kernel.do_syscall_64(k)" in out, name
        assert "libjvm.so.JVM_Sleep()" in out, name
        assert '"Executor task launch worker for task 3.0 in stage 3.0 (TID 17)"' in out, name


def test_stage_file_converter(gen, jfr_converter, tmp_path):
    rec = stage_recording()
    path = str(tmp_path / "stage-3.jfr")
    jt.write(gen, rec, path)
    assert jt.converter_collapsed(jfr_converter, path) == jt.expected_collapsed(rec.samples)
    cpu = jt.converter_collapsed(jfr_converter, path, "--cpu")
    assert cpu == jt.expected_collapsed(rec.samples, "cpu")
    assert sum(cpu.values()) == 40
    wall = jt.converter_collapsed(jfr_converter, path, "--wall")
    assert wall == jt.expected_collapsed(rec.samples, "wall")
    assert sum(wall.values()) == sum(3 + i for i in range(7))
    # --state matches the text after STATE_.
    sleeping = jt.converter_collapsed(jfr_converter, path, "--state", "sleeping")
    assert sum(sleeping.values()) == sum(s.weight for s in rec.samples
                                         if s.kind == "w" and s.state == SLEEPING)
    threads = jt.converter_collapsed(jfr_converter, path, "--threads")
    assert threads == jt.expected_collapsed(rec.samples, threads=True)
    # A readable spot check of the converter's frame names and suffixes.
    line = ("java/lang/Thread.run_[0];org/apache/spark/executor/Executor$TaskRunner.run_[j];"
            "org/apache/spark/scheduler/ResultTask.runTask_[0];"
            "org/apache/spark/rdd/RDD.iterator_[i];java/lang/Thread.sleep_[j];"
            "JVM_Sleep;__GI___libc_read;do_syscall_64_[k]")
    assert cpu[line] > 0, cpu


def test_thread_renamed_within_a_chunk(gen, jfr_tools, jfr_converter, tmp_path):
    """One tid seen under two names: both names are kept, each on its samples."""
    rec = Recording()
    for i in range(6):
        rec.samples.append(Sample(ts=rec.start_mono + i * MS, tid=77,
                                  thread=b"java" if i < 2 else b"Executor task launch worker-0",
                                  frames=[(JIT, b"a/B.c")]))
    path = str(tmp_path / "renamed.jfr")
    jt.write(gen, rec, path)
    for name, jfr in jfr_tools.items():
        views = collections.Counter((v[1], v[2]) for v in
                                    jt.jdk_views_from_json(jt.jfr_json(jfr, path)))
        assert views == {(77, "java"): 2, (77, "Executor task launch worker-0"): 4}, name
    threads = jt.converter_collapsed(jfr_converter, path, "--threads")
    names = collections.Counter()
    for stack, n in threads.items():
        names[stack.split(" tid=")[0]] += n
    assert names == {"[java": 2, "[Executor task launch worker-0": 4}, threads


# ---------------------------------------------------------------- randomized

JAVA_NAMES = [b"org/apache/spark/executor/Executor$TaskRunner.run",
              b"scala/collection/Iterator$$anon$10.hasNext",
              b"org/apache/spark/sql/execution/WholeStageCodegenExec$$anon$1.hasNext",
              "日本語/クラス.メソッド".encode(), "com/例え/Ünïcödé$Inner.mëthod".encode(),
              "pkg/Emoji🔥.run".encode(), b"NoPackage.main", b"noclassmethod",
              b"Trailing.", b".leading", b"a.b(Ljava/lang/String;)V", b"",
              b" ", "\u200b".encode(), "\u3000.\u3000".encode(), b"bad\xffutf8.m\xc3",
              b"java/lang/Thread.run"]
NATIVE_NAMES = [b"__GI___libc_read", b"start_thread", b"clone3", b"", b" ",
                "\u200b".encode(), b"libfoo.so.1", b"func.isra.0", "nätive".encode(),
                b"inv\xe6\x97alid"]
CPP_NAMES = [b"JVM_Sleep", b"Parker::park(bool, long)", b"G1ParScanThreadState::trim_queue()",
             b"JavaThread::run()", b"", b"os::naked_short_sleep(long)"]
KERNEL_NAMES = [b"do_syscall_64", b"entry_SYSCALL_64_after_hwframe", b"schedule",
                b"__x64_sys_futex", b"", b"finish_task_switch.isra.0"]
THREAD_NAMES = [b"Executor task launch worker for task %d.0 in stage %d.0 (TID %d)",
                "工作线程-%d-%d-%d".encode(), b"C2 CompilerThread%d-%d-%d",
                b"GC Thread#%d %d %d", "th\u200b%d-%d-%d".encode(), b" %d %d %d "]


def random_frame(rnd):
    t = rnd.choice([JIT, JIT, INLINED, INTERPRETED, NATIVE, CPP, KERNEL])
    if t in (JIT, INLINED, INTERPRETED):
        name = rnd.choice(JAVA_NAMES)
        if rnd.random() < 0.5:
            name = b"gen/C%d.m%d" % (rnd.randrange(40), rnd.randrange(5))
    else:
        name = rnd.choice({NATIVE: NATIVE_NAMES, CPP: CPP_NAMES, KERNEL: KERNEL_NAMES}[t])
    return (t, name)


def random_recording(seed, nsamples, chunk_bytes, deep_every=40):
    rnd = random.Random(seed)
    rec = Recording(labels=[("applicationId", "app-%d" % seed), ("stage", "ステージ 3"),
                            ("executorId", "")],
                    wall_interval=5 * MS, chunk_bytes=chunk_bytes)
    threads = [(1000 + i, rnd.choice(THREAD_NAMES) % (i, i % 7, i * 3)) for i in range(60)]
    stacks = []
    for i in range(120):
        depth = rnd.choice([1, 2, 5, 12, 30, 64])
        if i % deep_every == 0:
            depth = rnd.choice([1001, 1500, 2500])
        if i == 3:
            depth = MAX_DEEP
        stacks.append([random_frame(rnd) for _ in range(depth)])
    stacks.append([])                         # an empty stack
    for i in range(nsamples):
        tid, tname = rnd.choice(threads)
        wall = rnd.random() < 0.25
        rec.samples.append(Sample(
            ts=rec.start_mono + rnd.randrange(20_000) * MS // 2, tid=tid, thread=tname,
            frames=rnd.choice(stacks), kind="w" if wall else "c",
            state=rnd.choice([RUNNING, PREEMPTED, SLEEPING, UNINTERRUPTIBLE]) if wall
            else RUNNING,
            weight=rnd.randrange(1, 50) if wall else 1, pid=rnd.choice([11, 12])))
    return rec


MAX_DEEP = jt.MAX_FRAMES + 123                # truncated by the writer


def check_round_trip(rec, path, jfr_tools, jfr_converter, stats):
    want = collections.Counter(jt.jdk_view(s) for s in rec.samples)
    ncpu = sum(1 for s in rec.samples if s.kind == "c")
    for name, jfr in jfr_tools.items():
        chunks, counts = jt.jfr_summary(jfr, path)
        assert chunks == stats["chunks"], name
        assert counts["jdk.ExecutionSample"] == ncpu, (name, counts)
        assert counts["profiler.WallClockSample"] == len(rec.samples) - ncpu, (name, counts)
        assert counts["spark.ProfileLabel"] == len(rec.labels) * chunks, (name, counts)
        doc = jt.jfr_json(jfr, path)
        got = collections.Counter(jt.jdk_views_from_json(doc))
        assert got == want, f"{name}: {len(got - want)} unexpected, {len(want - got)} missing"
        times = sorted(jt.iso_to_ns(ev["values"]["startTime"])
                       for ev in doc["recording"]["events"]
                       if ev["type"] in ("jdk.ExecutionSample", "profiler.WallClockSample"))
        assert times == sorted(rec.realtime(s.ts) for s in rec.samples), name
    for mode, flags in ((None, ()), ("cpu", ("--cpu",)), ("wall", ("--wall",)),
                        ("threads", ("--threads",))):
        got = jt.converter_collapsed(jfr_converter, path, *flags)
        if mode == "threads":
            want_lines = jt.expected_collapsed(rec.samples, threads=True)
        else:
            want_lines = jt.expected_collapsed(rec.samples, mode)
        assert got == want_lines, (f"converter {flags}: {len(got - want_lines)} unexpected, "
                                   f"{len(want_lines - got)} missing")


@pytest.mark.parametrize("seed", [1, 2])
def test_random_round_trip_many_chunks(gen, jfr_tools, jfr_converter, tmp_path, seed):
    rec = random_recording(seed, nsamples=1500, chunk_bytes=48 * 1024)
    path = str(tmp_path / f"random-{seed}.jfr")
    stats = jt.write(gen, rec, path)
    assert stats["chunks"] >= 3, stats
    assert stats["truncated"] == sum(1 for s in rec.samples if len(s.frames) > jt.MAX_FRAMES)
    assert stats["truncated"] > 0
    assert any(1000 < len(s.frames) <= jt.MAX_FRAMES for s in rec.samples)
    assert len({s.tid for s in rec.samples}) >= 50
    check_round_trip(rec, path, jfr_tools, jfr_converter, stats)


def test_round_trip_with_idle_writer(gen, jfr_tools, jfr_converter, tmp_path):
    """A writer that goes idle (a finished stage's output) writes its chunk
    and frees its buffers; samples after that land in later chunks, with
    keys that never repeat an earlier chunk's, and every reader still sees
    every sample with its own stack and thread."""
    rec = random_recording(6, nsamples=800, chunk_bytes=1 << 20)
    rec.idle_after = [99, 100, 399, 799]
    path = str(tmp_path / "idle.jfr")
    stats = jt.write(gen, rec, path)
    # One chunk per idle with samples, and the file's last (empty) one.
    assert stats["chunks"] == 5, stats
    check_round_trip(rec, path, jfr_tools, jfr_converter, stats)


def test_random_round_trip_gzip(gen, jfr_tools, jfr_converter, tmp_path):
    rec = random_recording(3, nsamples=600, chunk_bytes=64 * 1024)
    rec.gzip = True
    gz = str(tmp_path / "random.jfr.gz")
    stats = jt.write(gen, rec, gz)
    with open(gz, "rb") as f:
        assert f.read(2) == b"\x1f\x8b"
    path = str(tmp_path / "random.jfr")
    jt.gunzip(gz, path)
    assert os.path.getsize(path) == stats["bytes"]
    check_round_trip(rec, path, jfr_tools, jfr_converter, stats)
    # The JDK's tool does not read gzip (docs/jfr.md says so).
    os.rename(gz, str(tmp_path / "random-gz.jfr"))
    import subprocess
    proc = subprocess.run([jfr_tools["jdk17"], "summary", str(tmp_path / "random-gz.jfr")],
                          capture_output=True, text=True)
    assert proc.returncode != 0


def test_empty_recording(gen, jfr_tools, jfr_converter, tmp_path):
    rec = Recording(labels=[("stage", "none")])
    path = str(tmp_path / "empty.jfr")
    stats = jt.write(gen, rec, path)
    assert stats["chunks"] == 1 and stats["samples"] == 0
    for name, jfr in jfr_tools.items():
        chunks, counts = jt.jfr_summary(jfr, path)
        assert chunks == 1 and counts.get("jdk.ExecutionSample", 0) == 0, name
        assert counts["spark.ProfileLabel"] == 1, name
    assert jt.converter_collapsed(jfr_converter, path) == collections.Counter()


# ---------------------------------------------------------------- JMC


@pytest.fixture(scope="module")
def jmc(build_dir, jmc_classpath):
    return jt.build_jmc_reader(build_dir, jmc_classpath)


def test_jmc_reads_plain_and_gzip(gen, jmc, tmp_path):
    """JDK Mission Control's parser loads the files, gzip ones too, with the
    samples, threads (wall samples included), names and frame types."""
    rec = random_recording(4, nsamples=500, chunk_bytes=32 * 1024)
    rec.labels.append(("stage", "3"))
    plain = str(tmp_path / "jmc.jfr")
    stats = jt.write(gen, rec, plain)
    assert stats["chunks"] >= 2
    rec.gzip = True
    gz = str(tmp_path / "jmc.jfr.gz")
    jt.write(gen, rec, gz)
    want = collections.Counter(jt.jmc_view(s) for s in rec.samples)
    ncpu = sum(1 for s in rec.samples if s.kind == "c")
    for path in (plain, gz):
        views, counts = jt.jmc_read(jmc, path)
        assert counts["jdk.ExecutionSample"] == ncpu, (path, counts)
        assert counts["profiler.WallClockSample"] == len(rec.samples) - ncpu, (path, counts)
        assert counts["spark.ProfileLabel"] == len(rec.labels) * stats["chunks"], (path, counts)
        assert views == want, (f"{path}: {len(views - want)} unexpected, "
                               f"{len(want - views)} missing: {list(views - want)[:2]}")


# ---------------------------------------------------------------- errors


def test_write_failure_is_reported_and_leaves_no_file(gen, tmp_path):
    """A file that cannot be written (here: over RLIMIT_FSIZE, as on a full
    disk) fails with one line naming the file and the errno text, and leaves
    neither the file nor its temporary behind."""
    import resource
    import signal
    import subprocess

    rec = random_recording(5, nsamples=3000, chunk_bytes=16 * 1024)
    path = str(tmp_path / "full.jfr")

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (40_000, 40_000))
    proc = subprocess.run([gen, path], input=jt.description(rec).encode(), capture_output=True,
                          preexec_fn=limit, timeout=120)
    err = proc.stderr.decode()
    assert proc.returncode != 0, err
    assert f"write {path}.tmp: File too large" in err, err
    assert os.listdir(str(tmp_path)) == [], os.listdir(str(tmp_path))

"""The JFR files `sparkprof record` writes: accepted by the JDK's `jfr` of
JDK 17 and the newest JDK and by async-profiler's converter, with the same
samples, threads, methods and frame types as the folded files."""
import collections
import os
import re
import subprocess
import sys
import time

import pytest

from testlib import PROGS, ROOT, read_folded, record, start_prog, wait_gone

sys.path.insert(0, os.path.join(ROOT, "tests", "jfr"))
import jfrtest  # noqa: E402

JAVA_SRC = os.path.join(ROOT, "tests", "java", "HotMethods.java")
ANNOTATION = re.compile(r"_\[[0ji]\]$")


@pytest.fixture(scope="module")
def recording(tmp_path_factory, jdks, agent_path):
    """Native and Java workloads recorded together, with wall-clock time."""
    out = tmp_path_factory.mktemp("jfr")
    classes = tmp_path_factory.mktemp("classes")
    subprocess.run([os.path.join(jdks[min(jdks)], "bin", "javac"), "-d", str(classes),
                    JAVA_SRC], check=True)
    java = subprocess.Popen([os.path.join(jdks[min(jdks)], "bin", "java"),
                             "-XX:+PreserveFramePointer", f"-agentpath:{agent_path}",
                             "-cp", str(classes), "HotMethods", "12", "2", "10"],
                            stdout=subprocess.PIPE, text=True)
    native, native_pid = start_prog("hot_functions", 10)
    try:
        java_pid = int(java.stdout.readline().split()[1])
        time.sleep(3)
        record(out, "-p", f"{java_pid},{native_pid}", "-t", "--wall", "-F", 299, "-d", 4)
    finally:
        java.kill()
        java.wait()
        wait_gone(native)
    return out


def jfr_files(out):
    return sorted(str(p) for p in out.rglob("*.jfr"))


def folded_by_thread(path):
    """-t folded: Counter {(thread, stack without process and thread)}."""
    stacks = collections.Counter()
    for stack, count in read_folded(path).items():
        parts = stack.split(";")
        stacks[(parts[1], ";".join(parts[2:]))] += count
    return stacks


def frame_title(frame):
    method = frame["method"]
    cls, name = method["type"]["name"], method["name"]
    if frame["type"] == "Kernel":
        return name + "_[k]"
    if frame["type"] in ("JIT compiled", "Inlined", "Interpreted") and cls != "unknown":
        return cls + "." + name
    return name


def test_every_file_is_read_by_both_jdks(recording, jfr_tools):
    files = jfr_files(recording)
    assert files
    for label, tool in jfr_tools.items():
        for path in files:
            chunks, counts = jfrtest.jfr_summary(tool, path)
            assert chunks >= 1, (label, path)
            folded = path[:-len(".jfr")] + ".folded"
            assert counts.get("jdk.ExecutionSample", 0) == sum(read_folded(folded).values()), \
                (label, path, counts)


def test_samples_threads_and_methods_match_the_folded_file(recording, jfr_tools):
    path = str(recording / "all.jfr")
    folded = folded_by_thread(recording / "all.folded")
    for label, tool in jfr_tools.items():
        doc = jfrtest.jfr_json(tool, path, events="jdk.ExecutionSample")
        seen = collections.Counter()
        types = collections.Counter()
        for ev in doc["recording"]["events"]:
            v = ev["values"]
            frames = v["stackTrace"]["frames"]
            seen[(v["sampledThread"]["osName"],
                  ";".join(frame_title(f) for f in reversed(frames)))] += 1
            for f in frames:
                types[f["type"]] += 1
        assert seen == folded, (label, list((seen - folded).items())[:3],
                                list((folded - seen).items())[:3])
        for kind in ("Kernel", "Native", "C++", "JIT compiled", "Interpreted"):
            assert types[kind] > 0, (label, types)


def test_java_frames_have_java_types(recording, jfr_tools):
    doc = jfrtest.jfr_json(jfr_tools["jdk17"], str(recording / "all.jfr"),
                           events="jdk.ExecutionSample")
    for ev in doc["recording"]["events"]:
        for f in ev["values"]["stackTrace"]["frames"]:
            name = f["method"]["type"]["name"] + "." + f["method"]["name"]
            if name.startswith("Hot") and name.endswith(".spin"):
                assert f["type"] in ("JIT compiled", "Inlined", "Interpreted"), f
            if f["method"]["name"].startswith("JavaThread::"):
                assert f["type"] == "C++", f


def test_converter_collapsed_matches_folded(recording, jfr_converter):
    path = str(recording / "all.jfr")
    converted = collections.Counter()
    for stack, count in jfrtest.converter_collapsed(jfr_converter, path, "--cpu").items():
        frames = [ANNOTATION.sub("", f) for f in stack.split(";")]
        frames = [f[len("unknown."):] if f.startswith("unknown.") else f for f in frames]
        converted[";".join(frames)] += count
    folded = collections.Counter()
    for (thread, stack), count in folded_by_thread(recording / "all.folded").items():
        folded[stack] += count
    assert converted == folded, (list((converted - folded).items())[:3],
                                 list((folded - converted).items())[:3])


def test_converter_splits_cpu_and_wall(recording, jfr_converter):
    path = str(recording / "all.jfr")
    cpu = sum(jfrtest.converter_collapsed(jfr_converter, path, "--cpu").values())
    wall = sum(jfrtest.converter_collapsed(jfr_converter, path, "--wall").values())
    assert cpu == sum(read_folded(recording / "all.folded").values())
    # Wall samples are weighted in 10 ms units, like the wall folded file.
    wall_folded = sum(read_folded(recording / "all.wall.folded").values())
    assert wall > 0 and abs(wall - wall_folded) <= 0.05 * wall_folded + 5, (wall, wall_folded)

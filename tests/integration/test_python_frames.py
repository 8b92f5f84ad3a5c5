"""Python frames beyond the CPU profile: a sleeping thread's wall time keeps
its Python callers; JFR carries them as type Python with their line (the
JDK's jfr and async-profiler's converter read them); pprof files them as
[python]; `sparkprof list` shows Python processes with their version."""
import glob
import json
import subprocess

import pytest

from testlib import SPARKPROF, read_folded, record

from test_python_hostile import python

SCRIPT = """
import sys, threading, time
def napper(until):
    while time.time() < until:
        time.sleep(0.01)
def spinner(until):
    x = 0
    while time.time() < until:
        x += 1
until = time.time() + float(sys.argv[1])
t = threading.Thread(target=napper, args=(until,))
t.start()
print("ready", flush=True)
spinner(until)
t.join()
"""


@pytest.fixture(scope="module")
def wall(tmp_path_factory):
    out = tmp_path_factory.mktemp("pywall")
    proc = subprocess.Popen([python("3.12.1"), "-c", SCRIPT, "8"], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        record(out, "-p", proc.pid, "--wall", "-d", 4)
    finally:
        proc.kill()
        proc.wait()
    return out


def test_a_sleeping_threads_wall_time_keeps_its_python_callers(wall):
    stacks = read_folded(wall / "all.wall.folded")
    asleep = sum(n for s, n in stacks.items() if "clock_nanosleep" in s or "nanosleep" in s)
    with_caller = sum(n for s, n in stacks.items()
                      if ("clock_nanosleep" in s or "nanosleep" in s)
                      and "napper (<string>:5)_[p]" in s.split(";"))
    assert asleep > 50 and with_caller >= 0.9 * asleep, (with_caller, asleep)


def test_jfr_readers_see_python_frames_with_their_lines(wall):
    jfr = wall / "all.jfr"
    printed = subprocess.run(["jfr", "print", "--json", "--events", "jdk.ExecutionSample",
                              str(jfr)], capture_output=True, text=True, check=True).stdout
    frames = [f for e in json.loads(printed)["recording"]["events"]
              for f in e["values"]["stackTrace"]["frames"]]
    spin = [f for f in frames if f["method"]["name"] == "spinner"]
    assert spin and all(f["type"] == "Python" and f["lineNumber"] in (8, 9, 10) and
                        f["method"]["type"]["name"] == "<string>" for f in spin), spin[:2]
    jars = sorted(glob.glob("/var/cache/sparkprof-deps/jfr-converter-*.jar"))
    assert jars, "run `make deps`: async-profiler's converter is missing"
    out = wall / "converted.txt"
    subprocess.run(["java", "-jar", jars[-1], "-o", "collapsed", str(jfr), str(out)],
                   check=True, capture_output=True)
    assert "<string>.spinner_[1]" in out.read_text()


def test_pprof_files_python_frames_as_python(wall, tmp_path):
    pb = tmp_path / "cpu.pb.gz"
    subprocess.run([SPARKPROF, "convert", str(wall / "all.folded"), "-o", str(pb)],
                   check=True, capture_output=True)
    top = subprocess.run(["go", "tool", "pprof", "-raw", str(pb)], capture_output=True,
                         text=True, check=True).stdout
    assert "spinner (<string>:10)" in top or "spinner (<string>:9)" in top, top[:2000]
    assert "[python]" in top


def test_list_shows_python_processes_and_their_version(tmp_path):
    procs = [subprocess.Popen([python(v), "-c", SCRIPT, "20"], stdout=subprocess.PIPE,
                              text=True) for v in ("3.10.13", "3.13.0")]
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "ready"
        out = subprocess.run([SPARKPROF, "list"], capture_output=True, text=True,
                             check=True).stdout
    finally:
        for p in procs:
            p.kill()
            p.wait()
    lines = {int(l.split()[0]): l for l in out.splitlines() if l.split() and l.split()[0].isdigit()}
    for p, version in zip(procs, ("3.10", "3.13")):
        assert p.pid in lines and version in lines[p.pid].split() and \
            "python frames" in lines[p.pid], out

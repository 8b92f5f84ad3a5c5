"""`sparkprof convert IN.folded -o OUT.pb.gz`: go tool pprof reads the file
offline with the same totals, stacks and frame types (CPU samples/count;
off-CPU and wall nanoseconds)."""
import os
import re
import shutil
import subprocess

import pytest

from testlib import PROGS, SPARKPROF, read_folded, record

GO = shutil.which("go") or "/usr/local/go/bin/go"

KNOWN = """\
java-1;java/lang/Thread.run_[j];com/x/Hot.loop_[i] 700
java-1;java/lang/Thread.run_[j];com/x/Cold.io_[0];read;do_syscall_64_[k] 200
java-1;JavaThread::run 80
java-1;java/lang/Thread.run_[j] 20
"""


def convert(tmp_path, src, *args):
    out = tmp_path / (os.path.basename(str(src)).replace(".folded", "") + ".pb.gz")
    r = subprocess.run([SPARKPROF, "convert", str(src), "-o", str(out), *args],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return out


def pprof(*args):
    assert os.path.exists(GO), "go is required for the pprof tests"
    r = subprocess.run([GO, "tool", "pprof", *args], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "HOME": os.environ.get("HOME", "/root")})
    assert r.returncode == 0, r.stderr
    return r.stdout


def raw_samples(text):
    """[(value, [location ids leaf first])] and {id: (name, file, system name)}."""
    samples, locs, section = [], {}, None
    for line in text.splitlines():
        if line.startswith(("Samples:", "Locations", "Mappings")):
            section = line.split()[0].rstrip(":")
            continue
        if section == "Samples":
            m = re.match(r"\s+(\d+): ([\d ]+)$", line)
            if m:
                samples.append((int(m.group(1)), [int(x) for x in m.group(2).split()]))
        elif section == "Locations":
            m = re.match(r"\s+(\d+): 0x0 (?:M=\d+ )?(.+?) (\[\w+\+*\]):0:0 s=0(?:\((.*)\))?$", line)
            if m:
                locs[int(m.group(1))] = (m.group(2), m.group(3), m.group(4) or m.group(2))
    return samples, locs


def test_pprof_reads_known_profile(tmp_path):
    src = tmp_path / "known.folded"
    src.write_text(KNOWN)
    out = convert(tmp_path, src)
    with open(out, "rb") as f:
        assert f.read(2) == b"\x1f\x8b", "gzip'd"
    samples, locs = raw_samples(pprof("-raw", str(out)))
    assert sum(v for v, _ in samples) == 1000
    stacks = {";".join(locs[i][2] for i in reversed(ids)): v for v, ids in samples}
    want = {line.rsplit(" ", 1)[0]: int(line.rsplit(" ", 1)[1]) for line in KNOWN.splitlines()}
    assert stacks == want
    files = {name: f for name, f, _ in locs.values()}
    assert files["com/x/Hot.loop"] == "[inlined]"
    assert files["com/x/Cold.io"] == "[interpreted]"
    assert files["java/lang/Thread.run"] == "[jit]"
    assert files["do_syscall_64"] == "[kernel]"
    assert files["JavaThread::run"] == "[c++]"
    top = pprof("-top", str(out))
    assert "Type: samples" in top
    assert re.search(r"Showing nodes accounting for 1000, 100% of 1000 total", top), top
    assert re.search(r"^\s+700 70\.00% .* com/x/Hot\.loop$", top, re.M), top


def test_pprof_of_a_recording_keeps_totals(tmp_path):
    out = tmp_path / "run"
    record(out, "--off-cpu", "--wall", "-F", 499, "--", os.path.join(PROGS, "sleep_share"), 2,
           20, 20)
    # wall counts are in units of the wall interval (10 ms), read from summary.json
    for name, unit, factor in (("all.folded", "samples", 1),
                               ("all.offcpu.folded", "offcpu", 1000000),
                               ("all.wall.folded", "wall", 10000000)):
        folded = read_folded(out / name)
        pb = convert(tmp_path, out / name)
        top = pprof("-top", "-nodecount=5", str(pb))
        assert f"Type: {unit}" in top, top
        samples, _ = raw_samples(pprof("-raw", str(pb)))
        assert sum(v for v, _ in samples) == sum(folded.values()) * factor
        assert len(samples) == len(folded), "one sample per distinct stack"


def test_convert_rejects_bad_input(tmp_path):
    src = tmp_path / "bad.folded"
    src.write_text("a;b 1\na;b -3\n")
    r = subprocess.run([SPARKPROF, "convert", str(src), "-o", str(tmp_path / "x.pb.gz")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "line 2" in r.stderr, r.stderr
    r = subprocess.run([SPARKPROF, "convert", str(src), "-o", str(tmp_path / "x.svg")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--format" in r.stderr, r.stderr

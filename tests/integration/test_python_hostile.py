"""A Python process's memory is its user's: code objects that lie (a line
table claiming a terabyte, a qualified name that is an int) cost bounded
work and never give a frame another function's name; a recursion deeper
than the walk keeps its leaf side and says it was cut."""
import os
import subprocess
from collections import Counter

import pytest

from testlib import ROOT, read_folded, read_summary, record

HOSTILE = os.path.join(ROOT, "tests", "integration", "data", "python_hostile.py")
PYENV = os.path.expanduser(os.environ.get("PYENV_ROOT", "~/.pyenv"))


def python(version):
    path = os.path.join(PYENV, "versions", version, "bin", "python3")
    assert os.path.exists(path), f"{path} missing (pyenv's CPython {version})"
    return path


def innermost_python(stacks):
    """{innermost Python frame: samples}."""
    leaves = Counter()
    for stack, n in stacks.items():
        frames = [f for f in stack.split(";") if f.endswith("_[p]")]
        if frames:
            leaves[frames[-1][:-4]] += n
    return leaves


def record_script(tmp_path, version, *args, seconds=3):
    proc = subprocess.Popen([python(version), *map(str, args)], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        record(tmp_path, "-p", proc.pid, "-F", 499, "-d", seconds)
    finally:
        proc.kill()
        proc.wait()
    return read_folded(tmp_path / "all.folded"), read_summary(tmp_path)


@pytest.mark.parametrize("version", ["3.11.7", "3.12.1", "3.13.0"])
@pytest.mark.parametrize("mode", ["linetable", "qualname"])
def test_lying_code_objects_are_never_named_wrongly(tmp_path, version, mode):
    stacks, summary = record_script(tmp_path, version, HOSTILE, mode, 6)
    leaves = innermost_python(stacks)
    victim = sum(n for name, n in leaves.items() if name.startswith("victim"))
    unnamed = leaves.get("[python]", 0)
    bystander = sum(n for name, n in leaves.items() if name.startswith("bystander (python_hostile.py:"))
    # the untouched function beside it keeps its name and lines
    assert bystander > 100, leaves
    if mode == "linetable":
        # its name is right; the line it cannot have is left out
        assert leaves.get("victim (python_hostile.py)", 0) > 100, leaves
        assert victim == leaves["victim (python_hostile.py)"], leaves
    else:
        # an int is no name: the frame says it is Python, and no more
        assert victim == 0 and unnamed > 100, leaves
    proc = [p for p in summary["processes"] if p.get("python")][0]["python"]
    assert proc["version"] == version.rsplit(".", 1)[0]
    assert summary["memory"]["python"] < 4 << 20, summary["memory"]


def test_a_recursion_deeper_than_the_walk_keeps_its_leaf_side(tmp_path):
    script = ("import sys, time\nsys.setrecursionlimit(5000)\n"
              "def down(d, until):\n    if d > 0:\n        return down(d - 1, until)\n"
              "    print('ready', flush=True)\n"
              "    while time.time() < until:\n        sum(range(1000))\n"
              "down(1000, time.time() + 8)\n")
    stacks, _ = record_script(tmp_path, "3.12.1", "-c", script)
    walked = {s: n for s, n in stacks.items() if "_[p]" in s}
    total = sum(walked.values())
    cut = sum(n for s, n in walked.items()
              if s.split(";")[1] == "[truncated: deeper frames not walked]")
    depths = Counter(s.count("down (<string>:5)_[p]") for s in walked)
    assert total > 100 and cut >= 0.95 * total, (cut, total)
    assert max(depths) >= 120, depths

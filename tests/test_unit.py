"""Runs every C unit-test binary (tests/unit/test_*.c, built by `make test`)."""
import glob
import os
import subprocess

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = sorted(glob.glob(os.path.join(HERE, "unit", "test_*.c")))


@pytest.mark.parametrize("source", SOURCES, ids=[os.path.basename(s)[:-2] for s in SOURCES])
def test_unit_binary(source, build_dir):
    binary = os.path.join(build_dir, "tests", os.path.basename(source)[:-2])
    assert os.path.exists(binary), f"{binary} was not built"
    proc = subprocess.run([binary], cwd=os.path.dirname(HERE), capture_output=True,
                          text=True, timeout=300)
    failed = [l for l in proc.stdout.splitlines() if l.startswith("not ok")]
    assert proc.returncode == 0 and not failed, \
        "\n".join(failed) + "\n" + proc.stdout[-4000:] + proc.stderr[-4000:]
    assert any(l.startswith("ok ") for l in proc.stdout.splitlines()), "no check ran"

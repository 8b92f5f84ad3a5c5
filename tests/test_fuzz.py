"""Runs every libFuzzer target for a bounded time on its seed corpus.

A crash, leak or sanitizer report fails the test; the reproducer is left in
build/fuzz/artifacts/.
"""
import glob
import os
import shutil
import subprocess
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = sorted(glob.glob(os.path.join(HERE, "fuzz", "fuzz_*.c")))
SECONDS = os.environ.get("SPARKPROF_FUZZ_SECONDS", "15")


@pytest.mark.parametrize("source", SOURCES, ids=[os.path.basename(s)[:-2] for s in SOURCES])
def test_fuzzer(source, build_dir):
    name = os.path.basename(source)[:-2]
    binary = os.path.join(build_dir, "fuzz", name)
    assert os.path.exists(binary), f"{binary} was not built"
    seeds = os.path.join(HERE, "fuzz", "corpus", name[len("fuzz_"):])
    artifacts = os.path.join(build_dir, "fuzz", "artifacts") + "/"
    os.makedirs(artifacts, exist_ok=True)
    work = tempfile.mkdtemp(prefix="sparkprof-corpus-")
    try:
        if os.path.isdir(seeds):
            for f in os.listdir(seeds):
                shutil.copy(os.path.join(seeds, f), work)
        proc = subprocess.run([binary, f"-max_total_time={SECONDS}", "-rss_limit_mb=2048",
                               f"-artifact_prefix={artifacts}", work],
                              capture_output=True, text=True, timeout=int(SECONDS) + 120)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    assert proc.returncode == 0, proc.stderr[-6000:]
    assert "Done" in proc.stderr, proc.stderr[-2000:]

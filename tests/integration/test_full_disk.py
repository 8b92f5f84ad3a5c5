"""A recording whose outputs do not fit says why (ENOSPC, not EIO), lists
the files it could not write in summary.json, leaves no half-written or
temporary files, and exits non-zero."""
import json
import os
import subprocess

import pytest

from testlib import record, start_prog, wait_gone


@pytest.fixture
def small_tmpfs(tmp_path, request):
    """A tmpfs of request.param bytes."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={request.param}", "tmpfs", str(mnt)],
                   check=True)
    yield mnt
    subprocess.run(["umount", str(mnt)], check=True)


# 4 KiB: not even the folded files fit (written through stdio, whose own
# error is EIO); 24 KiB: room for summary.json, not for a JFR file (its
# metadata alone is larger).
@pytest.mark.parametrize("small_tmpfs,args", [("4k", ["--no-jfr", "--no-html"]), ("24k", [])],
                         indirect=["small_tmpfs"], ids=["folded", "jfr"])
def test_a_full_disk_is_named_and_reported(small_tmpfs, args):
    out = small_tmpfs / "out"
    busy, _ = start_prog("hot_functions", 3)  # a quiet node may have nothing to sample
    try:
        proc = record(out, "-a", "-d", "2", *args, check=False, timeout=60)
    finally:
        wait_gone(busy)
    assert proc.returncode != 0, proc.stderr
    assert "No space left on device" in proc.stderr, proc.stderr
    assert "Input/output error" not in proc.stderr, proc.stderr
    assert "is incomplete" in proc.stderr.splitlines()[-1], proc.stderr
    leftovers = [os.path.join(d, f) for d, _, files in os.walk(out) for f in files
                 if f.endswith(".tmp")]
    assert not leftovers, leftovers
    summary_path = out / "summary.json"
    if not summary_path.exists():  # no summary at all is also honest
        return
    with open(summary_path) as f:
        summary = json.load(f)
    failed = summary["failed_outputs"]
    assert failed and all(f["error"] == "No space left on device" for f in failed), failed
    if "--no-jfr" in args:
        assert any(f["file"] == "all.folded" for f in failed), failed
    failed_files = {f["file"] for f in failed}
    for o in summary["outputs"]:
        folded = o["name"] + ".folded"
        if o["written"]:
            assert folded not in failed_files
        else:
            assert any(f.startswith(o["name"] + ".") for f in failed_files), o
        # What is listed as failed is not on disk; what is written is.
        assert os.path.exists(out / folded) == (folded not in failed_files) or o["samples"] == 0

"""A recording whose outputs do not fit says why (ENOSPC, not EIO), lists
the files it could not write in summary.json, leaves no half-written or
temporary files, and exits non-zero."""
import json
import os
import signal
import subprocess
import time

import pytest

from testlib import SPARKPROF, read_summary, record, start_prog, wait_gone


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


@pytest.mark.parametrize("small_tmpfs", ["64m"], indirect=True)
def test_segments_lost_while_recording_fail_it_though_the_stop_fits(small_tmpfs):
    """The disk fills while segments close and is freed before the stop:
    the stop's files fit, but the segments lost fail the recording with
    their cause, summary.json counts their samples, and the store keeps
    only whole segments."""
    out, filler = small_tmpfs / "out", small_tmpfs / "filler"
    err_path = small_tmpfs.parent / "record.err"
    busy, _ = start_prog("hot_functions", 600)
    with open(err_path, "w") as err:
        rec = subprocess.Popen([SPARKPROF, "record", "-o", str(out), "-a", "-F", "199",
                                "--stack-memory", "16K"], stderr=err)
    try:
        wait_for(lambda: (out / "samples.store").exists() and
                 (out / "samples.store").stat().st_size > 100, "a segment written")
        subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=1M"], capture_output=True)
        wait_for(lambda: "samples.store: No space left on device" in err_path.read_text(),
                 "a segment lost")
        filler.unlink()
        rec.send_signal(signal.SIGINT)
        rc = rec.wait(timeout=300)
    finally:
        rec.kill()
        busy.kill()
        wait_gone(busy)
    stderr = err_path.read_text()
    assert rc != 0, stderr
    assert "Input/output error" not in stderr, stderr
    assert "is incomplete" in stderr.splitlines()[-1], stderr
    summary = read_summary(out)
    failed = {f["file"]: f["error"] for f in summary["failed_outputs"]}
    assert failed.get("samples.store") == "No space left on device", failed
    # The live JFR files that failed meanwhile are written again at the stop.
    assert set(failed) == {"samples.store"} and (out / "all.jfr").stat().st_size > 0, failed
    assert summary["memory"]["store_samples_lost"] > 0, summary["memory"]
    conv = subprocess.run([SPARKPROF, "convert", str(out), "-o", str(small_tmpfs / "all.pb.gz")],
                          capture_output=True, text=True, timeout=300)
    assert conv.returncode == 0 and "cut off" not in conv.stderr, conv.stderr


def wait_for(cond, what, timeout=120):
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, f"no {what} in {timeout} s"
        time.sleep(0.1)

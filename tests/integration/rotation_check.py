"""Reading and checking the interval folders of `record --rotate` (shared by
test_record_rotate.py on the host and test_container.py through the image).

Each interval folder DIR/YYYYmmddTHHMMSSZ holds interval.json (its bounds in
CLOCK_MONOTONIC, the BPF clock, and the first and last record filed in it)
and, once complete, summary.json. The checks compare those bounds with the
sample times in the folder's own JFR file, so that the no-gap/no-overlap
claim rests on what was written, not only on what interval.json says.
"""
import json
import os
import re
import sys

from testlib import ROOT, read_folded

sys.path.insert(0, os.path.join(ROOT, "tests", "jfr"))
import jfrtest  # noqa: E402

INTERVAL_NAME = re.compile(r"\d{8}T\d{6}Z(-\d+)?$")


def interval_folders(out_dir):
    if not os.path.isdir(out_dir):
        return []
    return sorted(d for d in os.listdir(out_dir) if INTERVAL_NAME.match(d))


def complete_folders(out_dir):
    return [d for d in interval_folders(out_dir)
            if os.path.exists(os.path.join(out_dir, d, "summary.json"))]


def read_intervals(out_dir):
    """Every interval folder, oldest first; each must be complete."""
    out = []
    for name in interval_folders(out_dir):
        path = os.path.join(out_dir, name)
        assert os.path.exists(os.path.join(path, "summary.json")), \
            f"{path}: no summary.json (incomplete): {os.listdir(path)}"
        with open(os.path.join(path, "interval.json")) as f:
            iv = json.load(f)
        with open(os.path.join(path, "summary.json")) as f:
            iv["summary"] = json.load(f)
        iv["dir"] = path
        out.append(iv)
    return out


def jfr_sample_times(jfr, path):
    """Realtime ns of every jdk.ExecutionSample in a JFR file."""
    doc = jfrtest.jfr_json(jfr, path, events="jdk.ExecutionSample", stack_depth=1)
    return sorted(jfrtest.iso_to_ns(e["values"]["startTime"])
                  for e in doc["recording"]["events"])


def check_consecutive(intervals, jfr=None, max_gap_ns=100_000_000):
    """Consecutive intervals share their bound; every sample lies in its
    interval's [start, end); between the last sample of one interval and the
    first of the next there is neither overlap nor a gap longer than
    max_gap_ns (the workload keeps the CPUs busy). With jfr, the same is
    checked on the sample times of each folder's all.jfr."""
    assert intervals, "no interval folders"
    for a, b in zip(intervals, intervals[1:]):
        assert b["index"] == a["index"] + 1, (a["dir"], b["dir"])
        assert b["start_monotonic_ns"] == a["end_monotonic_ns"], (a, b)
        assert b["start_time"] == a["end_time"], (a, b)
    for iv in intervals:
        start, end = iv["start_monotonic_ns"], iv["end_monotonic_ns"]
        assert end > start, iv
        assert iv["summary"]["start_time"] == iv["start_time"], iv
        assert abs(iv["summary"]["duration_s"] - (end - start) / 1e9) < 1e-3, iv
        assert iv["records"] > 0, f"{iv['dir']}: no samples"
        assert start <= iv["first_record_monotonic_ns"] <= iv["last_record_monotonic_ns"] < end, iv
        folded = sum(read_folded(os.path.join(iv["dir"], "all.folded")).values())
        assert folded == iv["records"], (iv["dir"], folded, iv["records"])
    for a, b in zip(intervals, intervals[1:]):
        gap = b["first_record_monotonic_ns"] - a["last_record_monotonic_ns"]
        assert 0 < gap <= max_gap_ns, (a["dir"], b["dir"], gap)
    if not jfr:
        return
    offset = None
    times = []
    for iv in intervals:
        t = jfr_sample_times(jfr, os.path.join(iv["dir"], "all.jfr"))
        assert len(t) == iv["records"], (iv["dir"], len(t), iv["records"])
        # JFR times are realtime; one offset maps them to the BPF clock in
        # every folder (the intervals share one time base).
        if offset is None:
            offset = t[0] - iv["first_record_monotonic_ns"]
        assert t[0] - offset == iv["first_record_monotonic_ns"], iv["dir"]
        assert t[-1] - offset == iv["last_record_monotonic_ns"], iv["dir"]
        assert iv["start_monotonic_ns"] <= t[0] - offset and \
            t[-1] - offset < iv["end_monotonic_ns"], iv["dir"]
        times.append(t)
    for a, b in zip(times, times[1:]):
        assert 0 < b[0] - a[-1] <= max_gap_ns, (a[-1], b[0])

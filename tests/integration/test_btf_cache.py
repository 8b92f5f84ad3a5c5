"""Start-up with cached kernel types (sampler/btf_cache.h): the first
recording makes a minimal BTF with bpftool in the background, the next ones
load their BPF programs with it and record as before (on-CPU, off-CPU,
kernel frames, the Java walker); a file that is not root's alone, or that
does not load, is not used."""
import os
import time

import pytest

from testlib import (process_root, read_folded, read_summary, record, samples_with, start_prog,
                     wait_gone)
from test_java_stacks import INTERP_CHAIN, Workload, classes, thread_stacks  # noqa: F401


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "btf"
    d.mkdir(mode=0o700)
    monkeypatch.setenv("SPARKPROF_BTF_CACHE", str(d))
    return d


def made_file(d, timeout=15):
    """The cache's .btf file once bpftool has written it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = [f for f in os.listdir(d) if f.endswith(".btf")]
        if done and len(os.listdir(d)) == 1:
            return d / done[0]
        time.sleep(0.1)
    raise AssertionError(f"no cached BTF in {d}: {os.listdir(d)}")


def test_first_recording_makes_it_and_the_next_use_it(cache, tmp_path, jdks, classes,
                                                      agent_path):
    record(tmp_path / "first", "-a", "-d", "0.5")
    assert read_summary(tmp_path / "first")["kernel_btf"] == "kernel"
    btf = made_file(cache)
    assert 0 < btf.stat().st_size < 64 * 1024, btf.stat().st_size
    assert (btf.stat().st_mode & 0o022) == 0
    # On-CPU with kernel frames, and off-CPU (--wall), with the cached types.
    prog, pid = start_prog("hot_functions", 5)
    try:
        record(tmp_path / "cached", "-a", "--wall", "-F", "999", "-d", "3")
    finally:
        wait_gone(prog)
    summary = read_summary(tmp_path / "cached")
    assert summary["kernel_btf"] == "cached"
    stacks = read_folded(tmp_path / "cached" / "all.folded")
    root = process_root(stacks, pid)
    assert samples_with(stacks, "burn_heavy", root=root) > 300
    assert samples_with(stacks, "syscall_reader", "vfs_read_[k]", root=root) > 30
    assert summary["off_cpu"]["events"] > 0, summary["off_cpu"]
    # The Java walker (its own CO-RE reads) names interpreted frames.
    work = Workload(jdks[min(jdks)], classes, "interp", 6, "-XX:CompileCommand=quiet",
                    "-XX:CompileCommand=exclude,JavaStacks$InterpChain::*", agent=agent_path)
    try:
        time.sleep(1)
        record(tmp_path / "java", "-p", work.pid, "-t", "-F", 499, "-d", 3)
    finally:
        work.finish()
    assert read_summary(tmp_path / "java")["kernel_btf"] == "cached"
    samples = thread_stacks(read_folded(tmp_path / "java" / "all.folded"), work.pid,
                            "interp-chain")
    total = sum(c for _, c in samples)
    chained = sum(c for frames, c in samples
                  if any(frames[i:i + 3] == INTERP_CHAIN for i in range(len(frames))))
    assert total >= 300 and chained / total >= 0.95, (chained, total)


def test_a_file_that_does_not_load_is_replaced(cache, tmp_path):
    record(tmp_path / "first", "-a", "-d", "0.3")
    btf = made_file(cache)
    btf.write_bytes(b"\x9f\xeb\x01\x00 not really BTF" * 8)
    proc = record(tmp_path / "bad", "-a", "-d", "0.5")
    assert read_summary(tmp_path / "bad")["kernel_btf"] == "kernel"
    assert read_summary(tmp_path / "bad")["samples"] > 0
    said = [line for line in proc.stderr.splitlines() if str(btf) in line]
    assert len(said) == 1 and "kernel's BTF" in said[0], proc.stderr
    # Made again, and used again.
    made_file(cache)
    assert b"not really" not in btf.read_bytes()
    record(tmp_path / "again", "-a", "-d", "0.3")
    assert read_summary(tmp_path / "again")["kernel_btf"] == "cached"


def test_nothing_is_written_into_a_folder_others_can_write(cache, tmp_path):
    os.chmod(cache, 0o777)
    record(tmp_path / "first", "-a", "-d", "0.5")
    time.sleep(1)
    assert os.listdir(cache) == []


@pytest.mark.parametrize("how", ["file-not-root", "folder-writable"])
def test_a_file_others_could_write_is_not_used(cache, tmp_path, how):
    record(tmp_path / "first", "-a", "-d", "0.3")
    btf = made_file(cache)
    if how == "file-not-root":
        os.chown(btf, 65534, 65534)
    else:
        os.chmod(cache, 0o777)
    record(tmp_path / "after", "-a", "-d", "0.3")
    assert read_summary(tmp_path / "after")["kernel_btf"] == "kernel"

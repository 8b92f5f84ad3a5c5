"""The kernel matrix: Debian's own kernels (tests/kernels/kernels.txt, fetched
by `make deps`) booted in QEMU by virtme-ng with the host's files shared
read-only. In each VM, tests/kernels/guest.sh records the whole node, a JVM
by pid (the simulated executor) and a wall-clock profile, lists the JVMs and
loads every program whatever the probes say; the tests here read what it
wrote.

QEMU emulates the CPU (TCG), a Westmere without AVX: /dev/kvm on this
machine kind is a nested variant QEMU cannot use. A boot and the
recordings take about 45 s.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import warnings

import pytest

import spark_sim
from testlib import ROOT, read_folded

KERNELS = "/var/cache/sparkprof-deps/kernels"
KERNEL_LIST = os.path.join(ROOT, "tests", "kernels", "kernels.txt")
GUEST = os.path.join(ROOT, "tests", "kernels", "guest.sh")
EVERYTHING = {"hotspot_walk", "off_cpu", "seed_blocked_threads", "switch_state"}
# What each kernel lacks (sampler/kernel_features.h), by upstream release.
REDUCED = {"5.10": EVERYTHING, "6.1": set(), "6.12": set()}


def releases():
    out = []
    with open(KERNEL_LIST) as f:
        for line in f:
            fields = line.split()
            if fields and not fields[0].startswith("#"):
                out.append(fields[1].removeprefix("linux-image-"))
    return out


def upstream(release):
    return ".".join(release.split(".")[:2]).split("-")[0]


@pytest.fixture(scope="module")
def sim_classpath(build_dir):
    return spark_sim.compile_sim(build_dir)


def boot(vng, vmlinuz, out, script):
    # A CPU without AVX: QEMU 7.2 emulates some AVX code wrongly (a JVM's
    # JIT code took a #GP at a method's entry under its default CPU).
    # --verbose: the guest kernel's console, for a boot that fails.
    # Its own session: a VM that outlives the timeout is killed with QEMU,
    # which vng starts as a grandchild, and does not load the rest of the run.
    cmd = [vng, "--verbose", "--disable-kvm", "--run", vmlinuz, "--cpus", "2", "--memory", "4G",
           "--qemu-opts=-cpu Westmere", f"--rwdir={out}", "--exec", script]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=900)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        try:
            stdout, stderr = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            stdout, stderr = "", "(its output was held open)"
        stderr += "\n(killed after 900 s)"
    return subprocess.CompletedProcess(cmd, proc.returncode, stdout, stderr)


@pytest.fixture(scope="module", params=releases())
def vm(request, tmp_path_factory, jdks, sim_classpath):
    """Boots one kernel and runs the guest script; returns (release, its
    expected reductions, the folder it wrote)."""
    release = request.param
    vmlinuz = os.path.join(KERNELS, release, "boot", f"vmlinuz-{release}")
    assert os.path.exists(vmlinuz), f"{vmlinuz} is missing: run `make deps`"
    vng = shutil.which("vng")
    assert vng, "virtme-ng is missing: run `make deps`"
    reduced = REDUCED[upstream(release)]
    out = tmp_path_factory.mktemp(f"vm-{release}")
    os.chmod(out, 0o755)
    script = " ".join([GUEST, str(out), ROOT, os.path.join(jdks[17], "bin", "java"),
                       sim_classpath, "" if "off_cpu" in reduced else "off-cpu"])
    # A guest that never ran its script (no `release`: QEMU or the guest
    # kernel stopped during boot, seen once on a busy host) is booted once
    # more; the console of each boot is kept for the message.
    consoles = []
    for _ in range(2):
        proc = boot(vng, vmlinuz, out, script)
        consoles.append(f"({proc.returncode}) {proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
        if (out / "release").exists():
            break
    if len(consoles) > 1 and (out / "release").exists():
        warnings.warn(f"the VM of {release} ran at its second boot; the first: {consoles[0]}")
    hang = out / "jvm.hang"
    assert not hang.exists(), \
        f"record -p did not stop on {release} after its JVM exited:\n{hang.read_text()[-6000:]}"
    assert (out / "done").exists(), \
        f"the VM of {release} did not finish:\n" + "\n---\n".join(consoles)
    assert (out / "release").read_text().strip() == release
    return release, reduced, out


def summary(folder):
    with open(folder / "summary.json") as f:
        return json.load(f)


def log(vm_out, name):
    return (vm_out / f"{name}.log").read_text(errors="replace")


def test_the_kernel_says_what_it_reduces(vm):
    release, reduced, out = vm
    kernel = summary(out / "all")["kernel"]
    assert kernel["release"] == release
    assert kernel["mode"] == ("reduced" if reduced else "full")
    assert {r["feature"] for r in kernel["reduced"]} == reduced, kernel
    startup = [l for l in log(out, "all").splitlines() if "reduced:" in l]
    if reduced:
        assert len(startup) == 1 and f"Linux {release}, reduced: hotspot_walk" in startup[0], \
            startup
    else:
        assert not startup


def test_whole_node_names_native_and_kernel_frames(vm):
    _, _, out = vm
    stacks = read_folded(out / "all" / "all.folded")
    prog = {s: c for s, c in stacks.items() if s.startswith("hot_functions-")}
    heavy = sum(c for s, c in prog.items() if s.endswith(";main;burn_heavy;spin"))
    light = sum(c for s, c in prog.items() if s.endswith(";main;burn_light;spin"))
    # burn_heavy does three times burn_light's work. Not the ratio itself:
    # a guest's cpu-clock timer misses ticks while the host runs something
    # else on its vCPU, so a busy host skews the guest's shares.
    assert light >= 20 and heavy > light, (heavy, light)
    reads = sum(c for s, c in prog.items() if ";syscall_reader;" in s and "_read_[k]" in s)
    assert reads >= 20, sorted(prog.items(), key=lambda kv: -kv[1])[:10]


def test_jvm_by_pid_names_java_and_splits_by_stage(vm):
    _, reduced, out = vm
    exec_dir = out / "jvm" / spark_sim.APP_ID / "exec-1"
    placement = spark_sim.task_sample_placement(exec_dir)
    right, total = spark_sim.accuracy(placement)
    # (How many samples the tasks get depends on how busy the host is.)
    assert total >= 150 and right >= 0.97 * total, placement
    truth = spark_sim.load_truth(out / "truth.json")
    stages = {(s["stage"], s["attempt"]) for s in truth["stages"]}
    if "hotspot_walk" in reduced:
        # Frame pointers alone name compiled frames only: a stage whose
        # work the JIT had not compiled yet (a busy host starves the
        # compiler) shows no StageNWork frame, but its file has samples.
        files = spark_sim.stage_files(exec_dir)
        assert set(placement) <= stages, (placement, stages)
        assert all(s in files and sum(read_folded(exec_dir / files[s]).values()) > 0
                   for s in stages), (sorted(files, key=str), stages)
    else:
        assert set(placement) == stages, (placement, stages)
    tasks = read_folded(exec_dir / "all.folded")
    task_samples = sum(c for s, c in tasks.items() if spark_sim.STAGE_FRAME.search(s))
    # A frame named exactly "Interpreter": the named runtime frames under
    # it (InterpreterRuntime::frequency_counter_overflow, more of them when
    # a busy host slows the compiler) are not unnamed.
    unnamed = sum(c for s, c in tasks.items()
                  if spark_sim.STAGE_FRAME.search(s) and "Interpreter" in s.split(";"))
    rec = summary(out / "jvm")
    walked = rec["java_stacks_continued_from_last_java_frame"]
    described = rec["executors"][0]["java_walked_s"]
    if "hotspot_walk" in reduced:
        # Frame pointers alone: interpreted callers are not named, waits not continued.
        assert unnamed > 0 and walked == 0, (unnamed, walked)
        assert described is None
    else:
        # The guest starts the stages once the JVM is described to the walker.
        first = min(s.get("first_s", float("inf")) for s in rec["executors"][0]["stages"]
                    if s["stage"] is not None)
        assert described is not None and described < first, (described, first)
        assert unnamed <= 0.05 * task_samples, (unnamed, task_samples)
        assert walked > 0


def test_jvm_wall_and_off_cpu_profiles_keep_java_callers_of_waits(vm):
    _, reduced, out = vm
    if "off_cpu" in reduced:
        assert not (out / "jvm" / "all.wall.folded").exists()
        return
    exec_dir = out / "jvm" / spark_sim.APP_ID / "exec-1"
    wall = read_folded(exec_dir / "all.wall.folded")
    # glibc has no frame pointers: a wait reaches its Java caller only
    # through the thread's last Java frame. The executor's main thread
    # sleeps 3 s, recorded, before its work starts (10 ms units).
    waits = sum(c for s, c in wall.items() if re.search(
        r";(java/lang/Thread\.sleep|java/lang/Object\.wait|jdk/internal/misc/Unsafe\.park)"
        r";__futex_abstimed_wait_common;", s))
    assert waits >= 300, sorted(wall.items(), key=lambda kv: -kv[1])[:5]
    # --off-cpu: the same waits in milliseconds.
    off_cpu = read_folded(exec_dir / "all.offcpu.folded")
    assert sum(c for s, c in off_cpu.items() if ";__futex_abstimed_wait_common;" in s) >= 3000


def test_list_shows_how_stacks_are_walked(vm):
    release, reduced, out = vm
    pid = spark_sim.load_truth(out / "truth.json")["pid"]
    rows = [l.split() for l in (out / "list.out").read_text().splitlines()[1:]]
    row = [r for r in rows if r and r[0] == str(pid)]
    assert row and row[0][5] == ("fp" if "hotspot_walk" in reduced else "full"), rows
    err = (out / "list.err").read_text()
    assert (f"Linux {release}, reduced: hotspot_walk" in err) == bool(reduced), err


def test_wall_profile_or_a_clear_refusal(vm):
    release, reduced, out = vm
    text = log(out, "wall")
    if "off_cpu" in reduced:
        assert "--wall needs BPF task storage and atomic exchange (Linux 5.12); this kernel " \
               f"is Linux {release}" in text, text
        assert not (out / "wall" / "summary.json").exists()
        return
    # The time asleep against the program's own clock: both are the guest's
    # time, which a busy host does not skew (its on-CPU samples, it does).
    slept = float(re.search(r"slept_s ([0-9.]+)", text).group(1))
    wall = read_folded(out / "wall" / "all.wall.folded")
    sleepy = {s: c for s, c in wall.items() if s.split(";")[1:2] == ["sleepy"]}
    asleep = sum(c for s, c in sleepy.items() if ";sleep_phase;" in s) / 100
    assert slept > 0.5 and abs(asleep - slept) <= 0.15 * slept, (asleep, slept, sleepy)


def test_a_refused_program_is_reported_as_the_verifiers_refusal(vm):
    """SPARKPROF_ASSUME_FEATURES=all loads the walker everywhere: 5.10's
    verifier refuses its bpf_loop callbacks, and the message says so."""
    release, reduced, out = vm
    rc = int((out / "forced.rc").read_text())
    text = log(out, "forced")
    if not reduced:
        assert rc == 0, text
        return
    assert rc == 1
    errors = [l for l in text.splitlines() if l.startswith("sparkprof: error:")]
    assert errors == [f"sparkprof: error: load the BPF sampler: the verifier of Linux {release} "
                      "rejected program sample_cpu: number of funcs in func_info doesn't match "
                      "number of subprogs (-v prints its whole log)"], text
    assert "root" not in text

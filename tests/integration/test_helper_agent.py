"""The JVMTI helper on real JVMs (JDK 17 and the newest JDK on the machine):
its log and perf map, thread names with renames, code-cache reuse, late
attach with the JDK's own jcmd, bad options, safe files, JVM exit."""
import glob
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from helper_log import HelperLog  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JAVA_DIR = os.path.join(ROOT, "tests", "java")
HOT = ["HotAlpha.spin", "HotBeta.spin", "HotGamma.spin"]
WHICH = ["oldest", "newest"]


def pick(jdks, which):
    return jdks[min(jdks)] if which == "oldest" else jdks[max(jdks)]


@pytest.fixture(scope="module")
def classes(tmp_path_factory, jdks):
    """Our Java workloads, compiled once with the oldest JDK."""
    out = tmp_path_factory.mktemp("helper-java")
    sources = [s for s in glob.glob(os.path.join(JAVA_DIR, "*.java"))
               if not os.path.basename(s).startswith("Sim")]
    subprocess.run([os.path.join(jdks[min(jdks)], "bin", "javac"), "-d", str(out)] + sources,
                   check=True)
    return str(out)


def log_path(pid):
    return f"/tmp/sparkprof-{pid}.log"


def log_written_since(pid, t0_ns):
    """Whether pid's log exists and a JVM started after t0_ns (monotonic)
    began it: pids wrap at 32768 here, and a log an earlier process of the
    same pid left behind is not this JVM's."""
    try:
        with open(log_path(pid), "rb") as f:
            head = f.readline().split()
    except FileNotFoundError:
        return False
    return not (len(head) >= 4 and head[0] == b"H" and head[3].isdigit()
                and int(head[3]) < t0_ns)


def read_log(pid):
    with open(log_path(pid)) as f:
        return HelperLog(f.read())


def read_held(f):
    """The log through a file opened before the JVM exited and removed it."""
    with f:
        return HelperLog(f.read())


def cleanup(pid):
    for p in (log_path(pid), f"/tmp/perf-{pid}.map"):
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass


def anon_exec_ranges(pid):
    """Anonymous executable mappings of pid (where HotSpot's code cache is)."""
    ranges = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split()
            if "x" in parts[1] and (len(parts) < 6 or parts[5].startswith("[anon")):
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                ranges.append((lo, hi))
    return ranges


class Java:
    """A running JVM: collects stdout lines; "pid N" must come first."""

    def __init__(self, jdk, classes, args, jvm_opts=(), agent=None, agent_opts=None,
                 keep_log=True):
        cmd = [os.path.join(jdk, "bin", "java"), "-XX:+PreserveFramePointer", *jvm_opts]
        if agent:
            # The tests read the log after the JVM has exited.
            opts = ",".join(o for o in (agent_opts, "keep_log=1" if keep_log else None) if o)
            cmd.append(f"-agentpath:{agent}" + (f"={opts}" if opts else ""))
        cmd += ["-cp", classes, *[str(a) for a in args]]
        self.t0_ns = time.monotonic_ns()
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        self.lines = []
        first = self.proc.stdout.readline()
        assert first.startswith("pid "), first + self.proc.stderr.read()
        self.pid = int(first.split()[1])
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def finish(self, timeout=120):
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(timeout=10)
        self.stderr = self.proc.stderr.read()
        return self.proc.returncode

    def names_set(self):
        """[(monotonic ns before the name was set, name)] as printed."""
        out = []
        for line in self.lines:
            m = re.match(r"nametime (\d+) (.*)$", line)
            if m:
                out.append((int(m.group(1)), m.group(2)))
        return out


def check_names(log, java, since=0):
    """Every name the program set after `since` was published, exactly."""
    published = {n for _, _, n in log.threads}
    missing = [n for ts, n in java.names_set() if ts >= since and n not in published]
    assert not missing, missing[:5]


@pytest.mark.parametrize("which", WHICH)
def test_hot_methods_published_at_start(jdks, classes, agent_path, which):
    java = Java(pick(jdks, which), classes, ["HotMethods", 8, 3, 20], agent=agent_path)
    try:
        time.sleep(5)   # the hot methods are compiled by now
        ranges = anon_exec_ranges(java.pid)
        tasks = {int(t) for t in os.listdir(f"/proc/{java.pid}/task")}
        comms = {t: open(f"/proc/{java.pid}/task/{t}/comm").read().strip() for t in tasks}
        log = read_log(java.pid)
        with open(f"/tmp/perf-{java.pid}.map") as f:
            perf_map = f.read()
        assert java.finish() == 0, java.stderr
        assert "sparkprof-agent" not in java.stderr, java.stderr
        assert "warning" not in java.stderr, java.stderr

        assert log.header and log.header["pid"] == java.pid and log.header["mode"] == "start"
        assert not log.bad, log.bad[:3]
        for hot in HOT:
            blobs = [b for b in log.methods() if b["name"] == hot]
            assert blobs, (hot, sorted({b["name"] for b in log.methods()})[:30])
            for b in blobs:
                assert any(lo <= b["start"] and b["start"] + b["size"] <= hi for lo, hi in ranges), \
                    (hot, hex(b["start"]), [(hex(a), hex(z)) for a, z in ranges])
        interp = [b for b in log.blobs.values() if b["name"] == "Interpreter"]
        assert interp and interp[0]["kind"] == "D"
        # Inline records name real methods, inside their compiled method.
        # They are J records, and each method's name is written once (N):
        # a name comes twice only for overloads (one name, two methods).
        assert log.inline, "no inline records"
        assert log.inline_lines["J"] and not log.inline_lines["I"], log.inline_lines
        names = list(log.numbered.values())
        assert len(set(names)) >= 0.9 * len(names), sorted(names)
        for i, ranges_ in log.inline.items():
            b = log.blobs[i]
            for lo, hi, names in ranges_:
                assert b["start"] <= lo < hi <= b["start"] + b["size"]
                # A hidden class (string concatenation, lambda forms) has
                # its address in its name: String$$StringConcat.0x57046000.
                assert all(re.match(r"^[\w/$]+(\.0x[0-9a-f]+)?\.[\w$<>]+$", n) for n in names), \
                    names

        # The perf map: perf's format, and the hot methods in it.
        lines = perf_map.splitlines()
        assert lines and all(re.match(r"^[0-9a-f]+ [0-9a-f]+ \S", l) for l in lines), lines[:3]
        for hot in HOT:
            assert any(l.endswith(" " + hot) for l in lines), hot

        # Thread names: the OS tid of each worker is right (its comm is the
        # name's first 15 bytes), and every name set was published.
        for tid, name in [(t, n) for _, t, n in log.threads if n.startswith("hot-worker-")]:
            assert tid in tasks and comms[tid] == name[:15], (tid, name, comms.get(tid))
        log = read_log(java.pid)
        check_names(log, java)
        task_names = [n for _, _, n in log.threads if "(TID " in n]
        assert len(task_names) >= 20, task_names
        # Heartbeats and idle marks of the Spark-like pool.
        assert log.heartbeats
        assert {s for _, _, s in log.states} <= {"idle", "busy"}
        # The final map (written at VM death) holds only live code.
        with open(f"/tmp/perf-{java.pid}.map") as f:
            final = f.read().splitlines()
        live = {(b["start"], b["size"]) for b in log.blobs.values() if b["unloaded"] is None}
        for l in final:
            start, size = (int(x, 16) for x in l.split(" ")[:2])
            assert (start, size) in live, l
    finally:
        java.finish()
        cleanup(java.pid)


@pytest.mark.parametrize("which", WHICH)
def test_linux_perf_names_java_methods_from_the_map(jdks, classes, agent_path, which, tmp_path):
    """Linux perf itself (cpu-clock, no PMU needed) names the hot methods
    from the helper's /tmp/perf-PID.map."""
    java = Java(pick(jdks, which), classes, ["HotMethods", 8, 3, 0], agent=agent_path,
                agent_opts="interval=200")
    data = str(tmp_path / "perf.data")
    try:
        time.sleep(3)
        rec = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "199", "-p",
                              str(java.pid), "-o", data, "--", "sleep", "2"],
                             capture_output=True, text=True, timeout=60)
        assert rec.returncode == 0, rec.stderr
        assert java.finish() == 0
        rep = subprocess.run(["perf", "report", "-i", data, "--stdio", "--sort", "sym"],
                             capture_output=True, text=True, timeout=120)
        shares = {}
        for line in rep.stdout.splitlines():
            m = re.match(r"\s*([\d.]+)%\s+\[\.\]\s+(\S+)", line)
            if m:
                shares[m.group(2)] = float(m.group(1))
        # Three workers on two CPUs: nearly all samples are in the hot methods.
        assert sum(shares.get(h, 0) for h in HOT) >= 80, sorted(shares.items(), key=lambda x: -x[1])[:8]
    finally:
        java.finish()
        cleanup(java.pid)


@pytest.mark.parametrize("which", WHICH)
def test_code_cache_reuse_keeps_log_consistent(jdks, classes, agent_path, which):
    java = Java(pick(jdks, which), classes, ["CodeChurn", 10, classes],
                jvm_opts=["-XX:ReservedCodeCacheSize=8m"], agent=agent_path)
    try:
        assert java.finish() == 0, java.stderr
        assert any(l.startswith("done") for l in java.lines), java.lines[-3:]
        log = read_log(java.pid)
        assert not log.bad, log.bad[:3]
        assert len(log.unloads) >= 100, len(log.unloads)
        # The workload did reuse freed code-cache memory ...
        assert log.reused() >= 50, log.reused()
        # ... and at no time were two live compiled methods on the same bytes.
        overlaps = log.live_overlaps()
        assert not overlaps, overlaps[:3]
        # Unloads follow their loads.
        for ts, i in log.unloads:
            assert ts >= log.blobs[i]["ts"]
        names = {b["name"] for b in log.methods()}
        assert "ChurnPayload.applyAsLong" in names or "ChurnPayload.step" in names, sorted(names)[:20]
    finally:
        cleanup(java.pid)


def process_summary(out_dir, pid):
    """pid's one entry as a JVM (a `record -- cmd` child sampled before its
    exec into java has an entry of its own, as another program)."""
    with open(os.path.join(out_dir, "summary.json")) as f:
        procs = [p for p in json.load(f)["processes"] if p["pid"] == pid and p["jvm"]]
    assert len(procs) == 1, f"pid {pid} as a JVM in {out_dir}/summary.json: {procs}"
    return procs[0]


def folded_text(out_dir):
    with open(os.path.join(out_dir, "all.folded")) as f:
        return f.read()


def wait_for_log_files(pid, count, files, timeout=180):
    """Waits until pid's helper log has been begun count times (a new file
    has a new inode); files: the inodes seen so far, extended."""
    deadline = time.time() + timeout
    while len(files) < count:
        if time.time() > deadline:
            pytest.fail(f"the log was begun {len(files)} times in {timeout} s, not {count}")
        try:
            ino = os.stat(log_path(pid)).st_ino
        except FileNotFoundError:
            ino = None
        if ino and ino not in files:
            files.append(ino)
        time.sleep(0.2)
    return files


@pytest.mark.parametrize("which", WHICH)
def test_log_rotation_keeps_the_log_bounded(jdks, classes, agent_path, sparkprof_bin, tmp_path,
                                            which):
    """log_max=1: past 1 MiB the helper goes on in a new file that restates
    the live code and threads.  A recording that follows the log through
    the new files reads nothing malformed and names the JIT frames; one
    started later reads the newest file alone; the file on disk stays near
    its bound while the JVM writes several times more."""
    jdk = pick(jdks, which)
    stop = tmp_path / "stop"
    # CodeChurn churns until told to stop: a busy node logs more slowly.
    java = [os.path.join(jdk, "bin", "java"), "-XX:+PreserveFramePointer",
            "-XX:ReservedCodeCacheSize=8m", f"-agentpath:{agent_path}=log_max=1,stats=1,keep_log=1",
            "-cp", classes, "CodeChurn", "300", classes, str(stop)]
    follow, late = tmp_path / "follow", tmp_path / "late"
    rec = subprocess.Popen([sparkprof_bin, "record", "-F", "499", "-o", str(follow), "--"] + java,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid = None
    try:
        first = rec.stdout.readline()
        assert first.startswith("pid "), first
        pid = int(first.split()[1])
        files = wait_for_log_files(pid, 2, [])
        out = subprocess.run([sparkprof_bin, "record", "-F", "499", "-d", "5", "-p", str(pid),
                              "-o", str(late)], capture_output=True, text=True, timeout=90)
        assert out.returncode == 0, out.stderr
        wait_for_log_files(pid, 3, files)
        stop.touch()
        stdout, stderr = rec.communicate(timeout=120)
        assert rec.returncode == 0, stderr
        assert "done rounds=" in stdout, stdout[-300:]
        rotations = int(re.search(r"log: (\d+) new files", stderr).group(1))
        with open(log_path(pid)) as f:
            last = HelperLog(f.read())
        size = os.path.getsize(log_path(pid))
    finally:
        if rec.poll() is None:
            rec.kill()
        if pid:
            cleanup(pid)

    followed = process_summary(follow, pid)
    log = followed["helper_log"]
    assert log["malformed_lines"] == 0, log
    assert log["new_files"] == rotations >= 2, (log, rotations)
    assert log["restated_lines_skipped"] > 0, log
    # Inlined frames were left in the files and read back from whichever
    # held them (the first files, or the newer ones that restated them).
    assert log["inline_deferred"] > 0 and log["inline_loads"] > 0, log
    assert log["inline_unreadable"] == 0 and log["inline_lost"] == 0, log
    assert followed["jit_bytes"] > followed["jit_name_bytes"] > 0, followed
    # The recording named its JIT frames as well as without rotation
    # (50-60 unknown frames of 23,000 samples here).
    assert followed["unknown_user_frames"] < 0.02 * followed["samples"], followed
    assert "ChurnPayload." in folded_text(follow)

    fresh = process_summary(late, pid)
    assert fresh["helper_log"]["malformed_lines"] == 0, fresh["helper_log"]
    assert fresh["unknown_user_frames"] < 0.02 * fresh["samples"], fresh
    assert "ChurnPayload." in folded_text(late)

    # What is left on disk: the newest file, which a reader takes alone.
    assert last.header["mode"] == "continued" and "snapshot" in last.replays, last.header
    assert not last.bad, last.bad[:3]
    assert size < 2.5 * 2**20, size
    assert log["lines"] > 2 * len(last.records), (log["lines"], len(last.records))


@pytest.mark.parametrize("which", WHICH)
def test_log_removed_at_exit_once_read(jdks, classes, agent_path, sparkprof_bin, tmp_path, which):
    """By default the helper removes its log when the JVM exits, as HotSpot
    removes its hsperfdata file; a recording that had it open still names
    the JVM's JIT frames, its last second included."""
    java = [os.path.join(pick(jdks, which), "bin", "java"), "-XX:+PreserveFramePointer",
            f"-agentpath:{agent_path}", "-cp", classes, "HotMethods", "4", "2", "0"]
    out = tmp_path / "rec"
    t0_ns = time.monotonic_ns()
    r = subprocess.run([sparkprof_bin, "record", "-F", "499", "-o", str(out), "--"] + java,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    pid = int(r.stdout.split()[1])
    try:
        assert not log_written_since(pid, t0_ns), "the log was left behind"
        assert os.path.exists(f"/tmp/perf-{pid}.map"), "the perf map stays, for perf report"
        proc = process_summary(out, pid)
        assert proc["helper_log"]["lines"] > 0 and not proc["helper_log"]["malformed_lines"], proc
        assert proc["unknown_user_frames"] < 0.02 * proc["samples"], proc
        assert "HotAlpha.spin" in folded_text(out)
    finally:
        cleanup(pid)


@pytest.mark.parametrize("which", WHICH)
def test_attach_during_code_churn(jdks, classes, agent_path, which):
    """Attached while code is compiled and unloaded: the only overlapping
    live entries are ones published by the attach replay (dead code not yet
    freed, or code reported by both the replay and a live event), which the
    reader never names (no unload record gives their end)."""
    jdk = pick(jdks, which)
    java = Java(jdk, classes, ["CodeChurn", 10, classes], jvm_opts=["-XX:ReservedCodeCacheSize=8m"])
    try:
        time.sleep(2)
        out = jcmd_load(jdk, java.pid, agent_path)
        assert "return code: 0" in out.stdout, out.stdout + out.stderr
        held = open(log_path(java.pid))   # removed when the JVM exits
        assert java.finish() == 0, java.stderr
        log = read_held(held)
        assert not log.bad and len(log.unloads) >= 50
        replay = log.replays["code"]
        late = [(o, b) for o, b in log.live_overlaps() if o["ts"] > replay]
        assert not late, late[:3]
    finally:
        java.finish()
        cleanup(java.pid)


def jcmd_load(jdk, pid, agent, opts=None):
    cmd = [os.path.join(jdk, "bin", "jcmd"), str(pid), "JVMTI.agent_load", agent]
    if opts:
        cmd.append(opts)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("which", WHICH)
def test_late_attach_with_jcmd(jdks, classes, agent_path, which):
    jdk = pick(jdks, which)
    java = Java(jdk, classes, ["HotMethods", 15, 3, 10])
    try:
        time.sleep(3)   # threads named and code compiled before the helper arrives
        out = jcmd_load(jdk, java.pid, agent_path)
        assert out.returncode == 0 and "return code: 0" in out.stdout, out.stdout + out.stderr
        held = open(log_path(java.pid))   # removed when the JVM exits
        time.sleep(2)
        tasks = {int(t) for t in os.listdir(f"/proc/{java.pid}/task")}
        comms = {t: open(f"/proc/{java.pid}/task/{t}/comm").read().strip() for t in tasks}
        again = jcmd_load(jdk, java.pid, agent_path)   # a second attach is harmless
        assert "return code: 0" in again.stdout, again.stdout
        assert java.finish() == 0, java.stderr
        assert not log_written_since(java.pid, java.t0_ns), "the helper removes its log at exit"
        log = read_held(held)
        assert log.header["mode"] == "attach"
        assert not log.bad, log.bad[:3]
        assert "code" in log.replays and "threads" in log.replays
        replay_end = log.replays["code"]
        # The replay published code compiled before the attach.
        for hot in HOT:
            assert any(b["name"] == hot and b["ts"] <= replay_end for b in log.methods()), hot
        # Threads that existed before the attach got their OS tid right.
        pre = [(t, n) for ts, t, n in log.threads if ts <= log.replays["threads"]]
        workers = [(t, n) for t, n in pre if n.startswith("hot-worker-")]
        assert len(workers) == 3, pre
        for tid, name in workers:
            assert comms.get(tid) == name[:15], (tid, name, comms.get(tid))
        # Renames after the attach are all published, exactly.
        check_names(log, java, since=log.replays["threads"])
        assert java.stderr.count("already loaded") == 1, java.stderr
        # Rebinding setNativeName is silent up to JDK 23 (via the helper's
        # JNI_OnLoad); from JDK 24 HotSpot logs one line about it on stdout.
        rebind = [l for l in java.lines if "Re-registering" in l]
        major = max(jdks) if which == "newest" else min(jdks)
        assert len(rebind) == (1 if major >= 24 else 0), rebind
        assert "restricted method" not in java.stderr, java.stderr
    finally:
        java.finish()
        cleanup(java.pid)


@pytest.mark.parametrize("which", WHICH)
@pytest.mark.parametrize("opts", ["bogus=1", "interval=5", "map=yes", "map"])
def test_bad_options_leave_jvm_running(jdks, classes, agent_path, which, opts):
    jdk = pick(jdks, which)
    java = Java(jdk, classes, ["HotMethods", 1, 1, 0], agent=agent_path, agent_opts=opts)
    try:
        assert java.finish() == 0, java.stderr
        assert any(l == "done" for l in java.lines)
        lines = [l for l in java.stderr.splitlines() if l.startswith("sparkprof-agent:")]
        assert len(lines) == 1 and "helper disabled" in lines[0] and opts.split("=")[0] in lines[0], \
            java.stderr
        assert not log_written_since(java.pid, java.t0_ns)
    finally:
        cleanup(java.pid)


@pytest.mark.parametrize("which", WHICH)
def test_bad_options_on_attach_are_reported(jdks, classes, agent_path, which):
    jdk = pick(jdks, which)
    java = Java(jdk, classes, ["HotMethods", 4, 1, 0])
    try:
        time.sleep(1)
        # (jcmd's own parser cuts "key=value" options at '=': pass a bare word)
        out = jcmd_load(jdk, java.pid, agent_path, "nonsense")
        assert "return code: 0" not in out.stdout, out.stdout
        assert java.finish() == 0
        assert "unknown option 'nonsense'" in java.stderr, java.stderr
        assert not log_written_since(java.pid, java.t0_ns)
    finally:
        java.finish()
        cleanup(java.pid)


@pytest.mark.parametrize("which", WHICH)
def test_jvm_exit_paths(jdks, classes, agent_path, which):
    """System.exit while threads run, and SIGTERM: no crash, files intact."""
    jdk = pick(jdks, which)
    for how in ("exit", "sigterm"):
        java = Java(jdk, classes, ["HotMethods", 30 if how == "sigterm" else 2, 2, 20],
                    agent=agent_path, agent_opts="interval=50")
        try:
            if how == "sigterm":
                time.sleep(2)
                java.proc.send_signal(signal.SIGTERM)
            rc = java.finish()
            assert rc in (0, 143), (how, rc, java.stderr)
            assert "hs_err" not in java.stderr and "SIGSEGV" not in java.stderr, java.stderr
            assert not glob.glob(f"hs_err_pid{java.pid}.log")
            log = read_log(java.pid)
            assert not log.bad and log.methods(), how
            with open(f"/tmp/perf-{java.pid}.map") as f:
                assert any(" HotAlpha.spin" in l for l in f), how
        finally:
            cleanup(java.pid)


@pytest.mark.parametrize("which", WHICH)
def test_idle_marks_of_task_threads(jdks, classes, agent_path, which):
    """Tasks run 20 ms each, 5 per second: the pool thread is idle most of
    the time, and no idle mark falls inside a running task."""
    java = Java(pick(jdks, which), classes, ["HotMethods", 5, 1, 5], agent=agent_path,
                agent_opts="interval=100")
    try:
        assert java.finish() == 0, java.stderr
        log = read_log(java.pid)
        pool = {t for _, t, n in log.threads if n.startswith("Executor task launch worker")}
        idle = [ts for ts, t, s in log.states if s == "idle" and t in pool]
        assert len(idle) >= 5, log.states
        tasks = [ts for ts, n in java.names_set() if "(TID " in n]
        assert len(tasks) >= 15, tasks
        for ts in idle:
            inside = [t for t in tasks if t <= ts < t + 20_000_000]
            assert not inside, (ts, inside)
    finally:
        cleanup(java.pid)


@pytest.mark.parametrize("which", WHICH)
def test_a_poll_never_publishes_a_name_older_than_a_rename(jdks, classes, agent_path, which):
    """The worker's poll reads each thread's name, then publishes it if it
    changed. A thread that renames itself in between has already published
    the newer name: the poll's older one would stand until the next rename
    (a whole Spark task filed under the task before it)."""
    java = Java(pick(jdks, which), classes, ["Renames", 5, 8, 50_000], agent=agent_path,
                agent_opts="interval=50")
    try:
        assert java.finish() == 0, java.stderr
        log = read_log(java.pid)
        last, backwards, renames = {}, [], 0
        for ts, tid, name in log.threads:
            m = re.fullmatch(r"ren-(\d+)-(\d+)", name)
            if not m:
                continue
            renames += 1
            n = int(m.group(2))
            if n <= last.get(tid, -1):
                backwards.append((ts, tid, name, last[tid]))
            last[tid] = n
        assert renames >= 8 * 1000, renames
        assert not backwards, (len(backwards), backwards[:5])
    finally:
        cleanup(java.pid)


def test_planted_symlinks_are_not_followed(jdks, classes, agent_path, tmp_path):
    """In a new PID namespace the JVM's pid is predictable: plant symlinks
    at the helper's file names and check they were replaced, not followed."""
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    # The JVM runs as pid 1 of a fresh namespace (unshare forks it).
    planted = ["/tmp/sparkprof-1.log", "/tmp/perf-1.map"]
    for p in planted:
        if os.path.lexists(p):
            os.unlink(p)
        os.symlink(victim, p)
    try:
        java = [os.path.join(pick(jdks, "oldest"), "bin", "java"),
                f"-agentpath:{agent_path}=interval=50,keep_log=1", "-cp", classes, "HotMethods",
                "2", "1", "0"]
        out = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", *java],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith("pid 1\n"), out.stdout[:100]
        assert victim.read_text() == "precious\n"
        for p in planted:
            assert not os.path.islink(p) and os.path.isfile(p), p
        log = read_log(1)
        assert log.header["pid"] == 1 and log.methods()
        assert oct(os.stat(planted[0]).st_mode & 0o777) == "0o600"
        assert oct(os.stat(planted[1]).st_mode & 0o777) == "0o644"
    finally:
        for p in planted:
            if os.path.lexists(p):
                os.unlink(p)

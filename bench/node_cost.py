#!/usr/bin/env python3
"""What sparkprof costs a node, with its peers beside it (issue 14's table).

    bench/node_cost.py [--full] [--only sampling,startup,rss,stop,spark,soak]
                       [--soak-seconds N] [--spark-reps N] [--spark-configs LIST]
    bench/node_cost.py --report bench/results/node_cost-DATE.json

Quick mode (default) takes about 25 minutes on a busy 2-CPU machine, --full
about an hour.  Needs root, a built tree (make all test-progs) and make deps
(perf, JDK 17, pyspark, async-profiler).  Figures:

1. user-space CPU per sample: sparkprof's utime+stime (wait4) / samples, on
   one hot_functions per CPU, whole node, beside `perf record -g -a` +
   `perf script` (both processes' CPU) on the same workload, quiet and
   under load (extra hot_functions hogs);
2. lossless rate: -F sweep, lost / (samples + idle + lost) from summary.json;
3. start to first sample: exec of `sparkprof record` -> the "recording
   into" line (sampler attached) and -> the earliest sample's timestamp in
   the JFR output;
4. RSS (VmRSS every few seconds) of `record -a --wall` with a JVM that keeps
   compiling, deoptimizing and unloading code (tests/java/CodeChurn);
5. stop -> all outputs written: SIGINT to exit, after a recording of many
   samples;
7. soak (not in the default parts): RSS of `record -a --wall` over a long
   run (--soak-seconds, an hour by default) while a Spark application runs
   the queries of part 6 again and again (new stages and tasks all the
   time) and CodeChurn keeps its JIT busy: the memory a node sees when
   sparkprof runs all day;
6. a Spark job (pyspark local-cluster, 2 executors, TPC-H-like queries on
   generated parquet): no profiler, sparkprof -a --wall, async-profiler
   (cpu + wall=10ms, agent on the executors), both; job wall time and CPU
   (executors' CPU during the job + the profiler's own process CPU + its
   BPF programs' run time), interleaved repetitions, median and min-max.

Load is recorded beside each figure: the mean number of runnable tasks
(/proc/stat procs_running) during the measurement and the 1-minute load
average.  BPF run time comes from kernel.bpf_stats_enabled (switched on for
the run, restored after), read from /proc/PID/fdinfo of sparkprof's program
file descriptors.

SPARKPROF_BENCH_BIN runs another sparkprof, or a wrapper that execs one
(its pid is the one measured): a heap profiler on the soak's recorder, for
example, is a wrapper that sets heaptrack's LD_PRELOAD and
DUMP_HEAPTRACK_OUTPUT for `record -a --wall` only.

Prints a markdown report and writes it to bench/results/node_cost-DATE.md
(raw figures beside it as .json).
"""
import argparse
import datetime
import glob
import itertools
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
SPARKPROF = os.environ.get("SPARKPROF_BENCH_BIN", os.path.join(ROOT, "sparkprof"))
HOT = os.path.join(ROOT, "build", "progs", "hot_functions")
HELPER = os.path.join(ROOT, "build", "libsparkprof-agent.so")
JDK17 = "/usr/lib/jvm/java-17-openjdk-amd64"
# The newest JDK here (Temurin 25): the hour's churn JVM runs on it, as
# JDK 17 stops CodeChurn about one hour in two (docs/helper.md).
JDK_NEWEST = max(glob.glob("/usr/lib/jvm/temurin-*-jdk-*"), default=JDK17,
                 key=lambda d: int(re.search(r"temurin-(\d+)", d).group(1)))
ASYNC_PROFILER = "/var/cache/sparkprof-deps/async-profiler-4.2/libasyncProfiler.so"
NCPU = os.cpu_count() or 1
TICK = os.sysconf("SC_CLK_TCK")

QUICK = dict(seconds=10, sweep_reps=1, freqs=[999, 4999, 9999], perf_freqs=[999, 9999],
             startup_reps=5, rss_seconds=60, rss_every=2, stop_seconds=20, spark_reps=2,
             spark_scale=1, soak_seconds=3600, soak_every=30)
FULL = dict(seconds=30, sweep_reps=3, freqs=[999, 4999, 9999], perf_freqs=[999, 9999],
            startup_reps=10, rss_seconds=600, rss_every=10, stop_seconds=50, spark_reps=5,
            spark_scale=2, soak_seconds=3600, soak_every=30)
HOGS = 3  # extra hot_functions processes (2 busy threads each) for "under load"


# ---------------------------------------------------------------- helpers

def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def spread(xs, fmt="{:.1f}"):
    """'median (min–max)' or the one value."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return "–"
    if len(xs) == 1:
        return fmt.format(xs[0])
    return f"{fmt.format(med(xs))} ({fmt.format(min(xs))}–{fmt.format(max(xs))})"


class LoadMonitor:
    """Mean runnable tasks (procs_running, this process's sampler included)
    while in the block, and the 1-minute load average at its end."""

    def __enter__(self):
        self.samples, self.stop = [], threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def _run(self):
        while not self.stop.wait(0.5):
            with open("/proc/stat") as f:
                for line in f:
                    if line.startswith("procs_running"):
                        self.samples.append(int(line.split()[1]) - 1)

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        with open("/proc/loadavg") as f:
            self.loadavg = float(f.read().split()[0])
        self.runnable = sum(self.samples) / len(self.samples) if self.samples else 0.0

    def text(self):
        return f"{self.runnable:.1f} / {self.loadavg:.1f}"


def spawn_waited(argv, **kw):
    """Popen whose exit is collected with wait4 (finish_waited), for the
    child's own rusage."""
    return subprocess.Popen(argv, **kw)


def finish_waited(proc, timeout=None):
    """(exit status, user+sys CPU seconds, max RSS KiB) of proc via wait4."""
    deadline = time.monotonic() + timeout if timeout else None
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if deadline and time.monotonic() > deadline:
            proc.kill()
            deadline = None
        time.sleep(0.01)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def bpf_prog_stats(pid):
    """{prog id: (run_time_ns, run_cnt)} of the BPF programs pid holds."""
    out = {}
    for fd in glob.glob(f"/proc/{pid}/fd/*"):
        try:
            if "bpf-prog" not in os.readlink(fd):
                continue
            with open(f"/proc/{pid}/fdinfo/{os.path.basename(fd)}") as f:
                info = dict(l.split(":", 1) for l in f if ":" in l)
            out[int(info["prog_id"])] = (int(info["run_time_ns"]), int(info["run_cnt"]))
        except (OSError, KeyError, ValueError):
            continue
    return out


def sched_cpu_ns(pid):
    """{tid: CPU time in ns} of pid's threads (schedstat): rusage and
    /proc/PID/stat count in ticks, too coarse for the few ms a steady second
    costs."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                out[tid] = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return out


class BpfPoller:
    """The last BPF statistics of a process's programs, polled every second
    (they vanish with the process), and beside each poll the process's CPU
    time, for the steady window (start-up and stop left out)."""

    def __init__(self, pid):
        self.pid, self.stats, self.stop = pid, {}, threading.Event()
        self.points = []  # (seconds since start, CPU ns, BPF runs)
        self.thread_ns = {}  # every thread seen, so one that ended still counts
        self.t0 = time.monotonic()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while True:
            s = bpf_prog_stats(self.pid)
            if s:
                self.stats = s
                try:
                    self.thread_ns.update(sched_cpu_ns(self.pid))
                    self.points.append((time.monotonic() - self.t0,
                                        sum(self.thread_ns.values()),
                                        sum(v[1] for v in s.values())))
                except OSError:
                    pass
            if self.stop.wait(1.0):
                return

    def finish(self):
        self.stop.set()
        self.thread.join()
        return (sum(v[0] for v in self.stats.values()), sum(v[1] for v in self.stats.values()))

    def steady_us(self, skip_s=3.0):
        """CPU µs per BPF program run from skip_s after start to the poll
        before the last one that saw runs: the stop (its programs detached,
        their fds still open while outputs are written) left out. Runs are
        samples (idle ones included) plus the few exec and fork events."""
        pts = [p for p in self.points if p[0] >= skip_s]
        grew = [i for i in range(1, len(pts)) if pts[i][2] > pts[i - 1][2]]
        if not grew or grew[-1] < 2:
            return None
        first, last = pts[0], pts[grew[-1] - 1]
        if last[2] <= first[2]:
            return None
        return (last[1] - first[1]) / 1000 / (last[2] - first[2])


def start_hot(n, seconds):
    procs = [subprocess.Popen([HOT, str(seconds)], stdout=subprocess.PIPE, text=True)
             for _ in range(n)]
    for p in procs:
        p.stdout.readline()
    return procs


def stop_procs(procs):
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()


def read_summary(out):
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def wait_line(proc, pattern, timeout=60):
    """Reads proc's stderr until a line matching pattern; the monotonic time
    it arrived, or None."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            return None
        if re.search(pattern, line):
            return time.monotonic()
    return None


def drain(stream, sink=None):
    """Reads stream to its end in a thread, into sink (a file) if given."""
    def run():
        for line in iter(stream.readline, ""):
            if sink:
                sink.write(line)
                sink.flush()
    threading.Thread(target=run, daemon=True).start()


# ------------------------------------------------- 1 + 2: per sample, sweep

def run_sparkprof_fixed(freq, seconds, out, extra=()):
    """sparkprof record -a -F freq -d seconds; its CPU, BPF time, summary."""
    err = tempfile.TemporaryFile("w+")
    proc = spawn_waited([SPARKPROF, "record", "-a", "-F", str(freq), "-d", str(seconds),
                         "-o", out, *extra], stdout=subprocess.DEVNULL, stderr=err)
    poller = BpfPoller(proc.pid)
    rc, cpu, maxrss = finish_waited(proc, timeout=seconds + 120)
    bpf_ns, bpf_cnt = poller.finish()
    window_us = poller.steady_us()
    if rc != 0:
        err.seek(0)
        raise RuntimeError(f"sparkprof record exited {rc}: {err.read()[-500:]}")
    s = read_summary(out)
    lost = s["lost"]["ring_buffer_full"]
    total = s["samples"] + s["idle_samples"] + lost
    shutil.rmtree(out, ignore_errors=True)
    return {"freq": freq, "samples": s["samples"], "idle": s["idle_samples"], "lost": lost,
            "total": total, "cpu_s": cpu, "maxrss_kib": maxrss, "duration_s": s["duration_s"],
            "user_us": cpu * 1e6 / max(s["samples"] + s["idle_samples"], 1),
            "bpf_us": bpf_ns / 1000 / bpf_cnt if bpf_cnt else None,
            "window_us": window_us}


def run_perf(freq, seconds, work):
    data = os.path.join(work, "perf.data")
    proc = spawn_waited(["perf", "record", "-q", "-g", "-a", "-F", str(freq), "-o", data, "--",
                         "sleep", str(seconds)], stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL)
    rc, rec_cpu, _ = finish_waited(proc, timeout=seconds + 120)
    script = spawn_waited(["perf", "script", "-i", data], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
    _, script_cpu, _ = finish_waited(script, timeout=600)
    stats = subprocess.run(["perf", "report", "-i", data, "--stats"], capture_output=True,
                           text=True).stdout
    m = re.search(r"SAMPLE events:\s+(\d+)", stats)
    samples = int(m.group(1)) if m else 0
    m = re.search(r"LOST events:\s+(\d+)", stats)
    lost_events = int(m.group(1)) if m else 0
    m = re.search(r"LOST_SAMPLES events:\s+(\d+)", stats)
    lost_events += int(m.group(1)) if m else 0
    size = os.path.getsize(data)
    os.unlink(data)
    return {"freq": freq, "samples": samples, "lost_records": lost_events,
            "record_cpu_s": rec_cpu, "script_cpu_s": script_cpu, "bytes": size,
            "record_us": rec_cpu * 1e6 / max(samples, 1),
            "script_us": script_cpu * 1e6 / max(samples, 1),
            "user_us": (rec_cpu + script_cpu) * 1e6 / max(samples, 1)}


def bench_sampling(cfg, work):
    """Per-sample CPU and the -F sweep, quiet then loaded, perf interleaved."""
    seconds = cfg["seconds"]
    results = {"quiet": {"sparkprof": [], "perf": []}, "loaded": {"sparkprof": [], "perf": []}}
    for cond in ("quiet", "loaded"):
        hogs = []
        if cond == "loaded":
            total = (seconds + 15) * (cfg["sweep_reps"] * (len(cfg["freqs"]) +
                                                           len(cfg["perf_freqs"])) + 2)
            hogs = start_hot(HOGS, total)
            log(f"{HOGS} hogs started; 20 s for the load average to rise")
            time.sleep(20)
        try:
            for rep in range(cfg["sweep_reps"]):
                for freq in cfg["freqs"]:
                    wl = start_hot(NCPU, seconds + 60)
                    try:
                        with LoadMonitor() as lm:
                            r = run_sparkprof_fixed(freq, seconds, os.path.join(work, "sp"))
                        # A 2 s recording beside it: the difference is the
                        # steady path, start-up and writing cancel out.
                        if freq in cfg["perf_freqs"]:
                            short = run_sparkprof_fixed(freq, 2, os.path.join(work, "sp"))
                            r["steady_us"] = ((r["cpu_s"] - short["cpu_s"]) * 1e6 /
                                              max(r["samples"] + r["idle"] - short["samples"]
                                                  - short["idle"], 1))
                    finally:
                        stop_procs(wl)
                    r["load"] = (lm.runnable, lm.loadavg)
                    log(f"{cond} sparkprof -F {freq}: {r['samples']} samples, lost "
                        f"{r['lost']}, {r['user_us']:.1f} µs user/sample, load {lm.text()}")
                    results[cond]["sparkprof"].append(r)
                    if freq in cfg["perf_freqs"]:
                        wl = start_hot(NCPU, seconds + 60)
                        try:
                            with LoadMonitor() as lm:
                                p = run_perf(freq, seconds, work)
                        finally:
                            stop_procs(wl)
                        p["load"] = (lm.runnable, lm.loadavg)
                        log(f"{cond} perf -F {freq}: {p['samples']} samples, "
                            f"{p['user_us']:.1f} µs/sample, load {lm.text()}")
                        results[cond]["perf"].append(p)
        finally:
            stop_procs(hogs)
    return results


# ------------------------------------------------------ 3: start-up time

def first_jfr_sample_ns(jfr_file):
    """Earliest jdk.ExecutionSample startTime in the file, Unix time in ns."""
    out = subprocess.run([os.path.join(JDK17, "bin", "jfr"), "print", "--json", "--events",
                          "jdk.ExecutionSample", jfr_file], capture_output=True, text=True).stdout
    first = None
    for m in re.finditer(r'"startTime": "(\d+-\d+-\d+T\d+:\d+:\d+)\.(\d+)Z"', out):
        t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S").replace(
            tzinfo=datetime.timezone.utc)
        ns = int(t.timestamp()) * 10**9 + int(m.group(2).ljust(9, "0")[:9])
        first = ns if first is None else min(first, ns)
    return first


def bench_startup(cfg, work):
    rows = []
    wl = start_hot(NCPU, cfg["startup_reps"] * 30 + 30)
    try:
        for rep in range(cfg["startup_reps"]):
            out = os.path.join(work, "start")
            with LoadMonitor() as lm:
                t_exec_real = time.time_ns()
                t_exec = time.monotonic()
                proc = spawn_waited([SPARKPROF, "record", "-a", "-F", "999", "-d", "1", "-o",
                                     out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                    text=True)
                t_attached = wait_line(proc, r"recording into")
                drain(proc.stderr)
                rc, cpu, _ = finish_waited(proc, timeout=120)
            first = None
            for j in glob.glob(os.path.join(out, "*.jfr")):
                f = first_jfr_sample_ns(j)
                if f is not None:
                    first = f if first is None else min(first, f)
            r = {"attached_ms": (t_attached - t_exec) * 1000 if t_attached else None,
                 "first_sample_ms": (first - t_exec_real) / 1e6 if first else None,
                 "cpu_s": cpu, "load": (lm.runnable, lm.loadavg)}
            log(f"start-up: attached {r['attached_ms']} ms, first sample "
                f"{r['first_sample_ms']} ms, load {lm.text()}")
            rows.append(r)
            shutil.rmtree(out, ignore_errors=True)
            time.sleep(1)
    finally:
        stop_procs(wl)
    return rows


# ------------------------------------------------------------- 4: RSS

def compile_churn(work):
    classes = os.path.join(work, "classes")
    os.makedirs(classes, exist_ok=True)
    subprocess.run([os.path.join(JDK17, "bin", "javac"), "-d", classes,
                    os.path.join(ROOT, "tests", "java", "CodeChurn.java"),
                    os.path.join(ROOT, "tests", "java", "ChurnPayload.java")], check=True)
    return classes


def helper_arg(opts=""):
    """-agentpath for the helper, with its options (--helper-opts) if any."""
    return f"-agentpath:{HELPER}" + (f"={opts}" if opts else "")


def helper_logs(summary):
    """Per JVM with a helper log: what the recording read from it and the
    size of the file it left (the newest, after rotations)."""
    out = []
    for p in summary.get("processes", []):
        if not p.get("helper_log"):
            continue
        try:
            size = os.path.getsize(f"/tmp/sparkprof-{p['pid']}.log")
        except OSError:
            size = None
        out.append(dict(pid=p["pid"], executor=p.get("spark_executor"), file_bytes=size,
                        jit_bytes=p.get("jit_bytes"), jit_name_bytes=p.get("jit_name_bytes"),
                        **p["helper_log"]))
    return out


def start_churn(work, seconds, helper_opts="", jdk=JDK17):
    """CodeChurn under the helper with an 8 MiB code cache, running."""
    classes = compile_churn(work)
    jvm = subprocess.Popen([os.path.join(jdk, "bin", "java"), helper_arg(helper_opts),
                            "-XX:+PreserveFramePointer", "-XX:ReservedCodeCacheSize=8m",
                            f"-XX:ErrorFile={work}/hs_err_pid%p.log",
                            "-cp", classes, "CodeChurn", str(seconds), classes],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    jvm.stdout.readline()
    drain(jvm.stdout)
    return jvm


def hs_err_reason(work):
    """The header of a JVM's fatal error file in work (its -XX:ErrorFile):
    what stopped it, in the JVM's words; None when there is none."""
    for path in sorted(glob.glob(os.path.join(work, "hs_err_pid*.log"))):
        with open(path, errors="replace") as f:
            head = [line.rstrip()[2:] for line in itertools.islice(f, 40)
                    if line.startswith("# ") and line.strip() != "#"]
        return " / ".join(head[:8])
    return None


def start_wall_recording(out, target=("-a",), options=(), stderr_to=None):
    """`sparkprof record -a --wall -o out` (or another target, more
    options), attached, its standard error copied to the file stderr_to;
    (process, start time)."""
    proc = spawn_waited([SPARKPROF, "record", *target, "--wall", *options, "-o", out],
                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    t0 = time.monotonic()
    wait_line(proc, r"recording into")
    drain(proc.stderr, open(stderr_to, "w") if stderr_to else None)
    return proc, t0


def vm_rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def bench_rss(cfg, work):
    seconds, every = cfg["rss_seconds"], cfg["rss_every"]
    jvm = start_churn(work, seconds + 60)
    out = os.path.join(work, "rss")
    series = []
    try:
        time.sleep(2)
        with LoadMonitor() as lm:
            proc, t0 = start_wall_recording(out)
            while time.monotonic() - t0 < seconds:
                rss = vm_rss_kib(proc.pid)
                if rss is None:
                    break
                series.append((round(time.monotonic() - t0, 1), rss))
                time.sleep(every)
            proc.send_signal(signal.SIGINT)
            rc, cpu, maxrss = finish_waited(proc, timeout=300)
    finally:
        jvm.kill()
        jvm.wait()
    s = read_summary(out)
    shutil.rmtree(out, ignore_errors=True)
    log(f"RSS: {series[0][1] // 1024} -> {series[-1][1] // 1024} MiB over {seconds} s, "
        f"max {maxrss // 1024} MiB, load {lm.text()}")
    return {"series": series, "maxrss_kib": maxrss, "cpu_s": cpu, "samples": s["samples"],
            "memory": s.get("memory"),
            "load": (lm.runnable, lm.loadavg), "seconds": seconds}


# ------------------------------------------------------ 5: stop -> written

def bench_stop(cfg, work):
    seconds = cfg["stop_seconds"]
    wl = start_hot(NCPU, seconds + 120)
    out = os.path.join(work, "stop")
    try:
        with LoadMonitor() as lm:
            proc = spawn_waited([SPARKPROF, "record", "-a", "-F", "9999", "-o", out],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            wait_line(proc, r"recording into")
            drain(proc.stderr)
            time.sleep(seconds)
            t = time.monotonic()
            proc.send_signal(signal.SIGINT)
            rc, cpu, maxrss = finish_waited(proc, timeout=300)
            stop_s = time.monotonic() - t
    finally:
        stop_procs(wl)
    s = read_summary(out)
    size = sum(os.path.getsize(p) for p in glob.glob(os.path.join(out, "*")))
    shutil.rmtree(out, ignore_errors=True)
    log(f"stop: {s['samples']} samples, SIGINT -> exit {stop_s:.2f} s, load {lm.text()}")
    return {"samples": s["samples"], "stop_s": stop_s, "maxrss_kib": maxrss, "cpu_s": cpu,
            "bytes": size, "load": (lm.runnable, lm.loadavg)}


# ------------------------------------------------------------ 6: Spark job

SPARK_CONFIGS = ["none", "sparkprof", "async-profiler", "both"]
# sparkprof's JVM options without its recording, to split its cost:
# -XX:+PreserveFramePointer alone, then with the helper agent.
SPARK_SPLIT_CONFIGS = ["frame-pointers", "jvm-options"]


def proc_cpu_s(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK
    except (OSError, IndexError, ValueError):
        return None


def spark_env(work):
    from spark_cluster import private_spark_home
    env = dict(os.environ, JAVA_HOME=JDK17, SPARK_HOME=private_spark_home(work),
               PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_LOCAL_IP="127.0.0.1", SPARK_LOCAL_DIRS=os.path.join(work, "local"))
    env["PATH"] = os.path.join(JDK17, "bin") + ":" + env.get("PATH", "")
    return env


def spark_run(config, data, work, run_dir):
    from spark_cluster import executor_pids
    os.makedirs(run_dir, exist_ok=True)
    go, release = os.path.join(run_dir, "go"), os.path.join(run_dir, "release")
    ap_out = os.path.join(run_dir, "ap-%p.jfr")
    opts = []
    if config in ("sparkprof", "both", "jvm-options"):
        opts += [f"-agentpath:{HELPER}", "-XX:+PreserveFramePointer"]
    if config == "frame-pointers":
        opts.append("-XX:+PreserveFramePointer")
    if config in ("async-profiler", "both"):
        opts.append(f"-agentpath:{ASYNC_PROFILER}=start,event=cpu,interval=10ms,wall=10ms,"
                    f"jfr,file={ap_out}")
    errlog = open(os.path.join(run_dir, "driver.log"), "w")
    driver = subprocess.Popen([sys.executable, os.path.join(ROOT, "bench", "spark_queries.py"),
                               "run", data, "local-cluster[2,1,1024]", " ".join(opts), go,
                               release], stdout=subprocess.PIPE, stderr=errlog, text=True,
                              env=spark_env(work), cwd=run_dir, start_new_session=True)
    sp = poller = None
    r = {"config": config}
    try:
        app_id = json.loads(driver.stdout.readline())["ready"]
        execs = executor_pids(app_id)
        assert len(execs) == 2, execs
        if config in ("sparkprof", "both"):
            sp = spawn_waited([SPARKPROF, "record", "-a", "--wall", "-o",
                               os.path.join(run_dir, "sp")], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
            wait_line(sp, r"recording into")
            drain(sp.stderr)
            poller = BpfPoller(sp.pid)
        cpu0 = {e: proc_cpu_s(p) for e, p in execs.items()}
        with LoadMonitor() as lm:
            t0 = time.monotonic()
            open(go, "w").close()
            line = driver.stdout.readline()
            r["wall_s"] = time.monotonic() - t0
            res = json.loads(line)
            r["queries"] = res["queries"]
            if config in ("async-profiler", "both"):
                # the dump is part of async-profiler's cost: stop it (JFR
                # written) through the attach API before reading the CPU
                for p in execs.values():
                    subprocess.run([os.path.join(JDK17, "bin", "jcmd"), str(p),
                                    "JVMTI.agent_load", ASYNC_PROFILER,
                                    f"stop,file={ap_out.replace('%p', str(p))}"],
                                   capture_output=True, timeout=120)
            cpu1 = {e: proc_cpu_s(p) for e, p in execs.items()}
            r["executor_cpu_s"] = sum(cpu1[e] - cpu0[e] for e in execs)
            if sp:
                stats = bpf_prog_stats(sp.pid) or poller.stats
                poller.finish()
                r["bpf_s"] = sum(v[0] for v in stats.values()) / 1e9
                sp.send_signal(signal.SIGINT)
                rc, cpu, maxrss = finish_waited(sp, timeout=300)
                sp = None
                r["profiler_cpu_s"] = cpu
                r["profiler_maxrss_kib"] = maxrss
                summ = read_summary(os.path.join(run_dir, "sp"))
                r["sparkprof_samples"] = summ["samples"]
        r["load"] = (lm.runnable, lm.loadavg)
        r["total_cpu_s"] = (r["executor_cpu_s"] + r.get("profiler_cpu_s", 0) +
                            r.get("bpf_s", 0))
        open(release, "w").close()
        driver.wait(timeout=300)
        if config in ("async-profiler", "both"):
            r["ap_bytes"] = sum(os.path.getsize(f) for f in
                                glob.glob(os.path.join(run_dir, "ap-*.jfr")))
        return r
    finally:
        end_spark_run(sp, driver, errlog, locals().get("app_id"))


def end_spark_run(sp, driver, errlog, app_id):
    """Stops whatever of a Spark run is still alive (sparkprof, the driver,
    the executors of app_id)."""
    from spark_cluster import executor_pids
    if sp and sp.poll() is None:
        sp.kill()
        finish_waited(sp)
    if driver.poll() is None:
        os.killpg(driver.pid, signal.SIGKILL)
        driver.wait(timeout=60)
    errlog.close()
    if app_id:
        for p in executor_pids(app_id).values():
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass


def bench_spark(cfg, work):
    data = os.path.join(work, "tpch")
    log(f"generating TPC-H-like data ({cfg['spark_scale']}M lineitem rows)")
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "spark_queries.py"),
                    "generate", data, str(cfg["spark_scale"])], env=spark_env(work), cwd=work,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    runs = []
    configs = cfg.get("spark_configs", SPARK_CONFIGS)
    for rep in range(cfg["spark_reps"]):
        order = configs[rep % len(configs):] + configs[:rep % len(configs)]
        for config in order:
            run_dir = os.path.join(work, f"spark-{rep}-{config}")
            r = spark_run(config, data, work, run_dir)
            r["rep"] = rep
            log(f"spark {config}: {r['wall_s']:.1f} s, CPU {r['total_cpu_s']:.1f} s "
                f"(executors {r['executor_cpu_s']:.1f}, profiler "
                f"{r.get('profiler_cpu_s', 0):.2f}, BPF {r.get('bpf_s', 0):.2f}), "
                f"load {r['load'][0]:.1f} / {r['load'][1]:.1f}, async-profiler JFR "
                f"{r.get('ap_bytes', 0) / 1e6:.1f} MB")
            runs.append(r)
            shutil.rmtree(run_dir, ignore_errors=True)
    return runs


# ------------------------------------------------------------------ 7: soak

def file_stats(path):
    """(file name, path, os.stat) of each file under path; files renamed
    meanwhile (a JFR file closing) are left out."""
    for d, _, names in os.walk(path):
        for f in names:
            p = os.path.join(d, f)
            try:
                yield f, p, os.stat(p)
            except OSError:
                pass


def tree_bytes(path):
    """Bytes of the files under path."""
    return sum(st.st_size for _, _, st in file_stats(path))


def written_since(path, since, top=6):
    """What was written under path from since (a time.time()) on: bytes
    by kind of file (its name after the output's name) and the largest
    files, in MB."""
    kinds, files = {}, []
    for f, p, st in file_stats(path):
        if st.st_mtime < since:
            continue
        kind = "." + f.split(".", 1)[1] if "." in f else f
        kinds[kind] = kinds.get(kind, 0) + st.st_size
        files.append((os.path.relpath(p, path), st.st_size))
    files.sort(key=lambda kv: -kv[1])
    return {"by_kind_mb": {k: round(v / 1e6, 1) for k, v in
                           sorted(kinds.items(), key=lambda kv: -kv[1])},
            "files": len(files), "largest_mb": [(p, round(n / 1e6, 1)) for p, n in files[:top]]}


def start_stop_profile(pid, work):
    """sparkprof recording the recorder pid itself, --wall by thread, from
    just before its stop: where the stop's wall time goes (CPU or waiting,
    and on which thread)."""
    out = os.path.join(work, "stop-profile")
    proc, _ = start_wall_recording(out, ("-p", str(pid)), ("-t", "--no-html", "--no-jfr"))
    return proc, out


def finish_stop_profile(prof, top=15):
    """Per thread, wall time on and off CPU (ms); the heaviest stacks, their
    last frames only."""
    proc, out = prof
    finish_waited(proc, timeout=120)
    threads, stacks = {}, {}
    try:
        with open(os.path.join(out, "all.wall.folded")) as f:
            for line in f:
                frames, _, count = line.rstrip("\n").rpartition(" ")
                frames = frames.split(";")
                ms = int(count) * 10   # --wall's default unit: 10 ms
                thread = frames[1] if len(frames) > 1 else "?"
                threads[thread] = threads.get(thread, 0) + ms
                key = thread + ": " + ";".join(frames[-6:])
                stacks[key] = stacks.get(key, 0) + ms
    except OSError as e:
        return {"error": str(e)}
    return {"threads_ms": dict(sorted(threads.items(), key=lambda kv: -kv[1])),
            "top_ms": sorted(stacks.items(), key=lambda kv: -kv[1])[:top]}


def bench_soak(cfg, work):
    seconds, every = cfg["soak_seconds"], cfg["soak_every"]
    data = os.path.join(work, "tpch")
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "spark_queries.py"),
                    "generate", data, "1"], env=spark_env(work), cwd=work, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run_dir = os.path.join(work, "soak")
    os.makedirs(run_dir)
    go, release = os.path.join(run_dir, "go"), os.path.join(run_dir, "release")
    churn = start_churn(work, seconds + 120, cfg["helper_opts"], JDK_NEWEST)
    errlog = open(os.path.join(run_dir, "driver.log"), "w")
    driver = subprocess.Popen([sys.executable, os.path.join(ROOT, "bench", "spark_queries.py"),
                               "run", data, "local-cluster[2,1,1024]",
                               f"{helper_arg(cfg['helper_opts'])} -XX:+PreserveFramePointer",
                               go, release,
                               str(seconds)], stdout=subprocess.PIPE, stderr=errlog, text=True,
                              env=spark_env(work), cwd=run_dir, start_new_session=True)
    out = os.path.join(run_dir, "sp")
    series, sp, churn_died = [], None, None
    try:
        app_id = json.loads(driver.stdout.readline())["ready"]
        with LoadMonitor() as lm:
            sp, t0 = start_wall_recording(out, options=cfg.get("soak_options", ()),
                                          stderr_to=cfg.get("soak_log"))
            open(go, "w").close()
            while time.monotonic() - t0 < seconds:
                rss = vm_rss_kib(sp.pid)
                if rss is None:
                    break
                series.append((round(time.monotonic() - t0, 1), rss))
                log(f"soak {series[-1][0]:.0f} s: RSS {rss // 1024} MiB, outputs "
                    f"{tree_bytes(out) / 1e6:.0f} MB")
                # the JIT churn the figures assume is gone if CodeChurn died
                if churn_died is None and churn.poll() is not None:
                    churn_died = series[-1][0]
                    log(f"soak: CodeChurn exited ({churn.returncode}) by {churn_died:.0f} s")
                time.sleep(every)
            prof = start_stop_profile(sp.pid, work) if cfg.get("profile_stop") else None
            t, t_wall = time.monotonic(), time.time()
            sp.send_signal(signal.SIGINT)
            rc, cpu, maxrss = finish_waited(sp, timeout=600)
            stop_s = time.monotonic() - t
            sp = None
            stop_profile = finish_stop_profile(prof) if prof else None
        stop_wrote = written_since(out, t_wall)
        s = read_summary(out)
        logs = helper_logs(s)   # while the executors live: they remove their logs
        res = json.loads(driver.stdout.readline())
        open(release, "w").close()
        driver.wait(timeout=300)
        # a stage output is several files (folded, wall, pages, JFR)
        stages = len({(os.path.dirname(p), os.path.basename(p).split(".")[0]) for p in
                      glob.glob(os.path.join(out, "*", "exec-*", "stage-*"))})
        size = tree_bytes(out)
    finally:
        end_spark_run(sp, driver, errlog, locals().get("app_id"))
        churn.kill()
        churn.wait()
    churn_error = hs_err_reason(work) if churn_died is not None else None
    shutil.rmtree(run_dir, ignore_errors=True)
    log(f"soak: RSS {series[0][1] // 1024} -> {series[-1][1] // 1024} MiB over {seconds} s, "
        f"max {maxrss // 1024} MiB, {stages} stage outputs, {res.get('rounds')} rounds, "
        f"stop {stop_s:.1f} s, load {lm.text()}")
    return {"series": series, "maxrss_kib": maxrss, "cpu_s": cpu, "samples": s["samples"],
            "off_cpu_events": s.get("off_cpu", {}).get("events"), "lost": s.get("lost"),
            "ring_buffer": s.get("ring_buffer"), "options": list(cfg.get("soak_options", ())),
            "memory": s.get("memory"), "helper_logs": logs, "helper_opts": cfg["helper_opts"],
            "churn_died_s": churn_died, "stop_profile": stop_profile,
            "churn_jdk": os.path.basename(JDK_NEWEST), "churn_error": churn_error,
            "stop_s": stop_s, "stop_wrote": stop_wrote, "stage_outputs": stages, "bytes": size,
            "rounds": res.get("rounds"), "load": (lm.runnable, lm.loadavg), "seconds": seconds}


# --------------------------------------------------------------- report

def machine():
    cpu = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "kernel": platform.release(), "cpu": cpu, "ncpu": NCPU, "commit": commit}


def cond_name(cond):
    return "no extra load" if cond == "quiet" else f"+{HOGS} hogs"


def load_cell(loads):
    return (f"{spread([l[0] for l in loads])} / {spread([l[1] for l in loads])}")


def report(mode, m, res):
    L = [f"# sparkprof node cost ({mode} mode)", "",
         f"{m['date']}, sparkprof {m['commit']}, kernel {m['kernel']}, {m['ncpu']} × {m['cpu']}; "
         "a shared VM with other jobs on it. Load = mean runnable tasks during the measurement / "
         "1-minute load average at its end. Figures are median (min–max) over repetitions.", ""]
    samp = res.get("sampling")
    if samp:
        L += ["## 1. CPU per sample, sparkprof against `perf record -g` + `perf script`", "",
              f"One hot_functions per CPU, whole node (`-a`); under load {HOGS} more "
              "(2 busy threads each). sparkprof: its process's user+sys CPU (start-up and "
              "output writing included) / samples; BPF handler run time per run beside it. "
              "perf: `perf record -g -a` CPU + `perf script` CPU / samples. "
              "'steady' is the difference between this recording and a 2 s one made "
              "right after it, over the difference of their samples (start-up and "
              "writing cancel out; CPU in ticks). 'window' is the CPU of all its "
              "threads (schedstat, ns) from 3 s after start to the last poll before "
              "the stop, over the BPF program runs in between.",
              "",
              "| condition | Hz | sparkprof user+sys µs/sample | steady | window | BPF µs/run | "
              "perf record µs/sample | perf script µs/sample | perf total µs/sample | load |",
              "|---|---|---|---|---|---|---|---|---|---|"]
        for cond in ("quiet", "loaded"):
            for freq in sorted({p["freq"] for p in samp[cond]["perf"]}):
                sp = [r for r in samp[cond]["sparkprof"] if r["freq"] == freq]
                pf = [r for r in samp[cond]["perf"] if r["freq"] == freq]
                steady = [r["steady_us"] for r in sp if "steady_us" in r]
                L.append(f"| {cond_name(cond)} | {freq} | {spread([r['user_us'] for r in sp])} | "
                         f"{spread(steady)} | "
                         f"{spread([r.get('window_us') for r in sp], '{:.2f}')} | "
                         f"{spread([r['bpf_us'] for r in sp], '{:.2f}')} | "
                         f"{spread([r['record_us'] for r in pf])} | "
                         f"{spread([r['script_us'] for r in pf])} | "
                         f"{spread([r['user_us'] for r in pf])} | "
                         f"{load_cell([r['load'] for r in sp + pf])} |")
        L += ["", "## 2. Lossless rate: `record -a -F HZ`, lost (ring buffer full) / all samples",
              "samples / (duration × CPUs) is the rate that reached the ring buffer or was "
              "counted lost; duration is summary.json's (start-up included).", "",
              "| condition | Hz | samples | lost / total | lost % | samples+lost per CPU-second "
              "| sparkprof µs/sample | load |", "|---|---|---|---|---|---|---|---|"]
        for cond in ("quiet", "loaded"):
            for freq in sorted({r["freq"] for r in samp[cond]["sparkprof"]}):
                sp = [r for r in samp[cond]["sparkprof"] if r["freq"] == freq]
                L.append(f"| {cond_name(cond)} | {freq} | {spread([r['samples'] for r in sp], '{:.0f}')} | "
                         + ", ".join(f"{r['lost']:,}/{r['total']:,}" for r in sp) + " | "
                         f"{spread([100 * r['lost'] / max(r['total'], 1) for r in sp])} | "
                         f"{spread([r['total'] / r['duration_s'] / NCPU for r in sp], '{:.0f}')} | "
                         f"{spread([r['user_us'] for r in sp])} | "
                         f"{load_cell([r['load'] for r in sp])} |")
    st = res.get("startup")
    if st:
        L += ["", "## 3. Start to first sample", "",
              "From exec of `sparkprof record -a -F 999` (both CPUs busy): to its "
              "`recording into` line (printed once the sampler is attached), and to the "
              "earliest sample's timestamp in its JFR output.", "",
              "| runs | exec → sampler attached ms | exec → first sample ms | "
              "CPU of a 1 s recording s | load |", "|---|---|---|---|---|",
              f"| {len(st)} | {spread([r['attached_ms'] for r in st], '{:.0f}')} | "
              f"{spread([r['first_sample_ms'] for r in st], '{:.0f}')} | "
              f"{spread([r['cpu_s'] for r in st], '{:.2f}')} | "
              f"{load_cell([r['load'] for r in st])} |"]
    rs = res.get("rss")
    if rs:
        ser = rs["series"]
        half = [v for t, v in ser if t >= rs["seconds"] / 2]
        L += ["", "## 4. Memory of `record -a --wall` with a JVM under code churn", "",
              "tests/java/CodeChurn with the helper (classes defined, compiled, deoptimized "
              "and unloaded all the time, 8 MiB code cache); VmRSS of sparkprof sampled "
              f"every {rs['series'][1][0] - rs['series'][0][0] if len(ser) > 1 else '?'} s.", "",
              "| duration | RSS first | RSS at half time | RSS at end | peak (ru_maxrss) | "
              "samples | CPU s | load |", "|---|---|---|---|---|---|---|---|",
              f"| {rs['seconds']} s | {ser[0][1] / 1024:.0f} MiB | "
              f"{(half[0] if half else ser[-1][1]) / 1024:.0f} MiB | {ser[-1][1] / 1024:.0f} MiB | "
              f"{rs['maxrss_kib'] / 1024:.0f} MiB | {rs['samples']:,} | {rs['cpu_s']:.1f} | "
              f"{rs['load'][0]:.1f} / {rs['load'][1]:.1f} |", "",
              "RSS series (s: MiB): " + ", ".join(f"{t:.0f}: {v / 1024:.0f}" for t, v in ser)]
    sto = res.get("stop")
    if sto:
        L += ["", "## 5. Stop → all outputs written", "",
              "| samples | SIGINT → exit s | outputs MB | peak RSS | CPU s | load |",
              "|---|---|---|---|---|---|",
              f"| {sto['samples']:,} | {sto['stop_s']:.2f} | {sto['bytes'] / 1e6:.1f} | "
              f"{sto['maxrss_kib'] / 1024:.0f} MiB | {sto['cpu_s']:.1f} | "
              f"{sto['load'][0]:.1f} / {sto['load'][1]:.1f} |"]
    sparks = res.get("spark")
    if sparks:
        base = [r for r in sparks if r["config"] == "none"]
        bw, bc = med([r["wall_s"] for r in base]), med([r["total_cpu_s"] for r in base])
        L += ["", "## 6. Spark job: pyspark local-cluster[2,1,1024], TPC-H-like Q1, Q3, Q6, Q12",
              "", "Data made in Spark (lineitem, orders, customer as parquet). sparkprof: "
              "`record -a --wall` (99 Hz + 10 ms wall, whole node) with the helper and "
              "-XX:+PreserveFramePointer on the executors; async-profiler 4.2: "
              "`event=cpu,interval=10ms,wall=10ms,jfr` as -agentpath on the executors, stopped "
              "(JFR written) before the CPU is read. CPU = executors' utime+stime from go to "
              "the job's end + sparkprof's process CPU + its BPF programs' run time "
              "(async-profiler's own CPU is inside the executors'). frame-pointers and "
              "jvm-options, when run: sparkprof's JVM options without its recording "
              "(-XX:+PreserveFramePointer; and the helper).", "",
              "| profiler | runs | job wall s | vs none | executors CPU s | profiler CPU s | "
              "BPF s | total CPU s | vs none | load |", "|---|---|---|---|---|---|---|---|---|---|"]
        for config in SPARK_CONFIGS + SPARK_SPLIT_CONFIGS:
            rr = [r for r in sparks if r["config"] == config]
            if not rr:
                continue
            w, c = med([r["wall_s"] for r in rr]), med([r["total_cpu_s"] for r in rr])
            L.append(f"| {config} | {len(rr)} | {spread([r['wall_s'] for r in rr])} | "
                     f"{100 * (w / bw - 1):+.0f}% | "
                     f"{spread([r['executor_cpu_s'] for r in rr])} | "
                     f"{spread([r.get('profiler_cpu_s') for r in rr], '{:.2f}')} | "
                     f"{spread([r.get('bpf_s') for r in rr], '{:.2f}')} | "
                     f"{spread([r['total_cpu_s'] for r in rr])} | {100 * (c / bc - 1):+.0f}% | "
                     f"{load_cell([r['load'] for r in rr])} |")
    so = res.get("soak")
    if so:
        ser = so["series"]
        L += ["", "## 7. Memory over a long run: `record -a --wall` beside a Spark application",
              "", "pyspark local-cluster[2,1,1024] running part 6's queries again and again "
              "(with the helper), and CodeChurn (part 4) beside it on "
              f"{so.get('churn_jdk', 'JDK 17')}; VmRSS of sparkprof every "
              f"{so['series'][1][0] - so['series'][0][0] if len(ser) > 1 else '?'} s; "
              "stop = SIGINT to exit.", "",
              "| duration | query rounds | stage outputs | RSS first | at 1/4 | at 1/2 | at 3/4 "
              "| at end | peak | samples | outputs MB | stop s | CPU s | load |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        at = [next((v for t, v in ser if t >= so["seconds"] * q), ser[-1][1])
              for q in (0.25, 0.5, 0.75)]
        L.append(f"| {so['seconds']} s | {so['rounds']} | {so['stage_outputs']} | "
                 f"{ser[0][1] / 1024:.0f} MiB | " + " | ".join(f"{v / 1024:.0f} MiB" for v in at)
                 + f" | {ser[-1][1] / 1024:.0f} MiB | {so['maxrss_kib'] / 1024:.0f} MiB | "
                 f"{so['samples']:,} | {so['bytes'] / 1e6:.0f} | {so['stop_s']:.1f} | "
                 f"{so['cpu_s']:.0f} | {so['load'][0]:.1f} / {so['load'][1]:.1f} |")
        L += ["", "RSS series (s: MiB): " + ", ".join(f"{t:.0f}: {v / 1024:.0f}"
                                                       for t, v in ser)]
        if so.get("lost") is not None:
            ring = so.get("ring_buffer") or {}
            peak = ring.get("peak_fill_bytes")
            L += ["", f"Recorder options beyond `-a --wall`: `{' '.join(so.get('options') or []) or 'none'}`. "
                  f"Off-CPU intervals: {so.get('off_cpu_events') or 0:,}. Lost: "
                  + ", ".join(f"{k} {v:,}" for k, v in so["lost"].items())
                  + f". Ring buffer {ring.get('bytes', 0) / 2**20:.0f} MiB, fullest when the "
                  "drain woke: " + (f"{peak / 1024:.0f} KiB" if peak is not None else "unknown")
                  + "."]
        mem = so.get("memory")
        if mem:
            stage_files = ("stages_written_while_recording",
                           "stages_rewritten_after_late_samples",
                           "stages_left_to_the_stop_by_a_failure", "stage_files_write_ms",
                           "node_and_executor_jfr_write_ms")
            counts = ("rss_kib", "symbol_files", "symbol_files_dropped", "store_segments",
                      "store_file_bytes", "store_samples_lost", "segment_close_ms",
                      "longest_segment_close_ms") + stage_files
            L += ["", "What the memory held when sampling stopped (summary.json `memory`, "
                  "heap MB): " + ", ".join(f"{k} {v / 1e6:.1f}" for k, v in mem.items()
                                           if k not in counts)
                  + (f"; ELF files held {mem['symbol_files']}, dropped "
                     f"{mem['symbol_files_dropped']}" if "symbol_files" in mem else "")
                  + f"; RSS {mem['rss_kib'] / 1024:.0f} MiB; sample store: "
                  f"{mem.get('store_segments', 0)} segments, "
                  f"{mem.get('store_file_bytes', 0) / 1e6:.0f} MB, closing them took "
                  f"{mem.get('segment_close_ms', 0) / 1000:.1f} s (the longest "
                  f"{mem.get('longest_segment_close_ms', 0) / 1000:.1f} s), "
                  f"{mem.get('store_samples_lost', 0):,} samples lost."]
            if "stages_written_while_recording" in mem:
                L[-1] += (f" Stages' files written while recording: "
                          f"{mem['stages_written_while_recording']:,} "
                          f"({mem.get('stages_rewritten_after_late_samples', 0):,} again after "
                          f"late samples, {mem.get('stages_left_to_the_stop_by_a_failure', 0):,} "
                          f"left to the stop by a failure), in "
                          f"{mem.get('stage_files_write_ms', 0) / 1000:.1f} s")
                if "node_and_executor_jfr_write_ms" in mem:
                    L[-1] += (f"; the node's and executors' JFR files as segments closed: "
                              f"{mem['node_and_executor_jfr_write_ms'] / 1000:.1f} s")
                L[-1] += "."
        if so.get("helper_logs"):
            L += ["", "Helper logs (helper options: "
                  f"`{so.get('helper_opts') or 'defaults'}`): the newest file left in /tmp, "
                  "and what the recording read, following the log into new files:", "",
                  "| JVM | file left MB | lines read | new files followed | restated lines "
                  "skipped | malformed | J records left in the file | methods read back "
                  "(unreadable) | read-back frames dropped again | ranges kept | JIT records "
                  "MB (names) |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
            for h in so["helper_logs"]:
                who = f"executor {h['executor']}" if h.get("executor") else f"pid {h['pid']}"
                size = f"{h['file_bytes'] / 1e6:.1f}" if h.get("file_bytes") else "-"
                L.append(f"| {who} | {size} | {h['lines']:,} | {h['new_files']} | "
                         f"{h['restated_lines_skipped']:,} | {h['malformed_lines']} | "
                         f"{h.get('inline_deferred', 0):,} | {h.get('inline_loads', 0):,} "
                         f"({h.get('inline_unreadable', 0):,}) | "
                         f"{h.get('inline_trimmed', '-')} | {h['inline_ranges']:,} | "
                         f"{(h.get('jit_bytes') or 0) / 1e6:.1f} "
                         f"({(h.get('jit_name_bytes') or 0) / 1e6:.1f}) |")
        sw = so.get("stop_wrote")
        if sw:
            L += ["", f"What the stop wrote (files changed after SIGINT): {sw['files']} files, "
                  f"{sum(sw['by_kind_mb'].values()):.0f} MB; by kind "
                  + ", ".join(f"`{k}` {mb}" for k, mb in sw["by_kind_mb"].items())
                  + "; largest " + ", ".join(f"`{p}` {mb}" for p, mb in sw["largest_mb"])]
        sprof = so.get("stop_profile")
        if sprof and "threads_ms" in sprof:
            L += ["", "Where the stop's wall time went (`sparkprof record -p PID --wall -t` on "
                  "the recorder from just before SIGINT; ms, on and off CPU): by thread "
                  + ", ".join(f"{t} {ms}" for t, ms in sprof["threads_ms"].items())
                  + "; heaviest stacks (last 6 frames):", ""]
            L += [f"- {ms} ms `{k}`" for k, ms in sprof["top_ms"]]
        if so.get("churn_died_s") is not None:
            L += ["", f"**CodeChurn exited early, by {so['churn_died_s']:.0f} s**: the run "
                  "after that had no JIT churn beside Spark."
                  + (f" Its JVM's fatal error file: {so['churn_error']}"
                     if so.get("churn_error") else "")]
    return "\n".join(L) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--full", action="store_true", help="the long version (about an hour)")
    ap.add_argument("--only", default="sampling,startup,rss,stop,spark",
                    help="comma-separated parts: sampling,startup,rss,stop,spark,soak")
    ap.add_argument("--soak-seconds", type=int, help="length of the soak part (default 3600)")
    ap.add_argument("--soak-options", default="",
                    help="more recorder options in the soak, e.g. '--ring-buffer 8'")
    ap.add_argument("--soak-log", metavar="FILE",
                    help="soak: copy the recorder's standard error (with -v in "
                         "--soak-options, its memory every minute) to FILE")
    ap.add_argument("--spark-reps", type=int,
                    help="repetitions of each Spark configuration (default 2, --full 5)")
    ap.add_argument("--spark-configs", default=",".join(SPARK_CONFIGS),
                    help="Spark part's configurations, of " +
                         ",".join(SPARK_CONFIGS + SPARK_SPLIT_CONFIGS))
    ap.add_argument("--helper-opts", default="",
                    help="the JVM helper's options in the soak, e.g. log_max=2")
    ap.add_argument("--profile-stop", action="store_true",
                    help="soak: profile the recorder's stop with a second sparkprof")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--report", metavar="JSON", help="only print the report of a saved run")
    args = ap.parse_args()
    if args.report:
        with open(args.report) as f:
            saved = json.load(f)
        print(report(saved["mode"], saved["machine"], saved["results"]))
        return
    if os.geteuid() != 0:
        sys.exit("bench/node_cost.py: run as root")
    for need in (SPARKPROF, HOT, HELPER):
        if not os.path.exists(need):
            sys.exit(f"bench/node_cost.py: {need} is missing (make all test-progs)")
    parts = args.only.split(",")
    if "sampling" in parts and not shutil.which("perf"):
        sys.exit("bench/node_cost.py: perf is missing (make deps)")
    if "spark" in parts and not os.path.exists(ASYNC_PROFILER):
        sys.exit(f"bench/node_cost.py: {ASYNC_PROFILER} is missing (make deps)")
    cfg, mode = (FULL, "full") if args.full else (QUICK, "quick")
    if args.soak_seconds:
        cfg = dict(cfg, soak_seconds=args.soak_seconds)
    if args.soak_options:
        cfg = dict(cfg, soak_options=args.soak_options.split())
    if args.soak_log:
        cfg = dict(cfg, soak_log=os.path.abspath(args.soak_log))
    cfg = dict(cfg, helper_opts=args.helper_opts, profile_stop=args.profile_stop)
    if args.spark_reps:
        cfg = dict(cfg, spark_reps=args.spark_reps)
    spark_configs = args.spark_configs.split(",")
    if "none" not in spark_configs or \
            not set(spark_configs) <= set(SPARK_CONFIGS + SPARK_SPLIT_CONFIGS):
        sys.exit(f"bench/node_cost.py: --spark-configs: 'none' and some of "
                 f"{','.join(SPARK_CONFIGS + SPARK_SPLIT_CONFIGS)}")
    cfg = dict(cfg, spark_configs=spark_configs)
    with open("/proc/sys/kernel/bpf_stats_enabled") as f:
        stats_before = f.read().strip()
    subprocess.run(["sysctl", "-q", "kernel.bpf_stats_enabled=1"], check=True)
    work = tempfile.mkdtemp(prefix="sparkprof-node-cost-")
    res = {}
    m = machine()
    try:
        for part, fn in (("sampling", bench_sampling), ("startup", bench_startup),
                         ("rss", bench_rss), ("stop", bench_stop), ("spark", bench_spark),
                         ("soak", bench_soak)):
            if part in parts:
                log(f"--- {part}")
                res[part] = fn(cfg, work)
    finally:
        subprocess.run(["sysctl", "-q", f"kernel.bpf_stats_enabled={stats_before}"])
        shutil.rmtree(work, ignore_errors=True)
    text = report(mode, m, res)
    print(text)
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, "node_cost-" + time.strftime("%Y%m%d-%H%M"))
    with open(stem + ".md", "w") as f:
        f.write(text)
    with open(stem + ".json", "w") as f:
        json.dump({"mode": mode, "machine": m, "config": cfg, "results": res}, f, indent=1)
    log(f"wrote {stem}.md and .json")


if __name__ == "__main__":
    main()

"""Helpers for the JFR writer's integration tests.

Builds tests/jfr/jfr_gen.c (a tool that writes a JFR file with sparkprof's
writer from a text description), describes recordings in Python, runs the
readers (the JDK's `jfr`, async-profiler's converter) and computes what each
reader must show for a recording, from the same description:

- `jdk_view(sample)`: the event as `jfr print --json` shows it;
- `expected_collapsed(samples, ...)`: the converter's collapsed stacks.

The name mapping mirrors docs/jfr.md: Java frames split at the last '.'
before any '(' into class and method; native/C++/kernel frames carry a
pseudo-class (native, libjvm.so, kernel) that the converter leaves out;
invalid UTF-8 becomes U+FFFD; an empty method name becomes "[unknown]".
"""
import collections
import gzip
import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from typing import List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# enum frame_type (user/frame.h)
NATIVE, CPP, KERNEL, JIT, INLINED, INTERPRETED = range(6)
JAVA_TYPES = (JIT, INLINED, INTERPRETED)
# enum sp_thread_state (include/sparkprof_events.h)
RUNNING, PREEMPTED, SLEEPING, UNINTERRUPTIBLE, OTHER = range(5)

MAX_FRAMES = 4096                       # JFR_MAX_FRAMES in user/jfr_writer.h
JDK_FRAME_TYPE = {NATIVE: "Native", CPP: "C++", KERNEL: "Kernel", JIT: "JIT compiled",
                  INLINED: "Inlined", INTERPRETED: "Interpreted"}
PSEUDO_CLASS = {NATIVE: "native", CPP: "libjvm.so", KERNEL: "kernel"}
WALL_STATE = {RUNNING: "STATE_RUNNABLE", PREEMPTED: "STATE_PREEMPTED",
              SLEEPING: "STATE_SLEEPING", UNINTERRUPTIBLE: "STATE_UNINTERRUPTIBLE",
              OTHER: "STATE_OTHER"}
# async-profiler's converter: frame type key -> collapsed suffix
CONVERTER_SUFFIX = {0: "_[0]", 1: "_[j]", 2: "_[i]", 3: "", 4: "", 5: "_[k]"}
JFR_KEY = {INTERPRETED: 0, JIT: 1, INLINED: 2, NATIVE: 3, CPP: 4, KERNEL: 5}


def as_bytes(s):
    if s is None or isinstance(s, bytes):
        return s
    return s.encode("utf-8")


@dataclass
class Sample:
    ts: int
    tid: int
    thread: Optional[bytes]
    frames: List[tuple]                 # (frame_type, name bytes), leaf first
    kind: str = "c"                     # "c" CPU, "w" wall
    state: int = RUNNING
    weight: int = 1
    pid: int = 1


@dataclass
class Recording:
    samples: List[Sample] = field(default_factory=list)
    labels: List[tuple] = field(default_factory=list)   # (key, value)
    start_mono: int = 1_000_000_000
    start_real: int = 1_767_225_600_000_000_000          # 2026-01-01T00:00:00Z
    cpu_interval: int = 10_101_010
    wall_interval: int = 0
    gzip: bool = False
    chunk_bytes: int = 0
    idle_after: List[int] = field(default_factory=list)  # sample indexes

    def realtime(self, ts):
        return self.start_real + ts - self.start_mono


def _hex(s):
    if s is None:
        return "-"
    s = as_bytes(s)
    return s.hex() if s else "="


def description(rec: Recording) -> str:
    out = [f"start {rec.start_mono} {rec.start_real} {rec.cpu_interval} {rec.wall_interval}",
           f"gzip {int(rec.gzip)}", f"chunk_bytes {rec.chunk_bytes}"]
    for k, v in rec.labels:
        out.append(f"label {_hex(k)} {_hex(v)}")
    idle = set(rec.idle_after)
    for i, s in enumerate(rec.samples):
        frames = " ".join(f"{t} {_hex(n)}" for t, n in s.frames)
        out.append(f"sample {s.kind} {s.ts} {s.tid} {s.pid} {s.state} {s.weight} "
                   f"{_hex(s.thread)} {len(s.frames)} {frames}".rstrip())
        if i in idle:
            out.append("idle")
    return "\n".join(out) + "\n"


def build_gen(build_dir):
    """Compiles jfr_gen against build/libsparkprof.a (rebuilt when stale)."""
    src = os.path.join(HERE, "jfr_gen.c")
    lib = os.path.join(build_dir, "libsparkprof.a")
    out = os.path.join(build_dir, "jfr", "jfr_gen")
    assert os.path.exists(lib), "run `make unit-tests` first: build/libsparkprof.a is missing"
    if (not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(src)
            or os.path.getmtime(out) < os.path.getmtime(lib)):
        os.makedirs(os.path.dirname(out), exist_ok=True)
        subprocess.run(["gcc", "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror",
                        "-D_GNU_SOURCE", "-I" + os.path.join(ROOT, "include"),
                        "-I" + os.path.join(ROOT, "user"), "-o", out, src, lib, "-lz"],
                       check=True)
    return out


def write(gen, rec: Recording, path):
    """Writes rec to path with jfr_gen; returns its stats as a dict."""
    proc = subprocess.run([gen, path], input=description(rec).encode(),
                          capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    words = proc.stdout.decode().split()
    return {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}


# ---------------------------------------------------------------- mapping


def text(b):
    """What every reader shows for name bytes: UTF-8 with U+FFFD repairs."""
    return (b or b"").decode("utf-8", "replace")


def split_java(name: bytes):
    end = name.find(b"(")
    end = len(name) if end < 0 else end
    dot = name.rfind(b".", 0, end)
    if dot >= 1 and dot + 1 < len(name) and name[dot + 1:dot + 2] != b"(":
        return name[:dot], name[dot + 1:]
    return None, name


def method_of(frame):
    """(class, method, descriptor) of a frame as written into the file."""
    ftype, name = frame
    name = as_bytes(name) or b""
    if ftype in JAVA_TYPES:
        cls, method = split_java(name)
        cls = text(cls) if cls is not None else "unknown"
        desc = "()L;"
    else:
        cls, method = PSEUDO_CLASS[ftype], name
        desc = "(Lk;)L;" if ftype == KERNEL else "()L;"
    return cls, text(method) or "[unknown]", desc


def kept_frames(s: Sample):
    return s.frames[:MAX_FRAMES]


def jdk_view(s: Sample):
    """The sample as `jfr print --json` shows it (a hashable tuple)."""
    frames = tuple((method_of(f)[0], method_of(f)[1], JDK_FRAME_TYPE[f[0]])
                   for f in kept_frames(s))
    if s.kind == "c":
        return ("jdk.ExecutionSample", s.tid, text(s.thread), "STATE_DEFAULT", None,
                len(s.frames) > MAX_FRAMES, frames)
    return ("profiler.WallClockSample", s.tid, text(s.thread), WALL_STATE[s.state], s.weight,
            len(s.frames) > MAX_FRAMES, frames)


def jdk_views_from_json(doc):
    """Sample events of `jfr print --json` output as jdk_view tuples."""
    views = []
    for ev in doc["recording"]["events"]:
        if ev["type"] not in ("jdk.ExecutionSample", "profiler.WallClockSample"):
            continue
        v = ev["values"]
        st = v["stackTrace"]
        frames = tuple((f["method"]["type"]["name"], f["method"]["name"], f["type"])
                       for f in st["frames"])
        th = v["sampledThread"] if ev["type"] == "jdk.ExecutionSample" else v["eventThread"]
        views.append((ev["type"], th["osThreadId"], th["osName"], v["state"],
                      v.get("samples"), st["truncated"], frames))
    return views


JMC_FRAME_TYPE = {NATIVE: "NATIVE", CPP: "CPP", KERNEL: "KERNEL", JIT: "JIT_COMPILED",
                  INLINED: "INLINED", INTERPRETED: "INTERPRETED"}


def jmc_view(s: Sample):
    """The sample as JMC's parser shows it (tests/jfr/JmcRead.java)."""
    frames = "|".join(method_of(f)[0].replace("/", ".") + "." + method_of(f)[1] + ":"
                      + JMC_FRAME_TYPE[f[0]] for f in kept_frames(s))
    kind = "jdk.ExecutionSample" if s.kind == "c" else "profiler.WallClockSample"
    return (kind, text(s.thread), frames)


def build_jmc_reader(build_dir, classpath):
    out = os.path.join(build_dir, "jfr", "jmc")
    src = os.path.join(HERE, "JmcRead.java")
    cls = os.path.join(out, "JmcRead.class")
    if not os.path.exists(cls) or os.path.getmtime(cls) < os.path.getmtime(src):
        os.makedirs(out, exist_ok=True)
        run(["javac", "-d", out, "-cp", classpath, src])
    return out + ":" + classpath


def jmc_read(classpath, path):
    """(Counter of jmc_view tuples, {event type: count}) as JMC loads path."""
    out = run(["java", "-cp", classpath, "JmcRead", path])
    views, counts = collections.Counter(), {}
    for line in out.split("\n"):
        if line.startswith("count "):
            _, kind, n = line.rsplit(" ", 2)
            counts[kind] = int(n)
        elif line:
            kind, thread, frames = line.split("\t")
            if kind in ("jdk.ExecutionSample", "profiler.WallClockSample"):
                views[(kind, thread, frames)] += 1
    return views, counts


def converter_title(frame):
    ftype, _ = frame
    cls, method, _ = method_of(frame)
    if ftype in JAVA_TYPES:
        return cls + "." + method
    return method


def expected_collapsed(samples, mode=None, threads=False):
    """The converter's `-o collapsed` output for these samples, as a Counter
    of lines.  mode: None (all), "cpu" or "wall".  Mirrors its flame graph:
    Java frames with one title at one position share a node whose suffix is
    decided by the share of inlined/interpreted samples there."""
    root = {}

    def node(children, title, key):
        return children.setdefault((title, key), {"kids": {}, "total": 0, "self": 0,
                                                  "inl": 0, "c1": 0, "int": 0})
    for s in samples:
        if mode == "cpu" and s.kind != "c":
            continue
        if mode == "wall" and s.kind != "w":
            continue
        frames = kept_frames(s)
        if not frames and not threads:
            continue                    # an empty stack has no line of its own
        path = []
        if threads:
            path.append((f"[{text(s.thread)} tid={s.tid}]", None))
        for f in reversed(frames):
            path.append((converter_title(f), JFR_KEY[f[0]]))
        kids, n = root, None
        for title, key in path:
            merged = 1 if key in (0, 1, 2) else key
            n = node(kids, title, merged)
            n["total"] += s.weight
            if key == 2:
                n["inl"] += s.weight
            elif key == 0:
                n["int"] += s.weight
            kids = n["kids"]
        n["self"] += s.weight

    lines = collections.Counter()

    todo = [(root, [])]                 # iterative: stacks are thousands deep
    while todo:
        kids, prefix = todo.pop()
        for (title, key), n in kids.items():
            if key is None:
                suffix = ""
            elif key != 1:
                suffix = CONVERTER_SUFFIX[key]
            elif n["inl"] * 3 >= n["total"]:
                suffix = "_[i]"
            elif n["c1"] * 2 >= n["total"]:
                suffix = "_[1]"
            elif n["int"] * 2 >= n["total"]:
                suffix = "_[0]"
            else:
                suffix = "_[j]"
            here = prefix + [title + suffix]
            if n["self"]:
                lines[";".join(here)] += n["self"]
            todo.append((n["kids"], here))
    return lines


# ---------------------------------------------------------------- readers


def run(cmd, timeout=600):
    proc = subprocess.run(cmd, capture_output=True, timeout=timeout)
    assert proc.returncode == 0, (f"{' '.join(cmd)} failed ({proc.returncode}):\n"
                                  + proc.stderr.decode(errors="replace")[-3000:]
                                  + proc.stdout.decode(errors="replace")[-2000:])
    return proc.stdout.decode("utf-8")


def jfr_summary(jfr, path):
    """`jfr summary`: (chunk count, {event type: count})."""
    out = run([jfr, "summary", path])
    chunks = int(re.search(r"Chunks:\s+(\d+)", out).group(1))
    counts = {}
    for line in out.splitlines():
        m = re.match(r"\s+([\w.]+)\s+(\d+)\s+(\d+)\s*$", line)
        if m:
            counts[m.group(1)] = int(m.group(2))
    return chunks, counts


def jfr_json(jfr, path, events=None, stack_depth=MAX_FRAMES + 10):
    cmd = [jfr, "print", "--json", "--stack-depth", str(stack_depth)]
    if events:
        cmd += ["--events", events]
    return json.loads(run(cmd + [path]))


def converter_collapsed(jar, path, *flags):
    out = path + ".collapsed.txt"
    run(["java", "-jar", jar, "-o", "collapsed", *flags, path, out])
    lines = collections.Counter()
    with open(out, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                stack, count = line.rsplit(" ", 1)
                lines[stack] += int(count)
    os.unlink(out)
    return lines


def iso_to_ns(s):
    """'2026-01-01T00:00:00.123456789Z' -> ns since the epoch."""
    import calendar
    import time
    # Java's Instant.toString leaves out zero seconds and fractions.
    m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d)(?::(\d\d))?(?:\.(\d+))?Z$", s)
    assert m, s
    secs = calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M")) + int(m.group(2) or 0)
    frac = (m.group(3) or "").ljust(9, "0")[:9]
    return secs * 1_000_000_000 + int(frac)


def gunzip(path, out):
    with gzip.open(path, "rb") as f, open(out, "wb") as o:
        o.write(f.read())

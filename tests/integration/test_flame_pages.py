"""The HTML pages in a real headless Chromium (Playwright, browser.py):
flame graphs (`sparkprof flame`, and those `record` writes beside every
folded file), differential graphs (`sparkprof diff`) and the run index
(index.html, `sparkprof report`).

Each page is checked for script errors, for something drawn, for search
(a known function's share), zoom, the diff's colours and the index's links
to every flame graph that exists. The page's test hook
(window.sparkprofFlame) reports what it drew without reading pixels; one
check reads the canvas pixels too.
"""
import glob
import os
import re
import subprocess

import pytest

import spark_sim
from browser import chromium_page, file_url, script_errors
from testlib import PROGS, SPARKPROF, read_folded, read_summary, record, remove_helper_files

# 1,000 samples: Hot.compute 70%, Cold.io 20% (with a kernel leaf), the JVM's
# own threads 8%, native 2%. async-profiler's collapsed format (type suffixes).
KNOWN = """\
java-1;java/lang/Thread.run_[j];org/apache/spark/executor/Executor$TaskRunner.run_[i];com/example/Hot.compute_[j] 700
java-1;java/lang/Thread.run_[j];org/apache/spark/executor/Executor$TaskRunner.run_[i];com/example/Cold.io_[0];__GI___libc_read;do_syscall_64_[k] 200
java-1;JavaThread::run;VMThread::loop 80
java-1;start_thread;memcpy 20
"""


@pytest.fixture(scope="module")
def page():
    with chromium_page() as p:
        yield p


def flame(tmp_path, text, name="p.folded", *args):
    src = tmp_path / name
    src.write_text(text)
    out = tmp_path / (name.replace(".folded", "") + ".html")
    subprocess.run([SPARKPROF, "flame", str(src), "-o", str(out), *args], check=True,
                   capture_output=True, text=True, timeout=120)
    return out


def drawn(page):
    return page.evaluate("sparkprofFlame.drawn()")


def by_name(frames, name):
    return [f for f in frames if f["name"] == name]


def open_clean(page, path):
    page.goto(file_url(path))
    assert script_errors(page) == [], f"script errors in {path}"


def test_flame_page_draws_searches_and_zooms(tmp_path, page):
    path = flame(tmp_path, KNOWN)
    html = path.read_text()
    # self-contained: nothing fetched from anywhere
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", html), "the page loads something"
    assert "http://" not in html and "https://" not in html
    open_clean(page, path)

    frames = drawn(page)
    names = {f["name"] for f in frames}
    assert {"com/example/Hot.compute", "com/example/Cold.io", "do_syscall_64",
            "VMThread::loop", "memcpy"} <= names, names
    # pixels: the canvas is not blank
    painted = page.evaluate("""(() => { const c = document.getElementById('canvas');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 0; i < d.length; i += 4) if (d[i] < 250 || d[i+1] < 250 || d[i+2] < 250) n++;
        return n; })()""")
    assert painted > 1000, painted
    # the title names the mode and the file
    assert page.evaluate("document.title") == "CPU: p.folded"

    # frame types from async-profiler's suffixes and from names
    types = {f["name"]: f["type"] for f in frames}
    assert types["com/example/Hot.compute"] == "JIT"
    assert types["org/apache/spark/executor/Executor$TaskRunner.run"] == "inlined"
    assert types["com/example/Cold.io"] == "interpreted"
    assert types["do_syscall_64"] == "kernel"
    assert types["VMThread::loop"] == "C++ (JVM)"
    assert types["memcpy"] == "native"
    legend = page.evaluate("document.getElementById('legend').textContent")
    for label in ("JIT", "inlined", "interpreted", "kernel", "C++ (JVM)", "native"):
        assert label in legend, legend

    # tooltip: samples, percent, self
    tip = page.evaluate("sparkprofFlame.tip('com/example/Hot.compute')")
    assert "700 samples (70.00%)" in tip and "self: 700 samples" in tip, tip
    tip = page.evaluate("sparkprofFlame.tip('java/lang/Thread.run')")
    assert "900 samples (90.00%)" in tip and "self: 0 samples" in tip, tip

    # search: a known function's share
    assert page.evaluate("sparkprofFlame.search('Hot\\\\.compute')") == pytest.approx(70.0)
    assert page.evaluate("sparkprofFlame.matchedText()") == "Matched: 70.00%"
    hot = by_name(drawn(page), "com/example/Hot.compute")[0]
    assert hot["colour"] == "#e040fb", "a match is highlighted"
    assert page.evaluate("sparkprofFlame.search('example/(Hot|Cold)')") == pytest.approx(90.0)
    assert page.evaluate("sparkprofFlame.search('')") == 0

    # zoom: into Cold.io, Hot.compute leaves the picture and Cold.io fills it
    width = page.evaluate("document.getElementById('canvas').clientWidth")
    before = by_name(drawn(page), "com/example/Cold.io")[0]
    assert before["width"] == pytest.approx(width * 0.2, rel=0.02)
    assert page.evaluate("sparkprofFlame.zoom('com/example/Cold.io')")
    after = drawn(page)
    assert not by_name(after, "com/example/Hot.compute")
    assert by_name(after, "com/example/Cold.io")[0]["width"] == pytest.approx(width, rel=0.01)
    assert by_name(after, "do_syscall_64")[0]["width"] == pytest.approx(width, rel=0.01)
    page.evaluate("sparkprofFlame.reset()")
    assert by_name(drawn(page), "com/example/Hot.compute")
    # a real click on Cold.io zooms too
    top = page.evaluate("document.getElementById('canvas').getBoundingClientRect().top")
    cold = by_name(drawn(page), "com/example/Cold.io")[0]
    page.mouse.click(cold["x"] + 5, top + cold["y"] + 8)
    assert not by_name(drawn(page), "com/example/Hot.compute")
    page.evaluate("sparkprofFlame.reset()")

    # reversed: the hot leaves at the bottom, their callers above
    assert page.evaluate("sparkprofFlame.toggleReversed()")
    rev = drawn(page)
    leaves = {f["name"] for f in rev if f["depth"] == 1}
    assert {"com/example/Hot.compute", "do_syscall_64", "VMThread::loop", "memcpy"} == leaves
    callers = [f for f in rev if f["name"] == "__GI___libc_read" and f["depth"] == 2]
    assert callers, "do_syscall_64's caller is above it"
    assert not page.evaluate("sparkprofFlame.toggleReversed()")

    # icicle: the same frames, root at the top
    page.evaluate("document.getElementById('invert').click()")
    root = by_name(drawn(page), "all")[0]
    assert script_errors(page) == []
    assert root is not None
    assert script_errors(page) == []


def test_flame_page_of_perf_collapsed_output(tmp_path, page):
    # stackcollapse-perf.pl / `perf script | stackcollapse`: no Java suffixes,
    # kernel frames with _[k] (--kernel), [unknown] frames, dotted Java names
    text = ("java;[unknown];java.util.HashMap.get;do_page_fault_[k] 30\n"
            "java;start_thread;Interpreter 10\n"
            "perf-4321;[unknown];[unknown] 5\n")
    path = flame(tmp_path, text, "perf.folded")
    open_clean(page, path)
    frames = drawn(page)
    types = {f["name"]: f["type"] for f in frames}
    assert types["java.util.HashMap.get"] == "Java"
    assert types["do_page_fault"] == "kernel"
    assert types["[unknown]"] == "native"
    assert page.evaluate("sparkprofFlame.search('HashMap')") == pytest.approx(100 * 30 / 45, abs=0.01)


def test_bad_folded_input_is_one_line_error(tmp_path):
    src = tmp_path / "bad.folded"
    src.write_text("a;b 10\nthis line has no count\n")
    r = subprocess.run([SPARKPROF, "flame", str(src), "-o", str(tmp_path / "bad.html")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert r.stderr.strip().count("\n") == 0, r.stderr
    assert "bad.folded" in r.stderr and "line 2" in r.stderr, r.stderr
    assert not (tmp_path / "bad.html").exists()


def test_pruning_keeps_a_big_profile_small(tmp_path, page):
    # 20,000 distinct stacks of 1 sample each under one hot path of 50%.
    lines = [f"main;spread;leaf{i} 1" for i in range(20000)] + ["main;hot;work 20000"]
    path = flame(tmp_path, "\n".join(lines) + "\n", "big.folded")
    assert path.stat().st_size < 40000, path.stat().st_size
    open_clean(page, path)
    frames = drawn(page)
    assert by_name(frames, "work")
    status = page.evaluate("document.getElementById('status').textContent")
    assert "narrower than 0.01% left out" in status, status
    # the pruned leaves are still counted in their parent
    assert "20,000 samples (50.00%)" in page.evaluate("sparkprofFlame.tip('spread')")


def diff_page(tmp_path, base, new, *args):
    b, n = tmp_path / "base.folded", tmp_path / "new.folded"
    b.write_text(base)
    n.write_text(new)
    out = tmp_path / "diff.html"
    subprocess.run([SPARKPROF, "diff", str(b), str(n), "-o", str(out), *args], check=True,
                   capture_output=True, text=True, timeout=120)
    return out


def rgb(colour):
    return tuple(int(x) for x in re.match(r"rgb\((\d+),(\d+),(\d+)\)", colour).groups())


def test_diff_colours_grown_red_and_shrunk_blue(tmp_path, page):
    # shares: grow 10% -> 40%, shrink 30% -> 10%, steady 60% -> 50%; the new
    # profile has twice the samples, so raw counts all grow but shares do not.
    base = "main;grow 100\nmain;shrink 300\nmain;steady 600\n"
    new = "main;grow 800\nmain;shrink 200\nmain;steady 1000\n"
    path = diff_page(tmp_path, base, new)
    open_clean(page, path)
    frames = drawn(page)
    grow, shrink = by_name(frames, "grow")[0], by_name(frames, "shrink")[0]
    r, g, b = rgb(grow["colour"])
    assert r == 255 and g < 200 and b < 200, grow
    r, g, b = rgb(shrink["colour"])
    assert b == 255 and r < 230 and g < 230, shrink
    steady = rgb(by_name(frames, "steady")[0]["colour"])
    assert steady[2] == 255 and steady[0] > rgb(shrink["colour"])[0], "steady shrank less"
    tip = page.evaluate("sparkprofFlame.tip('grow')")
    assert "base: 100 (10.00%)" in tip and "new: 800 (40.00%)" in tip, tip
    assert "+30.00 points" in tip, tip
    tip = page.evaluate("sparkprofFlame.tip('shrink')")
    assert "-20.00 points" in tip, tip
    assert "grew" in page.evaluate("document.getElementById('legend').textContent")

    # without normalising, every frame grew in raw counts except shrink
    path = diff_page(tmp_path, base, new, "--no-normalize")
    open_clean(page, path)
    frames = drawn(page)
    assert rgb(by_name(frames, "steady")[0]["colour"])[0] == 255
    assert rgb(by_name(frames, "shrink")[0]["colour"])[2] == 255


def test_diff_of_two_folders_stage_by_stage(tmp_path, page):
    for run, counts in (("a", (10, 30)), ("b", (30, 10))):
        d = tmp_path / run / "app-1" / "exec-1"
        d.mkdir(parents=True)
        (d / "stage-1.folded").write_text(f"main;x {counts[0]}\nmain;y {counts[1]}\n")
        (tmp_path / run / "all.folded").write_text("main;z 1\n")
    (tmp_path / "a" / "app-1" / "exec-1" / "stage-2.folded").write_text("main;q 1\n")
    out = tmp_path / "out"
    r = subprocess.run([SPARKPROF, "diff", str(tmp_path / "a"), str(tmp_path / "b"), "-o",
                        str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "only in" in r.stdout and "stage-2.folded" in r.stdout
    assert (out / "all.html").exists() and not (out / "app-1/exec-1/stage-2.html").exists()
    open_clean(page, out / "app-1" / "exec-1" / "stage-1.html")
    frames = drawn(page)
    assert rgb(by_name(frames, "x")[0]["colour"])[0] == 255
    assert rgb(by_name(frames, "y")[0]["colour"])[2] == 255


def index_links(page, out):
    open_clean(page, out / "index.html")
    hrefs = page.evaluate("[...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href'))")
    return {h for h in hrefs}


def html_pages(out):
    return {os.path.relpath(p, out) for p in glob.glob(str(out / "**" / "*.html"), recursive=True)
            if os.path.basename(p) != "index.html"}


def test_record_writes_pages_and_index_links_them(tmp_path, page):
    out = tmp_path / "run"
    record(out, "--wall", "--off-cpu", "-F", 499, "--", os.path.join(PROGS, "sleep_share"), 2,
           20, 20)
    folded = {os.path.relpath(p, out) for p in glob.glob(str(out / "**" / "*.folded"),
                                                          recursive=True)}
    assert {"all.folded", "all.wall.folded", "all.offcpu.folded"} <= folded
    pages = html_pages(out)
    assert pages == {f[:-len(".folded")] + ".html" for f in folded}
    assert index_links(page, out) >= pages
    run_text = page.evaluate("document.getElementById('run').textContent")
    assert "499 Hz" in run_text and "sleep_share" in run_text, run_text
    # the index names pages and counts the other files
    profiles = [p for p in glob.glob(str(out / "**" / "*"), recursive=True)
                if p.endswith((".folded", ".jfr", ".jfr.gz", ".pb.gz"))]
    assert len(profiles) > 3 and f"{len(profiles):,} profiles (.folded, .jfr)" in run_text, run_text

    open_clean(page, out / "all.wall.html")
    assert page.evaluate("document.title").startswith("Wall clock: the node")
    assert by_name(drawn(page), "sleep_phase"), "the sleeping phase is in the wall graph"
    tip = page.evaluate("sparkprofFlame.tip('all')")
    assert re.search(r"\d+\.\d+ s \(100\.00%\)", tip), tip  # time, not samples
    # split by thread state: the sleeping phase is asleep, the burning one on CPU
    assert page.evaluate("sparkprofFlame.toggleStates()")
    frames = drawn(page)
    states = {f["name"] for f in frames if f["depth"] == 1}
    assert {"[on CPU]", "[sleeping]"} <= states <= {"[on CPU]", "[preempted]", "[sleeping]",
                                                    "[uninterruptible]", "[other state]"}
    assert all(f["type"] == "thread state" for f in frames if f["depth"] == 1)
    # (a sample can catch it on CPU, entering or leaving its sleep)
    sleeping = [f for f in frames if f["name"] == "sleep_phase" and f["depth"] > 1]
    asleep = by_name(frames, "[sleeping]")[0]
    under = sum(f["width"] for f in sleeping if asleep["x"] <= f["x"] < asleep["x"] + asleep["width"])
    assert sleeping and under >= 0.95 * sum(f["width"] for f in sleeping), \
        ("sleep_phase is asleep", sleeping)
    burning = [f for f in frames if f["name"] == "burn_phase"]
    oncpu = by_name(frames, "[on CPU]")[0]
    assert any(oncpu["x"] <= f["x"] < oncpu["x"] + oncpu["width"] for f in burning)
    # the .wall.folded file keeps its format: no state frames
    assert not any("[sleeping]" in st for st in read_folded(out / "all.wall.folded"))
    open_clean(page, out / "all.offcpu.html")
    assert page.evaluate("document.title").startswith("Off-CPU")

    # --no-html writes none; `report` writes them all again
    out2 = tmp_path / "nohtml"
    record(out2, "--off-cpu", "-F", 199, "--no-html", "--",
           os.path.join(PROGS, "sleep_share"), 1, 20, 20)
    assert not html_pages(out2) and not (out2 / "index.html").exists()
    r = subprocess.run([SPARKPROF, "report", str(out2)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert html_pages(out2) == {"all.html", "all.offcpu.html"}
    assert index_links(page, out2) >= html_pages(out2)


@pytest.fixture(scope="module")
def sim_run(tmp_path_factory, build_dir, agent_path, jdks):
    tmp = tmp_path_factory.mktemp("sim")
    classpath = spark_sim.compile_sim(build_dir)
    truth_path = tmp / "truth.json"
    cmd = spark_sim.sim_command(classpath, truth_path,
                                java=os.path.join(jdks[17], "bin", "java"),
                                jvm_args=[f"-agentpath:{agent_path}", "-XX:+PreserveFramePointer"],
                                scale=0.5)
    out = tmp / "run"
    record(out, "-F", "199", "--off-cpu", "--", *cmd, timeout=600)
    truth = spark_sim.load_truth(truth_path)
    remove_helper_files([truth["pid"]])
    return out, truth


def test_index_of_a_spark_run(sim_run, page):
    out, truth = sim_run
    exec_dir = out / spark_sim.APP_ID / "exec-1"
    stage_pages = {os.path.basename(p) for p in glob.glob(str(exec_dir / "stage-*.html"))}
    assert len([p for p in stage_pages if not p.endswith((".offcpu.html", ".wall.html"))]) >= 8
    links = index_links(page, out)
    assert links >= html_pages(out), html_pages(out) - links

    summary = read_summary(out)
    stages = [s for e in summary["executors"] for s in e["stages"] if s["samples"]]
    assert all(0 <= s["first_s"] <= s["last_s"] <= summary["duration_s"] + 1 for s in stages)
    # the timeline: one bar per stage that ran, in time order of the truth
    bars = page.evaluate("""[...document.querySelectorAll('rect.stage-bar')].map(r =>
        ({stage: r.dataset.stage, x: +r.getAttribute('x'), w: +r.getAttribute('width')}))""")
    assert len(bars) == len([s for e in summary["executors"] for s in e["stages"]
                             if "first_s" in s])
    bar = {b["stage"]: b for b in bars}
    # each stage's bar starts when its first task started (truth), to 0.5 s
    first = {}
    for t in truth["tasks"]:
        if t["stage_attempt"] == 0:
            first[t["stage"]] = min(first.get(t["stage"], t["start_ns"]), t["start_ns"])
    seen = {s["stage"]: s["first_s"] for s in stages if s.get("attempt", 0) == 0}
    common = [s for s in first if s in seen and f"stage {s}" in bar]
    assert len(common) >= 6, (first, seen, bar)
    t0, s0 = min(first[s] for s in common), min(seen[s] for s in common)
    for s in common:
        assert abs((first[s] - t0) / 1e9 - (seen[s] - s0)) < 0.5, (s, first, seen)
    by_time = sorted(common, key=lambda s: seen[s])
    xs = [bar[f"stage {s}"]["x"] for s in by_time]
    assert xs == sorted(xs), (by_time, xs)
    text = page.evaluate("document.getElementById('run').textContent")
    assert "Executor 1 of " + spark_sim.APP_ID in text
    assert "thread-name" in text  # attribution method per stage

    open_clean(page, exec_dir / "stage-3.html")
    assert page.evaluate("document.title") == f"CPU: {spark_sim.APP_ID}, executor 1, stage 3"
    assert page.evaluate("sparkprofFlame.search('Stage3Work')") > 50
    # Java frames keep the types the recording saw
    types = {f["type"] for f in drawn(page) if "Stage3Work" in f["name"]}
    assert types & {"JIT", "inlined", "interpreted"}, types


def test_deep_and_empty_profiles_open(tmp_path, page):
    # 8,000 frames deep (the parser takes 8,192): drawn without recursion
    # limits, the first 2,000 levels on the canvas
    deep = ";".join(f"f{i}" for i in range(8000)) + " 5\na;b 5\n"
    open_clean(page, flame(tmp_path, deep, "deep.folded"))
    assert len(drawn(page)) == 2002
    assert "only the first 2000 levels" in page.evaluate(
        "document.getElementById('status').textContent")
    assert page.evaluate("sparkprofFlame.toggleReversed()")
    assert script_errors(page) == []
    open_clean(page, flame(tmp_path, "", "empty.folded"))
    assert drawn(page) == []


def test_report_on_a_folder_with_a_fifo_for_summary_json_ends(tmp_path):
    """A summary.json that is a FIFO (anyone can plant one in /tmp) must not
    leave `report` waiting for a writer."""
    (tmp_path / "all.folded").write_text("main;work 3\n")
    os.mkfifo(tmp_path / "summary.json")
    r = subprocess.run([SPARKPROF, "report", str(tmp_path)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, r.stderr
    assert (tmp_path / "all.html").exists()

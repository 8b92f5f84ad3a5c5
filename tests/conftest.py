"""Shared pytest fixtures for sparkprof's test suite.

Tests run as root on a real kernel. `make test` builds everything before
pytest starts; these fixtures only locate what was built.
"""
import glob
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")


def jdk_homes():
    """Every JDK on the machine with a javac, newest last: {major: home}."""
    homes = {}
    for home in sorted(glob.glob("/usr/lib/jvm/*")):
        if os.path.islink(home) or not os.path.exists(os.path.join(home, "bin", "javac")):
            continue
        try:
            out = subprocess.run([os.path.join(home, "bin", "java"), "-version"],
                                 capture_output=True, text=True, timeout=60).stderr
        except (OSError, subprocess.TimeoutExpired):
            continue
        first = out.split('"')[1] if '"' in out else ""
        major = int(first.split(".")[0]) if first.split(".")[0].isdigit() else 0
        if major:
            homes.setdefault(major, home)
    return dict(sorted(homes.items()))


@pytest.fixture(scope="session")
def root_dir():
    return ROOT


@pytest.fixture(scope="session")
def build_dir():
    return BUILD


@pytest.fixture(scope="session")
def sparkprof_bin():
    path = os.path.join(ROOT, "sparkprof")
    assert os.access(path, os.X_OK), "run `make` first: ./sparkprof is missing"
    return path


@pytest.fixture(scope="session")
def agent_path():
    path = os.path.join(BUILD, "libsparkprof-agent.so")
    assert os.path.exists(path), "run `make` first: the JVMTI helper is missing"
    return path


@pytest.fixture(scope="session")
def progs_dir():
    return os.path.join(BUILD, "progs")


@pytest.fixture(scope="session")
def jdks():
    homes = jdk_homes()
    assert 17 in homes, "JDK 17 is required"
    return homes


@pytest.fixture(scope="session")
def newest_jdk(jdks):
    return jdks[max(jdks)]


@pytest.fixture(autouse=True, scope="session")
def must_be_root():
    if os.geteuid() != 0:
        pytest.exit("the test suite profiles a real kernel: run it as root", returncode=2)


HELPER_FILES = ("/tmp/sparkprof-*.log", "/tmp/perf-*.map")


def helper_files():
    return {p for pattern in HELPER_FILES for p in glob.glob(pattern)}


@pytest.fixture(autouse=True)
def no_helper_files_left(request):
    """Removes the helper logs and perf maps of JVMs a test started that are
    gone (a test that kills its JVM leaves them): pids wrap at 32768 here,
    and a later JVM with the same pid must not find them."""
    before = helper_files()
    yield
    for path in helper_files() - before:
        pid = os.path.basename(path).split("-", 1)[1].split(".", 1)[0]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass


@pytest.fixture(scope="session")
def jfr_converter():
    """async-profiler's JFR converter jar (tools/install-deps.sh fetches it)."""
    jars = sorted(glob.glob("/var/cache/sparkprof-deps/jfr-converter-*.jar"))
    assert jars, "run `make deps`: async-profiler's jfr-converter jar is missing"
    return jars[-1]


@pytest.fixture(scope="session")
def jfr_tools(jdks, newest_jdk):
    """The JDK's `jfr` tool of JDK 17 and of the newest JDK: {label: path}."""
    tools = {"jdk17": os.path.join(jdks[17], "bin", "jfr"),
             f"jdk{max(jdks)}": os.path.join(newest_jdk, "bin", "jfr")}
    for path in tools.values():
        assert os.access(path, os.X_OK), f"{path} is missing"
    return tools


@pytest.fixture(scope="session")
def jmc_classpath():
    """JDK Mission Control's parser jars (tools/install-deps.sh fetches them)."""
    jars = sorted(glob.glob("/var/cache/sparkprof-deps/jmc-*/*.jar"))
    assert any(j.endswith("flightrecorder.jar") for j in jars), \
        "run `make deps`: JMC's flightrecorder jar is missing"
    return ":".join(jars)


@pytest.fixture
def busy_cpus():
    """A native spinner (build/progs/hot_functions) per CPU for the test's
    length, as on a node doing other work; yields their pids."""
    from testlib import start_prog, wait_gone
    progs = [start_prog("hot_functions", 300) for _ in range(os.cpu_count() or 1)]
    yield [pid for _, pid in progs]
    for proc, _ in progs:
        proc.kill()
        wait_gone(proc)

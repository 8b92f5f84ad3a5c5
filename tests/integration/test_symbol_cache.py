"""The symbol cache shares one ELF table between files only when they name
code alike: two programs built with the same --build-id, exec'd one after
the other at the same pid, keep their own names.  It drops the tables of
programs gone past its budget, and their frames keep their names."""
import shutil
import subprocess

from big_symbols import many_symbols_program
from testlib import read_folded, read_summary, record

PROG = r"""
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* CPU time, not wall time: on a busy node the program still gets the
 * samples the test needs, it just takes longer. */
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) double BURN(double cpu_seconds)
{
	volatile double x = 0;
	double end = now() + cpu_seconds;
	while (now() < end)
		for (int i = 0; i < 10000; i++)
			x += i * 0.5;
	return x;
}

int main(int argc, char **argv)
{
	BURN(atof(argv[1]));
	if (argc > 2)
		execv(argv[2], argv + 2);
	return 0;
}
"""
BUILD_ID = "0x0123456789abcdef0123456789abcdef01234567"


def test_same_build_id_at_the_same_pid_keeps_each_programs_names(tmp_path):
    src = tmp_path / "burn.c"
    src.write_text(PROG)
    for name in ("burn_alpha", "burn_gamma"):  # same length: same file size
        subprocess.run(["gcc", "-O1", "-fno-omit-frame-pointer", f"-DBURN={name}",
                        f"-Wl,--build-id={BUILD_ID}", "-o", str(tmp_path / name), str(src)],
                       check=True)
    alpha, gamma = (tmp_path / "burn_alpha").read_bytes(), (tmp_path / "burn_gamma").read_bytes()
    assert len(alpha) == len(gamma) and alpha != gamma
    record(tmp_path / "out", "--", tmp_path / "burn_alpha", "1.5", tmp_path / "burn_gamma", "1.5")
    by_program = {}
    for stack, count in read_folded(tmp_path / "out" / "all.folded").items():
        frames = stack.split(";")
        program = frames[0].rsplit("-", 1)[0]
        for f in frames[1:]:
            if f.startswith("burn_"):
                by_program.setdefault(program, {}).setdefault(f, 0)
                by_program[program][f] += count
    assert set(by_program) == {"burn_alpha", "burn_gamma"}, by_program
    for program, frames in by_program.items():
        assert set(frames) == {program}, f"{program}'s samples are named {frames}"
        assert frames[program] > 50, by_program


def test_tables_of_programs_gone_are_dropped_and_their_names_stay(tmp_path):
    """Sixteen programs of 60,000 symbols each (a table of about 1.4 MB
    apiece, no build-id: none shared) run one after the other. The cache
    keeps 8 MiB of tables no process uses, so the recorder drops the first
    ones' while it runs; the names their samples got must still read right
    when the stop writes them."""
    count = 16
    many_symbols_program(str(tmp_path), "bigsyms-0", 60000)
    for i in range(1, count):  # copies: without a build-id, each file is its own table
        shutil.copy(tmp_path / "bigsyms-0", tmp_path / f"bigsyms-{i}")
    loop = " && ".join(f"{tmp_path}/bigsyms-{i} 0.4" for i in range(count))
    record(tmp_path / "out", "-F", "499", "--", "sh", "-c", loop)

    memory = read_summary(tmp_path / "out")["memory"]
    assert memory["symbol_files_dropped"] >= 3, memory
    named = {}
    for stack, n in read_folded(tmp_path / "out" / "all.folded").items():
        frames = stack.split(";")
        if frames[0].startswith("bigsyms-") and "spin_until" in frames:
            program = frames[0].rsplit("-", 1)[0]
            named[program] = named.get(program, 0) + n
    assert sorted(named) == sorted(f"bigsyms-{i}" for i in range(count)), named
    assert min(named.values()) > 50, named

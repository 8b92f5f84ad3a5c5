/* test_kallsyms.c - kernel symbol table: synthetic files and the real one,
 * and the real one with its names in a spill file. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "base/spill_file.h"
#include "symbols/kallsyms.h"
#include "tap.h"

static struct kallsyms *parse_str(const char *s)
{
	return kallsyms_parse(s, strlen(s));
}

static void test_synthetic(void)
{
	const char *text =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000000 t __alias_local\n"
		"ffffffff81000000 T first_func\n"
		"ffffffff81000100 T second_func\n"
		"ffffffff81000180 t local_func\n"
		"ffffffff81000200 D some_data\n"
		"ffffffff81000300 W weak_func\n"
		"ffffffff81000400 T _etext\n"
		"garbage line\n"
		"ffffffff8100zzzz T bad_hex\n"
		"ffffffff81000500 T\n"
		"ffffffffc0001000 t mod_func\t[mymod]\n"
		"ffffffffc0001040 T mod_func2\t[mymod]\n"
		"ffffffffc0002000 d mod_data\t[mymod]";
	struct kallsyms *ks = parse_str(text);

	CHECK(ks != NULL, "synthetic kallsyms parses");
	if (!ks)
		return;
	CHECK(kallsyms_count(ks) == 6, "6 text symbols kept (got %zu)", kallsyms_count(ks));
	CHECK_STR(kallsyms_lookup(ks, 0xffffffff81000000), "first_func",
		  "aliases at one address: the global, un-underscored name wins");
	CHECK_STR(kallsyms_lookup(ks, 0xffffffff810000ff), "first_func", "last byte of first_func");
	CHECK_STR(kallsyms_lookup(ks, 0xffffffff81000100), "second_func", "second_func start");
	CHECK_STR(kallsyms_lookup(ks, 0xffffffff81000190), "local_func", "local symbol kept");
	CHECK(kallsyms_lookup(ks, 0xffffffff81000200) == NULL,
	      "text symbol ends at the next data symbol");
	CHECK_STR(kallsyms_lookup(ks, 0xffffffff810003ff), "weak_func", "weak symbol kept");
	CHECK(kallsyms_lookup(ks, 0xffffffff81000400) == NULL, "_etext is a boundary, not a function");
	CHECK(kallsyms_lookup(ks, 0xffffffff80ffffff) == NULL, "before the first symbol");
	CHECK(kallsyms_lookup(ks, 0x400000) == NULL, "user address");
	CHECK_STR(kallsyms_lookup(ks, 0xffffffffc0001010), "mod_func", "module symbol");
	CHECK_STR(kallsyms_lookup(ks, 0xffffffffc0001fff), "mod_func2",
		  "module symbol ends at the module's data");
	CHECK(kallsyms_lookup(ks, 0xffffffffc0002000) == NULL, "module data is not text");
	kallsyms_free(ks);

	ks = parse_str("0000000000000000 T a\n0000000000000000 T b\n0000000000000000 t c [m]\n");
	CHECK(ks == NULL && errno == EACCES, "all-zero addresses: EACCES (kptr_restrict)");
	ks = parse_str("ffffffff81000000 D only_data\n");
	CHECK(ks == NULL && errno == ENOENT, "no text symbol: ENOENT");
	ks = kallsyms_parse(NULL, 0);
	CHECK(ks == NULL, "empty input: NULL");

	/* The last symbol gets one page, not the rest of the address space. */
	ks = parse_str("ffffffffc0201000 t ftrace_trampoline\t[__builtin__ftrace]\n");
	CHECK(ks && kallsyms_lookup(ks, 0xffffffffc0201fff) != NULL &&
	      kallsyms_lookup(ks, 0xffffffffc0301000) == NULL, "last symbol is one page long");
	kallsyms_free(ks);
}

/* Finds NAME's address in the raw file text. */
static uint64_t raw_address(const char *name)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], type, sym[256];
	unsigned long long addr;
	uint64_t found = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 &&
		    strcmp(sym, name) == 0 && (type == 'T' || type == 't')) {
			found = addr;
			break;
		}
	if (f)
		fclose(f);
	return found;
}

static void test_real(void)
{
	struct kallsyms *ks = kallsyms_load("/proc/kallsyms");
	uint64_t sched = raw_address("schedule"), poll = raw_address("do_sys_poll");

	CHECK(ks != NULL, "/proc/kallsyms loads as root");
	if (!ks)
		return;
	CHECK(kallsyms_count(ks) > 10000, "many kernel text symbols (%zu)", kallsyms_count(ks));
	CHECK(sched != 0 && poll != 0, "schedule and do_sys_poll found in the raw file");
	CHECK_STR(kallsyms_lookup(ks, sched), "schedule", "schedule's address");
	CHECK_STR(kallsyms_lookup(ks, sched + 1), "schedule", "schedule + 1");
	CHECK_STR(kallsyms_lookup(ks, poll + 16), "do_sys_poll", "do_sys_poll + 16");
	CHECK(kallsyms_lookup(ks, 0) == NULL, "address 0 is not kernel text");
	CHECK(kallsyms_lookup(ks, (uint64_t)(uintptr_t)&test_real) == NULL,
	      "a user-space address is not kernel text");
	kallsyms_free(ks);
}

/* A padding symbol and its function share one stored name, and each is
 * still named as the kernel names it; a padding symbol that is not
 * followed by its function keeps a name of its own. */
static void test_padding_names_shared(void)
{
	const char *text =
		"ffffffff81000000 T __pfx_alpha\n"
		"ffffffff81000010 T alpha\n"
		"ffffffff81000100 t __pfx_beta\n"
		"ffffffff81000110 t beta\n"
		"ffffffff81000200 T __pfx_gamma\n"
		"ffffffff81000210 T delta\n"
		"ffffffff81000300 T __pfx_\n"
		"ffffffff81000310 T x\n"
		"ffffffff81000400 T _etext\n";
	const char *unshared =
		"ffffffff81000000 T __pfx_alpha\n"
		"ffffffff81000010 T alpha_\n"
		"ffffffff81000100 t __pfx_beta\n"
		"ffffffff81000110 t beta_\n"
		"ffffffff81000200 T __pfx_gamma\n"
		"ffffffff81000210 T delta\n"
		"ffffffff81000300 T __pfx_\n"
		"ffffffff81000310 T x\n"
		"ffffffff81000400 T _etext\n";
	struct kallsyms *ks = parse_str(text), *ks2 = parse_str(unshared);

	CHECK(ks && ks2, "padding symbols parse");
	if (ks && ks2) {
		CHECK_STR(kallsyms_lookup(ks, 0xffffffff81000008), "__pfx_alpha", "in alpha's padding");
		CHECK_STR(kallsyms_lookup(ks, 0xffffffff81000010), "alpha", "alpha");
		CHECK_STR(kallsyms_lookup(ks, 0xffffffff81000104), "__pfx_beta", "in beta's padding");
		CHECK_STR(kallsyms_lookup(ks, 0xffffffff810000ff), "alpha", "alpha's end");
		CHECK_STR(kallsyms_lookup(ks, 0xffffffff81000120), "beta", "beta");
		CHECK_STR(kallsyms_lookup(ks, 0xffffffff81000200), "__pfx_gamma", "a padding not followed by its function");
		CHECK_STR(kallsyms_lookup(ks, 0xffffffff81000210), "delta", "the function after it");
		CHECK_STR(kallsyms_lookup(ks, 0xffffffff81000300), "__pfx_", "a bare prefix");
		CHECK_STR(kallsyms_lookup(ks, 0xffffffff81000310), "x", "the function after it");
		/* alpha and beta cost no name bytes of their own, where alpha_
		 * and beta_ take theirs with their NULs. */
		CHECK(kallsyms_memory(ks2) - kallsyms_memory(ks) == 7 + 6,
		      "shared names save their bytes (%zu against %zu)", kallsyms_memory(ks),
		      kallsyms_memory(ks2));
	}
	kallsyms_free(ks);
	kallsyms_free(ks2);
}

/* On a kernel with padding symbols, the real table stores about half the
 * names: every function's name is named right, and its padding's too. */
static void test_real_padding(void)
{
	struct kallsyms *ks = kallsyms_load("/proc/kallsyms");
	uint64_t sched = raw_address("schedule"), pfx = raw_address("__pfx_schedule");

	if (!ks || !pfx) {
		CHECK(ks != NULL, "/proc/kallsyms loads (no padding symbols on this kernel)");
		kallsyms_free(ks);
		return;
	}
	CHECK_STR(kallsyms_lookup(ks, pfx), "__pfx_schedule", "schedule's padding");
	CHECK_STR(kallsyms_lookup(ks, sched), "schedule", "schedule, stored in its padding's name");
	CHECK_STR(kallsyms_lookup(ks, sched - 1), "__pfx_schedule", "the byte before schedule");
	kallsyms_free(ks);
}

/* The background loader finishes on its own (nothing joins it first), and
 * says so without blocking: the recorder polls it rather than wait. */
static void test_background(void)
{
	struct kallsyms_loader *l = kallsyms_load_start("/proc/kallsyms");
	struct kallsyms *ks;
	int polls = 0;

	CHECK(kallsyms_load_done(NULL), "no loader: nothing to wait for");
	CHECK(l != NULL, "the loader starts");
	if (!l)
		return;
	while (!kallsyms_load_done(l) && polls++ < 60000)
		usleep(1000);
	CHECK(kallsyms_load_done(l), "done within a minute of polling (%d polls)", polls);
	ks = kallsyms_load_wait(l);
	CHECK(ks && kallsyms_count(ks) > 10000, "wait returns the loaded table");
	kallsyms_free(ks);
	CHECK(kallsyms_load_start("/nonexistent/kallsyms") == NULL && errno == ENOENT,
	      "a missing file is said at start (ENOENT)");
}

/* An unprivileged reader may see only zeros (kptr_restrict, perf_event_paranoid):
 * then loading must fail with EACCES instead of naming frames wrongly. */
static void test_unprivileged(void)
{
	int pipefd[2];
	pid_t pid;
	int status;
	char result[64] = "";

	if (geteuid() != 0 || pipe(pipefd) != 0)
		return;
	pid = fork();
	if (pid == 0) {
		char first[32] = "";
		FILE *f;
		struct kallsyms *ks;
		int zeros, failed_eacces;

		close(pipefd[0]);
		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(2);
		f = fopen("/proc/kallsyms", "r");
		if (!f || !fgets(first, sizeof(first), f))
			_exit(3);
		fclose(f);
		zeros = strncmp(first, "0000000000000000", 16) == 0;
		ks = kallsyms_load("/proc/kallsyms");
		failed_eacces = !ks && errno == EACCES;
		dprintf(pipefd[1], "%d %d %d\n", zeros, failed_eacces, ks != NULL);
		_exit(0);
	}
	close(pipefd[1]);
	ssize_t n = read(pipefd[0], result, sizeof(result) - 1);
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	int zeros = -1, eacces = -1, loaded = -1;
	CHECK(n > 0 && sscanf(result, "%d %d %d", &zeros, &eacces, &loaded) == 3,
	      "unprivileged child read /proc/kallsyms");
	if (zeros == 1)
		CHECK(eacces == 1, "hidden addresses (as user nobody): load fails with EACCES");
	else
		CHECK(loaded == 1, "visible addresses (as user nobody): load works");
}

/* The real table with its names moved to a spill file names every text
 * symbol /proc/kallsyms lists as the table in memory does, each name read
 * back once (the same pointer after), and holds a megabyte less. */
static void test_names_in_spill_file(void)
{
	char dir[] = "/tmp/sparkprof-test-ksyms-XXXXXX";
	struct kallsyms *kept = kallsyms_load("/proc/kallsyms");
	struct kallsyms *moved = kallsyms_load("/proc/kallsyms");
	struct spill_file *spill = mkdtemp(dir) ? spill_file_new(dir, "kernel symbol names") : NULL;
	FILE *f = fopen("/proc/kallsyms", "r");
	size_t before, compared = 0, differ = 0;
	char line[1024];

	if (!kept || !moved || !spill || !f) {
		CHECK(0, "load /proc/kallsyms twice and make a spill file in %s", dir);
		goto out;
	}
	before = kallsyms_memory(moved);
	CHECK(kallsyms_move_names(moved, spill) == 0, "the names moved to the spill file");
	CHECK(kallsyms_memory(moved) < before - (1u << 20), "memory %zu -> %zu KiB", before >> 10,
	      kallsyms_memory(moved) >> 10);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type;

		if (sscanf(line, "%llx %c", &addr, &type) != 2 || !strchr("tTwW", type))
			continue;
		const char *a = kallsyms_lookup(kept, addr), *b = kallsyms_lookup(moved, addr);

		compared++;
		if (!a != !b || (a && (strcmp(a, b) || kallsyms_lookup(moved, addr) != b)))
			differ++;
	}
	CHECK(compared > 10000 && differ == 0, "%zu text symbols named alike, %zu differ", compared,
	      differ);
out:
	if (f)
		fclose(f);
	kallsyms_free(kept);
	kallsyms_free(moved);
	spill_file_free(spill);
	rmdir(dir);
}

int main(void)
{
	test_synthetic();
	test_real();
	test_padding_names_shared();
	test_real_padding();
	test_background();
	test_unprivileged();
	test_names_in_spill_file();
	TAP_DONE();
}

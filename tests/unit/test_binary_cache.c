/* test_binary_cache.c - binaries held and let go: copies of one program
 * share a table, unused binaries are kept within the budget and dropped
 * oldest first past it, a dropped table's names stay readable, and the
 * cache's index still finds every binary after hundreds of drops. */
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "shell_tools.h"
#include "symbols/binary_cache.h"
#include "tap.h"

#define TARGET "build/progs/symbols_target"
#define OTHER "build/progs/hot_functions"
#define COPIES 300

static char tmpdir[] = "/tmp/sparkprof-bcache-XXXXXX";

/* A mapping of file as /proc/PID/maps would show it, at an address no
 * mapping of ours has: the cache opens it through our root. */
static struct proc_map mapping_of(const char *file, char *path, size_t cap)
{
	struct proc_map m = { .start = 0x10000, .end = 0x20000, .kind = PROC_MAP_FILE };
	struct stat st;

	snprintf(path, cap, "%s", file);
	if (stat(file, &st) == 0) {
		m.inode = st.st_ino;
		m.dev_major = major(st.st_dev);
		m.dev_minor = minor(st.st_dev);
	}
	strcpy(m.perms, "r-xp");
	m.path = path;
	return m;
}

static const struct binary *get_copy(struct binary_cache *bc, int i)
{
	char file[300], path[300];
	struct proc_map m;

	snprintf(file, sizeof(file), "%s/copy-%d", tmpdir, i);
	m = mapping_of(file, path, sizeof(path));
	return binary_cache_get(bc, getpid(), &m);
}

static const char *alpha_name(const struct binary *b, uint64_t alpha)
{
	return b && b->symbols ? elf_symbols_lookup(b->symbols, alpha + 1, NULL) : NULL;
}

int main(void)
{
	struct binary_cache *bc = binary_cache_new();
	const struct binary *held[COPIES], *again;
	struct binary_cache_stats st, before;
	uint64_t alpha = nm_symbol_value(TARGET, "symtarget_leaf_alpha", false);
	const char *name = NULL;
	char cmd[600];
	size_t same = 0, found = 0;

	int fd = open(TARGET, O_RDONLY);
	struct elf_symbols *alone = fd >= 0 ? elf_symbols_load_fd(fd, TARGET) : NULL;
	size_t table_bytes = elf_symbols_memory(alone);

	if (fd >= 0)
		close(fd);
	elf_symbols_free(alone);
	if (!bc || !mkdtemp(tmpdir) || !alpha || !table_bytes) {
		CHECK(0, "setup (nm finds symtarget_leaf_alpha in %s)", TARGET);
		TAP_DONE();
	}
	snprintf(cmd, sizeof(cmd), "for i in $(seq 0 %d); do cp %s %s/copy-$i; done",
		 COPIES - 1, TARGET, tmpdir);
	CHECK(run(cmd) == 0, "%d copies of the test program", COPIES);

	/* Copies share one table: one load, names the same pointers. */
	for (int i = 0; i < COPIES; i++) {
		held[i] = get_copy(bc, i);
		if (i == 0)
			name = alpha_name(held[0], alpha);
		same += held[i] && alpha_name(held[i], alpha) == name;
	}
	binary_cache_get_stats(bc, &st);
	CHECK_STR(name, "symtarget_leaf_alpha", "the first copy names its function");
	CHECK(st.loads == 1 && st.build_id_hits == COPIES - 1 && same == COPIES,
	      "%d copies: %zu load, %zu build-id hits, %zu name the function with one pointer",
	      COPIES, st.loads, st.build_id_hits, same);

	/* Held binaries are never dropped, whatever the budget. */
	binary_cache_keep_unused(bc, 0, 0);
	binary_cache_get_stats(bc, &st);
	CHECK(st.dropped == 0 && st.held == COPIES, "budget 0 while all are held: none dropped");

	/* Let go within the default budget: kept, and handed out again. */
	binary_cache_keep_unused(bc, 8u << 20, 512);
	for (int i = 0; i < COPIES; i++)
		binary_cache_put(bc, held[i]);
	binary_cache_get_stats(bc, &before);
	again = get_copy(bc, 7);
	binary_cache_get_stats(bc, &st);
	CHECK(before.dropped == 0 && again == held[7] && st.binaries == before.binaries,
	      "let go within the budget: kept, the same binary handed out again");
	binary_cache_put(bc, again);

	/* Ten kept: the oldest let go are dropped first (copies 0..289; 7 was
	 * let go again last).  The table stays: the kept still use it. */
	binary_cache_keep_unused(bc, SIZE_MAX, 10);
	binary_cache_get_stats(bc, &st);
	CHECK(st.dropped == COPIES - 10 && st.held == 10 && st.memory == before.memory,
	      "ten kept: %zu dropped, %zu held, table kept (%zu -> %zu bytes)", st.dropped,
	      st.held, before.memory, st.memory);
	before = st;
	for (int i = 0; i < COPIES; i++) {
		const struct binary *b = get_copy(bc, i);
		bool kept = i == 7 || i >= COPIES - 9;

		/* After 290 drops the index finds exactly the ten kept. */
		found += kept && b == held[i];
		held[i] = b;
	}
	binary_cache_get_stats(bc, &st);
	CHECK(found == 10 && st.binaries - before.binaries == COPIES - 10 && st.loads == 1,
	      "all again: the ten kept found (%zu), %zu made anew, from the kept table "
	      "(%zu loads)", found, st.binaries - before.binaries, st.loads);

	/* Budget 0: every binary let go is dropped, and with the last user
	 * the table; its names stay readable, and the same pointers come back
	 * when the file is loaded again. */
	binary_cache_keep_unused(bc, 0, 0);
	for (int i = 0; i < COPIES; i++)
		binary_cache_put(bc, held[i]);
	binary_cache_get_stats(bc, &st);
	CHECK(st.held == 0 && st.dropped == 2 * COPIES - 10, "budget 0: all %d dropped (%zu held)",
	      COPIES, st.held);
	CHECK(before.memory - st.memory == table_bytes, "the table is gone: %zu -> %zu bytes, "
	      "its %zu bytes (the names stay)", before.memory, st.memory, table_bytes);
	CHECK_STR(name, "symtarget_leaf_alpha", "a name it showed is still readable");
	again = get_copy(bc, 3);
	binary_cache_get_stats(bc, &st);
	CHECK(st.loads == 2 && alpha_name(again, alpha) == name,
	      "loaded again (%zu loads): the same name pointer", st.loads);
	binary_cache_put(bc, again);
	binary_cache_put(bc, NULL);

	/* The byte budget drops only binaries whose table no one holds: a
	 * copy let go whose table another copy holds stays (dropping it would
	 * free nothing, and finding it again would hash its file anew). */
	const struct binary *holder = get_copy(bc, 1), *sharer = get_copy(bc, 2), *other;
	char other_path[300];
	struct proc_map other_map = mapping_of(OTHER, other_path, sizeof(other_path));

	other = binary_cache_get(bc, getpid(), &other_map);
	CHECK(other && other->symbols && other->symbols != holder->symbols, "another program");
	binary_cache_keep_unused(bc, 0, 512);
	binary_cache_put(bc, sharer);
	binary_cache_put(bc, other);
	binary_cache_get_stats(bc, &st);
	CHECK(st.held == 2, "budget 0 bytes: the other program dropped, the copy whose table "
	      "another holds kept, though let go first (%zu held)", st.held);
	binary_cache_put(bc, holder);
	binary_cache_get_stats(bc, &st);
	CHECK(st.held == 0, "the holder let go: both dropped (%zu held)", st.held);

	/* A file that cannot be opened is a binary too, dropped the same way. */
	char path[300];
	struct proc_map gone = mapping_of("/nonexistent/libgone.so", path, sizeof(path));
	binary_cache_keep_unused(bc, 0, 0);
	again = binary_cache_get(bc, getpid(), &gone);
	CHECK(again && !again->symbols && !strcmp(again->basename, "libgone.so"),
	      "an unreadable file: a binary without symbols");
	binary_cache_put(bc, again);
	binary_cache_get_stats(bc, &st);
	CHECK(st.held == 0, "and dropped when let go");

	binary_cache_free(bc);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	run(cmd);
	TAP_DONE();
}

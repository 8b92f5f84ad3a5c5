/* test_perf_map.c - plain perf maps: the three writers' formats, overlaps,
 * malformed lines, and reading a real file through /proc/PID/root. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbols/perf_map.h"
#include "tap.h"

static const char *lookup(const struct perf_map *m, uint64_t addr, enum frame_type *type)
{
	struct frame f;
	if (!perf_map_lookup(m, addr, &f))
		return NULL;
	if (type)
		*type = f.type;
	return f.name;
}

int main(void)
{
	/* Ours / perf-map-agent (no 0x) and jcmd Compiler.perfmap (0x, padded). */
	const char *text =
		"7f0000001000 100 org/apache/spark/executor/Executor$TaskRunner.run\n"
		"0x00007f0000002000 0x0000000000000080 int java.lang.String.hashCode()\n"
		"7f0000003000 40 Ljava/lang/String;::hashCode\n"
		"7f0000004000 400 Interpreter\n"
		"0x00007f0000005000 0x0000000000000010 StubRoutines (1)\r\n"
		"\n"
		"not a line\n"
		"7f0000006000 zz bad.size\n"
		"7f0000006000 0 zero.size\n"
		"7f0000006000 10\n"
		"ffffffffffffffff 10 wraps\n"
		"11112222333344445 10 too.long\n"
		"7f0000001080 10 newer/Overlap.m\n"
		"7f0000007000\t20\ttabs/Sep.m";   /* no final newline */
	struct perf_map *m = perf_map_parse(text, strlen(text));
	CHECK(m != NULL, "parsed");
	if (!m)
		TAP_DONE();
	enum frame_type t;
	CHECK_STR(lookup(m, 0x7f0000001010, &t), "org/apache/spark/executor/Executor$TaskRunner.run",
		  "a line without 0x");
	CHECK(t == FRAME_JIT, "a Java method is FRAME_JIT");
	CHECK_STR(lookup(m, 0x7f000000207f, &t), "int java.lang.String.hashCode()", "jcmd's 0x format");
	CHECK(t == FRAME_JIT, "jcmd's method name is FRAME_JIT");
	CHECK_STR(lookup(m, 0x7f0000003000, NULL), "Ljava/lang/String;::hashCode", "perf-map-agent's naming");
	CHECK_STR(lookup(m, 0x7f0000004100, &t), "Interpreter", "the interpreter");
	CHECK(t == FRAME_INTERPRETED, "Interpreter is FRAME_INTERPRETED");
	CHECK_STR(lookup(m, 0x7f0000005008, &t), "StubRoutines (1)", "CRLF line");
	CHECK(t == FRAME_NATIVE, "a stub is FRAME_NATIVE");
	CHECK(!lookup(m, 0x7f0000002080, NULL), "the end is exclusive");
	CHECK(!lookup(m, 0x7f0000000fff, NULL), "below every entry");
	CHECK_STR(lookup(m, 0x7f0000001085, NULL), "newer/Overlap.m", "overlaps: the later line wins");
	CHECK_STR(lookup(m, 0x7f0000001095, NULL), "org/apache/spark/executor/Executor$TaskRunner.run",
		  "outside the overlap the older entry remains");
	CHECK_STR(lookup(m, 0x7f0000007010, NULL), "tabs/Sep.m", "tab separators and a last line without newline");
	CHECK(perf_map_get_stats(m)->entries == 7, "7 entries kept (got %llu)", (unsigned long long)perf_map_get_stats(m)->entries);
	CHECK(perf_map_get_stats(m)->malformed == 6, "6 malformed lines (got %llu)", (unsigned long long)perf_map_get_stats(m)->malformed);
	perf_map_free(m);

	m = perf_map_parse(NULL, 0);
	CHECK(m && perf_map_get_stats(m)->entries == 0 && !lookup(m, 1, NULL), "an empty map");
	perf_map_free(m);

	/* A real file, read the way the profiler reads a JVM's map. */
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(path, "w");
	fprintf(f, "1000 10 A.a\n2000 10 B.b\n");
	fclose(f);
	m = perf_map_open(getpid());
	CHECK(m && perf_map_get_stats(m)->entries == 2, "perf_map_open reads /proc/PID/root/tmp/perf-PID.map");
	CHECK_STR(m ? lookup(m, 0x2005, NULL) : NULL, "B.b", "and names from it");
	perf_map_free(m);
	/* Bounds: a map past 8 MiB is read from its end (later lines are newer),
	 * and past 128 Ki entries the oldest go; both are counted. */
	f = fopen(path, "w");
	for (unsigned i = 0; i < 200000; i++)   /* 200k entries, 14 bytes each */
		fprintf(f, "%x 8 M%06u\n", 0x100000 + i * 16, i);
	fclose(f);
	m = perf_map_open(getpid());
	CHECK(m && perf_map_get_stats(m)->entries == 131072 &&
	      perf_map_get_stats(m)->entries_dropped == 200000 - 131072,
	      "past 128 Ki entries the oldest are dropped and counted");
	CHECK_STR(m ? lookup(m, 0x100000 + 199999 * 16, NULL) : NULL, "M199999", "the last entry is kept");
	CHECK(m && !lookup(m, 0x100000, NULL), "the first is not");
	perf_map_free(m);
	f = fopen(path, "w");
	fprintf(f, "1000 10 Old.first\n");
	CHECK(ftruncate(fileno(f), 64u << 20) == 0, "a 64 MiB map, mostly a hole");
	fseek(f, 0, SEEK_END);
	fprintf(f, "\n2000 10 New.last\n");
	fclose(f);
	m = perf_map_open(getpid());
	CHECK(m && perf_map_get_stats(m)->bytes_skipped >= (56u << 20) &&
	      perf_map_get_stats(m)->entries == 1,
	      "past 8 MiB only the end is read (skipped %llu)",
	      m ? (unsigned long long)perf_map_get_stats(m)->bytes_skipped : 0ULL);
	CHECK_STR(m ? lookup(m, 0x2001, NULL) : NULL, "New.last", "and named from");
	CHECK(m && !lookup(m, 0x1001, NULL), "the start is not read");
	perf_map_free(m);
	/* Someone else's file, or a symlink, is not taken for the map. */
	int chowned = chown(path, 12345, 12345);
	CHECK(chowned == 0, "gave the map to another user");
	errno = 0;
	m = perf_map_open(getpid());
	CHECK(!m && errno == EPERM, "a map owned by another user: EPERM");
	unlink(path);
	char victim[64];
	snprintf(victim, sizeof(victim), "/tmp/perf-victim-%d", (int)getpid());
	f = fopen(victim, "w");
	fprintf(f, "1000 10 Victim.v\n");
	fclose(f);
	int linked = symlink(victim, path);
	CHECK(linked == 0, "planted a symlink at the map's name");
	errno = 0;
	m = perf_map_open(getpid());
	CHECK(!m && errno == ELOOP, "a symlink is not followed (errno %d)", errno);
	unlink(path);
	unlink(victim);
	errno = 0;
	m = perf_map_open(getpid());
	CHECK(!m && errno == ENOENT, "no map: ENOENT");
	TAP_DONE();
}

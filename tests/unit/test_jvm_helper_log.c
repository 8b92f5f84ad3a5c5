/* test_jvm_helper_log.c - the helper log reader: naming JIT addresses over
 * time (reuse, lag, inlining), thread names, incremental reads. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jvm/jvm_helper_log.h"
#include "sparkprof_helper_log.h"
#include "tap.h"

#define MS 1000000ull
#define GUARD SPARKPROF_HELPER_REUSE_GUARD_NS

static size_t feed(struct jvm_helper_log *log, const char *s)
{
	return jvm_helper_log_feed(log, s, strlen(s));
}

static const char *name1(struct jvm_helper_log *log, uint64_t addr, uint64_t ts)
{
	struct frame f[8];
	int n = jvm_helper_log_resolve(log, addr, ts, f, 8);
	return n > 0 ? f[n - 1].name : NULL;
}

static void test_inline_and_types(void)
{
	struct jvm_helper_log *log = jvm_helper_log_new();
	feed(log, "H 1 42 1000 start 17.0.15\n"
		  "D 1000 1 1000 100 Interpreter\n"
		  "D 1001 2 2000 10 StubRoutines::call_stub\n"
		  "L 5000 3 10000 100 com/x/Outer.run\n"
		  "I 3 10000 10020 com/x/Leaf.get\tcom/x/Mid.call\n"
		  "I 3 10030 10040 com/x/Mid.call\n");
	struct frame f[8];
	int n = jvm_helper_log_resolve(log, 0x10010, 6000, f, 8);
	CHECK(n == 3, "an inlined PC expands to 3 frames (got %d)", n);
	if (n == 3) {
		CHECK_STR(f[0].name, "com/x/Leaf.get", "innermost inlined frame first");
		CHECK(f[0].type == FRAME_INLINED && f[1].type == FRAME_INLINED, "inlined frames typed");
		CHECK_STR(f[1].name, "com/x/Mid.call", "middle frame");
		CHECK_STR(f[2].name, "com/x/Outer.run", "compiled method last");
		CHECK(f[2].type == FRAME_JIT, "compiled method is FRAME_JIT");
	}
	n = jvm_helper_log_resolve(log, 0x10025, 6000, f, 8);
	CHECK(n == 1 && !strcmp(f[0].name, "com/x/Outer.run"), "a PC between inline ranges is the method alone");
	n = jvm_helper_log_resolve(log, 0x10010, 6000, f, 2);
	CHECK(n == 2 && !strcmp(f[0].name, "com/x/Mid.call") && !strcmp(f[1].name, "com/x/Outer.run"),
	      "a short buffer keeps the outer frames");
	n = jvm_helper_log_resolve(log, 0x1050, 2000, f, 8);
	CHECK(n == 1 && f[0].type == FRAME_INTERPRETED && !strcmp(f[0].name, "Interpreter"),
	      "the interpreter blob is one FRAME_INTERPRETED frame");
	n = jvm_helper_log_resolve(log, 0x2005, 2000, f, 8);
	CHECK(n == 1 && f[0].type == FRAME_NATIVE && !strcmp(f[0].name, "StubRoutines::call_stub"),
	      "a stub is FRAME_NATIVE under the JVM's name");
	CHECK(jvm_helper_log_resolve(log, 0x10100, 6000, f, 8) == 0, "the end of a range is exclusive");
	CHECK(jvm_helper_log_resolve(log, 0x10010, 4999, f, 8) == 0, "before the load record: unknown");
	CHECK(jvm_helper_log_covers(log, 0x10050) && !jvm_helper_log_covers(log, 0x9000),
	      "covers() tells published memory");
	CHECK(jvm_helper_log_get_stats(log)->malformed == 0, "no malformed lines");
	jvm_helper_log_free(log);
}

/* J records: numbered names (N) and offsets from the method's start name
 * the same frames as I records with addresses and names do. */
static void test_numbered_inline(void)
{
	struct jvm_helper_log *log = jvm_helper_log_new();
	struct frame f[8];
	int n;

	feed(log, "H 1 42 1000 start 25.0.1\n"
		  "L 5000 1 10000 100 com/x/Outer.run\n"
		  "N 1 com/x/Leaf.get\n"
		  "N 2 com/x/Mid.call\n"
		  "J 1 0 20 1 2\n"
		  "J 1 30 40 2\n"
		  "L 6000 2 20000 80 com/x/Other.run\n"
		  "N 3 com/x/Leaf.get\n"     /* a helper that started its table afresh */
		  "J 2 10 18 3 2\n");
	n = jvm_helper_log_resolve(log, 0x10010, 6000, f, 8);
	CHECK(n == 3 && !strcmp(f[0].name, "com/x/Leaf.get") && !strcmp(f[1].name, "com/x/Mid.call") &&
	      !strcmp(f[2].name, "com/x/Outer.run") && f[0].type == FRAME_INLINED &&
	      f[2].type == FRAME_JIT, "a J range expands to its numbered names, innermost first");
	n = jvm_helper_log_resolve(log, 0x10035, 6000, f, 8);
	CHECK(n == 2 && !strcmp(f[0].name, "com/x/Mid.call"), "offsets are from the method's start");
	n = jvm_helper_log_resolve(log, 0x10025, 6000, f, 8);
	CHECK(n == 1, "between ranges: the method alone (got %d)", n);
	n = jvm_helper_log_resolve(log, 0x20012, 7000, f, 8);
	CHECK(n == 3 && !strcmp(f[0].name, "com/x/Leaf.get") && !strcmp(f[2].name, "com/x/Other.run"),
	      "a name given again under a newer number names the same frame");
	n = jvm_helper_log_resolve(log, 0x20018, 7000, f, 8);
	CHECK(n == 1, "the end of a J range is exclusive (got %d)", n);
	CHECK(jvm_helper_log_get_stats(log)->malformed == 0 &&
	      jvm_helper_log_get_stats(log)->inline_ranges == 3, "3 ranges kept, nothing malformed");
	jvm_helper_log_free(log);

	log = jvm_helper_log_new();
	const char *bad = "J 1 0 10 1\n"          /* before any blob */
			  "L 10 1 1000 100 a.A\n"
			  "N 2 skips.One\n"           /* numbers come in order */
			  "N 0 zero.Number\n"
			  "N 1\n"                     /* no name */
			  "N 1 ok.Name\n"
			  "J 1 0 10 2\n"              /* no such number */
			  "J 1 0 10 0\n"
			  "J 1 0 10\n"                /* no numbers */
			  "J 1 0 10 1 \n"             /* trailing space */
			  "J 1 0 10 1x\n"
			  "J 1 0 200 1\n"             /* past the method's end */
			  "J 1 10 10 1\n"             /* empty */
			  "J 1 ffffffffffffffff fffffffffffffffff 1\n"
			  "J 9 0 10 1\n"              /* not the newest blob */
			  "J 1 20 30 1\n";            /* the one good range */
	feed(log, bad);
	CHECK(jvm_helper_log_get_stats(log)->malformed == 13, "13 malformed N and J lines (got %llu)",
	      (unsigned long long)jvm_helper_log_get_stats(log)->malformed);
	n = jvm_helper_log_resolve(log, 0x1025, 20, f, 8);
	CHECK(n == 2 && !strcmp(f[0].name, "ok.Name"), "the good range after bad ones names its frame");
	CHECK(jvm_helper_log_resolve(log, 0x1005, 20, f, 8) == 1, "no range from the bad lines");
	feed(log, "D 30 2 5000 10 some stub\nJ 2 0 4 1\n");
	CHECK(jvm_helper_log_get_stats(log)->malformed == 14 &&
	      jvm_helper_log_resolve(log, 0x5001, 40, f, 8) == 1, "a stub has no inlined frames");
	jvm_helper_log_free(log);
}

static void test_reuse(void)
{
	struct jvm_helper_log *log = jvm_helper_log_new();
	char buf[512];
	/* A at [0x10000,0x10100) from 1 s, unloaded at 5 s; B reuses it at 6 s. */
	snprintf(buf, sizeof(buf),
		 "L %llu 1 10000 100 A.a\n"
		 "U %llu 1\n"
		 "L %llu 2 10080 100 B.b\n",
		 1000 * MS, 5000 * MS, 6000 * MS);
	feed(log, buf);
	CHECK_STR(name1(log, 0x10010, 2000 * MS), "A.a", "A is named long before its unload");
	CHECK(!name1(log, 0x10090, 5000 * MS - GUARD / 2),
	      "shortly before A's unload record, where B reused the memory: unknown");
	CHECK_STR(name1(log, 0x10010, 5000 * MS - GUARD / 2), "A.a",
		  "the part of A that was not reused stays named up to the unload");
	CHECK(!name1(log, 0x10090, 5500 * MS), "between unload and reload: unknown");
	CHECK_STR(name1(log, 0x10090, 6000 * MS), "B.b", "B from its load record on");
	CHECK(!name1(log, 0x10010, 6000 * MS), "A's freed memory after its unload: unknown");
	jvm_helper_log_free(log);

	/* Overlap without an unload record: nobody knows when A died. */
	log = jvm_helper_log_new();
	feed(log, "L 1000 1 10000 100 A.a\nL 9000 2 10000 100 B.b\n");
	CHECK(!name1(log, 0x10010, 2000), "a blob ended by an overlapping load is never named");
	CHECK_STR(name1(log, 0x10010, 9000), "B.b", "the newer blob is named");
	/* A replayed stub is the same blob, not a reuse. */
	feed(log, "D 100 3 50000 10 vtable stub\nD 200 4 50000 10 vtable stub\n");
	CHECK_STR(name1(log, 0x50001, 300), "vtable stub", "a repeated stub record stays named");
	jvm_helper_log_free(log);
}

static void test_malformed(void)
{
	struct jvm_helper_log *log = jvm_helper_log_new();
	const char *text = "H 1 42 1000 start x\n"
			   "L 10 1 zz 10 bad.hex\n"
			   "L 10 2 1000 0 zero.size\n"
			   "L 10 3 ffffffffffffffff 10 wraps\n"
			   "U 10 99\n"
			   "I 7 1000 1010 no.such.blob\n"
			   "T 10 -5 negative tid\n"
			   "T 10 5 bad\\xZZescape\n"
			   "S 10 5 sleepy\n"
			   "Q 10 future record kind\n"
			   "L 10 4 1000 10 ok.Method\n"
			   "L 10 4 2000 10 duplicate.id\n"
			   "partial line without newline";
	size_t used = feed(log, text);
	CHECK(used == strlen(text) - strlen("partial line without newline"),
	      "feed stops before a trailing partial line");
	const struct jvm_helper_log_stats *st = jvm_helper_log_get_stats(log);
	CHECK(st->malformed == 9, "9 malformed lines counted (got %llu)",
	      (unsigned long long)st->malformed);
	CHECK_STR(name1(log, 0x1005, 20), "ok.Method", "good records after bad ones still count");
	jvm_helper_log_free(log);
}

struct seen {
	int n;
	char last[128];
	uint64_t last_ts;
	int ordered;
};

static void listener(void *ctx, const struct jvm_helper_thread_event *ev)
{
	struct seen *s = ctx;
	if (ev->ts < s->last_ts)
		s->ordered = 0;
	s->last_ts = ev->ts;
	s->n++;
	snprintf(s->last, sizeof(s->last), "%d %d %s", ev->kind, ev->tid, ev->name ? ev->name : "-");
}

static void test_threads(void)
{
	struct jvm_helper_log *log = jvm_helper_log_new();
	struct seen s = { .ordered = 1 };
	jvm_helper_log_set_thread_listener(log, listener, &s);
	feed(log, "T 100 7 Executor task launch worker-0\n"
		  "T 200 7 Executor task launch worker for task 1.0 in stage 0.0 (TID 1)\n"
		  "S 250 7 busy\n"
		  "S 300 7 idle\n"
		  "T 400 8 tab\\x09and\\x5cslash\n"
		  "X 500 7\n");
	CHECK(!jvm_helper_log_thread_name(log, 7, 99), "no name before the first record");
	CHECK_STR(jvm_helper_log_thread_name(log, 7, 150), "Executor task launch worker-0",
		  "the start name");
	CHECK_STR(jvm_helper_log_thread_name(log, 7, 200),
		  "Executor task launch worker for task 1.0 in stage 0.0 (TID 1)",
		  "the rename from its timestamp on");
	CHECK(!jvm_helper_log_thread_name(log, 7, 500), "no name after the thread ended");
	CHECK_STR(jvm_helper_log_thread_name(log, 8, 400), "tab\tand\\slash", "escapes are undone");
	CHECK(jvm_helper_log_thread_idle(log, 7, 260) == 0 && jvm_helper_log_thread_idle(log, 7, 310) == 1,
	      "idle marks over time");
	CHECK(jvm_helper_log_thread_idle(log, 7, 210) == 0, "a rename counts as busy");
	CHECK(s.n == 6 && s.ordered, "the listener saw 6 events in order (got %d)", s.n);
	CHECK_STR(s.last, "1 7 -", "the last event is the end of thread 7");
	jvm_helper_log_free(log);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* This process's helper log at its path, made afresh as the helper makes
 * it (0600, no old file's rest); NULL after a failed check. */
static FILE *new_log_file(char *path, size_t size, int flags)
{
	FILE *f = NULL;
	int fd;

	snprintf(path, size, SPARKPROF_HELPER_LOG_FMT, (int)getpid());
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | flags, 0600);
	if (fd >= 0 && !(f = fdopen(fd, "w")))
		close(fd);
	if (!f)
		CHECK(0, "write %s: %s", path, strerror(errno));
	return f;
}

static void test_file(void)
{
	char path[64];
	snprintf(path, sizeof(path), SPARKPROF_HELPER_LOG_FMT, (int)getpid());
	unlink(path);
	errno = 0;
	struct jvm_helper_log *none = jvm_helper_log_open(getpid());
	CHECK(!none && errno == ENOENT, "no log: ENOENT");

	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	char line[256];
	int n = snprintf(line, sizeof(line), "H 1 %d 5 start old\n", (int)getpid());
	ssize_t w = write(fd, line, n);
	CHECK(w == n, "wrote a stale header");
	errno = 0;
	none = jvm_helper_log_open(getpid());
	CHECK(!none && errno == ESTALE,
	      "a log written before the process started: ESTALE");
	close(fd);
	unlink(path);

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND, 0600);
	uint64_t t = now_ns();
	n = snprintf(line, sizeof(line), "H 1 %d %llu start now\nL %llu 1 abc0 20 P.q\nT %llu 77 wor",
		     (int)getpid(), (unsigned long long)t, (unsigned long long)t + 1,
		     (unsigned long long)t + 2);
	w = write(fd, line, n);
	CHECK(w == n, "wrote a log with a partial last line");
	struct jvm_helper_log *log = jvm_helper_log_open(getpid());
	CHECK(log != NULL, "opened our own log");
	if (log) {
		int got = jvm_helper_log_poll(log);
		CHECK(got == 2, "two complete lines read (got %d, %llu malformed)", got,
		      (unsigned long long)jvm_helper_log_get_stats(log)->malformed);
		CHECK(!jvm_helper_log_thread_name(log, 77, t + 5), "the partial line is not used yet");
		w = write(fd, "ker\n", 4);
		CHECK(w == 4, "completed the line");
		got = jvm_helper_log_poll(log);
		CHECK(got == 1, "one more line on the next poll");
		CHECK_STR(jvm_helper_log_thread_name(log, 77, t + 5), "worker", "the joined line parsed");
		CHECK_STR(name1(log, 0xabc4, t + 5), "P.q", "code from the file");
		close(fd);
		unlink(path);
		got = jvm_helper_log_poll(log);
		CHECK(got == 0, "poll after the file is gone keeps working");
		CHECK_STR(name1(log, 0xabc4, t + 5), "P.q", "what was read stays");
		CHECK(jvm_helper_log_horizon(log) == t + 2, "horizon is the latest timestamp");
		jvm_helper_log_free(log);
	}
}

/* A real log of CodeChurn on JDK 17 with an 8 MB code cache (methods
 * loaded, unloaded and their memory reused): at each method's own load time
 * the reader names its first byte with its own name or not at all. */
static void test_real_churn_log(void)
{
	FILE *f = fopen("tests/fuzz/corpus/jvm_helper_log/churn_jdk17.log", "r");
	CHECK(f != NULL, "the recorded churn log is there");
	if (!f)
		return;
	static char text[1 << 20];
	size_t len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = 0;
	struct jvm_helper_log *log = jvm_helper_log_new();
	size_t used = jvm_helper_log_feed(log, text, len);
	CHECK(used == len, "all of it parsed");
	const struct jvm_helper_log_stats *st = jvm_helper_log_get_stats(log);
	CHECK(st->malformed == 0 && st->unloads > 100, "no malformed line, %llu unloads",
	      (unsigned long long)st->unloads);
	int methods = 0, named = 0, wrong = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned long long ts, id, start, size;
		int off = 0;
		if (sscanf(line, "L %llu %llu %llx %llx %n", &ts, &id, &start, &size, &off) != 4 || !off)
			continue;
		methods++;
		struct frame fr[16];
		int n = jvm_helper_log_resolve(log, start, ts, fr, 16);
		if (n == 0)
			continue;
		if (strcmp(fr[n - 1].name, line + off) || fr[n - 1].type != FRAME_JIT)
			wrong++;
		else
			named++;
	}
	CHECK(methods > 100 && wrong == 0, "%d methods, none named wrong (%d wrong)", methods, wrong);
	CHECK(named * 10 >= methods * 9, "at least 90%% named at their load time (%d of %d)", named,
	      methods);
	jvm_helper_log_free(log);
}

/* A recorded log from the fuzzer's corpus, NUL-terminated; 0 or -1. */
static int load_log(const char *name, char *text, size_t cap, size_t *len)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "tests/fuzz/corpus/jvm_helper_log/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	*len = fread(text, 1, cap - 1, f);
	fclose(f);
	text[*len] = 0;
	return 0;
}

/* A real executor's log from the helper that numbers names (first L, N and
 * J records of a Spark executor, JDK 17): every J range is named, inlined
 * frames first and its compiled method last. */
static void test_real_numbered_log(void)
{
	static char text[1 << 16];
	size_t len = 0;

	CHECK(load_log("numbered_executor_jdk17.log", text, sizeof(text), &len) == 0,
	      "the recorded executor log is there");
	if (!len)
		return;
	struct jvm_helper_log *log = jvm_helper_log_new();
	CHECK(jvm_helper_log_feed(log, text, len) == len, "all of it parsed");
	const struct jvm_helper_log_stats *st = jvm_helper_log_get_stats(log);
	CHECK(st->malformed == 0, "no malformed line (%llu)", (unsigned long long)st->malformed);
	unsigned long long ts = 0, start = 0;
	char method[512] = "";
	int ranges = 0, named = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned long long id, size, off;
		int at = 0;
		if (sscanf(line, "L %llu %llu %llx %llx %n", &ts, &id, &start, &size, &at) == 4 && at) {
			snprintf(method, sizeof(method), "%s", line + at);
			continue;
		}
		if (sscanf(line, "J %llu %llx", &id, &off) != 2)
			continue;
		struct frame fr[16];
		int n = jvm_helper_log_resolve(log, start + off, ts, fr, 16);
		ranges++;
		if (n >= 2 && fr[0].type == FRAME_INLINED && !strcmp(fr[n - 1].name, method) &&
		    fr[n - 1].type == FRAME_JIT)
			named++;
	}
	CHECK(ranges > 100 && (uint64_t)ranges == st->inline_ranges && named == ranges,
	      "%d J ranges, %d named with their inlined frames", ranges, named);
	jvm_helper_log_free(log);
}

/* The first J range of the k-th method with J records in a log: the time
 * of its L record and the range's address.  0 if there is none. */
static int method_range(const char *text, int k, uint64_t *ts, uint64_t *addr)
{
	unsigned long long t = 0, start = 0, last = 0;

	for (const char *line = text; line && *line; line = strchr(line, '\n'), line += !!line) {
		unsigned long long id, off;

		if (sscanf(line, "L %llu %*u %llx", &t, &start) == 2)
			continue;
		if (sscanf(line, "J %llu %llx", &id, &off) != 2 || id == last)
			continue;
		last = id;
		if (k-- == 0) {
			*ts = t;
			*addr = start + off;
			return 1;
		}
	}
	return 0;
}

/* The same executor's log read from its file, as the recorder reads it:
 * the J records stay in the file until a lookup lands in their method, and
 * then name exactly what the reader that kept them names.  A file changed
 * under the reader (the JVM's user owns it) costs the inlined frames of the
 * methods not yet read back, never a wrong name. */
static void test_deferred_inline_from_file(void)
{
	static char text[1 << 16], copy[1 << 16];
	char path[64], header[128];
	size_t len = 0, hlen;
	const char *body;

	CHECK(load_log("numbered_executor_jdk17.log", text, sizeof(text), &len) == 0,
	      "the recorded executor log is there");
	if (!len)
		return;
	body = strchr(text, '\n') + 1;
	/* Its own header: a log older than the process is stale. */
	hlen = snprintf(header, sizeof(header), "H 1 %d %llu start 17.0.15\n", (int)getpid(),
			(unsigned long long)now_ns());
	FILE *out = new_log_file(path, sizeof(path), 0);
	if (!out)
		return;
	fwrite(header, 1, hlen, out);
	fwrite(body, 1, len - (body - text), out);
	fclose(out);

	struct jvm_helper_log *kept = jvm_helper_log_new();
	jvm_helper_log_feed(kept, text, len);
	struct jvm_helper_log *log = jvm_helper_log_open(getpid());
	CHECK(log && jvm_helper_log_poll(log) > 0, "opened and read from its file");
	if (!log) {
		jvm_helper_log_free(kept);
		return;
	}
	const struct jvm_helper_log_stats *ks = jvm_helper_log_get_stats(kept);
	const struct jvm_helper_log_stats *fs = jvm_helper_log_get_stats(log);
	CHECK(fs->inline_deferred == ks->inline_ranges && fs->inline_ranges == 0 &&
	      !fs->malformed, "all %llu J records left in the file",
	      (unsigned long long)fs->inline_deferred);
	CHECK(jvm_helper_log_jit_memory(log, NULL) < jvm_helper_log_jit_memory(kept, NULL),
	      "the store holds less: %zu bytes against %zu", jvm_helper_log_jit_memory(log, NULL),
	      jvm_helper_log_jit_memory(kept, NULL));

	unsigned long long ts = 0, start = 0, methods = 0, last_id = 0;
	int ranges = 0, same = 0, inlined = 0;
	memcpy(copy, text, len + 1);
	for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned long long id, size, off;
		if (sscanf(line, "L %llu %llu %llx %llx", &ts, &id, &start, &size) == 4)
			continue;
		if (sscanf(line, "J %llu %llx", &id, &off) != 2)
			continue;
		methods += id != last_id;
		last_id = id;
		struct frame a[16], b[16];
		int na = jvm_helper_log_resolve(kept, start + off, ts, a, 16);
		int nb = jvm_helper_log_resolve(log, start + off, ts, b, 16);
		int eq = na == nb;
		for (int i = 0; eq && i < na; i++)
			eq = !strcmp(a[i].name, b[i].name) && a[i].type == b[i].type;
		ranges++;
		same += eq;
		inlined += nb >= 2 && b[0].type == FRAME_INLINED;
	}
	CHECK(ranges > 100 && same == ranges && inlined == ranges,
	      "%d of %d J ranges named as the reader that kept them names them, %d with their "
	      "inlined frames", same, ranges, inlined);
	CHECK(fs->inline_loads == methods && !fs->inline_unreadable &&
	      fs->inline_ranges == ks->inline_ranges,
	      "each of the %llu methods read back once (%llu), all %llu ranges",
	      methods, (unsigned long long)fs->inline_loads,
	      (unsigned long long)fs->inline_ranges);
	jvm_helper_log_free(log);

	/* Changed under the reader: overwritten in place, then cut short. */
	log = jvm_helper_log_open(getpid());
	CHECK(log && jvm_helper_log_poll(log) > 0, "read again");
	if (log) {
		int fd = open(path, O_WRONLY);
		size_t n = len - (body - text);
		uint64_t at, addr;
		struct frame f[16];
		int nf;

		memset(copy, 'x', n);
		for (size_t i = 63; i < n; i += 64)
			copy[i] = '\n';
		CHECK(fd >= 0 && pwrite(fd, copy, n, hlen) == (ssize_t)n, "its lines overwritten");
		nf = method_range(text, 0, &at, &addr) ? jvm_helper_log_resolve(log, addr, at, f, 16) : -1;
		CHECK(nf == 1 && f[0].type == FRAME_JIT,
		      "overwritten: the compiled method alone (%d frames)", nf);
		CHECK(fd >= 0 && ftruncate(fd, hlen) == 0, "cut short");
		nf = method_range(text, 1, &at, &addr) ? jvm_helper_log_resolve(log, addr, at, f, 16) : -1;
		CHECK(nf == 1 && f[0].type == FRAME_JIT,
		      "cut short: the compiled method alone (%d frames)", nf);
		fs = jvm_helper_log_get_stats(log);
		CHECK(fs->inline_unreadable == 2 && fs->inline_ranges == 0,
		      "both counted unreadable (%llu)", (unsigned long long)fs->inline_unreadable);
		if (fd >= 0)
			close(fd);
		jvm_helper_log_free(log);
	}
	jvm_helper_log_free(kept);
	unlink(path);
}


/* Whether b's answer for addr at ts is a's, or (allow_unknown) nothing. */
static int same_answer(struct jvm_helper_log *a, struct jvm_helper_log *b, uint64_t addr,
		       uint64_t ts, int allow_unknown)
{
	struct frame fa[16], fb[16];
	int na = jvm_helper_log_resolve(a, addr, ts, fa, 16);
	int nb = jvm_helper_log_resolve(b, addr, ts, fb, 16);

	if (nb == 0 && allow_unknown)
		return 1;
	if (na != nb)
		return 0;
	for (int i = 0; i < na; i++)
		if (strcmp(fa[i].name, fb[i].name) || fa[i].type != fb[i].type)
			return 0;
	return 1;
}

/* Forgetting code that ended before T: every answer at T or later is the
 * same as without forgetting (inlined frames included), and an earlier
 * one is the same or unknown, never another name. */
static void test_forget(void)
{
	static char text[1 << 20], copy[1 << 20];
	size_t len = 0;

	CHECK(load_log("churn_jdk17.log", text, sizeof(text), &len) == 0,
	      "the recorded churn log is there");
	struct jvm_helper_log *all = jvm_helper_log_new(), *kept = jvm_helper_log_new();
	jvm_helper_log_feed(all, text, len);
	jvm_helper_log_feed(kept, text, len);
	/* T: the time of the middle unload record. */
	uint64_t unloads[4096], t_cut;
	int nu = 0;
	memcpy(copy, text, len + 1);
	for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned long long ts;
		if (nu < 4096 && sscanf(line, "U %llu", &ts) == 1)
			unloads[nu++] = ts;
	}
	t_cut = nu ? unloads[nu / 2] : 0;
	size_t dropped = jvm_helper_log_forget(kept, t_cut);
	CHECK(nu > 100 && dropped >= (size_t)nu / 3, "%zu of the blobs that ended before T dropped "
	      "(%d unloads in the log)", dropped, nu);
	CHECK(jvm_helper_log_get_stats(kept)->forgotten == dropped, "counted in the stats");
	int probes = 0, later = 0, bad = 0;
	memcpy(copy, text, len + 1);
	for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned long long ts, id, start, size;
		if (sscanf(line, "L %llu %llu %llx %llx", &ts, &id, &start, &size) != 4)
			continue;
		uint64_t times[] = { ts, t_cut, ts + 1000 * MS, t_cut + 5000 * MS };
		uint64_t addrs[] = { start, start + size / 2, start + size - 1 };
		for (int i = 0; i < 4; i++)
			for (int k = 0; k < 3; k++) {
				int after = times[i] >= t_cut;
				probes++;
				later += after;
				if (!same_answer(all, kept, addrs[k], times[i], !after))
					bad++;
			}
	}
	CHECK(later > 1000 && bad == 0, "%d probes (%d at T or later): %d answered otherwise",
	      probes, later, bad);
	/* Still a working store: new code after forgetting is named. */
	char more[256];
	snprintf(more, sizeof(more), "L %llu 999999 1000 100 New.code\n",
		 (unsigned long long)t_cut + 9000 * MS);
	feed(kept, more);
	CHECK_STR(name1(kept, 0x1010, t_cut + 9001 * MS), "New.code", "code added after forgetting");
	jvm_helper_log_free(all);
	jvm_helper_log_free(kept);
}

/* The poll forgets by itself, JVM_HELPER_LOG_KEEP_NS behind the newest
 * record: 3,000 methods over 150 s, each unloaded 10 ms after its load. */
static void test_poll_forgets(void)
{
	char path[64];
	uint64_t t = now_ns();
	int n;

	FILE *f = new_log_file(path, sizeof(path), O_APPEND);
	if (!f)
		return;
	fprintf(f, "H 1 %d %llu start now\n", (int)getpid(), (unsigned long long)t);
	for (int i = 0; i < 3000; i++) {
		uint64_t ts = t + (uint64_t)i * 50 * MS;
		fprintf(f, "L %llu %d %x 40 M%d.run\nU %llu %d\n", (unsigned long long)ts, i + 1,
			0x100000 + i * 0x40, i, (unsigned long long)ts + 10 * MS, i + 1);
	}
	n = fprintf(f, "L %llu 5000 900000 40 Last.run\n", (unsigned long long)t + 150000 * MS);
	fclose(f);
	struct jvm_helper_log *log = jvm_helper_log_open(getpid());
	CHECK(log != NULL && n > 0, "opened a 150 s log");
	if (log) {
		jvm_helper_log_poll(log);
		uint64_t forgotten = jvm_helper_log_get_stats(log)->forgotten;
		/* Ended before 150 s - JVM_HELPER_LOG_KEEP_NS: one method per 50 ms. */
		uint64_t want = (150000 * MS - JVM_HELPER_LOG_KEEP_NS) / (50 * MS);
		CHECK(forgotten + 100 >= want && forgotten <= want, "%llu methods forgotten (%llu)",
		      (unsigned long long)forgotten, (unsigned long long)want);
		CHECK_STR(name1(log, 0x900010, t + 150001 * MS), "Last.run", "the newest is named");
		CHECK_STR(name1(log, 0x100000 + 2999 * 0x40, t + 2999 * 50 * MS + 1),
			  "M2999.run", "a method that ended within JVM_HELPER_LOG_KEEP_NS is still named");
		jvm_helper_log_free(log);
	}
	unlink(path);
}

/* Write 30 minutes of task renames (4 threads, a task each 400 ms on each,
 * its name unique) and its busy and idle marks from minute `from`. */
static void write_tasks(FILE *f, uint64_t t, int from, int to)
{
	for (int i = from * 600; i < to * 600; i++) {
		uint64_t ts = t + (uint64_t)i * 100 * MS;
		int tid = 100 + i % 4;

		fprintf(f, "T %llu %d Executor task launch worker for task 0.0 in stage %d.0 (TID %d)\n"
			   "S %llu %d busy\nS %llu %d idle\n",
			(unsigned long long)ts, tid, i / 4, i, (unsigned long long)ts + 1, tid,
			(unsigned long long)ts + 90 * MS, tid);
	}
}

/* A log's thread events older than 120 s go, and the names only they used:
 * memory holds 2 minutes of an executor's task threads, not the run. */
static void test_poll_forgets_threads(void)
{
	char path[64];
	uint64_t t = now_ns();
	FILE *f;

	f = new_log_file(path, sizeof(path), 0);
	if (!f)
		return;
	fprintf(f, "H 1 %d %llu start now\n", (int)getpid(), (unsigned long long)t);
	write_tasks(f, t, 0, 30);
	fflush(f);
	struct jvm_helper_log *log = jvm_helper_log_open(getpid());
	CHECK(log != NULL, "opened a 30-minute log");
	if (log) {
		size_t after_30, after_60;

		jvm_helper_log_poll(log);
		after_30 = jvm_helper_log_thread_memory(log);
		/* All but the last 120 s (and the newest name and mark before). */
		uint64_t forgotten = jvm_helper_log_get_stats(log)->thread_events_forgotten;
		CHECK(forgotten > 3 * 28 * 600 - 16 && forgotten <= 3 * 28 * 600,
		      "%llu events forgotten", (unsigned long long)forgotten);
		CHECK_STR(jvm_helper_log_thread_name(log, 103, t + 17999 * 100 * MS + 5),
			  "Executor task launch worker for task 0.0 in stage 4499.0 (TID 17999)",
			  "the newest name");
		CHECK(jvm_helper_log_thread_idle(log, 103, t + 17999 * 100 * MS + 95 * MS) == 1,
		      "and its idle mark");
		CHECK(!jvm_helper_log_thread_name(log, 103, t + 1000 * 100 * MS),
		      "a 27-minute-old name is unknown");

		write_tasks(f, t, 30, 60);
		fflush(f);
		jvm_helper_log_poll(log);
		after_60 = jvm_helper_log_thread_memory(log);
		CHECK(after_30 < 1 << 20 && after_60 < after_30 + (64 << 10),
		      "thread memory %zu after 30 minutes, %zu after 60", after_30, after_60);
		CHECK_STR(jvm_helper_log_thread_name(log, 102, t + 35998 * 100 * MS + 5),
			  "Executor task launch worker for task 0.0 in stage 8999.0 (TID 35998)",
			  "the newest name after the names moved");
		jvm_helper_log_free(log);
	}
	fclose(f);
	unlink(path);
}

/* A rotated log (G record, then a continued file that restates the live
 * state): a reader that follows it skips what it knows; one that starts on
 * the new file learns the same state from it. */
static const char *old_file =
	"H 1 42 1000 start 17.0.15\n"
	"D 1000 1 1000 100 Interpreter\n"
	"L 2000 2 10000 100 com/x/Outer.run\n"
	"N 1 com/x/Leaf.get\n"
	"J 2 0 20 1\n"
	"T 2500 7 Executor task launch worker for task 1.0 in stage 3.0 (TID 1)\n"
	"L 3000 3 20000 100 com/x/Gone.run\n"
	"N 2 com/x/Gone.inlined\n"
	"J 3 0 10 2\n"
	"U 4000 3\n"
	"S 4500 7 idle\n"
	"G 9000\n"
	"L 9001 4 30000 100 after.G\n";   /* nothing comes after G */
static const char *new_file =
	"H 1 42 9000 continued 17.0.15\n"
	"N 1 com/x/Leaf.get\n"
	"N 2 com/x/Gone.inlined\n"
	"T 9000 7 Executor task launch worker for task 1.0 in stage 3.0 (TID 1)\n"
	"S 9000 7 idle\n"
	"D 1000 1 1000 100 Interpreter\n"
	"L 2000 2 10000 100 com/x/Outer.run\n"
	"N 1 com/x/Leaf.get\n"
	"J 2 0 20 1\n"
	"R 9000 snapshot\n"
	"L 9500 5 50000 80 com/x/New.run\n"
	"N 3 com/x/Leaf2.get\n"
	"J 5 0 8 3 1\n"
	"U 9600 2\n";

static void test_continued_file(void)
{
	struct jvm_helper_log *follow = jvm_helper_log_new(), *fresh = jvm_helper_log_new();
	const struct jvm_helper_log_stats *st = jvm_helper_log_get_stats(follow);
	struct frame f[8];
	int n;

	CHECK(feed(follow, old_file) == strlen(old_file), "the old file is consumed to its end");
	CHECK(st->lines == 12 && !st->malformed, "lines after G are not read (%llu lines)",
	      (unsigned long long)st->lines);
	CHECK(!jvm_helper_log_covers(follow, 0x30000), "a record after G is not filed");
	jvm_helper_log_next_file(follow);
	feed(follow, new_file);
	CHECK(!st->malformed && st->files == 1 && st->restated == 8,
	      "the follower skips the 8 restated records (malformed %llu, restated %llu)",
	      (unsigned long long)st->malformed, (unsigned long long)st->restated);
	feed(fresh, new_file);
	CHECK(!jvm_helper_log_get_stats(fresh)->malformed, "a reader that starts on the new file "
	      "takes it all (malformed %llu)",
	      (unsigned long long)jvm_helper_log_get_stats(fresh)->malformed);

	n = jvm_helper_log_resolve(follow, 0x10010, 5000, f, 8);
	CHECK(n == 2 && !strcmp(f[0].name, "com/x/Leaf.get"), "follower: code from the old file");
	n = jvm_helper_log_resolve(fresh, 0x10010, 5000, f, 8);
	CHECK(n == 2 && !strcmp(f[0].name, "com/x/Leaf.get") && !strcmp(f[1].name, "com/x/Outer.run"),
	      "fresh reader: live code keeps its original load time and inlined frames");
	CHECK(name1(follow, 0x20004, 3500) && !strcmp(name1(follow, 0x20004, 3500), "com/x/Gone.run"),
	      "follower: code unloaded before the rotation is still named at its time");
	CHECK(!name1(fresh, 0x20004, 3500), "fresh reader: code unloaded before the rotation is unknown");
	for (int i = 0; i < 2; i++) {
		struct jvm_helper_log *log = i ? fresh : follow;

		n = jvm_helper_log_resolve(log, 0x50004, 9550, f, 8);
		CHECK(n == 3 && !strcmp(f[0].name, "com/x/Leaf2.get") &&
		      !strcmp(f[1].name, "com/x/Leaf.get") && !strcmp(f[2].name, "com/x/New.run"),
		      "%s: code after the rotation, numbers old and new", i ? "fresh" : "follower");
		CHECK(!name1(log, 0x10010, 9700), "%s: an unload after the rotation applies",
		      i ? "fresh" : "follower");
		CHECK(name1(log, 0x1010, 9700) && !strcmp(name1(log, 0x1010, 9700), "Interpreter"),
		      "%s: a stub lives on", i ? "fresh" : "follower");
		CHECK(jvm_helper_log_thread_idle(log, 7, 9100) == 1 &&
		      jvm_helper_log_thread_name(log, 7, 9100),
		      "%s: the thread's name and idle mark", i ? "fresh" : "follower");
	}
	CHECK(jvm_helper_log_thread_idle(follow, 7, 5000) == 1, "follower: idle since 4500");
	jvm_helper_log_free(follow);
	jvm_helper_log_free(fresh);

	/* A follower takes nothing from a file that is not the one G announced. */
	struct { const char *text; const char *why; } bad[] = {
		{ "H 1 42 9000 start 17\nR 9000 snapshot\nL 9500 9 40000 10 x.Y\n",
		  "a new file that does not say it continues" },
		{ "L 9500 9 40000 10 x.Y\nR 9000 snapshot\nL 9501 10 40000 10 x.Y\n",
		  "a new file without a header" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct jvm_helper_log *log = jvm_helper_log_new();

		feed(log, old_file);
		jvm_helper_log_next_file(log);
		feed(log, bad[i].text);
		CHECK(!jvm_helper_log_covers(log, 0x40000), "%s: its records are not taken",
		      bad[i].why);
		jvm_helper_log_free(log);
	}
	struct jvm_helper_log *log = jvm_helper_log_new();
	feed(log, "H 1 42 9000 continued 17\nN 7 a.A\nN 9 b.B\nN 8 c.C\nN 7 d.D\nN 7 a.A\n"
		  "L 9000 4 1000 100 m.M\nJ 4 0 4 6\nJ 4 4 8 8 7\nR 9000 snapshot\n");
	/* N 9 skips a number, N 7 d.D renames one, J names number 6. */
	CHECK(jvm_helper_log_get_stats(log)->malformed == 3,
	      "fresh reader: numbers from the file's first N, in order, a restated one the same "
	      "(malformed %llu)",
	      (unsigned long long)jvm_helper_log_get_stats(log)->malformed);
	n = jvm_helper_log_resolve(log, 0x1005, 9500, f, 8);
	CHECK(n == 3 && !strcmp(f[0].name, "c.C") && !strcmp(f[1].name, "a.A"),
	      "numbers past the base resolve");
	jvm_helper_log_free(log);
}

/* A follower keeps the numbers a continued file restates and drops those
 * below its first N (the helper's table started afresh there), so a JVM
 * that keeps loading classes no longer grows the array for its whole
 * life; but it keeps an old number that a live method's restated J record
 * names, and reads that method's inlined frames back with it.  A file
 * that restates from number 1 (the table never started afresh) keeps them
 * all.  Through a real file: J records are read back from it. */
static void test_continued_file_drops_numbers(void)
{
	for (int restart = 1; restart >= 0; restart--) {
		char path[64], tmp[80];
		uint64_t t = now_ns();
		size_t before, after;
		struct frame f[8];
		FILE *old, *fresh;
		int n;

		old = new_log_file(path, sizeof(path), 0);
		if (!old)
			return;
		snprintf(tmp, sizeof(tmp), "%s.new", path);
		fprintf(old, "H 1 %d %llu start 17.0.15\n", (int)getpid(), (unsigned long long)t);
		for (int i = 1; i <= 20000; i++)
			fprintf(old, "N %d m.M%d\n", i, i % 50);
		/* A method compiled early, live for good, inlining number 3. */
		fprintf(old, "L %llu 2 10000 100 c.Early\nJ 2 0 20 3\n", (unsigned long long)t + 1);
		fflush(old);
		struct jvm_helper_log *log = jvm_helper_log_open(getpid());
		const struct jvm_helper_log_stats *st = log ? jvm_helper_log_get_stats(log) : NULL;

		CHECK(log && jvm_helper_log_poll(log) > 0, "opened and read the old file");
		if (!log) {
			fclose(old);
			unlink(path);
			return;
		}
		jvm_helper_log_jit_memory(log, &before);
		/* The new file, renamed over the path; then G ends the old one. */
		fresh = fopen(tmp, "w");
		fprintf(fresh, "H 1 %d %llu continued 17.0.15\n%s"
			       "L %llu 2 10000 100 c.Early\nJ 2 0 20 3\nR %llu snapshot\n"
			       "N 20001 n.New\nL %llu 5 50000 80 c.Compiled\nJ 5 0 8 20001 19999\n",
			(int)getpid(), (unsigned long long)t + 2,
			restart ? "N 19999 m.M49\nN 20000 m.M0\n" : "N 1 m.M1\nN 2 m.M2\n",
			(unsigned long long)t + 1, (unsigned long long)t + 2, (unsigned long long)t + 3);
		fclose(fresh);
		rename(tmp, path);
		fprintf(old, "G %llu\n", (unsigned long long)t + 2);
		fclose(old);
		jvm_helper_log_poll(log);
		jvm_helper_log_poll(log);
		jvm_helper_log_jit_memory(log, &after);
		CHECK(st->files == 1 && !st->malformed, "%s: followed into the new file (files %llu, "
		      "malformed %llu)", restart ? "afresh" : "from 1", (unsigned long long)st->files,
		      (unsigned long long)st->malformed);
		n = jvm_helper_log_resolve(log, 0x50004, t + 4, f, 8);
		CHECK(n == 3 && !strcmp(f[0].name, "n.New") && !strcmp(f[1].name, "m.M49") &&
		      !strcmp(f[2].name, "c.Compiled"),
		      "%s: numbers restated and new name a new method's frames (%d)",
		      restart ? "afresh" : "from 1", n);
		n = jvm_helper_log_resolve(log, 0x10005, t + 4, f, 8);
		CHECK(n == 2 && !strcmp(f[0].name, "m.M3") && !strcmp(f[1].name, "c.Early"),
		      "%s: the early method's inlined frame, read back from the new file (%d, %s)",
		      restart ? "afresh" : "from 1", n, n > 0 ? f[0].name : "-");
		if (restart)
			CHECK(before > after + (128 << 10),
			      "the numbers below the first restated go: names %zu -> %zu bytes",
			      before, after);
		else
			CHECK(after >= before, "all numbers stay: names %zu -> %zu bytes", before,
			      after);
		jvm_helper_log_free(log);
		unlink(path);
	}
}

int main(void)
{
	test_forget();
	test_poll_forgets();
	test_poll_forgets_threads();
	test_real_churn_log();
	test_real_numbered_log();
	test_deferred_inline_from_file();
	test_inline_and_types();
	test_numbered_inline();
	test_continued_file();
	test_continued_file_drops_numbers();
	test_reuse();
	test_malformed();
	test_threads();
	test_file();
	TAP_DONE();
}

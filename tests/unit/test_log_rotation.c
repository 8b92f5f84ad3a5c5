/* test_log_rotation.c - the helper's new log files (tools/jvmti/log_rotation.c)
 * read by the profiler's reader: one that follows the log through two
 * rotations and one that starts on the last file name the same live code,
 * inlined frames and threads, and the last file holds only what lives.
 * A third reader polls the file itself, as the recorder does, so its
 * inlined frames stay in the file until a lookup reads them back: from the
 * file they were written to, or from a new file that restated them. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "code_table.h"
#include "diag.h"
#include "jvm/jvm_helper_log.h"
#include "log_rotation.h"
#include "method_ids.h"
#include "publish.h"
#include "sparkprof_helper_log.h"
#include "tap.h"
#include "thread_names.h"

#define METHODS 300
#define CALLEES 50

struct helper {
	struct publisher pub;
	struct code_table code;
	struct method_ids ids;
	struct log_rotation rotation;
	struct thread_name_entry threads[2];
};

static void put(struct helper *h, const char *line)
{
	publisher_write(&h->pub, line, strlen(line));
}

static uint64_t method_start(int i)
{
	return 0x100000 + (uint64_t)i * 0x1000;
}

/* An L record with one J range inlining callee i % CALLEES, numbered as
 * code_events.c does: an N record the first time. */
static void compile(struct helper *h, int i)
{
	char line[256], name[64];
	const void *callee = (const void *)(uintptr_t)(0x5000 + 8 * (i % CALLEES));
	uint64_t id, offset;
	uint32_t nid;

	pthread_mutex_lock(&h->pub.lock);
	id = h->pub.next_code_id++;
	offset = h->pub.size;
	snprintf(name, sizeof(name), "m/M.m%d", i);
	snprintf(line, sizeof(line), "L %" PRIu64 " %" PRIu64 " %" PRIx64 " 100 %s\n",
		 agent_now_ns(), id, method_start(i), name);
	put(h, line);
	if (!(nid = method_ids_find(&h->ids, callee))) {
		nid = method_ids_add(&h->ids, callee);
		snprintf(line, sizeof(line), "N %" PRIu32 " c/C.c%d\n", nid, i % CALLEES);
		method_ids_set_span(&h->ids, nid, (struct log_span){ h->pub.size, strlen(line) });
		put(h, line);
	}
	snprintf(line, sizeof(line), "J %" PRIu64 " 0 10 %" PRIu32 "\n", id, nid);
	put(h, line);
	code_table_add(&h->code, method_start(i), 0x100, id, name, strdup(name),
		       (struct log_span){ offset, (uint32_t)(h->pub.size - offset) });
	pthread_mutex_unlock(&h->pub.lock);
}

static void unload(struct helper *h, int i)
{
	char line[64];
	uint64_t id;

	pthread_mutex_lock(&h->pub.lock);
	id = code_table_remove(&h->code, method_start(i), NULL);
	snprintf(line, sizeof(line), "U %" PRIu64 " %" PRIu64 "\n", agent_now_ns(), id);
	put(h, line);
	pthread_mutex_unlock(&h->pub.lock);
}

/* 40 KB of heartbeats: spread the records over more than the 1 MiB the
 * rotation reads the old file by. */
static void pad(struct helper *h)
{
	static char buf[40 * 1024];
	size_t len = 0;

	while (len + 32 < sizeof(buf))
		len += snprintf(buf + len, sizeof(buf) - len, "K %" PRIu64 "\n", agent_now_ns());
	pthread_mutex_lock(&h->pub.lock);
	publisher_write(&h->pub, buf, len);
	pthread_mutex_unlock(&h->pub.lock);
}

static int rotate(struct helper *h)
{
	int err;

	pthread_mutex_lock(&h->pub.lock);
	h->rotation.next_at = 0;
	err = log_rotation_check(&h->rotation, &h->pub, &h->code, &h->ids, h->threads, 2);
	pthread_mutex_unlock(&h->pub.lock);
	return err;
}

/* The whole of a file, from an fd opened on it before it was replaced. */
static char *slurp(int fd, size_t *len)
{
	struct stat st;
	char *buf;

	if (fstat(fd, &st) < 0 || !(buf = malloc(st.st_size + 1)))
		return NULL;
	*len = pread(fd, buf, st.st_size, 0) == st.st_size ? (size_t)st.st_size : 0;
	buf[*len] = 0;
	return buf;
}

static const char *last_line(const char *text, size_t len)
{
	const char *p = text + len - 1;   /* its '\n' */

	while (p > text && p[-1] != '\n')
		p--;
	return p;
}

static int open_log(const char *path)
{
	return open(path, O_RDONLY);
}

int main(void)
{
	static struct helper h = {
		.pub = { .fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER },
		.rotation = { .limit = 1 },
		.threads = { { 11, "Executor task launch worker for task 1.0 in stage 3.0 (TID 1)", 1, 0 },
			     { 12, "shuffle-client-1", 0, 0 } },
	};
	char path[64], line[256];
	int fds[3];
	char *text[3];
	size_t len[3];
	struct jvm_helper_log *follow = jvm_helper_log_new(), *fresh = jvm_helper_log_new();
	struct jvm_helper_log *polled;
	uint64_t unloaded_at[METHODS + 1] = { 0 }, compiled_at[METHODS + 1] = { 0 }, size2;

	snprintf(path, sizeof(path), SPARKPROF_HELPER_LOG_FMT, getpid());
	publisher_open(&h.pub, getpid());
	snprintf(h.pub.jvm, sizeof(h.pub.jvm), "test");
	publisher_write(&h.pub, line, publisher_header(&h.pub, "start", line, sizeof(line)));
	fds[0] = open_log(path);
	polled = jvm_helper_log_open(getpid());
	CHECK(polled != NULL, "the log opens as the recorder opens it");
	if (!polled)
		TAP_DONE();
	for (int t = 0; t < 2; t++) {
		snprintf(line, sizeof(line), "T %" PRIu64 " %d %s\n", agent_now_ns(), h.threads[t].tid,
			 h.threads[t].name);
		put(&h, line);
	}
	snprintf(line, sizeof(line), "S %" PRIu64 " 11 idle\n", agent_now_ns());
	put(&h, line);
	for (int i = 0; i < 200; i++) {
		compile(&h, i);
		compiled_at[i] = agent_now_ns();
		if (i % 4 == 0)
			pad(&h);
		if (i % 3 == 0) {
			unload(&h, i);
			unloaded_at[i] = agent_now_ns();
		}
	}
	CHECK(jvm_helper_log_poll(polled) > 0, "the polling reader reads the first file");
	/* Methods looked up now have their frames read back from the first
	 * file; the others wait in it. */
	for (int i = 0; i < 200; i += 2)
		jvm_helper_log_resolve(polled, method_start(i) + 4, compiled_at[i], (struct frame[4]){ 0 }, 4);
	CHECK(rotate(&h) == 0 && h.rotation.rotations == 1, "a first rotation");
	fds[1] = open_log(path);
	CHECK(jvm_helper_log_poll(polled) > 0, "and follows it into the second");
	for (int i = 200; i < METHODS; i++) {
		compile(&h, i);
		if (i % 4 == 0)
			pad(&h);
	}
	for (int i = 1; i < 200; i += 3) {
		unload(&h, i);    /* code restated by the first rotation */
		unloaded_at[i] = agent_now_ns();
	}
	CHECK(rotate(&h) == 0 && h.rotation.rotations == 2, "a second rotation");
	fds[2] = open_log(path);
	CHECK(jvm_helper_log_poll(polled) > 0, "and into the third");
	size2 = h.pub.size;
	compile(&h, METHODS);   /* after the last rotation */
	CHECK(jvm_helper_log_poll(polled) > 0, "and reads on in it");
	for (int f = 0; f < 3; f++)
		text[f] = slurp(fds[f], &len[f]);
	CHECK(text[0] && text[1] && text[2] && len[0] > 1536 * 1024,
	      "three files read, the first over 1.5 MiB (%zu bytes)", len[0]);
	if (!text[0] || !text[1] || !text[2])
		TAP_DONE();

	CHECK(!strncmp(last_line(text[0], len[0]), "G ", 2), "the old file ends with its G record");
	CHECK(!strncmp(text[1], "H 1 ", 4) && strstr(text[1], " continued test\n") &&
	      strstr(text[2], " continued test\n"), "new files start with a continued header");
	CHECK(strstr(text[2], " snapshot\n") && strstr(text[2], "c/C.c49\n"),
	      "the restated part ends with R snapshot and names every number");
	CHECK(len[2] < len[1] + len[0] / 2, "the last file holds less than what was written "
	      "(%zu bytes against %zu)", len[2], len[0] + len[1]);
	CHECK(h.rotation.next_at == 2 * size2, "the next rotation waits until the file has doubled");

	for (int f = 0; f < 3; f++) {
		jvm_helper_log_feed(follow, text[f], len[f]);
		if (f < 2)
			jvm_helper_log_next_file(follow);
	}
	jvm_helper_log_feed(fresh, text[2], len[2]);
	const struct jvm_helper_log_stats *fs = jvm_helper_log_get_stats(follow);
	const struct jvm_helper_log_stats *rs = jvm_helper_log_get_stats(fresh);
	CHECK(!fs->malformed && !rs->malformed, "nothing malformed (%llu following, %llu fresh)",
	      (unsigned long long)fs->malformed, (unsigned long long)rs->malformed);
	CHECK(fs->files == 2 && fs->restated > 200, "the follower skipped two restated parts "
	      "(%llu records)", (unsigned long long)fs->restated);

	uint64_t now = agent_now_ns();
	int live_ok = 1, dead_ok = 1, past_ok = 1, ended_ok = 1;
	for (int i = 0; i <= METHODS; i++) {
		for (int r = 0; r < 3; r++) {
			struct jvm_helper_log *log = r == 2 ? polled : r ? fresh : follow;
			struct frame fr[4];
			char want[32], callee[32];
			int n = jvm_helper_log_resolve(log, method_start(i) + 4, now, fr, 4);

			snprintf(want, sizeof(want), "m/M.m%d", i);
			snprintf(callee, sizeof(callee), "c/C.c%d", i % CALLEES);
			if (unloaded_at[i])
				dead_ok &= n == 0;
			else
				live_ok &= n == 2 && !strcmp(fr[0].name, callee) &&
					   !strcmp(fr[1].name, want);
			/* Ended in the first file (not restated) and never
			 * looked up before it was replaced. */
			if (r == 2 && unloaded_at[i] && unloaded_at[i] < compiled_at[199] && i % 2) {
				n = jvm_helper_log_resolve(polled, method_start(i) + 4, compiled_at[i],
							   fr, 4);
				ended_ok &= n == 2 && !strcmp(fr[0].name, callee);
			}
		}
		if (i < 200 && !unloaded_at[i])
			past_ok &= jvm_helper_log_resolve(fresh, method_start(i) + 4, compiled_at[i],
							  (struct frame[4]){ 0 }, 4) == 2;
	}
	CHECK(live_ok, "all three readers name every live method with its inlined frame");
	CHECK(dead_ok, "none names unloaded code");
	CHECK(past_ok, "restated code keeps its load time: a reader that never saw the first file "
	      "names it at the time it was compiled");
	CHECK(ended_ok, "the polling reader names code that ended in the first file with its "
	      "inlined frame (read back before the file was replaced)");
	const struct jvm_helper_log_stats *ps = jvm_helper_log_get_stats(polled);
	CHECK(ps->files == 2 && !ps->malformed && ps->inline_deferred >= METHODS &&
	      ps->inline_loads > METHODS / 2 && !ps->inline_unreadable && !ps->inline_lost,
	      "the polling reader deferred %llu J records and read back %llu methods' "
	      "(%llu unreadable, %llu malformed lines)", (unsigned long long)ps->inline_deferred,
	      (unsigned long long)ps->inline_loads, (unsigned long long)ps->inline_unreadable,
	      (unsigned long long)ps->malformed);
	for (int r = 0; r < 2; r++) {
		struct jvm_helper_log *log = r ? fresh : follow;

		CHECK(jvm_helper_log_thread_idle(log, 11, now) == 1 &&
		      !strcmp(jvm_helper_log_thread_name(log, 12, now), "shuffle-client-1"),
		      "%s: thread names and idle marks", r ? "fresh" : "follower");
	}

	jvm_helper_log_free(follow);
	jvm_helper_log_free(fresh);
	jvm_helper_log_free(polled);
	for (int f = 0; f < 3; f++) {
		free(text[f]);
		close(fds[f]);
	}
	unlink(path);
	TAP_DONE();
}

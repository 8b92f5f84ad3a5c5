/* test_recorder.c - a process that runs exec around the moment the recorder
 * first meets it gets one entry per program: the one /proc described when
 * it was read, never the old program's name over the new one's, and never
 * a second entry for the program it already described. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc/file_slurp.h"
#include "record/record_options.h"
#include "record/recorder.h"
#include "sparkprof_events.h"
#include "tap.h"

/* A child that execs sleep once released. */
struct gate {
	pid_t child;
	int release_fd;
	bool release_on_mark;  /* the worst moment: after the mark, before /proc is read */
};

#define GATES 5

struct gates {
	struct gate g[GATES];
	int marks[GATES];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int comm_is(pid_t pid, const char *want)
{
	char path[64], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = '\0';
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	return !strcmp(comm, want);
}

static int spawn(struct gate *g)
{
	int fds[2];

	if (pipe(fds) || (g->child = fork()) < 0)
		return -1;
	if (g->child == 0) {
		char byte;

		close(fds[1]);
		if (read(fds[0], &byte, 1) == 1)
			execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	g->release_fd = fds[1];
	return 0;
}

/* Lets the child exec; returns once /proc shows it. */
static void release(struct gate *g)
{
	if (write(g->release_fd, "x", 1) != 1)
		return;
	for (int i = 0; i < 500 && !comm_is(g->child, "sleep"); i++)
		usleep(10000);
}

/* The sampler's "known process" mark. */
static void on_mark(void *ctx, pid_t pid)
{
	struct gates *gs = ctx;

	for (int i = 0; i < GATES; i++) {
		if (gs->g[i].child != pid)
			continue;
		gs->marks[i]++;
		if (gs->g[i].release_on_mark) {
			gs->g[i].release_on_mark = false;
			release(&gs->g[i]);
		}
	}
}

static void feed(struct recorder *rec, pid_t pid, uint32_t kind, const char *comm,
		 uint32_t ustack_flags, uint64_t ts)
{
	struct sp_cpu_sample *s = calloc(1, sizeof(*s));

	s->hdr.kind = kind;
	s->hdr.tgid = (uint32_t)pid;
	s->hdr.tid = (uint32_t)pid;
	s->hdr.timestamp_ns = ts;
	snprintf(s->hdr.comm, sizeof(s->hdr.comm), "%s", comm);
	s->stacks.ustack_flags = ustack_flags;
	recorder_on_record(rec, s, kind == SP_EVENT_EXEC ? sizeof(s->hdr) : sizeof(*s));
	free(s);
}

static void cpu(struct recorder *rec, pid_t pid, const char *comm, uint32_t flags)
{
	feed(rec, pid, SP_EVENT_CPU_SAMPLE, comm, flags, now_ns());
}

static void exec_reported(struct recorder *rec, pid_t pid, uint64_t ts)
{
	feed(rec, pid, SP_EVENT_EXEC, "sleep", 0, ts);
}

static void run_cases(struct recorder *rec, struct gates *gs)
{
	struct gate *read_late = &gs->g[0], *read_early = &gs->g[1], *in_exec = &gs->g[2],
		    *reported_late = &gs->g[3], *read_during = &gs->g[4];
	uint64_t t;

	/* Sampled as the old program, read by /proc once it had exec'd. */
	read_late->release_on_mark = true;
	t = now_ns();
	cpu(rec, read_late->child, "test_recorder", 0);
	CHECK(gs->marks[0] == 1 && comm_is(read_late->child, "sleep"),
	      "the sampler was told before the process was read, and it exec'd then");
	exec_reported(rec, read_late->child, t);
	cpu(rec, read_late->child, "sleep", 0);
	CHECK(gs->marks[0] == 2, "its exec report read it as the new program and marked it again");

	/* Read as the old program, then exec'd. */
	cpu(rec, read_early->child, "test_recorder", 0);
	release(read_early);
	exec_reported(rec, read_early->child, now_ns());
	cpu(rec, read_early->child, "sleep", 0);
	CHECK(gs->marks[1] == 2, "an exec after the read opens a new entry, read again");

	/* Sampled inside exec: waits for a record from after it. */
	cpu(rec, in_exec->child, "test_recorder", SP_USTACK_IN_EXEC);
	cpu(rec, in_exec->child, "test_recorder", 0);
	CHECK(gs->marks[2] == 2, "a record from inside exec is read once the exec is over");

	/* Read after an exec whose report came later. */
	release(reported_late);
	t = now_ns();
	cpu(rec, reported_late->child, "sleep", 0);
	exec_reported(rec, reported_late->child, t);
	cpu(rec, reported_late->child, "sleep", 0);
	CHECK(gs->marks[3] == 2, "an exec reported after the read keeps the entry, marked again");

	/* Read while its exec was under way: the new program's memory, the
	 * exec's report (its end) later than the read. */
	release(read_during);
	cpu(rec, read_during->child, "sleep", 0);
	exec_reported(rec, read_during->child, now_ns());
	cpu(rec, read_during->child, "sleep", 0);
	CHECK(gs->marks[4] == 2, "an exec reported after a read of the new memory keeps the entry, "
	      "marked again");
}

static void check_folded(const char *dir, const struct gates *gs)
{
	char path[128], want[6][64];
	char *folded, *text = NULL;
	bool all = true;
	size_t len;

	snprintf(want[0], sizeof(want[0]), "\nsleep-%d 2\n", gs->g[0].child);
	snprintf(want[1], sizeof(want[1]), "\ntest_recorder-%d 1\n", gs->g[1].child);
	snprintf(want[2], sizeof(want[2]), "\nsleep-%d 1\n", gs->g[1].child);
	snprintf(want[3], sizeof(want[3]), "\ntest_recorder-%d 2\n", gs->g[2].child);
	snprintf(want[4], sizeof(want[4]), "\nsleep-%d 2\n", gs->g[3].child);
	snprintf(want[5], sizeof(want[5]), "\nsleep-%d 2\n", gs->g[4].child);
	snprintf(path, sizeof(path), "%s/all.folded", dir);
	folded = file_slurp(path, 1 << 20, &len);
	if (folded && (text = malloc(len + 2))) {
		text[0] = '\n';
		memcpy(text + 1, folded, len + 1);
	}
	for (int i = 0; i < 6; i++)
		all = all && text && strstr(text, want[i]);
	CHECK(all, "each program's samples under its own name:\n%s", folded ? folded : "(none)");
	free(text);
	free(folded);
}

int main(void)
{
	char dir[] = "/tmp/sparkprof-test-recorder-XXXXXX", cmd[128];
	char *argv[] = { "record", NULL };
	struct record_options opts;
	struct recorder_totals totals;
	uint64_t counters[SP_CNT_MAX] = { 0 };
	struct gates gs = { 0 };

	if (!mkdtemp(dir) || record_options_parse(&opts, 1, argv)) {
		printf("not ok 1 - setup: %s\n", strerror(errno));
		return 1;
	}
	for (int i = 0; i < GATES; i++)
		if (spawn(&gs.g[i])) {
			printf("not ok 1 - fork: %s\n", strerror(errno));
			return 1;
		}
	struct recorder_config cfg = {
		.opts = &opts,
		.output_dir = dir,
		.start_monotonic_ns = now_ns(),
		.start_realtime_ns = (uint64_t)time(NULL) * 1000000000ULL,
		.resolve_delay_ns = 0,
		.on_new_process = on_mark,
		.ctx = &gs,
	};
	struct recorder *rec = recorder_new(&cfg);

	CHECK(rec != NULL, "recorder created");
	if (!rec)
		return 1;
	run_cases(rec, &gs);
	recorder_drain(rec, now_ns(), true);
	recorder_get_totals(rec, &totals);
	CHECK(totals.cpu_samples == 10 && totals.processes == 6 && totals.bad_records == 0,
	      "10 samples of 6 programs filed (%llu, %llu)", (unsigned long long)totals.cpu_samples,
	      (unsigned long long)totals.processes);
	CHECK(recorder_finish(rec, counters, now_ns()) == 0, "profiles written");
	recorder_free(rec);
	check_folded(dir, &gs);

	for (int i = 0; i < GATES; i++) {
		kill(gs.g[i].child, SIGKILL);
		waitpid(gs.g[i].child, NULL, 0);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		printf("# could not remove %s\n", dir);
	return tap_failed ? 1 : 0;
}

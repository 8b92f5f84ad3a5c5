/* test_recorder.c - a process that runs exec while the recorder first meets
 * it is described as the program it runs after the sampler was told about
 * it (from then on the BPF side reports its exec), never as the old one. */
#include <errno.h>
#include <signal.h>
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

struct gate {
	pid_t child;
	int release_fd;
	int marked;
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

/* The sampler's "known process" mark: the worst moment for the exec is
 * right after it, before the recorder reads /proc. */
static void release_and_wait_for_exec(void *ctx, pid_t pid)
{
	struct gate *g = ctx;

	g->marked++;
	if (pid != g->child || write(g->release_fd, "x", 1) != 1)
		return;
	for (int i = 0; i < 500 && !comm_is(pid, "sleep"); i++)
		usleep(10000);
}

static void feed_sample(struct recorder *rec, pid_t pid, uint32_t kind)
{
	struct sp_cpu_sample *s = calloc(1, sizeof(*s));

	s->hdr.kind = kind;
	s->hdr.tgid = (uint32_t)pid;
	s->hdr.tid = (uint32_t)pid;
	s->hdr.timestamp_ns = now_ns();
	snprintf(s->hdr.comm, sizeof(s->hdr.comm), "before-exec");
	recorder_on_record(rec, s, kind == SP_EVENT_EXEC ? sizeof(s->hdr) : sizeof(*s));
	free(s);
}

int main(void)
{
	char dir[] = "/tmp/sparkprof-test-recorder-XXXXXX", path[128], label[64];
	char *argv[] = { "record", NULL };
	struct record_options opts;
	struct recorder_totals totals;
	uint64_t counters[SP_CNT_MAX] = { 0 };
	struct gate g = { 0 };
	int fds[2];
	size_t len;

	if (!mkdtemp(dir) || pipe(fds) || record_options_parse(&opts, 1, argv)) {
		printf("not ok 1 - setup: %s\n", strerror(errno));
		return 1;
	}
	g.child = fork();
	if (g.child == 0) {
		char byte;

		close(fds[1]);
		if (read(fds[0], &byte, 1) == 1)
			execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	g.release_fd = fds[1];

	struct recorder_config cfg = {
		.opts = &opts,
		.output_dir = dir,
		.start_monotonic_ns = now_ns(),
		.start_realtime_ns = (uint64_t)time(NULL) * 1000000000ULL,
		.resolve_delay_ns = 0,
		.on_new_process = release_and_wait_for_exec,
		.ctx = &g,
	};
	struct recorder *rec = recorder_new(&cfg);

	CHECK(rec != NULL, "recorder created");
	if (!rec)
		return 1;
	feed_sample(rec, g.child, SP_EVENT_CPU_SAMPLE);
	CHECK(g.marked == 1 && comm_is(g.child, "sleep"),
	      "the sampler was told before the process was read, and it exec'd then");
	feed_sample(rec, g.child, SP_EVENT_CPU_SAMPLE);
	CHECK(g.marked == 1, "a known process is not announced twice");
	feed_sample(rec, g.child, SP_EVENT_EXEC);
	feed_sample(rec, g.child, SP_EVENT_CPU_SAMPLE);
	CHECK(g.marked == 2, "after an exec record the process is announced (and read) again");
	recorder_drain(rec, now_ns(), true);
	recorder_get_totals(rec, &totals);
	CHECK(totals.cpu_samples == 3 && totals.processes == 2 && totals.bad_records == 0,
	      "3 samples of 2 programs filed");
	CHECK(recorder_finish(rec, counters, now_ns()) == 0, "profiles written");
	recorder_free(rec);

	snprintf(path, sizeof(path), "%s/all.folded", dir);
	snprintf(label, sizeof(label), "sleep-%d", g.child);
	char *folded = file_slurp(path, 1 << 20, &len);
	CHECK(folded && !strncmp(folded, label, strlen(label)) && !strstr(folded, "before-exec") &&
	      !strstr(folded, "test_recorder"),
	      "samples are filed under the program the process runs: %s", folded ? folded : "(none)");
	free(folded);

	kill(g.child, SIGKILL);
	waitpid(g.child, NULL, 0);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path))
		printf("# could not remove %s\n", dir);
	return tap_failed ? 1 : 0;
}

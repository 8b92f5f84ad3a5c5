/* test_process_table.c - processes by pid, renamed from /proc, entries
 * retired by exec or exit, and settled entries that only the summary still
 * visits. */
#include <stdbool.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <string.h>
#include <unistd.h>

#include "record/process_table.h"
#include "tap.h"

static int count_visits(struct process *p, void *ctx)
{
	(void)p;
	(*(int *)ctx)++;
	return 0;
}

static void count_frees(struct process *p, void *ctx)
{
	(void)p;
	(*(int *)ctx)++;
}

static int count_released(struct process *p, void *ctx)
{
	(*(int *)ctx) += p->released;
	return 0;
}

/* A node that starts and ends processes all the time: every live pid is
 * found among thousands retired (the index deletes by backward shift), and
 * once released and settled they leave the active visits. */
static void test_churn(void)
{
	struct process_table *t = process_table_new();
	enum { N = 5000 };
	static struct process *made[N];
	bool created, found = true, kept = true;
	int active = 0, all = 0, released = 0, frees = 0;

	/* Pids no process has: colliding in the index's low bits. */
	for (int i = 0; i < N; i++)
		made[i] = process_table_get(t, 0x3f000000 + i * 64, "churn", &created);
	for (int i = 0; i < N; i += 2)
		process_table_retire(t, 0x3f000000 + i * 64);
	for (int i = 0; i < N; i++) {
		struct process *p = process_table_find(t, 0x3f000000 + i * 64);

		found &= i % 2 ? p == made[i] : p == NULL;
		kept &= made[i] && made[i]->pid == 0x3f000000 + i * 64;
	}
	CHECK(found && kept, "each live pid found, no retired one, after %d retired", N / 2);
	for (int i = 0; i < N; i += 4)
		made[i]->released = true;
	process_table_settle(t);
	process_table_foreach_active(t, count_visits, &active);
	process_table_foreach_active(t, count_released, &released);
	process_table_foreach(t, count_visits, &all);
	CHECK(active == N - N / 4 && released == 0 && all == N && process_table_count(t) == N,
	      "released entries settled: %d active, %d visited in all", active, all);
	struct process *reused = process_table_get(t, 0x3f000000, NULL, &created);
	CHECK(reused && created && reused != made[0], "a pid used again gets a new entry");
	process_table_free(t, count_frees, &frees);
	CHECK(frees == N + 1, "every entry freed once (%d)", frees);
}

int main(void)
{
	struct process_table *t = process_table_new();
	struct process *self, *again, *gone;
	char want[48];
	bool created;
	int visits = 0, frees = 0;

	self = process_table_get(t, getpid(), "fallback", &created);
	CHECK(self && created && self->pid == getpid(), "new entry for our pid");
	CHECK(strcmp(self->comm, "fallback") && !strncmp(self->label, self->comm, strlen(self->comm)),
	      "comm read from /proc, label comm-pid: %s", self->label);
	CHECK(process_table_get(t, getpid(), NULL, &created) == self && !created,
	      "same entry the second time");
	gone = process_table_get(t, 0x3ffffff0, "exited", &created);
	CHECK(gone && created && !strcmp(gone->comm, "exited"),
	      "a process already gone takes the fallback comm");
	prctl(PR_SET_NAME, "renamed-table");
	process_table_rename(self);
	snprintf(want, sizeof(want), "renamed-table-%d", getpid());
	CHECK(!strcmp(self->comm, "renamed-table") && !strcmp(self->label, want),
	      "renamed from /proc: %s", self->label);
	process_table_rename(gone);
	CHECK(!strcmp(gone->label, "exited-1073741808"), "a process already gone keeps its name");

	process_table_retire(t, getpid());
	CHECK(self->retired && process_table_find(t, getpid()) == NULL,
	      "retired: no longer found by pid");
	process_table_retire(t, 0x3ffffff0);
	again = process_table_get(t, getpid(), NULL, &created);
	CHECK(again && created && again != self && !again->retired,
	      "a fresh entry after exec");
	process_table_foreach(t, count_visits, &visits);
	CHECK(visits == 3 && process_table_count(t) == 3,
	      "retired entries are still visited (%d)", visits);
	/* One retired pid has no new entry: freeing must cope with that. */
	process_table_free(t, count_frees, &frees);
	CHECK(frees == 3, "every entry freed once (%d)", frees);
	test_churn();
	TAP_DONE();
}

/* test_process_table.c - processes by pid, and entries retired by exec. */
#include <stdbool.h>
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

int main(void)
{
	struct process_table *t = process_table_new();
	struct process *self, *again, *gone;
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
	TAP_DONE();
}

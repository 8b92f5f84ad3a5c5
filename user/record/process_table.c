/* process_table.c - see process_table.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/grow_array.h"
#include "record/process_table.h"

/* Live entries are found by pid in an open-addressing index (linear
 * probing, at most half full, deletion by backward shift), so a pid that
 * exits leaves nothing there; a node that starts thousands of processes an
 * hour keeps only their entries, for the summary. */
struct process_table {
	struct process **index;    /* live entries by pid; NULL: empty */
	size_t nindex;             /* a power of two */
	struct process **live;     /* live entries, in the order first seen */
	size_t nlive, caplive;
	struct process **retired;  /* ran exec or exited since, not yet settled */
	size_t nretired, capretired;
	struct process **settled;  /* retired and released: kept for the summary */
	size_t nsettled, capsettled;
};

struct process_table *process_table_new(void)
{
	return calloc(1, sizeof(struct process_table));
}

static void free_all(struct process **v, size_t n, void (*fn)(struct process *p, void *ctx),
		     void *ctx)
{
	for (size_t i = 0; i < n; i++) {
		if (fn)
			fn(v[i], ctx);
		free(v[i]);
	}
	free(v);
}

void process_table_free(struct process_table *t, void (*free_fn)(struct process *p, void *ctx),
			void *ctx)
{
	if (!t)
		return;
	free_all(t->settled, t->nsettled, free_fn, ctx);
	free_all(t->retired, t->nretired, free_fn, ctx);
	free_all(t->live, t->nlive, free_fn, ctx);
	free(t->index);
	free(t);
}

static size_t home_slot(const struct process_table *t, pid_t pid)
{
	uint32_t h = (uint32_t)pid * 0x9e3779b1u;

	return (h ^ (h >> 16)) & (t->nindex - 1);   /* the high bits count too */
}

/* pid's slot in the index, or the empty slot where it would go. */
static size_t find_slot(const struct process_table *t, pid_t pid)
{
	size_t i = home_slot(t, pid);

	while (t->index[i] && t->index[i]->pid != pid)
		i = (i + 1) & (t->nindex - 1);
	return i;
}

static int grow_index(struct process_table *t)
{
	size_t n = t->nindex ? 2 * t->nindex : 64;
	struct process **old = t->index;
	size_t nold = t->nindex;

	if (!(t->index = calloc(n, sizeof(*t->index)))) {
		t->index = old;
		return -ENOMEM;
	}
	t->nindex = n;
	for (size_t i = 0; i < nold; i++)
		if (old[i])
			t->index[find_slot(t, old[i]->pid)] = old[i];
	free(old);
	return 0;
}

/* Empties slot i, moving later entries of its probe run back so that
 * every entry stays reachable from its home slot. */
static void remove_slot(struct process_table *t, size_t i)
{
	size_t mask = t->nindex - 1, j = i;

	t->index[i] = NULL;
	for (;;) {
		j = (j + 1) & mask;
		if (!t->index[j])
			return;
		size_t home = home_slot(t, t->index[j]->pid);
		/* The entry at j may fill the hole at i if its home is not in
		 * (i, j] (cyclically). */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			t->index[i] = t->index[j];
			t->index[j] = NULL;
			i = j;
		}
	}
}

/* The main thread's name; comm files end in a newline. */
static void read_comm(pid_t pid, char *comm, size_t size, const char *fallback)
{
	char path[64];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, comm, size - 1);
		close(fd);
	}
	if (n <= 0) {
		snprintf(comm, size, "%s", fallback && *fallback ? fallback : "[unknown]");
		return;
	}
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
}

struct process *process_table_find(struct process_table *t, pid_t pid)
{
	return t->nindex ? t->index[find_slot(t, pid)] : NULL;
}

void process_table_rename(struct process *p)
{
	char comm[sizeof(p->comm)];

	read_comm(p->pid, comm, sizeof(comm), p->comm);
	memcpy(p->comm, comm, sizeof(comm));
	snprintf(p->label, sizeof(p->label), "%s-%d", p->comm, p->pid);
}

void process_table_retire(struct process_table *t, pid_t pid)
{
	size_t i = t->nindex ? find_slot(t, pid) : 0;
	struct process *p = t->nindex ? t->index[i] : NULL;

	/* Out of memory, the old entry stays in use: names may be off,
	 * nothing breaks. */
	if (!p || grow_array((void **)&t->retired, &t->capretired, t->nretired + 1,
			     sizeof(*t->retired)))
		return;
	t->retired[t->nretired++] = p;
	p->retired = true;
	remove_slot(t, i);
	for (size_t k = 0; k < t->nlive; k++)
		if (t->live[k] == p) {
			memmove(&t->live[k], &t->live[k + 1], (t->nlive - k - 1) * sizeof(*t->live));
			t->nlive--;
			break;
		}
}

void process_table_settle(struct process_table *t)
{
	size_t kept = 0;

	for (size_t i = 0; i < t->nretired; i++) {
		struct process *p = t->retired[i];

		if (p->released && !grow_array((void **)&t->settled, &t->capsettled,
					       t->nsettled + 1, sizeof(*t->settled)))
			t->settled[t->nsettled++] = p;
		else
			t->retired[kept++] = p;
	}
	t->nretired = kept;
}

struct process *process_table_get(struct process_table *t, pid_t pid, const char *fallback_comm,
				  bool *created)
{
	struct process *p = process_table_find(t, pid);

	*created = false;
	if (p)
		return p;
	if (((t->nlive + 1) * 2 > t->nindex && grow_index(t)) ||
	    grow_array((void **)&t->live, &t->caplive, t->nlive + 1, sizeof(*t->live)))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL; /* nothing was added: the next call retries */
	p->pid = pid;
	read_comm(pid, p->comm, sizeof(p->comm), fallback_comm);
	snprintf(p->label, sizeof(p->label), "%s-%d", p->comm, pid);
	t->index[find_slot(t, pid)] = p;
	t->live[t->nlive++] = p;
	*created = true;
	return p;
}

static int visit_all(struct process **v, size_t n, int (*fn)(struct process *p, void *ctx),
		     void *ctx)
{
	int ret = 0;

	for (size_t i = 0; i < n && !ret; i++)
		ret = fn(v[i], ctx);
	return ret;
}

int process_table_foreach_active(struct process_table *t,
				 int (*fn)(struct process *p, void *ctx), void *ctx)
{
	int ret = visit_all(t->retired, t->nretired, fn, ctx);

	return ret ? ret : visit_all(t->live, t->nlive, fn, ctx);
}

int process_table_foreach(struct process_table *t, int (*fn)(struct process *p, void *ctx),
			  void *ctx)
{
	int ret = visit_all(t->settled, t->nsettled, fn, ctx);

	return ret ? ret : process_table_foreach_active(t, fn, ctx);
}

size_t process_table_count(const struct process_table *t)
{
	return t->nsettled + t->nretired + t->nlive;
}

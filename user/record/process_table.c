/* process_table.c - see process_table.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/grow_array.h"
#include "base/strmap.h"
#include "record/process_table.h"

struct process_table {
	struct strmap *by_pid;     /* decimal pid -> struct process (NULL: retired) */
	struct process **retired;  /* processes that ran exec or exited since */
	size_t nretired, capretired;
};

struct process_table *process_table_new(void)
{
	struct process_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->by_pid = strmap_new();
	if (!t->by_pid) {
		free(t);
		return NULL;
	}
	return t;
}

struct free_ctx {
	void (*fn)(struct process *p, void *ctx);
	void *ctx;
};

static int free_one(const char *key, void *value, void *ctx)
{
	struct free_ctx *fc = ctx;

	(void)key;
	if (!value) /* a retired pid with no new entry yet */
		return 0;
	if (fc->fn)
		fc->fn(value, fc->ctx);
	free(value);
	return 0;
}

void process_table_free(struct process_table *t, void (*free_fn)(struct process *p, void *ctx),
			void *ctx)
{
	struct free_ctx fc = { free_fn, ctx };

	if (!t)
		return;
	strmap_foreach(t->by_pid, free_one, &fc);
	strmap_free(t->by_pid, NULL);
	for (size_t i = 0; i < t->nretired; i++)
		free_one(NULL, t->retired[i], &fc);
	free(t->retired);
	free(t);
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
	char key[16];
	int len = snprintf(key, sizeof(key), "%d", pid);

	return strmap_get(t->by_pid, key, (size_t)len);
}

void process_table_retire(struct process_table *t, pid_t pid)
{
	char key[16];
	int len = snprintf(key, sizeof(key), "%d", pid), inserted;
	void **slot = strmap_slot(t->by_pid, key, (size_t)len, &inserted);

	if (!slot || !*slot)
		return;
	/* Out of memory, the old entry stays in use: names may be off,
	 * nothing breaks. */
	if (grow_array((void **)&t->retired, &t->capretired, t->nretired + 1,
		       sizeof(*t->retired)))
		return;
	t->retired[t->nretired++] = *slot;
	((struct process *)*slot)->retired = true;
	*slot = NULL;
}

struct process *process_table_get(struct process_table *t, pid_t pid, const char *fallback_comm,
				  bool *created)
{
	char key[16];
	int len = snprintf(key, sizeof(key), "%d", pid), inserted;
	void **slot = strmap_slot(t->by_pid, key, (size_t)len, &inserted);
	struct process *p;

	*created = false;
	if (!slot)
		return NULL;
	if (*slot)
		return *slot;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL; /* the slot stays empty: the next call retries */
	p->pid = pid;
	read_comm(pid, p->comm, sizeof(p->comm), fallback_comm);
	snprintf(p->label, sizeof(p->label), "%s-%d", p->comm, pid);
	*slot = p;
	*created = true;
	return p;
}

struct foreach_ctx {
	int (*fn)(struct process *p, void *ctx);
	void *ctx;
};

static int visit(const char *key, void *value, void *ctx)
{
	struct foreach_ctx *fc = ctx;

	(void)key;
	return value ? fc->fn(value, fc->ctx) : 0;
}

int process_table_foreach(struct process_table *t, int (*fn)(struct process *p, void *ctx),
			  void *ctx)
{
	struct foreach_ctx fc = { fn, ctx };
	int ret = 0;

	for (size_t i = 0; i < t->nretired && !ret; i++)
		ret = fn(t->retired[i], ctx);
	return ret ? ret : strmap_foreach(t->by_pid, visit, &fc);
}

static int count_entry(const char *key, void *value, void *ctx)
{
	(void)key;
	if (value)
		(*(size_t *)ctx)++;
	return 0;
}

size_t process_table_count(const struct process_table *t)
{
	size_t count = t->nretired;

	strmap_foreach(t->by_pid, count_entry, &count);
	return count;
}

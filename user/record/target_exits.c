/* target_exits.c - see target_exits.h. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record/target_exits.h"

struct target_exits {
	int n;
	struct pollfd fds[];
};

struct target_exits *target_exits_new(const pid_t *pids, int n)
{
	struct target_exits *t = calloc(1, sizeof(*t) + (size_t)n * sizeof(t->fds[0]));
	int err;

	if (!t)
		return NULL;
	for (; t->n < n; t->n++) {
		int fd = (int)syscall(SYS_pidfd_open, pids[t->n], 0);

		if (fd < 0) {
			err = errno;
			target_exits_free(t);
			errno = err;
			return NULL;
		}
		t->fds[t->n] = (struct pollfd){ .fd = fd, .events = POLLIN };
	}
	return t;
}

void target_exits_free(struct target_exits *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->n; i++)
		close(t->fds[i].fd);
	free(t);
}

bool target_exits_all(struct target_exits *t)
{
	return poll(t->fds, (nfds_t)t->n, 0) == t->n;
}

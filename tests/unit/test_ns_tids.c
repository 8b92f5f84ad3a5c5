/* test_ns_tids.c - thread ids across pid namespaces. */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc/ns_tids.h"
#include "tap.h"

int main(void)
{
	int pipefd[2];
	pid_t child, inner;

	CHECK(ns_tids_new(getpid()) == NULL, "our own namespace needs no translation");

	/* A child in a new pid namespace is pid 1 there. */
	if (pipe(pipefd) || unshare(CLONE_NEWPID)) {
		CHECK(0, "unshare(CLONE_NEWPID) (needs root)");
		TAP_DONE();
	}
	child = fork();
	if (child == 0) {
		char byte;

		close(pipefd[1]);
		if (read(pipefd[0], &byte, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(pipefd[0]);
	{
		struct ns_tids *map = ns_tids_new(child);

		CHECK(map != NULL, "a process in another namespace gets a map");
		inner = map ? ns_tids_lookup(map, child) : -1;
		CHECK(inner == 1, "its main thread is 1 inside (got %d)", inner);
		CHECK(map && ns_tids_lookup(map, child) == 1, "answer remembered");
		CHECK(map && ns_tids_lookup(map, 0x7ffffff0) == -1, "unknown thread: -1");
		ns_tids_free(map);
	}
	close(pipefd[1]);
	waitpid(child, NULL, 0);
	TAP_DONE();
}

/* test_target_exits.c - record -p ends when all its targets have exited. */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record/target_exits.h"
#include "tap.h"

static pid_t sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

int main(void)
{
	pid_t pids[2] = { sleeper(), sleeper() };
	struct target_exits *t = target_exits_new(pids, 2);

	CHECK(t != NULL, "two live targets are held");
	if (!t)
		TAP_DONE();
	CHECK(!target_exits_all(t), "both alive: not done");
	kill(pids[0], SIGKILL);
	waitpid(pids[0], NULL, 0);
	CHECK(!target_exits_all(t), "one exited: not done");
	kill(pids[1], SIGKILL);
	/* Reaped or not, an exited process's pidfd is readable. */
	usleep(100 * 1000);
	CHECK(target_exits_all(t), "both exited: done");
	waitpid(pids[1], NULL, 0);
	target_exits_free(t);

	CHECK(target_exits_new(pids, 1) == NULL && errno == ESRCH, "a reaped pid: ESRCH");
	TAP_DONE();
}

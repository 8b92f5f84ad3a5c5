/* child_command.c - see child_command.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "base/log.h"
#include "record/child_command.h"

int child_command_spawn(struct child_command *child, char *const argv[])
{
	int gate[2];
	pid_t pid;

	if (pipe2(gate, O_CLOEXEC)) {
		int err = -errno;

		sp_err("create a pipe for '%s': %s", argv[0], strerror(-err));
		return err;
	}
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		sp_err("fork for '%s': %s", argv[0], strerror(-err));
		close(gate[0]);
		close(gate[1]);
		return err;
	}
	if (pid == 0) {
		char byte;

		close(gate[1]);
		/* Wait until the profiler closes its end: EOF means go. */
		while (read(gate[0], &byte, 1) < 0 && errno == EINTR)
			;
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		/* A sample taken inside execve, before the kernel renames the
		 * process, names it as the command too, not as sparkprof. */
		prctl(PR_SET_NAME, basename(argv[0]));
		execvp(argv[0], argv);
		fprintf(stderr, "sparkprof: error: execute '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(gate[0]);
	child->pid = pid;
	child->gate_fd = gate[1];
	child->exited = false;
	child->exit_status = 0;
	return 0;
}

void child_command_release(struct child_command *child)
{
	if (child->gate_fd >= 0) {
		close(child->gate_fd);
		child->gate_fd = -1;
	}
}

bool child_command_poll_exit(struct child_command *child)
{
	int status;

	if (child->exited)
		return true;
	if (waitpid(child->pid, &status, WNOHANG) == child->pid) {
		child->exited = true;
		child->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
	return child->exited;
}

void child_command_abort(struct child_command *child)
{
	if (child->exited)
		return;
	kill(child->pid, SIGKILL);
	child_command_release(child);
	while (waitpid(child->pid, NULL, 0) < 0 && errno == EINTR)
		;
	child->exited = true;
}

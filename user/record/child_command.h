/* child_command.h - `sparkprof record -- cmd args`: the command is forked
 * first and held before exec until profiling has started, so its first
 * instructions are sampled too. */
#ifndef SPARKPROF_CHILD_COMMAND_H
#define SPARKPROF_CHILD_COMMAND_H

#include <stdbool.h>
#include <sys/types.h>

struct child_command {
	pid_t pid;
	int gate_fd;     /* write end: closing it lets the child exec */
	int exit_status; /* valid once exited */
	bool exited;
};

/* Forks the command, held at the gate. Returns 0 or -errno (with a message). */
int child_command_spawn(struct child_command *child, char *const argv[]);
/* Lets it exec. A command that cannot be executed exits with status 127
 * after printing why. */
void child_command_release(struct child_command *child);
/* Non-blocking: true once the command has exited. */
bool child_command_poll_exit(struct child_command *child);
/* Kills a held or running child (on setup failure). */
void child_command_abort(struct child_command *child);

#endif

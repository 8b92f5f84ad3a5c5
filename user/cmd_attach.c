/* cmd_attach.c - 'sparkprof attach': load the helper into running JVMs. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "commands.h"
#include "jvm/jvm_attach.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sparkprof attach [--agent PATH] [--options OPTS] PID...\n"
		"\n"
		"Loads the sparkprof JVMTI helper into running HotSpot JVMs through the\n"
		"attach protocol, as each JVM's own user, also inside containers.\n"
		"\n"
		"  --agent PATH     the agent library (default: " "libsparkprof-agent.so beside\n"
		"                   sparkprof, in build/ beside it, or in lib/sparkprof)\n"
		"  --options OPTS   the option string passed to the agent's Agent_OnAttach\n"
		"  -h, --help       this text\n"
		"\n"
		"Exits 0 when the helper is loaded (or already was) in every PID, 1 otherwise.\n");
}

static bool parse_pid(const char *s, pid_t *pid)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > INT_MAX)
		return false;
	*pid = (pid_t)v;
	return true;
}

int cmd_attach(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "agent", required_argument, NULL, 'a' },
		{ "options", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char agent[PATH_MAX], err[1024];
	const char *agent_arg = NULL, *options = NULL;
	int opt, failed = 0;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'a':
			agent_arg = optarg;
			break;
		case 'o':
			options = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind == argc) {
		sp_err("attach: no PID given (try 'sparkprof attach --help')");
		return 2;
	}
	for (int i = optind; i < argc; i++) {
		pid_t pid;

		if (!parse_pid(argv[i], &pid)) {
			sp_err("attach: '%s' is not a process id", argv[i]);
			return 2;
		}
	}
	if (agent_arg) {
		if (snprintf(agent, sizeof(agent), "%s", agent_arg) >= (int)sizeof(agent)) {
			sp_err("attach: agent path too long: %s", agent_arg);
			return 2;
		}
	} else if (jvm_attach_find_helper(agent, sizeof(agent))) {
		sp_err("attach: cannot find libsparkprof-agent.so beside the sparkprof binary, "
		       "in build/ beside it, or in /usr/local/lib/sparkprof; give --agent PATH");
		return 1;
	}

	for (int i = optind; i < argc; i++) {
		pid_t pid;
		int rc;

		parse_pid(argv[i], &pid);
		rc = jvm_attach_load_agent(pid, agent, options, err, sizeof(err));
		if (rc == 0) {
			printf("pid %d: loaded %s\n", (int)pid, agent);
		} else if (rc == -EALREADY) {
			printf("%s\n", err);
		} else {
			sp_err("%s", err);
			failed++;
		}
		fflush(stdout);
	}
	return failed ? 1 : 0;
}

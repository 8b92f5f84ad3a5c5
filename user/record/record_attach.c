/* record_attach.c - see record_attach.h. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "jvm/jvm_attach.h"
#include "jvm/jvm_process.h"
#include "record/record_attach.h"

static bool is_target(const struct record_options *opts, pid_t pid)
{
	if (!opts->npids)
		return true;
	for (int i = 0; i < opts->npids; i++)
		if (opts->pids[i] == pid)
			return true;
	return false;
}

int record_attach_jvms(const struct record_options *opts)
{
	char agent[PATH_MAX], err[512];
	struct jvm_info *jvms = NULL;
	size_t count = 0;
	int attached = 0, ret;

	if (opts->agent_path) {
		if (!realpath(opts->agent_path, agent)) {
			sp_warn("--agent %s: %s; not attaching", opts->agent_path, strerror(errno));
			return 0;
		}
	} else if (jvm_attach_find_helper(agent, sizeof(agent))) {
		sp_warn("--attach: libsparkprof-agent.so not found beside sparkprof (use --agent PATH)");
		return 0;
	}
	ret = jvm_process_scan(&jvms, &count);
	if (ret) {
		sp_warn("--attach: list the JVMs: %s", strerror(-ret));
		return 0;
	}
	for (size_t i = 0; i < count; i++) {
		if (!is_target(opts, jvms[i].pid) || jvms[i].helper_loaded)
			continue;
		ret = jvm_attach_load_agent(jvms[i].pid, agent, NULL, err, sizeof(err));
		if (ret == -EALREADY)
			continue; /* a helper of that name is there already */
		if (ret) {
			sp_warn("--attach: %s", err);
			continue;
		}
		sp_info("attached the helper to pid %d", jvms[i].pid);
		attached++;
	}
	free(jvms);
	return attached;
}

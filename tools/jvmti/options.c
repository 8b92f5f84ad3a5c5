/* options.c - parse the helper's option string (see options.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

static const struct {
	const char *key;
	size_t offset;
	int min, max;
} keys[] = {
	{ "map", offsetof(struct agent_options, map), 0, 1 },
	{ "inline", offsetof(struct agent_options, inline_frames), 0, 1 },
	{ "interval", offsetof(struct agent_options, interval_ms), 50, 60000 },
	{ "idle", offsetof(struct agent_options, idle), 0, 1 },
	{ "names", offsetof(struct agent_options, names), 0, 1 },
	{ "stats", offsetof(struct agent_options, stats), 0, 1 },
	{ "log_max", offsetof(struct agent_options, log_max_mb), 0, 65536 },
	{ "keep_log", offsetof(struct agent_options, keep_log), 0, 1 },
};

int agent_options_parse(const char *opts, struct agent_options *out, char *err, size_t errlen)
{
	*out = (struct agent_options){ .map = 1, .inline_frames = 1, .interval_ms = 1000,
				       .idle = 1, .names = 1, .log_max_mb = 16 };
	if (!opts || !*opts)
		return 0;
	const char *p = opts;
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char item[128];
		if (len == 0 || len >= sizeof(item)) {
			snprintf(err, errlen, "bad option '%.*s' in '%s' (want key=value[,key=value])",
				 (int)(len > 64 ? 64 : len), p, opts);
			return -1;
		}
		memcpy(item, p, len);
		item[len] = 0;
		char *eq = strchr(item, '=');
		size_t k;
		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (eq && strlen(keys[k].key) == (size_t)(eq - item) &&
			    !strncmp(item, keys[k].key, eq - item))
				break;
		if (k == sizeof(keys) / sizeof(keys[0])) {
			snprintf(err, errlen,
				 "unknown option '%s' in '%s' (known: map=0|1, inline=0|1, "
				 "interval=MS, idle=0|1, names=0|1, stats=0|1, log_max=MB, keep_log=0|1)",
				 item, opts);
			return -1;
		}
		char *tail;
		errno = 0;
		long v = strtol(eq + 1, &tail, 10);
		if (errno || tail == eq + 1 || *tail || v < keys[k].min || v > keys[k].max) {
			snprintf(err, errlen, "bad value in '%s': %s wants an integer in %d..%d",
				 item, keys[k].key, keys[k].min, keys[k].max);
			return -1;
		}
		*(int *)((char *)out + keys[k].offset) = (int)v;
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

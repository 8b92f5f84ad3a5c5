/* cmd_store_input.c - see cmd_store_input.h. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/log.h"
#include "cmd_store_input.h"

static void store_path(const char *in, char *path, size_t size)
{
	struct stat st;

	if (!stat(in, &st) && S_ISDIR(st.st_mode))
		snprintf(path, size, "%s/%s", in, STORE_FILE_NAME);
	else
		snprintf(path, size, "%s", in);
}

bool cmd_is_store_input(const char *in)
{
	struct stat st;
	size_t n = strlen(in), name = strlen(STORE_FILE_NAME);

	if (!stat(in, &st) && S_ISDIR(st.st_mode))
		return true;
	return n >= name && !strcmp(in + n - name, STORE_FILE_NAME);
}

struct store_reader *cmd_open_store(const char *in)
{
	char path[PATH_MAX];

	store_path(in, path, sizeof(path));
	return store_reader_open(path);
}

static int parse_number(const char *cmd, const char *what, const char *text, int64_t max,
			int64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoll(text, &end, 10);
	if (errno || end == text || *out < 0 || *out > max || (*end && *end != '.')) {
		sp_err("%s: %s '%s' is not a number from 0 to %lld", cmd, what, text, (long long)max);
		return -1;
	}
	return (int)(end - text);
}

static int parse_stage(const char *cmd, const char *arg, struct label_filter *f)
{
	int64_t stage, attempt = 0;
	int n;

	f->by_stage = true;
	if (!strcmp(arg, "none")) {
		f->stage = -1;
		return 1;
	}
	n = parse_number(cmd, "--stage", arg, INT32_MAX, &stage);
	if (n < 0 || (arg[n] == '.' && parse_number(cmd, "--stage", arg + n + 1, INT32_MAX,
						     &attempt) < 0))
		return -1;
	if (arg[n] == '.' && strchr(arg + n + 1, '.')) {
		sp_err("%s: --stage '%s' is not STAGE or STAGE.ATTEMPT", cmd, arg);
		return -1;
	}
	f->stage = (int32_t)stage;
	f->attempt = (int32_t)attempt;
	return 1;
}

int cmd_filter_option(const char *cmd, int opt, const char *arg, struct label_filter *f)
{
	int64_t task;

	switch (opt) {
	case 'A':
		f->app_id = arg;
		return 1;
	case 'E':
		f->executor_id = arg;
		return 1;
	case 'S':
		return parse_stage(cmd, arg, f);
	case 'T':
		if (parse_number(cmd, "--task", arg, INT64_MAX, &task) < 0 || strchr(arg, '.')) {
			if (strchr(arg, '.'))
				sp_err("%s: --task '%s' is not a task id", cmd, arg);
			return -1;
		}
		f->task = task;
		return 1;
	}
	return 0;
}

void cmd_filter_describe(const struct label_filter *f, char *buf, size_t size)
{
	int n = 0;

	buf[0] = '\0';
	if (f->task >= 0)
		n += snprintf(buf + n, size - (size_t)n, "task %lld, ", (long long)f->task);
	if (f->by_stage && f->stage < 0)
		n += snprintf(buf + n, size - (size_t)n, "no stage, ");
	else if (f->by_stage)
		n += snprintf(buf + n, size - (size_t)n, "stage %d.%d, ", f->stage, f->attempt);
	if (f->executor_id && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, "executor %s, ", f->executor_id);
	if (f->app_id && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, "%s, ", f->app_id);
	if (n >= 2 && (size_t)n <= size)
		buf[n - 2] = '\0';
}

/* bpf_load.c - see bpf_load.h. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "base/log.h"
#include "sampler/bpf_load.h"

/* libbpf's own size for a failed load's log. Reserved, not committed: only
 * the pages the verifier writes are used. */
#define LOG_BYTES (16u << 20)
#define REASON_MAX 240

static bool starts_with(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !memcmp(s, prefix, n);
}

/* "12: ...", "R1=...", "R1_w=..." and "frame1: ...": instructions and states. */
static bool is_trace(const char *s, size_t len)
{
	size_t i = 0;

	if (starts_with(s, len, "frame"))
		i = 5;
	else if (len && s[0] == 'R')
		i = 1;
	if (i == len || !isdigit((unsigned char)s[i]))
		return false;
	while (i < len && isdigit((unsigned char)s[i]))
		i++;
	if (s[0] == 'R')
		return i < len && (s[i] == '=' || s[i] == '_');
	return i < len && s[i] == ':';
}

static bool is_noise(const char *s, size_t len)
{
	static const char *const prefixes[] = {
		";", "processed ", "verification time", "stack depth", "from ", "func#",
		"last_idx", "regs=", "parent ", "mark_precise", "caller:", "callee:",
		"returning from callee", "to caller at", "Live regs", "Validating ",
	};

	while (len && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	if (!len || is_trace(s, len) || isdigit((unsigned char)s[0]))
		return true;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (starts_with(s, len, prefixes[i]))
			return true;
	return false;
}

size_t verifier_reason(const char *log, size_t len, char *out, size_t size)
{
	const char *best = NULL, *line = log, *end = log + len;
	size_t best_len = 0, n;

	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t line_len = (size_t)((nl ? nl : end) - line);

		if (memchr(line, '\0', line_len))
			line_len = strnlen(line, line_len);
		if (!is_noise(line, line_len)) {
			best = line;
			best_len = line_len;
		}
		if (!nl || memchr(line, '\0', (size_t)(nl - line)))
			break;
		line = nl + 1;
	}
	if (!size)
		return 0;
	n = best_len < size - 1 ? best_len : size - 1;
	for (size_t i = 0; i < n; i++)   /* one line, printable */
		out[i] = isprint((unsigned char)best[i]) ? best[i] : '?';
	out[n] = '\0';
	return n;
}

static void report(const char *what, const char *release, const char *prog,
		   const char *log, int err)
{
	char reason[REASON_MAX];

	sp_debug("the verifier's log of %s:\n%s", prog, log);
	if (!verifier_reason(log, strnlen(log, LOG_BYTES), reason, sizeof(reason)))
		snprintf(reason, sizeof(reason), "%s", strerror(-err));
	sp_err("load %s: the verifier of Linux %s rejected program %s: %s%s (-v prints "
	       "its whole log)", what, release, prog, reason,
	       err == -ENOSPC ? " (the log was cut at 16 MiB: an earlier line)" : "");
}

int bpf_load_skeleton(struct bpf_object_skeleton *skel, const char *what, const char *release)
{
	struct bpf_object *obj = *skel->obj;
	struct bpf_program *prog;
	char *logs;
	size_t nprogs = 0, i = 0;
	int err;

	bpf_object__for_each_program(prog, obj)
		nprogs++;
	logs = mmap(NULL, (nprogs ? nprogs : 1) * (size_t)LOG_BYTES, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (logs == MAP_FAILED)
		logs = NULL;
	bpf_object__for_each_program(prog, obj)
		if (logs)
			bpf_program__set_log_buf(prog, logs + (size_t)LOG_BYTES * i++, LOG_BYTES);
	err = bpf_object__load_skeleton(skel);
	if (!err)
		goto out;
	i = 0;
	/* Only a refused program's load was retried with a log. */
	bpf_object__for_each_program(prog, obj) {
		const char *log = logs ? logs + (size_t)LOG_BYTES * i++ : "";

		if (log[0]) {
			report(what, release, bpf_program__name(prog), log, err);
			goto out;
		}
	}
	sp_err("load %s on Linux %s: %s%s", what, release, strerror(-err),
	       err == -EPERM && geteuid() ? " (run as root)" : " (-v shows libbpf's messages)");
out:
	if (logs)
		munmap(logs, (nprogs ? nprogs : 1) * (size_t)LOG_BYTES);
	return err;
}

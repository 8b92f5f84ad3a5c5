/* proc_stat.c - see proc_stat.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "proc/file_slurp.h"
#include "proc/proc_stat.h"

/* Fields 1-48 fit well within this; the rest of the line is not needed. */
#define STAT_READ_MAX 1024

/* A decimal of 1 to 20 digits that fits in 64 bits. */
static int parse_decimal(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	if (len == 0 || len > 20)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int proc_stat_field(const char *buf, size_t len, int n, uint64_t *value)
{
	/* comm may hold ')' and spaces: fields start after the last ')'. */
	const char *p = NULL;
	for (size_t i = len; i-- > 0;)
		if (buf[i] == ')') {
			p = buf + i + 1;
			break;
		}
	if (!p || n < 3)
		return -EINVAL;
	const char *end = buf + len;
	/* After ')' come field 3 (state), 4, ... */
	for (int field = 3; field <= n; field++) {
		while (p < end && *p == ' ')
			p++;
		if (p >= end)
			return -EINVAL;
		const char *f = p;
		while (p < end && *p != ' ' && *p != '\n')
			p++;
		if (field == n)
			return parse_decimal(f, p - f, value);
	}
	return -EINVAL;
}

int proc_stat_starttime(const char *buf, size_t len, uint64_t *ticks)
{
	return proc_stat_field(buf, len, 22, ticks);
}

/* The start of /proc/PID/stat (*buf malloc'd). 0 or -errno. */
static int read_stat(pid_t pid, char **buf, size_t *len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	return file_read_prefix(path, STAT_READ_MAX, buf, len);
}

int proc_address_space_id(pid_t pid, uint64_t *id)
{
	char *buf;
	size_t len;
	uint64_t start_code, arg_start;
	int err = read_stat(pid, &buf, &len);

	if (err)
		return err;
	err = proc_stat_field(buf, len, 26, &start_code);
	if (!err)
		err = proc_stat_field(buf, len, 48, &arg_start);
	free(buf);
	if (!err && !start_code && !arg_start)
		err = -ENOENT;   /* a zombie, or not ours to read */
	if (!err)
		*id = arg_start ^ (start_code << 20 | start_code >> 44);
	return err;
}

int proc_start_monotonic_ns(pid_t pid, uint64_t *ns)
{
	char *buf;
	size_t len;
	uint64_t ticks;
	long hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0)
		return -EINVAL;
	int err = read_stat(pid, &buf, &len);
	if (err)
		return err;
	err = proc_stat_starttime(buf, len, &ticks);
	free(buf);
	if (err)
		return err;
	struct timespec boot, mono;
	clock_gettime(CLOCK_BOOTTIME, &boot);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	/* starttime counts from boot; the monotonic clock stops in suspend. */
	int64_t suspended = (int64_t)(boot.tv_sec - mono.tv_sec) * 1000000000ll +
			    (boot.tv_nsec - mono.tv_nsec);
	if (suspended < 0)   /* the two clocks were read a moment apart */
		suspended = 0;
	uint64_t start = ticks * (1000000000ull / hz);
	*ns = start > (uint64_t)suspended ? start - (uint64_t)suspended : 0;
	return 0;
}

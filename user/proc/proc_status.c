/* proc_status.c - see proc_status.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "proc/file_slurp.h"
#include "proc/proc_status.h"

/* A status file is a few KiB; the parser needs only the first lines but a
 * process with a huge Groups: line can push them further. */
#define STATUS_READ_MAX (64 * 1024)

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && is_blank(*p))
		p++;
	return p;
}

/* A decimal number of at most max; *pp advances past it. */
static bool take_decimal(const char **pp, const char *end, unsigned long long max,
			 unsigned long long *v)
{
	const char *p = skip_blanks(*pp, end);
	unsigned long long n = 0;
	const char *start = p;

	while (p < end && *p >= '0' && *p <= '9') {
		unsigned d = (unsigned)(*p - '0');

		if (n > (max - d) / 10)
			return false;
		n = n * 10 + d;
		p++;
	}
	if (p == start)
		return false;
	*v = n;
	*pp = p;
	return true;
}

/* Exactly the rest of a line as a 64-bit hex mask (at most 16 digits). */
static bool take_hex_line(const char *p, const char *end, uint64_t *v)
{
	uint64_t n = 0;
	int digits = 0;

	p = skip_blanks(p, end);
	for (; p < end && !is_blank(*p); p++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			return false;
		if (++digits > 16)
			return false;
		n = (n << 4) | (uint64_t)d;
	}
	if (!digits || skip_blanks(p, end) != end)
		return false;
	*v = n;
	return true;
}

/* Exactly four ids (Uid:/Gid: lines), all or nothing. */
static bool take_ids(const char *p, const char *end, unsigned ids[4])
{
	unsigned got[4];

	for (int i = 0; i < 4; i++) {
		unsigned long long v;

		if (!take_decimal(&p, end, UINT_MAX, &v))
			return false;
		got[i] = (unsigned)v;
	}
	if (skip_blanks(p, end) != end)
		return false;
	memcpy(ids, got, sizeof(got));
	return true;
}

/* The whole list or nothing: a bad line leaves an earlier good one alone. */
static bool take_pid_list(const char *p, const char *end, pid_t *out, unsigned *levels)
{
	pid_t pids[PROC_STATUS_MAX_NS_LEVELS];
	unsigned n = 0;

	p = skip_blanks(p, end);
	while (p < end) {
		unsigned long long v;

		if (n == PROC_STATUS_MAX_NS_LEVELS || !take_decimal(&p, end, INT_MAX, &v) || !v)
			return false;
		pids[n++] = (pid_t)v;
		p = skip_blanks(p, end);
	}
	if (!n)
		return false;
	memcpy(out, pids, n * sizeof(pids[0]));
	*levels = n;
	return true;
}

static bool take_single(const char *p, const char *end, unsigned long long max,
			unsigned long long *v)
{
	return take_decimal(&p, end, max, v) && skip_blanks(p, end) == end;
}

static bool key_is(const char *line, size_t keylen, const char *key)
{
	return strlen(key) == keylen && !memcmp(line, key, keylen);
}

static void parse_line(const char *line, const char *end, struct proc_status *out)
{
	const char *colon = memchr(line, ':', (size_t)(end - line));
	size_t keylen;
	const char *val;
	unsigned long long v;

	if (!colon)
		return;
	keylen = (size_t)(colon - line);
	val = colon + 1;

	if (key_is(line, keylen, "Name")) {
		/* The comm may contain anything but a newline; the kernel
		 * escapes nothing but "\n" and "\\", so keep it as written,
		 * cut to fit. */
		size_t n;

		if (val < end && *val == '\t')
			val++;
		n = (size_t)(end - val);
		if (n >= sizeof(out->name))
			n = sizeof(out->name) - 1;
		memcpy(out->name, val, n);
		out->name[n] = '\0';
		out->present |= PROC_STATUS_NAME;
	} else if (key_is(line, keylen, "Tgid")) {
		if (take_single(val, end, INT_MAX, &v) && v) {
			out->tgid = (pid_t)v;
			out->present |= PROC_STATUS_TGID;
		}
	} else if (key_is(line, keylen, "PPid")) {
		if (take_single(val, end, INT_MAX, &v)) {
			out->ppid = (pid_t)v;
			out->present |= PROC_STATUS_PPID;
		}
	} else if (key_is(line, keylen, "Uid")) {
		if (take_ids(val, end, out->uid))
			out->present |= PROC_STATUS_UID;
	} else if (key_is(line, keylen, "Gid")) {
		if (take_ids(val, end, out->gid))
			out->present |= PROC_STATUS_GID;
	} else if (key_is(line, keylen, "NStgid")) {
		if (take_pid_list(val, end, out->nstgid, &out->nstgid_levels))
			out->present |= PROC_STATUS_NSTGID;
	} else if (key_is(line, keylen, "NSpid")) {
		if (take_pid_list(val, end, out->nspid, &out->nspid_levels))
			out->present |= PROC_STATUS_NSPID;
	} else if (key_is(line, keylen, "SigCgt")) {
		if (take_hex_line(val, end, &out->sig_caught))
			out->present |= PROC_STATUS_SIGCGT;
	} else if (key_is(line, keylen, "SigIgn")) {
		if (take_hex_line(val, end, &out->sig_ignored))
			out->present |= PROC_STATUS_SIGIGN;
	} else if (key_is(line, keylen, "SigBlk")) {
		if (take_hex_line(val, end, &out->sig_blocked))
			out->present |= PROC_STATUS_SIGBLK;
	} else if (key_is(line, keylen, "VmRSS")) {
		const char *p = val;

		if (take_decimal(&p, end, UINT64_MAX / 1024, &v) &&
		    (p = skip_blanks(p, end)) + 2 == end && !memcmp(p, "kB", 2)) {
			out->vm_rss_kib = v;
			out->present |= PROC_STATUS_VMRSS;
		}
	} else if (key_is(line, keylen, "Threads")) {
		if (take_single(val, end, UINT_MAX, &v)) {
			out->threads = (unsigned)v;
			out->present |= PROC_STATUS_THREADS;
		}
	}
}

int proc_status_parse(const char *buf, size_t len, struct proc_status *out)
{
	const char *p = buf, *end = buf + len;

	memset(out, 0, sizeof(*out));
	if (!buf)
		return len ? -EINVAL : 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = nl ? nl : end;

		parse_line(p, line_end, out);
		p = nl ? nl + 1 : end;
	}
	return 0;
}

static int read_status(const char *path, struct proc_status *out)
{
	char *buf;
	size_t len;
	int err = file_read_prefix(path, STATUS_READ_MAX, &buf, &len);

	if (err)
		return err == -ESRCH ? -ENOENT : err;
	err = proc_status_parse(buf, len, out);
	free(buf);
	return err;
}

int proc_status_read(pid_t pid, struct proc_status *out)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	return read_status(path, out);
}

int proc_status_read_task(pid_t pid, pid_t tid, struct proc_status *out)
{
	char path[80];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	return read_status(path, out);
}

pid_t proc_status_ns_pid(const struct proc_status *st)
{
	if (st->present & PROC_STATUS_NSTGID)
		return st->nstgid[st->nstgid_levels - 1];
	return st->tgid;
}

pid_t proc_status_ns_tid(const struct proc_status *st)
{
	return st->present & PROC_STATUS_NSPID ? st->nspid[st->nspid_levels - 1] : -1;
}

bool proc_status_catches(const struct proc_status *st, int sig)
{
	if (sig < 1 || sig > 64)
		return false;
	return (st->sig_caught >> (sig - 1)) & 1;
}

/* perf_map.c - parse a plain perf map (see perf_map.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/proc_root.h"
#include "symbols/perf_map.h"

/* What one process's map may cost us (a map is outside input: anyone can
 * write /tmp/perf-PID.map for their own process).  Real JVM maps hold tens of
 * thousands of entries in a few MiB; past the bound, the end of the file is
 * kept, since later lines are newer. */
#define MAX_MAP_BYTES (8u << 20)
#define MAX_MAP_ENTRIES (128u << 10)

struct perf_map_entry {
	uint64_t start, end;
	uint32_t name;       /* offset into names */
	uint32_t line;       /* later lines win */
	uint8_t type;        /* enum frame_type */
};

struct perf_map {
	struct perf_map_entry *v;    /* sorted by start */
	uint64_t *max_end;           /* prefix maximum of end */
	size_t n;
	struct perf_map_stats stats;
	char *names;
};

static int parse_hex(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	uint64_t v = 0;
	int digits = 0;
	for (; s < end; s++, digits++) {
		int d;
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (digits == 16)
			return -1;
		v = v * 16 + d;
	}
	if (!digits || (s < end && *s != ' ' && *s != '\t'))
		return -1;
	*p = s;
	*out = v;
	return 0;
}

static enum frame_type type_of(const char *name)
{
	if (!strcmp(name, "Interpreter"))
		return FRAME_INTERPRETED;
	/* CPython 3.12+ with -X perf: "py::qualname:file.py" */
	if (!strncmp(name, "py::", 4))
		return FRAME_PYTHON;
	/* Java methods: "pkg/Cls.m", "int java.lang.String.hashCode()",
	 * "Ljava/lang/String;::hashCode". */
	if (strstr(name, "::") || (strchr(name, '.') && (!strchr(name, ' ') || strchr(name, '('))))
		return FRAME_JIT;
	return FRAME_NATIVE;
}

static int by_start(const void *a, const void *b)
{
	const struct perf_map_entry *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

struct perf_map *perf_map_parse(const char *buf, size_t len)
{
	struct perf_map *m = calloc(1, sizeof(*m));
	if (!m)
		goto nomem;
	if (!buf)
		len = 0;
	if (len >= UINT32_MAX) {   /* names are kept by 32-bit offsets */
		perf_map_free(m);
		errno = EFBIG;
		return NULL;
	}
	/* Names are copied, NUL-terminated, into one buffer of len + 1. */
	m->names = malloc(len + 1);
	size_t lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += buf[i] == '\n';
	if (len && buf[len - 1] != '\n')
		lines++;    /* a last line without its newline */
	/* Over the bound, the oldest lines go: later lines win anyway. */
	size_t skip = lines > MAX_MAP_ENTRIES ? lines - MAX_MAP_ENTRIES : 0;
	m->v = malloc((lines - skip + 1) * sizeof(*m->v));
	if (!m->names || !m->v)
		goto nomem;
	size_t names_len = 0, line_no = 0;
	for (size_t pos = 0; pos < len; line_no++) {
		const char *line = buf + pos, *nl = memchr(line, '\n', len - pos);
		const char *end = nl ? nl : buf + len;
		pos = end - buf + (nl ? 1 : 0);
		if (end > line && end[-1] == '\r')
			end--;
		if (end == line)
			continue;   /* blank lines are not an error */
		if (line_no < skip) {
			m->stats.entries_dropped++;
			continue;
		}
		const char *p = line;
		uint64_t start, size;
		if (parse_hex(&p, end, &start) < 0)
			goto bad;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (parse_hex(&p, end, &size) < 0 || size == 0 || start > UINT64_MAX - size)
			goto bad;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end || memchr(p, 0, end - p))
			goto bad;
		char *name = m->names + names_len;
		memcpy(name, p, end - p);
		name[end - p] = 0;
		names_len += end - p + 1;
		m->v[m->n++] = (struct perf_map_entry){ start, start + size,
							(uint32_t)(name - m->names),
							(uint32_t)line_no, type_of(name) };
		continue;
bad:
		m->stats.malformed++;
	}
	/* Keep only what the entries use. */
	char *names = realloc(m->names, names_len ? names_len : 1);
	if (names)
		m->names = names;
	m->stats.entries = m->n;
	qsort(m->v, m->n, sizeof(*m->v), by_start);
	m->max_end = malloc((m->n + 1) * sizeof(*m->max_end));
	if (!m->max_end)
		goto nomem;
	uint64_t mx = 0;
	for (size_t i = 0; i < m->n; i++) {
		if (m->v[i].end > mx)
			mx = m->v[i].end;
		m->max_end[i] = mx;
	}
	return m;
nomem:
	perf_map_free(m);
	errno = ENOMEM;
	return NULL;
}

void perf_map_free(struct perf_map *m)
{
	if (!m)
		return;
	free(m->v);
	free(m->max_end);
	free(m->names);
	free(m);
}

int perf_map_lookup(const struct perf_map *m, uint64_t addr, struct frame *out)
{
	if (!m || !out)
		return 0;
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct perf_map_entry *best = NULL;
	for (size_t i = lo; i-- > 0 && m->max_end[i] > addr;)
		if (m->v[i].end > addr && (!best || m->v[i].line > best->line))
			best = &m->v[i];
	if (!best)
		return 0;
	*out = (struct frame){ m->names + best->name, (enum frame_type)best->type };
	return 1;
}

const struct perf_map_stats *perf_map_get_stats(const struct perf_map *m)
{
	return &m->stats;
}

/* Reads at most MAX_MAP_BYTES: the end of a longer file, from its first
 * whole line.  *skipped counts the bytes left out. */
static char *read_tail(int fd, size_t *len, uint64_t *skipped)
{
	struct stat st;
	char *buf;
	off_t from = 0;
	size_t have = 0;

	if (fstat(fd, &st))
		return NULL;
	if (st.st_size > (off_t)MAX_MAP_BYTES)
		from = st.st_size - MAX_MAP_BYTES;
	buf = malloc(MAX_MAP_BYTES);
	if (!buf)
		return NULL;
	while (have < MAX_MAP_BYTES) {
		ssize_t r = pread(fd, buf + have, MAX_MAP_BYTES - have, from + (off_t)have);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		have += (size_t)r;
	}
	*skipped = (uint64_t)from;
	if (from > 0) {
		/* The first line was cut: it starts after the first newline. */
		char *nl = memchr(buf, '\n', have);
		size_t cut = nl ? (size_t)(nl - buf) + 1 : have;

		memmove(buf, buf + cut, have - cut);
		have -= cut;
		*skipped += cut;
	}
	*len = have;
	return buf;
}

struct perf_map *perf_map_open(pid_t pid)
{
	int fd = proc_root_open_published(pid, "/tmp/perf-%d.map");
	uint64_t skipped = 0;
	size_t len = 0;
	char *buf;
	struct perf_map *m = NULL;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	buf = read_tail(fd, &len, &skipped);
	if (buf)
		m = perf_map_parse(buf, len);
	int err = errno;
	close(fd);
	free(buf);
	if (m)
		m->stats.bytes_skipped = skipped;
	errno = err;
	return m;
}

/* proc_maps.c - see proc_maps.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex_digit.h"
#include "proc/file_slurp.h"
#include "proc/proc_maps.h"

#define DELETED_SUFFIX " (deleted)"

struct cursor {
	const char *p, *end;
};

static bool read_hex(struct cursor *c, uint64_t *out)
{
	uint64_t v = 0;
	int digits = 0;

	while (c->p < c->end && hex_digit_value(*c->p) >= 0) {
		if (++digits > 16)
			return false;
		v = v << 4 | (uint64_t)hex_digit_value(*c->p++);
	}
	*out = v;
	return digits > 0;
}

static bool read_dec(struct cursor *c, uint64_t *out)
{
	uint64_t v = 0;
	int digits = 0;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		if (++digits > 20 || v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*c->p++ - '0');
	}
	*out = v;
	return digits > 0;
}

static bool expect(struct cursor *c, char ch)
{
	if (c->p >= c->end || *c->p != ch)
		return false;
	c->p++;
	return true;
}

static enum proc_map_kind classify(const char *path, size_t len)
{
	if (len == 0)
		return PROC_MAP_ANON;
	if (path[0] == '[') {
		if (len == 6 && memcmp(path, "[vdso]", 6) == 0)
			return PROC_MAP_VDSO;
		/* Named anonymous memory, heap and stacks can hold generated code. */
		if ((len >= 6 && memcmp(path, "[anon:", 6) == 0) ||
		    (len == 6 && memcmp(path, "[heap]", 6) == 0) ||
		    (len >= 6 && memcmp(path, "[stack", 6) == 0))
			return PROC_MAP_ANON;
		return PROC_MAP_SPECIAL;
	}
	if ((len >= 6 && memcmp(path, "//anon", 6) == 0) ||
	    (len >= 9 && memcmp(path, "/dev/zero", 9) == 0) ||
	    (len >= 14 && memcmp(path, "/anon_hugepage", 14) == 0))
		return PROC_MAP_ANON;
	if (path[0] == '/')
		return PROC_MAP_FILE;
	return PROC_MAP_SPECIAL;
}

/* Parses one line (without its newline) into *m; the path is copied to
 * *strings.  False for a malformed line. */
static bool parse_line(const char *line, size_t len, struct proc_map *m, char **strings)
{
	struct cursor c = { line, line + len };
	uint64_t major, minor;
	const char *path;
	size_t path_len;

	memset(m, 0, sizeof(*m));
	if (!read_hex(&c, &m->start) || !expect(&c, '-') || !read_hex(&c, &m->end) ||
	    !expect(&c, ' '))
		return false;
	if (m->end <= m->start || c.end - c.p < 5)
		return false;
	for (int i = 0; i < 4; i++) {
		static const char allowed[4][3] = { "r-", "w-", "x-", "ps" };
		if (!memchr(allowed[i], c.p[i], 2))
			return false;
		m->perms[i] = c.p[i];
	}
	m->perms[4] = '\0';
	c.p += 4;
	if (!expect(&c, ' ') || !read_hex(&c, &m->offset) || !expect(&c, ' ') ||
	    !read_hex(&c, &major) || !expect(&c, ':') || !read_hex(&c, &minor) ||
	    !expect(&c, ' ') || !read_dec(&c, &m->inode))
		return false;
	if (major > UINT32_MAX || minor > UINT32_MAX)
		return false;
	m->dev_major = (uint32_t)major;
	m->dev_minor = (uint32_t)minor;
	if (c.p < c.end && *c.p != ' ')
		return false;
	while (c.p < c.end && *c.p == ' ')
		c.p++;
	path = c.p;
	path_len = (size_t)(c.end - c.p);
	if (memchr(path, '\0', path_len))
		return false;
	if (path_len >= sizeof(DELETED_SUFFIX) - 1 &&
	    memcmp(path + path_len - (sizeof(DELETED_SUFFIX) - 1), DELETED_SUFFIX,
		   sizeof(DELETED_SUFFIX) - 1) == 0) {
		m->deleted = true;
		path_len -= sizeof(DELETED_SUFFIX) - 1;
	}
	m->kind = classify(path, path_len);
	memcpy(*strings, path, path_len);
	(*strings)[path_len] = '\0';
	m->path = *strings;
	*strings += path_len + 1;
	return true;
}

struct proc_maps *proc_maps_parse(const char *buf, size_t len)
{
	struct proc_maps *pm = calloc(1, sizeof(*pm));
	size_t cap = 0;
	char *strings, *next_string;
	const char *p = buf, *end = buf ? buf + len : buf;

	if (!pm)
		return NULL;
	if (!buf)
		len = 0;
	/* Paths are copied into one block, never longer than the input. */
	strings = malloc(len + 1);
	if (!strings) {
		free(pm);
		errno = ENOMEM;
		return NULL;
	}
	next_string = strings;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		struct proc_map m;

		if (!eol)
			eol = end;
		if (eol == p) {
			p = eol + 1;
			continue;
		}
		if (!parse_line(p, (size_t)(eol - p), &m, &next_string) ||
		    (pm->count && m.start < pm->maps[pm->count - 1].end)) {
			pm->bad_lines++;
			p = eol + 1;
			continue;
		}
		p = eol + 1;
		if (pm->count == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct proc_map *n = realloc(pm->maps, ncap * sizeof(*n));
			if (!n) {
				free(pm->maps);
				free(pm);
				free(strings);
				errno = ENOMEM;
				return NULL;
			}
			pm->maps = n;
			cap = ncap;
		}
		pm->maps[pm->count++] = m;
	}
	pm->strings = strings;
	return pm;
}

struct proc_maps *proc_maps_read(pid_t pid)
{
	char path[64];
	size_t len;
	char *buf;
	struct proc_maps *pm;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	buf = file_slurp(path, 1u << 30, &len);
	if (!buf) {
		if (errno == ENOENT)
			errno = ESRCH;
		return NULL;
	}
	pm = proc_maps_parse(buf, len);
	free(buf);
	return pm;
}

const struct proc_map *proc_maps_find(const struct proc_maps *pm, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!pm || pm->count == 0 || addr < pm->maps[0].start)
		return NULL;
	hi = pm->count;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (pm->maps[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return addr < pm->maps[lo].end ? &pm->maps[lo] : NULL;
}

void proc_maps_free(struct proc_maps *pm)
{
	if (!pm)
		return;
	free(pm->strings);
	free(pm->maps);
	free(pm);
}

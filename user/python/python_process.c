/* python_process.c - see python_process.h. */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/log.h"
#include "base/string_pool.h"
#include "proc/proc_maps.h"
#include "proc/proc_mem.h"
#include "proc/proc_root.h"
#include "python/python_code.h"
#include "python/python_layout.h"
#include "python/python_process.h"
#include "symbols/elf_symbols.h"

/* Bounds on what a process's memory can make us read or keep. */
#define USER_END PROC_USER_ADDR_END
#define MAX_TEXT 200            /* bytes of a name or file name kept */
#define MAX_LINETABLE 65536u    /* bytes of one code object's line table */
#define CODE_SLOTS 16384u       /* code objects cached; a full cache is emptied */
#define MAX_CACHE_BYTES (16u << 20)
#define MAX_NAME_BYTES (16u << 20) /* distinct frame names kept */
#define NAME_MEMO 4096u         /* (code, instruction) -> name, overwritten */
#define RECHECK_NS 10000000000ull /* a cached code object is checked again after 10 s */

enum { SYM_RUNTIME, SYM_CODE_TYPE, SYM_VERSION, SYM_UNICODE_TYPE, SYM_BYTES_TYPE, SYM_COUNT };
static const char *const symbols[SYM_COUNT] = {
	[SYM_RUNTIME] = "_PyRuntime", [SYM_CODE_TYPE] = "PyCode_Type",
	[SYM_VERSION] = "Py_Version", [SYM_UNICODE_TYPE] = "PyUnicode_Type",
	[SYM_BYTES_TYPE] = "PyBytes_Type",
};

struct code_entry {
	uint64_t code;              /* 0: empty slot */
	uint64_t name_ptr, file_ptr, table_ptr; /* what it held when read */
	uint64_t checked_ns;
	const char *name, *file;    /* pooled; NULL: not a code object */
	uint8_t *table;
	uint32_t table_len;
	int32_t firstlineno;
};

struct name_memo {
	uint64_t frame;
	const char *name;
};

struct python_process {
	pid_t pid;
	const struct python_layout *layout;
	struct sp_python_info walk;
	uint64_t unicode_type, bytes_type;
	uint64_t text_lo, text_hi;
	char version[8];
	struct code_entry *codes;   /* CODE_SLOTS, open addressing */
	size_t ncodes, cache_bytes;
	struct name_memo *memo;     /* NAME_MEMO */
	struct string_pool *names;  /* frame names, files and function names */
	struct python_process_stats stats;
};

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The interpreter's file: a libpython3 that is mapped, else the executable
 * when its name says python. NULL: not CPython, as far as names tell. */
static const struct proc_map *interpreter_map(const struct proc_maps *pm, pid_t pid)
{
	const struct proc_map *exe = NULL;
	char link[64], path[4096];
	ssize_t n;

	for (size_t i = 0; i < pm->count; i++) {
		const struct proc_map *m = &pm->maps[i];

		if (m->kind == PROC_MAP_FILE && m->offset == 0 &&
		    !strncmp(base_name(m->path), "libpython3.", 11))
			return m;
	}
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return NULL;
	path[n] = '\0';
	if (strncmp(base_name(path), "python", 6))
		return NULL;
	for (size_t i = 0; i < pm->count && !exe; i++)
		if (pm->maps[i].kind == PROC_MAP_FILE && pm->maps[i].offset == 0 &&
		    !strcmp(pm->maps[i].path, path))
			exe = &pm->maps[i];
	return exe;
}

/* The interpreter's executable mappings: [lo, hi). */
static void text_range(const struct proc_maps *pm, const struct proc_map *file,
		       uint64_t *lo, uint64_t *hi)
{
	*lo = UINT64_MAX;
	*hi = 0;
	for (size_t i = 0; i < pm->count; i++) {
		const struct proc_map *m = &pm->maps[i];

		if (m->inode != file->inode || m->dev_major != file->dev_major ||
		    m->dev_minor != file->dev_minor || m->perms[2] != 'x')
			continue;
		if (m->start < *lo)
			*lo = m->start;
		if (m->end > *hi)
			*hi = m->end;
	}
	if (*lo > *hi)
		*lo = *hi = 0;
}

/* Symbol addresses in the process: the load base is where the file's
 * offset-0 mapping starts, unless it is a fixed-address executable. */
static int interpreter_symbols(pid_t pid, const struct proc_map *m, uint64_t addr[SYM_COUNT],
			       bool found[SYM_COUNT], char *what, size_t what_len)
{
	Elf64_Ehdr eh;
	uint64_t base;
	int fd, n;

	snprintf(what, what_len, "pid %d (%s)", (int)pid, m->path);
	fd = proc_root_open_mapping(pid, m);
	if (fd < 0)
		return fd == -ENOENT ? -ESRCH : fd;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG)) {
		close(fd);
		return -ENOENT;
	}
	base = eh.e_type == ET_EXEC ? 0 : m->start;
	n = elf_find_symbol_values(fd, what, symbols, SYM_COUNT, addr, found);
	close(fd);
	if (n < 0)
		return n == -ENOEXEC ? -ENOENT : n;
	if (!found[SYM_RUNTIME] || !found[SYM_CODE_TYPE])
		return -ENOENT;
	for (int i = 0; i < SYM_COUNT; i++)
		addr[i] = found[i] ? base + addr[i] : 0;
	return 0;
}

/* 3.minor from Py_Version (3.11 on), else 3.10 from the file's name. */
static int read_minor(pid_t pid, const struct proc_map *m, const uint64_t addr[SYM_COUNT],
		      const bool found[SYM_COUNT])
{
	uint64_t v;

	if (found[SYM_VERSION]) {
		if (proc_mem_read(pid, addr[SYM_VERSION], &v, sizeof(v)))
			return -EFAULT;
		return (v >> 24 & 0xff) == 3 ? (int)(v >> 16 & 0xff) : -ENOTSUP;
	}
	if (strstr(base_name(m->path), "python3.10"))
		return 10;
	return -ENOTSUP;
}

static int describe(struct python_process *pp, const uint64_t addr[SYM_COUNT], const char *what)
{
	const struct python_layout *l = pp->layout;
	uint8_t debug_offsets[44 * 8];
	uint64_t interp = 0;

	if (l->minor == 13 &&
	    (proc_mem_read(pp->pid, addr[SYM_RUNTIME], debug_offsets, sizeof(debug_offsets)) ||
	     !python_layout_check_313(debug_offsets, sizeof(debug_offsets)))) {
		sp_warn("%s: its 3.13 layout is not the default build's (free-threaded or debug?): %s",
			what, strerror(ENOTSUP));
		return -ENOTSUP;
	}
	if (proc_mem_read(pp->pid, addr[SYM_RUNTIME] + l->runtime_interpreters, &interp, sizeof(interp)))
		return -ESRCH;
	if (!interp || interp >= USER_END || interp & 7)
		return -EAGAIN;
	pp->walk = l->walk;
	pp->walk.interp = interp;
	pp->walk.code_type = addr[SYM_CODE_TYPE];
	pp->unicode_type = addr[SYM_UNICODE_TYPE];
	pp->bytes_type = addr[SYM_BYTES_TYPE];
	snprintf(pp->version, sizeof(pp->version), "3.%d", l->minor);
	return 0;
}

static int open_found(struct python_process *pp, const struct proc_maps *pm,
		      const struct proc_map *m)
{
	uint64_t addr[SYM_COUNT];
	bool found[SYM_COUNT];
	char what[320];
	int err, minor;

	err = interpreter_symbols(pp->pid, m, addr, found, what, sizeof(what));
	if (err)
		return err;
	minor = read_minor(pp->pid, m, addr, found);
	if (minor == -ENOTSUP || (minor >= 0 && !(pp->layout = python_layout_of(minor)))) {
		sp_warn("%s: CPython %s%d: only 3.10 to 3.13 are walked: %s", what,
			minor < 0 ? "older than 3.11, version not in its file name, or 3." : "3.",
			minor < 0 ? 9 : minor, strerror(ENOTSUP));
		return -ENOTSUP;
	}
	if (minor < 0)
		return -ESRCH;
	text_range(pm, m, &pp->text_lo, &pp->text_hi);
	return describe(pp, addr, what);
}

int python_process_open(pid_t pid, struct python_process **out)
{
	struct python_process *pp;
	const struct proc_map *m;
	struct proc_maps *pm;
	int err;

	*out = NULL;
	pm = proc_maps_read(pid);
	if (!pm)
		return errno == ENOENT ? -ESRCH : -errno;
	m = interpreter_map(pm, pid);
	if (!m) {
		proc_maps_free(pm);
		return -ENOENT;
	}
	pp = calloc(1, sizeof(*pp));
	if (pp) {
		pp->pid = pid;
		pp->codes = calloc(CODE_SLOTS, sizeof(*pp->codes));
		pp->memo = calloc(NAME_MEMO, sizeof(*pp->memo));
		pp->names = string_pool_new();
	}
	err = !pp || !pp->codes || !pp->memo || !pp->names ? -ENOMEM : open_found(pp, pm, m);
	proc_maps_free(pm);
	if (err) {
		python_process_free(pp);
		return err;
	}
	*out = pp;
	return 0;
}

static void clear_codes(struct python_process *pp)
{
	for (size_t i = 0; pp->codes && i < CODE_SLOTS; i++)
		free(pp->codes[i].table);
	if (pp->codes)
		memset(pp->codes, 0, CODE_SLOTS * sizeof(*pp->codes));
	if (pp->memo)
		memset(pp->memo, 0, NAME_MEMO * sizeof(*pp->memo));
	pp->ncodes = pp->cache_bytes = 0;
}

void python_process_release(struct python_process *pp)
{
	if (!pp)
		return;
	clear_codes(pp);
	free(pp->codes);
	free(pp->memo);
	pp->codes = NULL;
	pp->memo = NULL;
}

void python_process_free(struct python_process *pp)
{
	if (!pp)
		return;
	python_process_release(pp);
	string_pool_free(pp->names);
	free(pp);
}

const char *python_process_version(const struct python_process *pp)
{
	return pp->version;
}

void python_process_walker_info(const struct python_process *pp, struct sp_python_info *out)
{
	*out = pp->walk;
	out->start_time = 0;
}

bool python_process_in_interpreter(void *ctx, uint64_t addr)
{
	const struct python_process *pp = ctx;

	return addr >= pp->text_lo && addr < pp->text_hi;
}

/* ---- naming frames ----------------------------------------------------- */

/* A str object's text, pooled; NULL when ptr is not a readable str. */
static const char *read_str(struct python_process *pp, uint64_t ptr, bool base)
{
	uint8_t head[PYTHON_STR_HEAD], chars[MAX_TEXT * 4];
	uint64_t off, n, type;
	unsigned width;
	char text[MAX_TEXT * 4 + 1];
	const char *t;

	if (proc_mem_read(pp->pid, ptr, head, sizeof(head)))
		return NULL;
	memcpy(&type, head + 8, sizeof(type));
	if ((pp->unicode_type && type != pp->unicode_type) ||
	    python_str_layout(head, pp->layout, &off, &n, &width))
		return NULL;
	if (n > MAX_TEXT)
		n = MAX_TEXT;
	if (proc_mem_read(pp->pid, ptr + off, chars, n * width))
		return NULL;
	python_str_utf8(chars, n, width, text, sizeof(text));
	t = base ? base_name(text) : text;
	return string_pool_intern(pp->names, t, strlen(t));
}

/* A bytes object's data (the line table), copied; 0 or -EFAULT. */
static int read_bytes(struct python_process *pp, uint64_t ptr, uint8_t **data, uint32_t *len)
{
	uint64_t head[4];
	int64_t size;

	if (proc_mem_read(pp->pid, ptr, head, sizeof(head)) ||
	    (pp->bytes_type && head[1] != pp->bytes_type))
		return -EFAULT;
	size = (int64_t)head[2];
	if (size < 0 || size > MAX_LINETABLE || pp->cache_bytes + (uint64_t)size > MAX_CACHE_BYTES)
		return -EFAULT;
	*data = malloc(size ? (size_t)size : 1);
	if (!*data)
		return -ENOMEM;
	if (proc_mem_read(pp->pid, ptr + 32, *data, (size_t)size) && size) {
		free(*data);
		*data = NULL;
		return -EFAULT;
	}
	*len = (uint32_t)size;
	pp->cache_bytes += (size_t)size;
	return 0;
}

/* The code object's fields as the cache keeps them: whether they still
 * hold what e was read from. */
static int read_code_head(struct python_process *pp, uint64_t code, uint64_t *name,
			  uint64_t *file, uint64_t *table, int32_t *firstlineno)
{
	const struct python_layout *l = pp->layout;
	uint16_t name_off = l->co_qualname ? l->co_qualname : l->co_name;
	uint8_t head[160];
	uint64_t type;

	if (proc_mem_read(pp->pid, code, head, sizeof(head)))
		return -EFAULT;
	memcpy(&type, head + 8, sizeof(type));
	if (type != pp->walk.code_type)
		return -EFAULT;
	memcpy(name, head + name_off, sizeof(*name));
	memcpy(file, head + l->co_filename, sizeof(*file));
	memcpy(table, head + l->co_linetable, sizeof(*table));
	memcpy(firstlineno, head + l->co_firstlineno, sizeof(*firstlineno));
	return 0;
}

static void read_code(struct python_process *pp, struct code_entry *e, uint64_t code, uint64_t ts)
{
	free(e->table);
	*e = (struct code_entry){ .code = code, .checked_ns = ts };
	pp->stats.code_objects++;
	if (read_code_head(pp, code, &e->name_ptr, &e->file_ptr, &e->table_ptr, &e->firstlineno))
		return;
	e->name = read_str(pp, e->name_ptr, false);
	e->file = read_str(pp, e->file_ptr, true);
	if (e->name && e->file && read_bytes(pp, e->table_ptr, &e->table, &e->table_len))
		e->table = NULL;
}

/* The cached code object; read when new, or checked again once it is
 * RECHECK_NS old (the object may have been freed and its address reused). */
static struct code_entry *code_of(struct python_process *pp, uint64_t code, uint64_t ts)
{
	size_t i = (size_t)(fnv1a(FNV1A_INIT, &code, sizeof(code)) & (CODE_SLOTS - 1));
	uint64_t name, file, table;
	int32_t first;

	while (pp->codes[i].code && pp->codes[i].code != code)
		i = (i + 1) & (CODE_SLOTS - 1);
	if (!pp->codes[i].code) {
		if (pp->ncodes >= CODE_SLOTS / 2 || pp->cache_bytes > MAX_CACHE_BYTES - MAX_LINETABLE) {
			clear_codes(pp);
			return code_of(pp, code, ts);
		}
		pp->ncodes++;
		read_code(pp, &pp->codes[i], code, ts);
	} else if (ts - pp->codes[i].checked_ns > RECHECK_NS) {
		struct code_entry *e = &pp->codes[i];

		if (read_code_head(pp, code, &name, &file, &table, &first) || name != e->name_ptr ||
		    file != e->file_ptr || table != e->table_ptr || first != e->firstlineno) {
			memset(pp->memo, 0, NAME_MEMO * sizeof(*pp->memo));
			read_code(pp, e, code, ts);
		}
		e->checked_ns = ts;
	}
	return &pp->codes[i];
}

static const char *frame_name(struct python_process *pp, const struct code_entry *e,
			      uint32_t instr)
{
	char buf[MAX_TEXT * 8 + 32];
	int line = python_line_of(e->table, e->table_len, e->firstlineno, instr,
				  pp->layout->linetable_pairs);
	int n;

	if (string_pool_memory(pp->names) > MAX_NAME_BYTES)
		return NULL;
	n = line > 0 ? snprintf(buf, sizeof(buf), "%s (%s:%d)", e->name, e->file, line)
		     : snprintf(buf, sizeof(buf), "%s (%s)", e->name, e->file);
	if (n < 0)
		return NULL;
	return string_pool_intern(pp->names, buf, strlen(buf));
}

int python_process_name_frame(void *ctx, uint64_t frame, uint64_t ts, struct frame *out)
{
	struct python_process *pp = ctx;
	struct name_memo *m;
	const struct code_entry *e;
	const char *name = NULL;

	if (!pp->codes) { /* released: the process is gone */
		pp->stats.frames_unnamed++;
		return 0;
	}
	m = &pp->memo[fnv1a(FNV1A_INIT, &frame, sizeof(frame)) & (NAME_MEMO - 1)];
	if (m->frame == frame && m->name) {
		name = m->name;
	} else {
		e = code_of(pp, sp_py_frame_code(frame), ts);
		if (e->name && e->file)
			name = frame_name(pp, e, sp_py_frame_instr(frame));
		if (name)
			*m = (struct name_memo){ frame, name };
	}
	if (!name) {
		pp->stats.frames_unnamed++;
		return 0;
	}
	pp->stats.frames_named++;
	*out = (struct frame){ name, FRAME_PYTHON };
	return 1;
}

void python_process_stats(const struct python_process *pp, struct python_process_stats *out)
{
	*out = pp->stats;
	out->memory = sizeof(*pp) + string_pool_memory(pp->names) + pp->cache_bytes +
		      (pp->codes ? CODE_SLOTS * sizeof(*pp->codes) : 0) +
		      (pp->memo ? NAME_MEMO * sizeof(*pp->memo) : 0);
}

/* proc_symbolizer.c - see proc_symbolizer.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"
#include "symbols/addr_cache.h"
#include "symbols/proc_symbolizer.h"
#include "sparkprof_events.h"

#define REFRESH_INTERVAL_NS (100ull * 1000 * 1000)
#define UNMAPPED_WAIT_MAX_NS (32 * REFRESH_INTERVAL_NS)

struct proc_symbolizer {
	struct binary_cache *cache;
	pid_t pid;
	struct proc_maps *maps;
	const struct binary **binaries; /* per mapping; NULL until loaded */
	const struct binary **gone;     /* of the maps before, to put (ngone) */
	size_t ngone;
	uint64_t last_refresh_ns;
	uint64_t unmapped_wait_ns;      /* before an address outside code reads them again */
	size_t maps_reads;
	/* Answers for the maps in use: each address is named once. */
	struct addr_cache answers;
};

/* Most cached answers per process (24 bytes each). */
#define ANSWERS_MAX 32768

static bool same_mapping(const struct proc_map *a, const struct proc_map *b)
{
	return a->start == b->start && a->end == b->end && a->offset == b->offset &&
	       a->inode == b->inode && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor && a->kind == b->kind &&
	       !strcmp(a->perms, b->perms) && !strcmp(a->path, b->path);
}

/* Whether every executable mapping of old is in new unchanged: then every
 * cached answer (only executable mappings give them) is still right. */
static bool exec_maps_kept(const struct proc_maps *old, const struct proc_maps *new)
{
	for (size_t i = 0; i < old->count; i++) {
		const struct proc_map *m = &old->maps[i], *n;

		if (!proc_map_is_exec(m))
			continue;
		n = proc_maps_find(new, m->start);
		if (!n || !same_mapping(m, n))
			return false;
	}
	return true;
}

static void put_all(struct binary_cache *bc, const struct binary **binaries, size_t n)
{
	for (size_t i = 0; i < n; i++)
		binary_cache_put(bc, binaries[i]);
	free(binaries);
}

/* Lets go of the binaries of the mappings gone at the last install, once
 * the new maps' files are loaded: a file mapped anew is not dropped and
 * parsed again in between. */
static void put_gone(struct proc_symbolizer *ps)
{
	put_all(ps->cache, ps->gone, ps->ngone);
	ps->gone = NULL;
	ps->ngone = 0;
}

/* Installs new maps; their files are loaded by proc_symbolizer_load_files,
 * but those of mappings still there are kept (not opened again). */
static int install_maps(struct proc_symbolizer *ps, struct proc_maps *maps)
{
	const struct binary **binaries = calloc(maps->count ? maps->count : 1, sizeof(*binaries));

	if (!binaries)
		return -ENOMEM;
	for (size_t i = 0; ps->maps && i < maps->count; i++) {
		const struct proc_map *old = proc_maps_find(ps->maps, maps->maps[i].start);

		if (old && same_mapping(old, &maps->maps[i])) {
			binaries[i] = ps->binaries[old - ps->maps->maps];
			ps->binaries[old - ps->maps->maps] = NULL;
		}
	}
	/* The kernel builds the maps text a chunk per read(): a process that
	 * maps or unmaps meanwhile gives lines out of order, which the parser
	 * skips. That is a race, not a fault worth a warning. */
	if (maps->bad_lines)
		sp_debug("pid %d: %zu malformed or out-of-order lines in /proc/%d/maps skipped",
			 (int)ps->pid, maps->bad_lines, (int)ps->pid);
	/* A JVM maps and unmaps data all the time: the answers stay as long
	 * as the executable mappings they came from are still there. */
	if (!ps->maps || !exec_maps_kept(ps->maps, maps))
		addr_cache_clear(&ps->answers);
	put_gone(ps);
	ps->gone = ps->binaries;
	ps->ngone = ps->maps ? ps->maps->count : 0;
	proc_maps_free(ps->maps);
	ps->maps = maps;
	ps->binaries = binaries;
	return 0;
}

struct proc_symbolizer *proc_symbolizer_new(struct binary_cache *bc, pid_t pid)
{
	struct proc_symbolizer *ps = proc_symbolizer_new_maps(bc, pid);

	if (ps)
		proc_symbolizer_load_files(ps);
	return ps;
}

void proc_symbolizer_load_files(struct proc_symbolizer *ps)
{
	const struct proc_maps *maps = ps->maps;

	for (size_t i = 0; i < maps->count; i++)
		if (!ps->binaries[i] && maps->maps[i].kind == PROC_MAP_FILE &&
		    proc_map_is_exec(&maps->maps[i]))
			ps->binaries[i] = binary_cache_get(ps->cache, ps->pid, &maps->maps[i]);
}

struct proc_symbolizer *proc_symbolizer_new_maps(struct binary_cache *bc, pid_t pid)
{
	struct proc_symbolizer *ps = calloc(1, sizeof(*ps));
	struct proc_maps *maps;
	uint64_t vdso_size;
	int err;

	if (!ps)
		return NULL;
	ps->cache = bc;
	ps->pid = pid;
	addr_cache_init(&ps->answers, ANSWERS_MAX);
	maps = proc_maps_read(pid);
	if (!maps) {
		err = errno;
		free(ps);
		errno = err;
		return NULL;
	}
	err = install_maps(ps, maps);
	if (err) {
		proc_maps_free(maps);
		free(ps);
		errno = -err;
		return NULL;
	}
	binary_cache_vdso(bc, &vdso_size);
	ps->last_refresh_ns = monotonic_ns();
	ps->unmapped_wait_ns = REFRESH_INTERVAL_NS;
	ps->maps_reads = 1;
	return ps;
}

int proc_symbolizer_refresh(struct proc_symbolizer *ps)
{
	uint64_t now = monotonic_ns();
	struct proc_maps *maps;
	int err;

	if (now - ps->last_refresh_ns < REFRESH_INTERVAL_NS)
		return -EAGAIN;
	ps->last_refresh_ns = now;
	ps->maps_reads++;
	maps = proc_maps_read(ps->pid);
	if (!maps)
		return errno == ENOENT ? -ESRCH : -errno;
	/* A zombie's maps are empty: keep the mappings it had while alive. */
	if (maps->count == 0 && ps->maps->count > 0) {
		proc_maps_free(maps);
		return -ESRCH;
	}
	err = install_maps(ps, maps);
	if (err) {
		proc_maps_free(maps);
		return err;
	}
	proc_symbolizer_load_files(ps);
	put_gone(ps);
	return 1;
}

static const char *named_offset(struct binary_cache *bc, const char *base, uint64_t off)
{
	char buf[512];
	const char *s;

	snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, base, off);
	s = binary_cache_intern(bc, buf);
	return s ? s : "[unknown]";
}

static const char *resolve_vdso(struct proc_symbolizer *ps, const struct proc_map *m,
				uint64_t addr)
{
	uint64_t image_size, off = addr - m->start, vaddr;
	const struct binary *vdso = binary_cache_vdso(ps->cache, &image_size);
	const char *name;

	/* Our vDSO is the target's only if the kernel mapped the same image
	 * (a 32-bit process has another one). */
	if (vdso && vdso->symbols && image_size == m->end - m->start &&
	    elf_symbols_offset_to_vaddr(vdso->symbols, off, &vaddr)) {
		name = elf_symbols_lookup(vdso->symbols, vaddr, NULL);
		if (name)
			return name;
	}
	return named_offset(ps->cache, "[vdso]", off);
}

/* The name of addr in mapping i; with function_only, NULL unless a
 * function symbol holds it. */
static const char *resolve_file(struct proc_symbolizer *ps, size_t i, uint64_t addr,
				enum frame_type *type, bool function_only)
{
	const struct proc_map *m = &ps->maps->maps[i];
	const struct binary *b = ps->binaries[i];
	uint64_t file_off = addr - m->start + m->offset, vaddr;
	const char *name;

	if (!b) /* not loaded yet (proc_symbolizer_new_maps, or not code) */
		b = ps->binaries[i] = binary_cache_get(ps->cache, ps->pid, m);
	if (!b)
		return function_only ? NULL : "[unknown]";
	*type = b->is_jvm ? FRAME_CPP : FRAME_NATIVE;
	if (b->symbols && elf_symbols_offset_to_vaddr(b->symbols, file_off, &vaddr)) {
		name = elf_symbols_lookup(b->symbols, vaddr, NULL);
		if (name || function_only)
			return name;
		return named_offset(ps->cache, b->basename, vaddr);
	}
	return function_only ? NULL : named_offset(ps->cache, b->basename, file_off);
}

static enum proc_sym_result resolve_uncached(struct proc_symbolizer *ps, uint64_t addr,
					     struct frame *out)
{
	const struct proc_map *m = proc_maps_find(ps->maps, addr);

	if (!m)
		return PROC_SYM_UNMAPPED;
	out->type = FRAME_NATIVE;
	/* Not named after the file that holds it (a word of libc's data is no
	 * libc function), unless a function does: maps read while ld.so was
	 * mapping a library show its code before it turned executable. */
	if (!proc_map_is_exec(m)) {
		if (m->kind == PROC_MAP_FILE &&
		    (out->name = resolve_file(ps, (size_t)(m - ps->maps->maps), addr, &out->type,
					      true)))
			return PROC_SYM_OK;
		return PROC_SYM_NOT_CODE;
	}
	switch (m->kind) {
	case PROC_MAP_ANON:
		return PROC_SYM_ANON_EXEC;
	case PROC_MAP_VDSO:
		out->name = resolve_vdso(ps, m, addr);
		return PROC_SYM_OK;
	case PROC_MAP_SPECIAL:
		out->name = binary_cache_intern(ps->cache, m->path);
		if (!out->name)
			out->name = "[unknown]";
		return PROC_SYM_OK;
	case PROC_MAP_FILE:
		out->name = resolve_file(ps, (size_t)(m - ps->maps->maps), addr, &out->type, false);
		return PROC_SYM_OK;
	}
	return PROC_SYM_UNMAPPED;
}

enum proc_sym_result proc_symbolizer_resolve(struct proc_symbolizer *ps, uint64_t addr,
					     struct frame *out)
{
	const struct addr_cache_entry *e = addr_cache_find(&ps->answers, addr);
	const struct proc_map *m;
	enum proc_sym_result result;

	if (e) {
		out->name = e->name;
		out->type = (enum frame_type)e->type;
		return (enum proc_sym_result)e->tag;
	}
	result = resolve_uncached(ps, addr, out);
	/* Only answers from code are kept: the caller reads the maps again
	 * for the others, which may hold code by then. */
	m = proc_maps_find(ps->maps, addr);
	if (!m || !proc_map_is_exec(m))
		return result;
	if (result == PROC_SYM_OK)
		addr_cache_put(&ps->answers, addr, out->name, out->type, PROC_SYM_OK);
	else if (result == PROC_SYM_ANON_EXEC)
		addr_cache_put(&ps->answers, addr, NULL, FRAME_NATIVE, PROC_SYM_ANON_EXEC);
	return result;
}

enum proc_sym_result proc_symbolizer_resolve_fresh(struct proc_symbolizer *ps, uint64_t addr,
						   struct frame *out)
{
	enum proc_sym_result result = proc_symbolizer_resolve(ps, addr, out);

	if ((result != PROC_SYM_UNMAPPED && result != PROC_SYM_NOT_CODE) ||
	    monotonic_ns() - ps->last_refresh_ns < ps->unmapped_wait_ns ||
	    proc_symbolizer_refresh(ps) <= 0)
		return result;
	result = proc_symbolizer_resolve(ps, addr, out);
	if (result == PROC_SYM_OK || result == PROC_SYM_ANON_EXEC)
		ps->unmapped_wait_ns = REFRESH_INTERVAL_NS;
	else if (ps->unmapped_wait_ns < UNMAPPED_WAIT_MAX_NS)
		ps->unmapped_wait_ns *= 2;
	return result;
}

size_t proc_symbolizer_maps_reads(const struct proc_symbolizer *ps)
{
	return ps->maps_reads;
}

size_t proc_symbolizer_memory(const struct proc_symbolizer *ps)
{
	return sizeof(*ps) + addr_cache_memory(&ps->answers);
}

bool proc_symbolizer_maps_hold(const struct proc_symbolizer *ps, const uint64_t *addrs,
			       size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!(addrs[i] & SP_USTACK_METHOD_TAG) && !proc_maps_find(ps->maps, addrs[i]))
			return false;
	return true;
}

bool proc_symbolizer_maps_file(const struct proc_symbolizer *ps, const char *basename)
{
	for (size_t i = 0; i < ps->maps->count; i++) {
		const struct proc_map *m = &ps->maps->maps[i];
		const char *slash;

		if (m->kind != PROC_MAP_FILE)
			continue;
		slash = strrchr(m->path, '/');
		if (!strcmp(slash ? slash + 1 : m->path, basename))
			return true;
	}
	return false;
}

void proc_symbolizer_free(struct proc_symbolizer *ps)
{
	if (!ps)
		return;
	put_all(ps->cache, ps->binaries, ps->maps->count);
	put_gone(ps);
	proc_maps_free(ps->maps);
	addr_cache_release(&ps->answers);
	free(ps);
}

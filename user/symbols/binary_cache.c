/* binary_cache.c - see binary_cache.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/log.h"
#include "base/spill_file.h"
#include "proc/proc_root.h"
#include "symbols/binary_cache.h"

/* A small open-addressing table from byte strings to pointers. */
struct kv_slot {
	uint64_t hash;
	char *key;          /* NULL: empty slot */
	size_t key_len;
	void *value;
};

struct kv_table {
	struct kv_slot *slots;
	size_t cap, count;  /* cap is a power of two */
};

/* One symbol table, shared by the binaries whose files have its build-id
 * (same owner, same symbols). */
struct table {
	struct elf_symbols *es;
	size_t bytes;                /* elf_symbols_memory when loaded */
	size_t binaries;             /* binaries using it */
	size_t held;                 /* of them, binaries held (users > 0) */
	const char *build_id_key;    /* its key in by_build_id (the kv table's copy), or NULL */
	size_t build_id_len;
};

struct cached_binary {
	struct binary pub;           /* what callers see */
	struct table *table;         /* NULL when the file could not be read */
	const char *file_key;        /* its key in by_file (the kv table's copy), or NULL */
	size_t file_key_len;
	size_t users;                /* binary_cache_get calls not yet put */
	size_t owned_at;             /* its index in owned */
	struct cached_binary *older, *newer; /* in the unused list */
};

struct binary_cache {
	struct kv_table by_file;     /* "dev:ino:size.ctime:path" -> struct cached_binary */
	struct kv_table by_build_id; /* build-id, digest, owner -> struct table */
	struct kv_table strings;     /* interned strings (value == key) */
	struct cached_binary **owned; /* every binary, for freeing */
	size_t nowned, owned_cap;
	/* Binaries no process uses, oldest first: dropped past the budget. */
	struct cached_binary *oldest_unused, *newest_unused;
	size_t nunused;
	size_t keep_bytes, keep_unused;
	size_t table_bytes;          /* of all tables */
	size_t unused_bytes;         /* of the tables no held binary uses */
	size_t names_bytes;          /* of the interned strings */
	struct cached_binary *vdso;
	uint64_t vdso_size;
	bool vdso_tried;
	struct spill_file *names_file; /* large tables' names, when kept there (not ours) */
	bool names_file_failed;        /* said once: names stay in memory */
	struct binary_cache_stats stats;
};

/* Binaries no process maps any more are kept (a short-lived program that
 * runs again is not parsed again) while the tables only they use take at
 * most this, and at most this many. */
#define KEEP_TABLE_BYTES (8u << 20)
#define KEEP_UNUSED 512u

/* A table whose names take this much keeps them in the names file. */
#define COLD_NAMES_MIN (64u << 10)

static uint64_t hash_bytes(const void *p, size_t len)
{
	return fnv1a(FNV1A_INIT, p, len);
}

static struct kv_slot *kv_find(const struct kv_table *t, const void *key, size_t len, uint64_t h)
{
	if (!t->cap)
		return NULL;
	for (size_t i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		struct kv_slot *s = &t->slots[i];
		if (!s->key)
			return s;
		if (s->hash == h && s->key_len == len && memcmp(s->key, key, len) == 0)
			return s;
	}
}

static void *kv_get(const struct kv_table *t, const void *key, size_t len)
{
	struct kv_slot *s = kv_find(t, key, len, hash_bytes(key, len));
	return s && s->key ? s->value : NULL;
}

/* Inserts (or replaces) key -> value.  Returns the stored key copy. */
static char *kv_put(struct kv_table *t, const void *key, size_t len, void *value)
{
	uint64_t h = hash_bytes(key, len);
	struct kv_slot *s;

	if ((t->count + 1) * 2 > t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 64;
		struct kv_slot *old = t->slots;
		size_t ocap = t->cap;

		t->slots = calloc(ncap, sizeof(*t->slots));
		if (!t->slots) {
			t->slots = old;
			return NULL;
		}
		t->cap = ncap;
		for (size_t i = 0; i < ocap; i++)
			if (old[i].key)
				*kv_find(t, old[i].key, old[i].key_len, old[i].hash) = old[i];
		free(old);
	}
	s = kv_find(t, key, len, h);
	if (!s->key) {
		/* One extra NUL so string keys can be handed out as C strings. */
		s->key = malloc(len + 1);
		if (!s->key)
			return NULL;
		memcpy(s->key, key, len);
		s->key[len] = '\0';
		s->key_len = len;
		s->hash = h;
		t->count++;
	}
	s->value = value;
	return s->key;
}

/* Removes key (backward shift: the entries after it in its probe run move
 * up, so lookups need no tombstones). */
static void kv_remove(struct kv_table *t, const void *key, size_t len)
{
	struct kv_slot *s = kv_find(t, key, len, hash_bytes(key, len));
	size_t mask = t->cap - 1, hole, j;

	if (!s || !s->key)
		return;
	free(s->key);
	t->count--;
	hole = (size_t)(s - t->slots);
	for (j = (hole + 1) & mask; t->slots[j].key; j = (j + 1) & mask)
		/* It may fill the hole when its home is not after the hole. */
		if (((j - t->slots[j].hash) & mask) >= ((j - hole) & mask)) {
			t->slots[hole] = t->slots[j];
			hole = j;
		}
	t->slots[hole] = (struct kv_slot){ 0 };
}

static void kv_free(struct kv_table *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->slots[i].key);
	free(t->slots);
}

struct binary_cache *binary_cache_new(void)
{
	struct binary_cache *bc = calloc(1, sizeof(struct binary_cache));

	if (bc) {
		bc->keep_bytes = KEEP_TABLE_BYTES;
		bc->keep_unused = KEEP_UNUSED;
	}
	return bc;
}

void binary_cache_keep_names_in(struct binary_cache *bc, struct spill_file *file)
{
	bc->names_file = file;
}

/* Moves a new table's names to the names file when they are large. */
static void keep_names_cold(struct binary_cache *bc, struct elf_symbols *es)
{
	size_t bytes = elf_symbols_names_bytes(es);

	if (!bc->names_file || bc->names_file_failed || bytes < COLD_NAMES_MIN)
		return;
	if (elf_symbols_move_names(es, bc->names_file))
		bc->names_file_failed = true;
}

const char *binary_cache_intern(struct binary_cache *bc, const char *s)
{
	size_t len = strlen(s);
	const char *have = kv_get(&bc->strings, s, len);

	if (have)
		return have;
	char *copy = kv_put(&bc->strings, s, len, NULL);
	if (!copy)
		return NULL;
	bc->names_bytes += len + 1;
	kv_find(&bc->strings, s, len, hash_bytes(s, len))->value = copy;
	return copy;
}

static const char *intern_name(void *bc, const char *name)
{
	return binary_cache_intern(bc, name);
}

/* A table for es (which it now owns).  NULL, es freed, when out of memory. */
static struct table *new_table(struct binary_cache *bc, struct elf_symbols *es)
{
	struct table *t = calloc(1, sizeof(*t));

	if (!t) {
		elf_symbols_free(es);
		return NULL;
	}
	/* Frames keep their names after the table is dropped. */
	elf_symbols_intern_names(es, intern_name, bc);
	t->es = es;
	t->bytes = elf_symbols_memory(es);
	bc->table_bytes += t->bytes;
	bc->unused_bytes += t->bytes; /* until a binary holds it */
	return t;
}

/* A binary of t (NULL: none) is held now (delta 1) or no more (-1). */
static void table_held(struct binary_cache *bc, struct table *t, int delta)
{
	if (!t)
		return;
	if (delta > 0 && t->held++ == 0)
		bc->unused_bytes -= t->bytes;
	else if (delta < 0 && --t->held == 0)
		bc->unused_bytes += t->bytes;
}

/* One binary of t (NULL: none), unused, is dropped. */
static void table_release(struct binary_cache *bc, struct table *t)
{
	if (!t || --t->binaries > 0)
		return;
	if (t->build_id_key)
		kv_remove(&bc->by_build_id, t->build_id_key, t->build_id_len);
	bc->table_bytes -= t->bytes;
	bc->unused_bytes -= t->bytes;
	elf_symbols_free(t->es);
	free(t);
}

/* A binary named basename using table (NULL: unreadable), with one user.
 * NULL when out of memory (a new table no binary uses is freed). */
static struct cached_binary *new_binary(struct binary_cache *bc, const char *basename,
					struct table *table)
{
	struct cached_binary *b = calloc(1, sizeof(*b));

	if (b && !(b->pub.basename = binary_cache_intern(bc, basename))) {
		free(b);
		b = NULL;
	}
	if (b && bc->nowned == bc->owned_cap) {
		size_t ncap = bc->owned_cap ? bc->owned_cap * 2 : 64;
		struct cached_binary **n = realloc(bc->owned, ncap * sizeof(*n));

		if (n) {
			bc->owned = n;
			bc->owned_cap = ncap;
		} else {
			free(b);
			b = NULL;
		}
	}
	if (!b) {
		if (table && table->binaries == 0) {
			table->binaries = 1;
			table_release(bc, table);
		}
		return NULL;
	}
	b->owned_at = bc->nowned;
	bc->owned[bc->nowned++] = b;
	b->table = table;
	b->pub.symbols = table ? table->es : NULL;
	b->pub.is_jvm = strcmp(basename, "libjvm.so") == 0;
	b->users = 1;
	if (table)
		table->binaries++;
	table_held(bc, table, 1);
	bc->stats.binaries++;
	if (!table)
		bc->stats.failures++;
	return b;
}

/* Files b under key in by_file. */
static void file_binary(struct binary_cache *bc, struct cached_binary *b, const char *key,
			size_t len)
{
	b->file_key = kv_put(&bc->by_file, key, len, b);
	b->file_key_len = len;
}

static void unlink_unused(struct binary_cache *bc, struct cached_binary *b)
{
	*(b->older ? &b->older->newer : &bc->oldest_unused) = b->newer;
	*(b->newer ? &b->newer->older : &bc->newest_unused) = b->older;
	b->older = b->newer = NULL;
	bc->nunused--;
}

static void drop_binary(struct binary_cache *bc, struct cached_binary *b)
{
	unlink_unused(bc, b);
	if (b->file_key)
		kv_remove(&bc->by_file, b->file_key, b->file_key_len);
	table_release(bc, b->table);
	bc->owned[b->owned_at] = bc->owned[--bc->nowned];
	bc->owned[b->owned_at]->owned_at = b->owned_at;
	bc->stats.dropped++;
	free(b);
}

/* Drops the binaries unused longest while there are too many, or while
 * the tables no held binary uses take too much: then only those of such
 * tables (dropping a binary whose table a process still holds, libc's,
 * frees nothing, and finding it again would hash its file anew). */
static void trim_unused(struct binary_cache *bc)
{
	struct cached_binary *b = bc->oldest_unused, *newer;

	for (; b && (bc->unused_bytes > bc->keep_bytes || bc->nunused > bc->keep_unused);
	     b = newer) {
		newer = b->newer;
		if (bc->nunused > bc->keep_unused || (b->table && b->table->held == 0))
			drop_binary(bc, b);
	}
}

/* b has one more user. */
static const struct binary *use(struct binary_cache *bc, struct cached_binary *b)
{
	if (b->users++ == 0) {
		unlink_unused(bc, b);
		table_held(bc, b->table, 1);
	}
	return &b->pub;
}

void binary_cache_put(struct binary_cache *bc, const struct binary *pub)
{
	struct cached_binary *b = (struct cached_binary *)pub;

	if (!b || b == bc->vdso || b->users == 0 || --b->users > 0)
		return;
	table_held(bc, b->table, -1);
	b->older = bc->newest_unused;
	*(b->older ? &b->older->newer : &bc->oldest_unused) = b;
	bc->newest_unused = b;
	bc->nunused++;
	trim_unused(bc);
}

void binary_cache_keep_unused(struct binary_cache *bc, size_t bytes, size_t binaries)
{
	bc->keep_bytes = bytes;
	bc->keep_unused = binaries;
	trim_unused(bc);
}

/* A separate debug file found by build-id, for binaries shipped stripped. */
static struct elf_symbols *load_debug_file(pid_t pid, const uint8_t *id, size_t id_len)
{
	char hex[2 * ELF_BUILD_ID_MAX + 1], path[256];
	struct elf_symbols *es = NULL;

	if (id_len < 2)
		return NULL;
	for (size_t i = 0; i < id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	for (int attempt = 0; attempt < 3 && !es; attempt++) {
		/* Ours, then the process's own, then (when we run in a
		 * container) the host's. */
		int fd = attempt == 0 ? open(path, O_RDONLY | O_CLOEXEC)
			 : attempt == 1 ? proc_root_open(pid, path, O_RDONLY)
					: host_root_open(path, O_RDONLY);

		if (fd < 0)
			continue;
		es = elf_symbols_load_fd(fd, path);
		close(fd);
		if (es && !elf_symbols_has_symtab(es)) {
			elf_symbols_free(es);
			es = NULL;
		}
	}
	return es;
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* A mapping whose file cannot be opened: cached by what maps shows, so
 * that it is tried once, and named by its file's name alone. */
static const struct binary *unreadable_binary(struct binary_cache *bc, pid_t pid,
					      const struct proc_map *m, int err)
{
	char key[4200];
	struct cached_binary *b;
	int key_len;

	sp_debug("pid %d: open %s: %s", (int)pid, m->path, strerror(err));
	key_len = snprintf(key, sizeof(key), "%" PRIx32 ":%" PRIx32 ":%" PRIu64 "::%s",
			   m->dev_major, m->dev_minor, m->inode, m->path);
	if (key_len < 0 || (size_t)key_len >= sizeof(key))
		return NULL;
	b = kv_get(&bc->by_file, key, (size_t)key_len);
	if (b)
		return use(bc, b);
	b = new_binary(bc, basename_of(m->path), NULL);
	if (b)
		file_binary(bc, b, key, (size_t)key_len);
	return b ? &b->pub : NULL;
}

/* The symbols of the open ELF file fd (its separate debug file's when it
 * has no .symtab) into *table: NULL when it has none we can read. 0, or
 * -ENOMEM. */
static int load_table(struct binary_cache *bc, pid_t pid, int fd, const struct proc_map *m,
		      bool has_build_id, struct table **table)
{
	struct elf_symbols *es = elf_symbols_load_fd(fd, m->path);

	bc->stats.loads++;
	*table = NULL;
	if (!es) {
		sp_debug("pid %d: read ELF symbols of %s: %s", (int)pid, m->path, strerror(errno));
		return 0;
	}
	if (!elf_symbols_has_symtab(es) && has_build_id) {
		const uint8_t *build_id;
		size_t build_id_len = elf_symbols_build_id(es, &build_id);
		struct elf_symbols *debug = build_id_len ?
			load_debug_file(pid, build_id, build_id_len) : NULL;

		if (debug)
			elf_symbols_take_symbols(es, debug);
	}
	keep_names_cold(bc, es);
	if (!(*table = new_table(bc, es)))
		return -ENOMEM;
	if (sp_log_get_level() >= SP_LOG_DEBUG)
		sp_debug("pid %d: %s: %zu KiB of symbols", (int)pid, m->path, (*table)->bytes >> 10);
	return 0;
}

const struct binary *binary_cache_get(struct binary_cache *bc, pid_t pid,
				      const struct proc_map *m)
{
	char key[4200];
	/* build-id, then what makes sharing its table safe (below). */
	uint8_t id[ELF_BUILD_ID_MAX + sizeof(uint64_t) + sizeof(uid_t)];
	uint64_t digest = 0;
	int key_len, fd, id_len, err;
	struct cached_binary *b;
	struct table *table = NULL;
	struct stat st;

	if (m->kind != PROC_MAP_FILE)
		return NULL;
	fd = proc_root_open_mapping(pid, m);
	if (fd < 0 || fstat(fd, &st)) {
		err = fd < 0 ? -fd : errno;
		if (fd >= 0)
			close(fd);
		return unreadable_binary(bc, pid, m, err);
	}
	/* The path is part of the key: an inode freed and reused for another
	 * file (native libraries unpacked to /tmp per run) must not alias.  So
	 * are size and ctime: a file copied over in place keeps its inode. */
	key_len = snprintf(key, sizeof(key), "%" PRIx32 ":%" PRIx32 ":%" PRIu64 ":%llx.%lx.%llx:%s",
			   m->dev_major, m->dev_minor, m->inode, (unsigned long long)st.st_size,
			   (long)st.st_ctim.tv_nsec, (unsigned long long)st.st_ctim.tv_sec,
			   m->path);
	if (key_len < 0 || (size_t)key_len >= sizeof(key)) {
		close(fd);
		return NULL;
	}
	b = kv_get(&bc->by_file, key, (size_t)key_len);
	if (b) {
		close(fd);
		return use(bc, b);
	}
	id_len = elf_read_build_id(fd, id, &digest);
	if (id_len > 0) {
		/* Shared only when the names come from the same bytes and the
		 * files have the same owner: a build-id alone can be copied, and
		 * one user's file must not name another's code. */
		memcpy(id + id_len, &digest, sizeof(digest));
		memcpy(id + id_len + sizeof(digest), &st.st_uid, sizeof(st.st_uid));
		id_len += (int)(sizeof(digest) + sizeof(st.st_uid));
		table = kv_get(&bc->by_build_id, id, (size_t)id_len);
	}
	if (table) {
		/* Same contents under another name: share the table, keep
		 * this file's name for unnamed code. */
		close(fd);
		bc->stats.build_id_hits++;
		b = new_binary(bc, basename_of(m->path), table);
		if (b)
			file_binary(bc, b, key, (size_t)key_len);
		return b ? &b->pub : NULL;
	}
	err = load_table(bc, pid, fd, m, id_len > 0, &table);
	close(fd);
	if (err || !(b = new_binary(bc, basename_of(m->path), table)))
		return NULL;
	file_binary(bc, b, key, (size_t)key_len);
	if (id_len > 0 && table) {
		table->build_id_key = kv_put(&bc->by_build_id, id, (size_t)id_len, table);
		table->build_id_len = (size_t)id_len;
	}
	trim_unused(bc);
	return &b->pub;
}

/* The size of our own [vdso] mapping. */
static uint64_t own_vdso_size(uint64_t start)
{
	struct proc_maps *pm = proc_maps_read(getpid());
	const struct proc_map *m = pm ? proc_maps_find(pm, start) : NULL;
	uint64_t size = m && m->kind == PROC_MAP_VDSO ? m->end - m->start : 0;

	proc_maps_free(pm);
	return size;
}

const struct binary *binary_cache_vdso(struct binary_cache *bc, uint64_t *size)
{
	if (!bc->vdso_tried) {
		uint64_t start = getauxval(AT_SYSINFO_EHDR);
		uint64_t len = start ? own_vdso_size(start) : 0;
		struct elf_symbols *es = NULL;
		struct table *table = NULL;

		bc->vdso_tried = true;
		if (len)
			es = elf_symbols_load_mem((const void *)(uintptr_t)start, len);
		if (!es)
			sp_warn("cannot read our own vDSO: vDSO frames will show as [vdso]+OFFSET");
		if (es)
			table = new_table(bc, es);
		bc->vdso = new_binary(bc, "[vdso]", table);
		bc->vdso_size = len;
	}
	*size = bc->vdso_size;
	return bc->vdso ? &bc->vdso->pub : NULL;
}

void binary_cache_get_stats(const struct binary_cache *bc, struct binary_cache_stats *out)
{
	*out = bc->stats;
	out->held = bc->nowned;
	out->memory = bc->table_bytes + bc->names_bytes;
}

void binary_cache_free(struct binary_cache *bc)
{
	if (!bc)
		return;
	for (size_t i = 0; i < bc->nowned; i++) {
		table_release(bc, bc->owned[i]->table);
		free(bc->owned[i]);
	}
	free(bc->owned);
	kv_free(&bc->by_file);
	kv_free(&bc->by_build_id);
	kv_free(&bc->strings);
	free(bc);
}

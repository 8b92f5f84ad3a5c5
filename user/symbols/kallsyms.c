/* kallsyms.c - see kallsyms.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hex_digit.h"
#include "base/log.h"
#include "base/spill_file.h"
#include "base/string_pool.h"
#include "proc/file_slurp.h"
#include "symbols/addr_cache.h"
#include "symbols/kallsyms.h"

/* A symbol longer than this is taken to be a gap (e.g. the last function of
 * a module followed by the next module far away), not a function. */
#define KSYM_MAX_SIZE (1u << 20)
/* The very last symbol has no successor; allow it one page. */
#define KSYM_LAST_SIZE 4096u

/* 16 bytes: a kernel has 100k text symbols or more. */
struct ksym {
	uint64_t addr;
	uint32_t name;     /* offset in names; UINT32_MAX: boundary only */
	/* While parsing, the order among symbols at one address (lower wins:
	 * text before boundary-only, then by rank); then the symbol's length
	 * (at most KSYM_MAX_SIZE). */
	uint32_t order_then_len;
};

/* Names read back once they are in a spill file (kallsyms_move_names):
 * each is interned when first looked up and found again by its offset. */
struct cold_names {
	struct spill_file *file;
	uint64_t at;                /* where names[0] went */
	struct string_pool *pool;
	struct addr_cache by_offset;
};

/* Names remembered by offset after a move (24 bytes each); the pool keeps
 * every name read, so one read again is the same pointer. */
#define COLD_OFFSETS_MAX 16384
/* Longer than the kernel's KSYM_NAME_LEN (512). */
#define COLD_NAME_MAX 1024

struct kallsyms {
	struct ksym *syms;  /* text symbols, sorted, one per address */
	size_t nsyms;
	char *names;        /* NULL once moved */
	size_t names_len;
	struct cold_names *cold;
};

/* Since Linux 6.2 (CALL_PADDING) each function follows a padding symbol,
 * "__pfx_" and its name, listed just before it: about half of the text
 * symbols. The function's name is stored as the tail of that one's. */
#define PADDING_PREFIX "__pfx_"
#define PADDING_PREFIX_LEN 6

static bool is_tail_of(const struct kallsyms *ks, size_t prev, const char *name, size_t len)
{
	return prev != SIZE_MAX && ks->names_len - prev == PADDING_PREFIX_LEN + len + 1 &&
	       memcmp(ks->names + prev, PADDING_PREFIX, PADDING_PREFIX_LEN) == 0 &&
	       memcmp(ks->names + prev + PADDING_PREFIX_LEN, name, len) == 0;
}

/* Markers such as _etext end the previous function but are not functions. */
static bool is_boundary_marker(const char *name, size_t len)
{
	static const struct { const char *s; size_t len; } exact[] = {
		{ "_etext", 6 }, { "_einittext", 10 }, { "_end", 4 },
		{ "_sinittext", 10 }, { "_stext", 6 }, { "_text", 5 },
	};

	if (name[0] != '_')
		return false;
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (exact[i].len == len && memcmp(exact[i].s, name, len) == 0)
			return true;
	return len > 9 && memcmp(name + len - 9, "_text_end", 9) == 0;
}

/* perf-like preference among aliases: global over local over weak, then
 * fewer leading underscores. */
static uint8_t symbol_rank(char type, const char *name, size_t len, bool marker)
{
	unsigned rank = 0, underscores = 0;

	if (marker)
		return 255;
	if (type == 't')
		rank = 1;
	else if (type == 'W' || type == 'w')
		rank = 2;
	while (underscores < len && name[underscores] == '_' && underscores < 3)
		underscores++;
	return (uint8_t)(rank * 4 + underscores);
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Text before boundary-only symbols, then the best name first. */
	if (x->order_then_len != y->order_then_len)
		return x->order_then_len < y->order_then_len ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

struct kallsyms *kallsyms_parse(const char *buf, size_t len)
{
	struct kallsyms *ks = calloc(1, sizeof(*ks));
	size_t cap = 0, ntext = 0, nonzero = 0, prev_name = SIZE_MAX;
	const char *p = buf, *end = buf ? buf + len : buf;

	if (!ks)
		return NULL;
	if (!buf)
		len = 0;
	/* Names need at most len bytes plus one NUL per line. */
	ks->names = malloc(len + 1);
	if (!ks->names && len + 1) {
		free(ks);
		errno = ENOMEM;
		return NULL;
	}
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *line = p, *q, *name;
		uint64_t addr = 0;
		size_t digits = 0, name_len;
		char type;
		bool text, marker;

		if (!eol)
			eol = end;
		p = eol + 1;
		for (q = line; q < eol && hex_digit_value(*q) >= 0; q++, digits++)
			addr = addr << 4 | (uint64_t)hex_digit_value(*q);
		if (digits == 0 || digits > 16 || q + 3 > eol || *q != ' ')
			continue;
		type = q[1];
		if (q[2] != ' ')
			continue;
		name = q + 3;
		for (q = name; q < eol && *q != '\t' && *q != ' ' && *q != '\0'; q++)
			;
		name_len = (size_t)(q - name);
		if (name_len == 0)
			continue;
		if (addr)
			nonzero++;
		text = type == 't' || type == 'T' || type == 'w' || type == 'W';
		marker = is_boundary_marker(name, name_len);
		if (ks->nsyms == cap) {
			size_t ncap = cap ? cap * 2 : 4096;
			struct ksym *n = realloc(ks->syms, ncap * sizeof(*n));
			if (!n) {
				kallsyms_free(ks);
				errno = ENOMEM;
				return NULL;
			}
			ks->syms = n;
			cap = ncap;
		}
		/* Every symbol bounds its predecessor; only text ones get names. */
		ks->syms[ks->nsyms].addr = addr;
		ks->syms[ks->nsyms].order_then_len = (text && !marker ? 0 : 256u) +
			symbol_rank(type, name, name_len, !text || marker);
		if (text && !marker && is_tail_of(ks, prev_name, name, name_len)) {
			ks->syms[ks->nsyms].name = (uint32_t)(prev_name + PADDING_PREFIX_LEN);
			prev_name = SIZE_MAX;
			ntext++;
		} else if (text && !marker) {
			prev_name = ks->names_len;
			ks->syms[ks->nsyms].name = (uint32_t)ks->names_len;
			memcpy(ks->names + ks->names_len, name, name_len);
			ks->names_len += name_len;
			ks->names[ks->names_len++] = '\0';
			ntext++;
		} else {
			ks->syms[ks->nsyms].name = UINT32_MAX;
		}
		ks->nsyms++;
	}
	if (ntext == 0) {
		kallsyms_free(ks);
		errno = ENOENT;
		return NULL;
	}
	if (nonzero == 0) {
		kallsyms_free(ks);
		errno = EACCES;
		return NULL;
	}
	/* The kernel lists most symbols in address order: sort only if needed. */
	for (size_t i = 1; i < ks->nsyms; i++)
		if (cmp_ksym(&ks->syms[i - 1], &ks->syms[i]) > 0) {
			qsort(ks->syms, ks->nsyms, sizeof(*ks->syms), cmp_ksym);
			break;
		}

	/* One entry per address (the best), each ending at the next address. */
	size_t out = 0;
	for (size_t i = 0; i < ks->nsyms; i++) {
		if (out && ks->syms[out - 1].addr == ks->syms[i].addr)
			continue;
		ks->syms[out++] = ks->syms[i];
	}
	for (size_t i = 0; i < out; i++) {
		uint64_t a = ks->syms[i].addr;
		uint64_t next = i + 1 < out ? ks->syms[i + 1].addr : a + KSYM_LAST_SIZE;
		if (next < a) /* wrapped past 2^64 for the last symbol */
			next = UINT64_MAX;
		if (next - a > KSYM_MAX_SIZE)
			next = a + KSYM_LAST_SIZE;
		ks->syms[i].order_then_len = (uint32_t)(next - a);
	}
	/* Keep only named text symbols; their ends are already computed. */
	size_t kept = 0;
	for (size_t i = 0; i < out; i++)
		if (ks->syms[i].name != UINT32_MAX && ks->syms[i].addr != 0)
			ks->syms[kept++] = ks->syms[i];
	ks->nsyms = kept;
	if (kept == 0) {
		kallsyms_free(ks);
		errno = ENOENT;
		return NULL;
	}
	struct ksym *shrunk = realloc(ks->syms, kept * sizeof(*shrunk));
	if (shrunk)
		ks->syms = shrunk;
	char *names = realloc(ks->names, ks->names_len ? ks->names_len : 1);
	if (names)
		ks->names = names;
	return ks;
}

struct kallsyms *kallsyms_load(const char *path)
{
	size_t len;
	char *buf = file_slurp(path, 256u << 20, &len);
	struct kallsyms *ks;

	if (!buf) {
		sp_err("read %s: %s", path, strerror(errno));
		return NULL;
	}
	ks = kallsyms_parse(buf, len);
	if (!ks) {
		int saved = errno;
		if (saved == EACCES)
			sp_err("%s: every address reads as zero: kernel frames cannot be named "
			       "(lower kernel.kptr_restrict or run with CAP_SYSLOG)", path);
		else if (saved == ENOENT)
			sp_err("%s: no kernel text symbol found", path);
		else
			sp_err("parse %s: %s", path, strerror(saved));
		errno = saved;
	}
	free(buf);
	return ks;
}

int kallsyms_move_names(struct kallsyms *ks, struct spill_file *to)
{
	struct cold_names *c;
	struct spill_ref ref;
	int err;

	if (!ks->names)
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c || !(c->pool = string_pool_new())) {
		free(c);
		sp_err("kernel symbol names: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	if ((err = spill_file_put(to, ks->names, ks->names_len, &ref))) {
		string_pool_free(c->pool);
		free(c);
		return err;
	}
	addr_cache_init(&c->by_offset, COLD_OFFSETS_MAX);
	c->file = to;
	c->at = ref.offset;
	free(ks->names);
	ks->names = NULL;
	ks->cold = c;
	return 0;
}

/* The name at offset off, read back and interned on first use; NULL when
 * it cannot be read back (the spill file says why once). */
static const char *cold_name(struct cold_names *c, uint32_t off, size_t names_len)
{
	const struct addr_cache_entry *e = addr_cache_find(&c->by_offset, off);
	char buf[COLD_NAME_MAX];
	const char *text, *name;

	if (e)
		return e->name;
	text = off < names_len ? spill_file_read_text(c->file, c->at + off, names_len - off, buf,
						      sizeof(buf))
			       : NULL;
	if (!text || !(name = string_pool_intern(c->pool, text, strlen(text))))
		return NULL;
	addr_cache_put(&c->by_offset, off, name, FRAME_KERNEL, 0);
	return name;
}

const char *kallsyms_lookup(const struct kallsyms *ks, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!ks || ks->nsyms == 0 || addr < ks->syms[0].addr)
		return NULL;
	hi = ks->nsyms;
	/* Last symbol with start <= addr. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (ks->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (addr - ks->syms[lo].addr >= ks->syms[lo].order_then_len)
		return NULL;
	if (!ks->names)
		return cold_name(ks->cold, ks->syms[lo].name, ks->names_len);
	return ks->names + ks->syms[lo].name;
}

size_t kallsyms_count(const struct kallsyms *ks)
{
	return ks ? ks->nsyms : 0;
}

size_t kallsyms_memory(const struct kallsyms *ks)
{
	if (!ks)
		return 0;
	return sizeof(*ks) + ks->nsyms * sizeof(*ks->syms) + (ks->names ? ks->names_len : 0) +
	       (ks->cold ? sizeof(*ks->cold) + string_pool_memory(ks->cold->pool) +
				   addr_cache_memory(&ks->cold->by_offset)
			 : 0);
}

void kallsyms_free(struct kallsyms *ks)
{
	if (!ks)
		return;
	if (ks->cold) {
		string_pool_free(ks->cold->pool);
		addr_cache_release(&ks->cold->by_offset);
		free(ks->cold);
	}
	free(ks->syms);
	free(ks->names);
	free(ks);
}

struct kallsyms_loader {
	pthread_t thread;
	char *path;
	struct kallsyms *ks;
	int err;
	atomic_bool done;
};

/* At the caller's priority: a low one starves behind busy executors for
 * seconds, and nothing waits for it (kallsyms_load_done says when). */
static void *load_in_background(void *arg)
{
	struct kallsyms_loader *l = arg;

	l->ks = kallsyms_load(l->path);
	l->err = l->ks ? 0 : errno;
	atomic_store(&l->done, true);
	return NULL;
}

struct kallsyms_loader *kallsyms_load_start(const char *path)
{
	struct kallsyms_loader *l = calloc(1, sizeof(*l));
	int fd, err;

	if (!l || !(l->path = strdup(path))) {
		free(l);
		errno = ENOMEM;
		return NULL;
	}
	/* What the user can fix is said now, not after sampling began. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		sp_err("read %s: %s", path, strerror(err));
		goto fail;
	}
	close(fd);
	err = pthread_create(&l->thread, NULL, load_in_background, l);
	if (!err) {
		/* Named, so that top and a profile of sparkprof tell threads apart. */
		pthread_setname_np(l->thread, "sparkprof-ksyms");
		return l;
	}
	sp_err("load %s: %s", path, strerror(err));
fail:
	free(l->path);
	free(l);
	errno = err;
	return NULL;
}

bool kallsyms_load_done(const struct kallsyms_loader *l)
{
	return !l || atomic_load(&l->done);
}

struct kallsyms *kallsyms_load_wait(struct kallsyms_loader *l)
{
	struct kallsyms *ks;

	if (!l)
		return NULL;
	pthread_join(l->thread, NULL);
	ks = l->ks;
	errno = l->err;
	free(l->path);
	free(l);
	return ks;
}

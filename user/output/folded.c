/* folded.c - see folded.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/log.h"
#include "base/strmap.h"
#include "output/folded.h"

#define FOLDED_LINE_MAX (1 << 20)

/* One stack's count; open addressing by id, at most half full. */
struct count_slot {
	uint32_t key;                /* id + 1; 0: empty */
	uint64_t count;
};

/* Frame text -> the types it was seen with (a mask, as a pointer), made
 * when a page asks (folded text does not say, except for kernel frames). */
struct type_index {
	struct strmap *mask;
	bool current;           /* no stack was added since it was made */
};

struct folded_profile {
	struct stack_table *stacks;
	struct stack_table *own_stacks; /* when no table was shared */
	struct count_slot *slots;
	size_t used, cap;
	uint64_t total;
	struct type_index *types;
};

struct folded_profile *folded_profile_new(struct stack_table *stacks)
{
	struct folded_profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	if (!stacks) {
		p->own_stacks = stacks = stack_table_new();
		if (!stacks) {
			free(p);
			errno = ENOMEM;
			return NULL;
		}
	}
	p->stacks = stacks;
	p->types = calloc(1, sizeof(*p->types));
	if (!p->types) {
		folded_profile_free(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

void folded_profile_free(struct folded_profile *p)
{
	if (!p)
		return;
	stack_table_free(p->own_stacks);
	free(p->slots);
	if (p->types && p->types->mask)
		strmap_free(p->types->mask, NULL);
	free(p->types);
	free(p);
}

static int append_text(char *buf, size_t len, size_t cap, const char *text, int sanitize)
{
	size_t n = strlen(text);

	/* The common case in one copy; near the end of the buffer, byte by
	 * byte below, so that what fits is kept. */
	if (len + n + 1 < cap) {
		char *c = buf + len, *end = c + n;

		memcpy(c, text, n);
		/* ';' separates frames and '\n' ends the line: either inside a
		 * name would corrupt the file. */
		for (; sanitize && c < end; c++)
			if (*c == ';' || *c == '\n' || *c == '\r')
				*c = '_';
		*end = '\0';
		return (int)(len + n);
	}
	for (const char *c = text; *c; c++) {
		if (len + 1 >= cap)
			return -ENOSPC;
		/* ';' separates frames and '\n' ends the line: either inside a
		 * name would corrupt the file. */
		buf[len++] = sanitize && (*c == ';' || *c == '\n' || *c == '\r') ? '_' : *c;
	}
	buf[len] = '\0';
	return (int)len;
}

int folded_frame_text(char *buf, size_t len, size_t cap, const struct frame *frame)
{
	int n = append_text(buf, len, cap, frame->name && *frame->name ? frame->name : "[unknown]", 1);

	if (n >= 0 && frame->type == FRAME_KERNEL)
		n = append_text(buf, (size_t)n, cap, "_[k]", 0);
	return n;
}

static int grow_slots(struct folded_profile *p)
{
	size_t cap = p->cap ? p->cap * 2 : 256;
	struct count_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < p->cap; i++) {
		size_t j;

		if (!p->slots[i].key)
			continue;
		for (j = p->slots[i].key * 2654435761u & (cap - 1); slots[j].key; j = (j + 1) & (cap - 1))
			;
		slots[j] = p->slots[i];
	}
	free(p->slots);
	p->slots = slots;
	p->cap = cap;
	return 0;
}

int folded_profile_add_id(struct folded_profile *p, uint32_t id, uint64_t count)
{
	uint32_t key = id + 1;
	size_t i;

	if (p->cap) {
		for (i = key * 2654435761u & (p->cap - 1); p->slots[i].key; i = (i + 1) & (p->cap - 1)) {
			if (p->slots[i].key == key) {
				p->slots[i].count += count;
				p->total += count;
				return 0;
			}
		}
	}
	if ((p->used + 1) * 2 > p->cap && grow_slots(p))
		return -ENOMEM;
	p->types->current = false;
	for (i = key * 2654435761u & (p->cap - 1); p->slots[i].key; i = (i + 1) & (p->cap - 1))
		;
	p->slots[i].key = key;
	p->slots[i].count = count;
	p->used++;
	p->total += count;
	return 0;
}

int folded_profile_add(struct folded_profile *p, const char *root, const char *thread,
		       const struct frame *frames, size_t n, uint64_t count)
{
	int64_t id = stack_table_intern(p->stacks, root, thread, frames, n);

	return id < 0 ? (int)id : folded_profile_add_id(p, (uint32_t)id, count);
}

uint64_t folded_profile_total(const struct folded_profile *p)
{
	return p->total;
}

int folded_profile_foreach_id(const struct folded_profile *p,
			      int (*fn)(uint32_t id, uint64_t count, void *ctx), void *ctx)
{
	for (size_t i = 0; i < p->cap; i++) {
		int r = p->slots[i].key ? fn(p->slots[i].key - 1, p->slots[i].count, ctx) : 0;

		if (r)
			return r;
	}
	return 0;
}

size_t folded_profile_memory(const struct folded_profile *p)
{
	return sizeof(*p) + p->cap * sizeof(*p->slots);
}

/* One stack's line, without the count. */
static int stack_text(struct stack_table *stacks, uint32_t id, char *line)
{
	const char *root, *thread;
	const struct frame *frames;
	size_t n;
	int len = 0;

	stack_table_get(stacks, id, &root, &thread, &frames, &n);
	line[0] = '\0';
	if (root)
		len = append_text(line, 0, FOLDED_LINE_MAX, root, 1);
	if (thread && len >= 0) {
		if (len > 0)
			len = append_text(line, (size_t)len, FOLDED_LINE_MAX, ";", 0);
		if (len >= 0)
			len = append_text(line, (size_t)len, FOLDED_LINE_MAX,
					  *thread ? thread : "[unnamed thread]", 1);
	}
	for (size_t i = n; i-- > 0 && len >= 0;) {
		if (len > 0)
			len = append_text(line, (size_t)len, FOLDED_LINE_MAX, ";", 0);
		if (len >= 0)
			len = folded_frame_text(line, (size_t)len, FOLDED_LINE_MAX, &frames[i]);
	}
	if (len < 0) /* absurdly deep: keep the sample, mark the cut */
		len = (int)strlen(line);
	if (len == 0)
		len = append_text(line, 0, FOLDED_LINE_MAX, "[no stack]", 0);
	return len;
}

static int by_key(const void *a, const void *b)
{
	uint32_t x = ((const struct count_slot *)a)->key, y = ((const struct count_slot *)b)->key;

	return x < y ? -1 : x > y;
}

static uint64_t text_hash(const char *s, int len)
{
	uint64_t h = 1469598103934665603ull;

	for (int i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h | 1;
}

struct line_slot {
	uint64_t hash;               /* 0: empty */
	uint32_t first;              /* index in sorted of the line's first stack */
};

int folded_profile_write(const struct folded_profile *p, const char *path)
{
	return folded_profile_write_scaled(p, path, 1);
}

/* Stacks are merged by their text: different name pointers can read the
 * same (two processes with one label, one symbol in two copies of a
 * library), and the file has one line per text.  A line's text is built
 * again rather than kept: writing needs no memory per line beyond a few
 * words. */
int folded_profile_write_scaled(const struct folded_profile *p, const char *path, uint64_t unit)
{
	size_t n = 0, cap = 16;
	struct count_slot *sorted = malloc((p->used ? p->used : 1) * sizeof(*sorted));
	struct line_slot *lines;
	char *line = malloc(FOLDED_LINE_MAX), *other = malloc(FOLDED_LINE_MAX);
	struct atomic_file af;
	FILE *file;
	int err = 0;

	if (unit == 0)
		unit = 1;
	while (cap < p->used * 2)
		cap *= 2;
	lines = calloc(cap, sizeof(*lines));
	if (!sorted || !lines || !line || !other) {
		sp_err("write %s: %s", path, strerror(ENOMEM));
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < p->cap; i++)
		if (p->slots[i].key)
			sorted[n++] = p->slots[i];
	qsort(sorted, n, sizeof(*sorted), by_key); /* first seen first */
	/* Each stack's count goes to the first stack with its text; the
	 * others are left with count 0 (and not written). */
	for (size_t i = 0; i < n; i++) {
		int len = stack_text(p->stacks, sorted[i].key - 1, line);
		uint64_t h = text_hash(line, len);
		size_t j;

		for (j = h & (cap - 1); lines[j].hash; j = (j + 1) & (cap - 1)) {
			struct count_slot *first = &sorted[lines[j].first];

			if (lines[j].hash == h &&
			    stack_text(p->stacks, first->key - 1, other) == len &&
			    !memcmp(line, other, (size_t)len)) {
				first->count += sorted[i].count;
				sorted[i].count = 0;
				break;
			}
		}
		if (!lines[j].hash) {
			lines[j].hash = h;
			lines[j].first = (uint32_t)i;
		}
	}
	file = atomic_file_open(&af, path);
	if (!file) {
		err = -errno;
		goto out;
	}
	for (size_t i = 0; i < n && !err; i++) {
		uint64_t count = (sorted[i].count + unit / 2) / unit;

		if (!count)
			continue;
		stack_text(p->stacks, sorted[i].key - 1, line);
		if (fprintf(file, "%s %llu\n", line, (unsigned long long)count) < 0)
			err = -EIO;
	}
	err = atomic_file_commit(&af, err);
out:
	free(lines);
	free(other);
	free(line);
	free(sorted);
	return err;
}

/* A frame name (by pointer; kernel frames read differently) and the types
 * it was seen with. */
struct name_types {
	const char *name;
	bool kernel;
	uint32_t mask;
};

static size_t name_slot(const struct name_types *seen, size_t cap, const char *name, bool kernel)
{
	size_t i = (size_t)(((uintptr_t)name >> 3 ^ kernel) * 0x9e3779b97f4a7c15ull >> 20) &
		   (cap - 1);

	while (seen[i].mask && (seen[i].name != name || seen[i].kernel != kernel))
		i = (i + 1) & (cap - 1);
	return i;
}

static int add_name(struct name_types **seen, size_t *cap, size_t *used, const struct frame *f)
{
	bool kernel = f->type == FRAME_KERNEL;
	size_t i;

	if ((*used + 1) * 2 > *cap) {
		size_t ncap = *cap ? *cap * 2 : 1024;
		struct name_types *n = calloc(ncap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (size_t k = 0; k < *cap; k++)
			if ((*seen)[k].mask)
				n[name_slot(n, ncap, (*seen)[k].name, (*seen)[k].kernel)] = (*seen)[k];
		free(*seen);
		*seen = n;
		*cap = ncap;
	}
	i = name_slot(*seen, *cap, f->name, kernel);
	if (!(*seen)[i].mask) {
		(*seen)[i] = (struct name_types){ f->name, kernel, 0 };
		(*used)++;
	}
	(*seen)[i].mask |= 1u << f->type;
	return 0;
}

/* Indexes the frames of every stack of p by their text: by name pointer
 * first, then each distinct name's text once. */
static int index_types(const struct folded_profile *p)
{
	struct type_index *ti = p->types;
	char *text = malloc(FOLDED_LINE_MAX);
	struct name_types *seen = NULL;
	size_t cap = 0, used = 0;
	int err = 0;

	if (!text || (!ti->mask && !(ti->mask = strmap_new()))) {
		free(text);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->cap && !err; i++) {
		const char *root, *thread;
		const struct frame *frames;
		size_t n;

		if (!p->slots[i].key)
			continue;
		stack_table_get(p->stacks, p->slots[i].key - 1, &root, &thread, &frames, &n);
		for (size_t f = 0; f < n && !err; f++)
			err = add_name(&seen, &cap, &used, &frames[f]);
	}
	for (size_t i = 0; i < cap && !err; i++) {
		struct frame f = { seen[i].name, seen[i].kernel ? FRAME_KERNEL : FRAME_NATIVE };
		int inserted, len;
		void **slot;

		if (!seen[i].mask || (len = folded_frame_text(text, 0, FOLDED_LINE_MAX, &f)) <= 0)
			continue;
		slot = strmap_slot(ti->mask, text, (size_t)len, &inserted);
		if (!slot)
			err = -ENOMEM;
		else
			*slot = (void *)((uintptr_t)*slot | seen[i].mask);
	}
	free(seen);
	free(text);
	if (!err)
		ti->current = true;
	return err;
}

int folded_profile_frame_type(const struct folded_profile *p, const char *text, size_t len)
{
	static const enum frame_type preference[] = { FRAME_JIT, FRAME_INLINED, FRAME_INTERPRETED,
						      FRAME_KERNEL, FRAME_CPP, FRAME_NATIVE };
	uintptr_t mask;

	if (!p->types->current && index_types(p))
		return -1;
	mask = (uintptr_t)strmap_get(p->types->mask, text, len);
	for (size_t i = 0; i < sizeof(preference) / sizeof(preference[0]); i++)
		if (mask & 1u << preference[i])
			return (int)preference[i];
	return -1;
}

int folded_profile_foreach(const struct folded_profile *p, uint64_t unit,
			   int (*fn)(const char *stack, size_t len, uint64_t count, void *ctx),
			   void *ctx)
{
	char *line = malloc(FOLDED_LINE_MAX);
	int ret = 0;

	if (!line)
		return -ENOMEM;
	if (!unit)
		unit = 1;
	/* Stacks whose text reads the same come one by one: callers that
	 * build a tree merge them. */
	for (size_t i = 0; i < p->cap && !ret; i++) {
		uint64_t count;
		int len;

		if (!p->slots[i].key)
			continue;
		count = (p->slots[i].count + unit / 2) / unit;
		if (!count)
			continue;
		len = stack_text(p->stacks, p->slots[i].key - 1, line);
		ret = fn(line, (size_t)len, count, ctx);
	}
	free(line);
	return ret;
}

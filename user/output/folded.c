/* folded.c - see folded.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/log.h"
#include "base/strmap.h"
#include "output/folded.h"

#define FOLDED_LINE_MAX (1 << 20)

#define TYPE_CACHE_SIZE 1024

struct folded_profile {
	struct strmap *counts; /* stack text -> (uint64_t *) count */
	struct strmap *types;  /* frame text -> mask of frame types seen, as a pointer */
	struct { const char *name; int type; } type_cache[TYPE_CACHE_SIZE];
	uint64_t total;
	char *line;            /* scratch for building one stack's text */
};

struct folded_profile *folded_profile_new(void)
{
	struct folded_profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->counts = strmap_new();
	p->types = strmap_new();
	p->line = malloc(FOLDED_LINE_MAX);
	if (!p->counts || !p->types || !p->line) {
		folded_profile_free(p);
		return NULL;
	}
	return p;
}

void folded_profile_free(struct folded_profile *p)
{
	if (!p)
		return;
	if (p->counts)
		strmap_free(p->counts, free);
	if (p->types)
		strmap_free(p->types, NULL);
	free(p->line);
	free(p);
}

static int append_text(char *buf, size_t len, size_t cap, const char *text, int sanitize)
{
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

/* Remembers that the frame text was seen with the frame's type (the text
 * does not say, except for kernel frames). A small cache by name pointer
 * keeps the map lookup off the common path: names are owned and stable. */
static int note_type(struct folded_profile *p, const struct frame *f, const char *text, size_t len)
{
	size_t h = ((uintptr_t)f->name >> 3) % TYPE_CACHE_SIZE;
	int inserted;
	void **slot;

	if (p->type_cache[h].name == f->name && p->type_cache[h].type == (int)f->type)
		return 0;
	slot = strmap_slot(p->types, text, len, &inserted);
	if (!slot)
		return -1;
	*slot = (void *)((uintptr_t)*slot | 1u << f->type);
	p->type_cache[h].name = f->name;
	p->type_cache[h].type = (int)f->type;
	return 0;
}

int folded_profile_frame_type(const struct folded_profile *p, const char *text, size_t len)
{
	static const enum frame_type preference[] = { FRAME_JIT, FRAME_INLINED, FRAME_INTERPRETED,
						      FRAME_KERNEL, FRAME_CPP, FRAME_NATIVE };
	uintptr_t mask = (uintptr_t)strmap_get(p->types, text, len);

	for (size_t i = 0; i < sizeof(preference) / sizeof(preference[0]); i++)
		if (mask & 1u << preference[i])
			return (int)preference[i];
	return -1;
}

struct stack_visit {
	int (*fn)(const char *stack, size_t len, uint64_t count, void *ctx);
	void *ctx;
	uint64_t unit;
};

static int visit_stack(const char *key, void *value, void *ctx)
{
	struct stack_visit *sv = ctx;
	uint64_t count = (*(uint64_t *)value + sv->unit / 2) / sv->unit;

	return count ? sv->fn(key, strlen(key), count, sv->ctx) : 0;
}

int folded_profile_foreach(const struct folded_profile *p, uint64_t unit,
			   int (*fn)(const char *stack, size_t len, uint64_t count, void *ctx),
			   void *ctx)
{
	struct stack_visit sv = { fn, ctx, unit ? unit : 1 };

	return strmap_foreach(p->counts, visit_stack, &sv);
}

int folded_profile_add(struct folded_profile *p, const char *root, const char *thread,
		       const struct frame *frames, size_t n, uint64_t count)
{
	int len = 0, inserted;
	uint64_t **slot;

	p->line[0] = '\0';
	if (root)
		len = append_text(p->line, 0, FOLDED_LINE_MAX, root, 1);
	if (thread && len >= 0) {
		if (len > 0)
			len = append_text(p->line, (size_t)len, FOLDED_LINE_MAX, ";", 0);
		if (len >= 0)
			len = append_text(p->line, (size_t)len, FOLDED_LINE_MAX,
					  *thread ? thread : "[unnamed thread]", 1);
	}
	for (size_t i = n; i-- > 0 && len >= 0;) {
		if (len > 0)
			len = append_text(p->line, (size_t)len, FOLDED_LINE_MAX, ";", 0);
		if (len >= 0) {
			int start = len;

			len = folded_frame_text(p->line, (size_t)len, FOLDED_LINE_MAX, &frames[i]);
			if (len >= 0 && note_type(p, &frames[i], p->line + start, (size_t)(len - start)))
				return -ENOMEM;
		}
	}
	if (len < 0) /* absurdly deep: keep the sample, mark the cut */
		len = (int)strlen(p->line);
	if (len == 0)
		len = append_text(p->line, 0, FOLDED_LINE_MAX, "[no stack]", 0);
	slot = (uint64_t **)strmap_slot(p->counts, p->line, (size_t)len, &inserted);
	if (!slot)
		return -ENOMEM;
	if (inserted) {
		*slot = calloc(1, sizeof(uint64_t));
		if (!*slot)
			return -ENOMEM;
	}
	**slot += count;
	p->total += count;
	return 0;
}

uint64_t folded_profile_total(const struct folded_profile *p)
{
	return p->total;
}

struct write_ctx {
	FILE *file;
	uint64_t unit;
};

static int write_line(const char *key, void *value, void *ctx)
{
	struct write_ctx *wc = ctx;
	uint64_t count = (*(uint64_t *)value + wc->unit / 2) / wc->unit;

	if (!count)
		return 0;
	return fprintf(wc->file, "%s %llu\n", key, (unsigned long long)count) < 0 ? -EIO : 0;
}

int folded_profile_write(const struct folded_profile *p, const char *path)
{
	return folded_profile_write_scaled(p, path, 1);
}

int folded_profile_write_scaled(const struct folded_profile *p, const char *path, uint64_t unit)
{
	struct write_ctx wc = { NULL, unit ? unit : 1 };
	struct atomic_file af;

	wc.file = atomic_file_open(&af, path);
	if (!wc.file)
		return -errno;
	return atomic_file_commit(&af, strmap_foreach(p->counts, write_line, &wc));
}

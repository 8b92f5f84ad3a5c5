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

struct folded_profile {
	struct strmap *counts; /* stack text -> (uint64_t *) count */
	uint64_t total;
	char *line;            /* scratch for building one stack's text */
};

struct folded_profile *folded_profile_new(void)
{
	struct folded_profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->counts = strmap_new();
	p->line = malloc(FOLDED_LINE_MAX);
	if (!p->counts || !p->line) {
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
		if (len >= 0)
			len = folded_frame_text(p->line, (size_t)len, FOLDED_LINE_MAX, &frames[i]);
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

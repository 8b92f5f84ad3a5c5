/* sample_store.c - see sample_store.h.
 *
 * The samples part (store_file.h) holds what JFR needs of each sample in
 * time order: the segment's frame names and types, its stack table as
 * (parent, name, type) nodes, then per sample: varint time since the
 * previous one, varint stack leaf node (0: no frames), varint labels,
 * u8 kind << 4 | state, varint weight.
 */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/grow_array.h"
#include "base/log.h"
#include "base/stack_table.h"
#include "base/string_pool.h"
#include "base/strmap.h"
#include "output/sample_store.h"
#include "output/segment_rows.h"
#include "output/store_segment.h"
#include "symbols/stack_resolver.h"

_Static_assert(STACK_MAX_FRAMES <= STORE_FRAMES_MAX, "a resolved stack fits a store row");

struct sample_store {
	struct sample_store_settings settings;
	char path[PATH_MAX];
	int fd;
	uint32_t seq;
	/* the open segment */
	struct stack_table *stacks;
	struct string_pool *strings;    /* the labels' texts */
	struct strmap *label_index;     /* a labels key -> index + 1 */
	struct sample_labels *labels;
	size_t nlabels, labels_cap;
	struct segment_rec *recs;
	size_t nrecs, recs_cap;
	uint64_t first_ns, last_ns;
	/* scratch, kept from segment to segment */
	struct byte_buf key;
	struct byte_buf parts[STORE_PARTS];
	struct segment_rows *rows;
	struct segment_label_texts *texts;
	size_t texts_cap;
	struct strmap *name_index;      /* frame name pointer -> index + 1 */
	struct sample_store_stats stats;
};

static int open_segment(struct sample_store *st)
{
	st->stacks = stack_table_new();
	st->strings = string_pool_new();
	st->label_index = strmap_new();
	st->nlabels = st->nrecs = 0;
	return st->stacks && st->strings && st->label_index ? 0 : -ENOMEM;
}

static void drop_segment(struct sample_store *st)
{
	stack_table_free(st->stacks);
	string_pool_free(st->strings);
	strmap_free(st->label_index, NULL);
	st->stacks = NULL;
	st->strings = NULL;
	st->label_index = NULL;
}

struct sample_store *sample_store_open(const struct sample_store_settings *settings)
{
	struct sample_store *st = calloc(1, sizeof(*st));
	int err = st ? 0 : -ENOMEM;

	if (st) {
		st->fd = -1;
		st->settings = *settings;
		snprintf(st->path, sizeof(st->path), "%s/%s", settings->dir, STORE_FILE_NAME);
		if (!(st->rows = segment_rows_new()) || open_segment(st))
			err = -ENOMEM;
		if (err)
			sp_err("set up the sample store: %s", strerror(ENOMEM));
		else
			err = store_file_create(st->path, &settings->info, &st->fd);
	}
	if (err) {
		sample_store_free(st);
		errno = -err;
		return NULL;
	}
	return st;
}

void sample_store_free(struct sample_store *st)
{
	if (!st)
		return;
	if (st->fd >= 0)
		sample_store_finish(st);
	drop_segment(st);
	segment_rows_free(st->rows);
	byte_buf_free(&st->key);
	for (int i = 0; i < STORE_PARTS; i++)
		byte_buf_free(&st->parts[i]);
	free(st->labels);
	free(st->recs);
	free(st->texts);
	free(st);
}

/* l's bytes, the same for the same labels: the index's key. */
static void label_key(struct byte_buf *b, const struct sample_labels *l)
{
	const char *texts[] = { l->process, l->thread, l->app_id, l->executor_id };
	int64_t numbers[] = { l->pid, l->tid, l->stage, l->attempt, l->task,
			      l->attribution, l->flags };

	byte_buf_clear(b);
	byte_buf_bytes(b, numbers, sizeof(numbers));
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		byte_buf_bytes(b, texts[i] ? texts[i] : "", strlen(texts[i] ? texts[i] : "") + 1);
}

static const char *pooled(struct sample_store *st, const char *s)
{
	return string_pool_intern(st->strings, s ? s : "", strlen(s ? s : ""));
}

/* The segment's index of l, added if new; -ENOMEM. */
static int64_t labels_index(struct sample_store *st, const struct sample_labels *l)
{
	struct sample_labels copy = *l;
	void **slot;
	int inserted;

	if (copy.stage < -1 || copy.attempt < -1 || copy.task < -1) /* none is -1 */
		copy.stage = copy.attempt = -1;
	if (copy.task < -1)
		copy.task = -1;
	l = &copy;

	label_key(&st->key, l);
	if (st->key.failed)
		return -ENOMEM;
	slot = strmap_slot(st->label_index, (const char *)st->key.data, st->key.len, &inserted);
	if (!slot)
		return -ENOMEM;
	if (!inserted)
		return (int64_t)(uintptr_t)*slot - 1;
	copy.process = pooled(st, l->process);
	copy.thread = pooled(st, l->thread);
	copy.app_id = pooled(st, l->app_id);
	copy.executor_id = pooled(st, l->executor_id);
	if (!copy.process || !copy.thread || !copy.app_id || !copy.executor_id ||
	    grow_array((void **)&st->labels, &st->labels_cap, st->nlabels + 1, sizeof(copy))) {
		strmap_remove(st->label_index, (const char *)st->key.data, st->key.len);
		return -ENOMEM;
	}
	st->labels[st->nlabels] = copy;
	*slot = (void *)(uintptr_t)(++st->nlabels);
	return (int64_t)st->nlabels - 1;
}

int sample_store_add(struct sample_store *st, const struct resolved_sample *s,
		     const struct sample_labels *l)
{
	/* What a reader would refuse is never written: the leaf's frames. */
	size_t nframes = s->nframes < STORE_FRAMES_MAX ? s->nframes : STORE_FRAMES_MAX;
	int64_t stack = stack_table_intern(st->stacks, NULL, NULL, s->frames, nframes);
	int64_t labels = stack < 0 ? stack : labels_index(st, l);

	if (labels < 0 || grow_array((void **)&st->recs, &st->recs_cap, st->nrecs + 1,
				     sizeof(*st->recs)))
		return -ENOMEM;
	if (!st->nrecs || s->timestamp_ns < st->first_ns)
		st->first_ns = s->timestamp_ns;
	if (!st->nrecs || s->timestamp_ns > st->last_ns)
		st->last_ns = s->timestamp_ns;
	st->recs[st->nrecs++] = (struct segment_rec){
		s->timestamp_ns,
		s->kind == SAMPLE_CPU ? 1 : s->kind == SAMPLE_OFF_CPU ? s->off_cpu_ns : 0,
		(uint32_t)stack, (uint32_t)labels, (uint8_t)s->kind, (uint8_t)s->thread_state };
	st->stats.samples++;
	return 0;
}

/* What the open segment holds (the arrays' room is kept from segment to
 * segment, and is not counted against the next). */
static size_t segment_memory(const struct sample_store *st)
{
	return stack_table_memory(st->stacks) + string_pool_memory(st->strings) +
	       strmap_memory(st->label_index) + st->nlabels * sizeof(*st->labels) +
	       st->nrecs * sizeof(*st->recs);
}

/* s as a reader takes it back: at most STORE_TEXT_MAX bytes, cut between
 * UTF-8 characters. */
static void put_text(struct byte_buf *b, const char *s)
{
	size_t n = s ? strnlen(s, STORE_TEXT_MAX + 1) : 0;

	if (n > STORE_TEXT_MAX)
		for (n = STORE_TEXT_MAX; n && ((unsigned char)s[n] & 0xc0) == 0x80; n--)
			;
	byte_buf_str(b, s ? s : "", n);
}

static void encode_labels(struct sample_store *st, struct byte_buf *b)
{
	for (size_t i = 0; i < st->nlabels; i++) {
		const struct sample_labels *l = &st->labels[i];

		byte_buf_varint(b, (uint64_t)l->pid);
		byte_buf_varint(b, (uint64_t)l->tid);
		/* -1 (none) is 0: labels_index leaves nothing below it. */
		byte_buf_varint(b, (uint64_t)((int64_t)l->stage + 1));
		byte_buf_varint(b, (uint64_t)((int64_t)l->attempt + 1));
		byte_buf_varint(b, (uint64_t)l->task + 1);
		byte_buf_u8(b, l->attribution);
		byte_buf_u8(b, l->flags);
		put_text(b, l->process);
		put_text(b, l->thread);
		put_text(b, l->app_id);
		put_text(b, l->executor_id);
	}
}

/* A frame name's index in the samples part's name list, added if new;
 * -ENOMEM. Names are pointers that live as long as the recording. */
static int64_t name_index(struct sample_store *st, const char *name, uint64_t *nnames,
			  struct byte_buf *b)
{
	const char *key = (const char *)&name;
	void **slot = strmap_slot(st->name_index, key, sizeof(name), &(int){ 0 });

	if (!slot)
		return -ENOMEM;
	if (!*slot) {
		put_text(b, name);
		*slot = (void *)(uintptr_t)++*nnames;
	}
	return (int64_t)(uintptr_t)*slot - 1;
}

/* The frame nodes of the stack table as (parent, name, type), numbered
 * from 1 in table order (a parent comes first); map gives each table
 * node's number (0: not a frame). */
static int encode_stacks(struct sample_store *st, struct byte_buf *b, uint32_t *map)
{
	size_t nodes = stack_table_node_count(st->stacks);
	struct byte_buf names = { 0 };
	uint64_t nnames = 0;
	uint32_t next = 0;
	int err = 0;

	if (!(st->name_index = strmap_new()))
		return -ENOMEM;
	for (size_t n = 1; n <= nodes && !err; n++) {
		struct stack_node sn = stack_table_node(st->stacks, (uint32_t)n);

		map[n] = 0;
		if (sn.kind == STACK_NODE_FRAME)
			map[n] = ++next;
		if (sn.kind == STACK_NODE_FRAME && name_index(st, sn.frame.name, &nnames, &names) < 0)
			err = -ENOMEM;
	}
	byte_buf_varint(b, nnames);
	byte_buf_bytes(b, names.data, names.len);
	byte_buf_free(&names);
	byte_buf_varint(b, next);
	for (size_t n = 1; n <= nodes && !err; n++) {
		struct stack_node sn = stack_table_node(st->stacks, (uint32_t)n);
		const char *key = (const char *)&sn.frame.name;

		if (!map[n])
			continue;
		byte_buf_varint(b, map[sn.parent]);
		byte_buf_varint(b, (uintptr_t)strmap_get(st->name_index, key, sizeof(key)) - 1);
		byte_buf_u8(b, (uint8_t)sn.frame.type);
	}
	strmap_free(st->name_index, NULL);   /* its keys are this segment's names */
	st->name_index = NULL;
	return err;
}

static int by_time(const void *a, const void *b, void *ctx)
{
	const struct segment_rec *recs = ctx;
	uint64_t x = recs[*(const uint32_t *)a].timestamp_ns, y = recs[*(const uint32_t *)b].timestamp_ns;

	if (x != y)
		return x < y ? -1 : 1;
	return (*(const uint32_t *)a > *(const uint32_t *)b) - (*(const uint32_t *)a < *(const uint32_t *)b);
}

static int encode_samples(struct sample_store *st, struct byte_buf *b)
{
	size_t nodes = stack_table_node_count(st->stacks);
	uint32_t *map = calloc(nodes + 1, sizeof(*map));
	uint32_t *order = malloc((st->nrecs ? st->nrecs : 1) * sizeof(*order));
	uint64_t prev = st->first_ns;
	int err = map && order ? encode_stacks(st, b, map) : -ENOMEM;

	for (size_t i = 0; i < st->nrecs; i++)
		order[i] = (uint32_t)i;
	if (!err)
		qsort_r(order, st->nrecs, sizeof(*order), by_time, st->recs);
	byte_buf_varint(b, st->nrecs);
	for (size_t i = 0; i < st->nrecs && !err; i++) {
		const struct segment_rec *r = &st->recs[order[i]];

		byte_buf_varint(b, r->timestamp_ns - prev);
		byte_buf_varint(b, map[stack_table_leaf(st->stacks, r->stack)]);
		byte_buf_varint(b, r->labels);
		byte_buf_u8(b, (uint8_t)(r->kind << 4 | (r->state & 15)));
		byte_buf_varint(b, r->weight);
		prev = r->timestamp_ns;
	}
	free(map);
	free(order);
	return err;
}

static int encode_rows(struct sample_store *st, struct byte_buf *b)
{
	if (grow_array((void **)&st->texts, &st->texts_cap, st->nlabels, sizeof(*st->texts)))
		return -ENOMEM;
	for (size_t i = 0; i < st->nlabels; i++)
		st->texts[i] = (struct segment_label_texts){ st->labels[i].process,
							    st->labels[i].thread };
	return segment_rows_encode(st->rows, st->stacks, st->texts, st->recs, st->nrecs,
				   st->settings.info.flags & STORE_PER_THREAD, b);
}

/* What only a close uses goes back to the system between closes: it is
 * as large as the segment, and a recording spends most of its time adding. */
static void release_close_scratch(struct sample_store *st)
{
	struct segment_rows *fresh = segment_rows_new();

	for (int i = 0; i < STORE_PARTS; i++)
		byte_buf_free(&st->parts[i]);
	free(st->texts);
	st->texts = NULL;
	st->texts_cap = 0;
	if (fresh) {
		segment_rows_free(st->rows);
		st->rows = fresh;
	}
}

/* Gives the hook the segment just written, read back once. */
static void tell_written(struct sample_store *st)
{
	const struct byte_buf *p = st->parts;
	struct store_segment_written seg = { &st->settings.info, st->first_ns, st->last_ns,
					     (uint32_t)st->nlabels, (uint32_t)st->nrecs,
					     NULL, NULL, 0 };
	struct store_labels labels;
	struct store_samples samples;

	seg.read_err = store_labels_parse(p[STORE_LABELS].data, p[STORE_LABELS].len,
					  st->nlabels, &labels);
	if (!seg.read_err)
		seg.labels = &labels;
	if (seg.labels && st->settings.segment_samples &&
	    !(seg.read_err = store_samples_parse(p[STORE_SAMPLES].data, p[STORE_SAMPLES].len,
						 st->first_ns, labels.n, &samples)))
		seg.samples = &samples;
	st->settings.segment_written(st->settings.segment_ctx, &seg);
	if (seg.samples)
		store_samples_free(&samples);
	if (seg.labels)
		store_labels_free(&labels);
}

/* Writes the open segment and starts an empty one. */
static int close_segment(struct sample_store *st)
{
	uint64_t began = monotonic_ns(), took;
	int err = 0;

	if (!st->nrecs)
		return 0;
	for (int i = 0; i < STORE_PARTS; i++)
		byte_buf_clear(&st->parts[i]);
	encode_labels(st, &st->parts[STORE_LABELS]);
	if (encode_rows(st, &st->parts[STORE_ROWS]) ||
	    encode_samples(st, &st->parts[STORE_SAMPLES])) {
		sp_err("write a segment of %s: %s", st->path, strerror(ENOMEM));
		err = -ENOMEM;
	}
	if (!err)
		err = store_file_append(st->fd, st->path, st->seq, st->first_ns, st->last_ns,
					(uint32_t)st->nlabels, (uint32_t)st->nrecs, st->parts);
	if (err) {
		st->stats.samples_lost += st->nrecs;
	} else {
		st->stats.segments++;
		if (st->settings.segment_written)
			tell_written(st);
	}
	st->seq++;
	release_close_scratch(st);
	drop_segment(st);
	/* What the close and its hook freed lies between blocks still in
	 * use, where free() keeps it resident; hand its pages back. */
	malloc_trim(0);
	if (open_segment(st) && !err)
		err = -ENOMEM;
	took = monotonic_ns() - began;
	st->stats.close_ns += took;
	if (took > st->stats.close_longest_ns)
		st->stats.close_longest_ns = took;
	return err;
}

int sample_store_tick(struct sample_store *st, uint64_t now_ns)
{
	if (!st->nrecs || !st->stacks)
		return 0;
	if (segment_memory(st) < st->settings.segment_bytes &&
	    now_ns - st->first_ns < st->settings.segment_ns)
		return 0;
	return close_segment(st);
}

int sample_store_finish(struct sample_store *st)
{
	int err = st->stacks ? close_segment(st) : 0;

	if (st->fd >= 0) {
		off_t end = lseek(st->fd, 0, SEEK_END);

		st->stats.file_bytes = end > 0 ? (uint64_t)end : 0;
		if (fsync(st->fd) && !err) {
			err = -errno;
			sp_err("write %s: %s", st->path, strerror(-err));
		}
		close(st->fd);
		st->fd = -1;
	}
	return err;
}

void sample_store_stats(const struct sample_store *st, struct sample_store_stats *out)
{
	*out = st->stats;
	out->memory = st->stacks ? segment_memory(st) + segment_rows_memory(st->rows) : 0;
	if (st->fd >= 0) {
		off_t end = lseek(st->fd, 0, SEEK_END);

		out->file_bytes = end > 0 ? (uint64_t)end : 0;
	}
}

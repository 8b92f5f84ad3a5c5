/* store_segment.c - see store_segment.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/byte_buf.h"
#include "base/log.h"
#include "output/store_segment.h"

/* A string of the part, copied NUL-terminated into *at (room made by the
 * caller: at most the part's length plus one byte a string). */
static const char *copy_str(struct byte_reader *br, char **at)
{
	size_t n;
	const char *s = byte_reader_str(br, STORE_TEXT_MAX, &n);
	char *out = *at;

	if (!s)
		return NULL;
	memcpy(out, s, n);
	out[n] = '\0';
	*at += n + 1;
	return out;
}

/* The largest id + 1 (0: none) each field holds. */
#define ID32_MAX ((uint64_t)INT32_MAX + 1)
#define ID64_MAX ((uint64_t)INT64_MAX + 1)

int store_labels_parse(const void *data, size_t len, size_t n, struct store_labels *out)
{
	struct byte_reader br = byte_reader_of(data, len);
	char *at;

	*out = (struct store_labels){ 0 };
	/* Each label takes at least 11 bytes of the part. */
	if (n > len / 11 + 1)
		return -EINVAL;
	out->labels = calloc(n ? n : 1, sizeof(*out->labels));
	out->strings = malloc(len + 4 * n + 1);
	if (!out->labels || !out->strings) {
		store_labels_free(out);
		return -ENOMEM;
	}
	at = out->strings;
	for (size_t i = 0; i < n && !br.failed; i++) {
		struct sample_labels *l = &out->labels[i];

		l->pid = (pid_t)byte_reader_bounded(&br, INT32_MAX);
		l->tid = (pid_t)byte_reader_bounded(&br, INT32_MAX);
		l->stage = (int32_t)((int64_t)byte_reader_bounded(&br, ID32_MAX) - 1);
		l->attempt = (int32_t)((int64_t)byte_reader_bounded(&br, ID32_MAX) - 1);
		l->task = (int64_t)(byte_reader_bounded(&br, ID64_MAX) - 1);
		l->attribution = byte_reader_u8(&br);
		l->flags = byte_reader_u8(&br);
		l->process = copy_str(&br, &at);
		l->thread = copy_str(&br, &at);
		l->app_id = copy_str(&br, &at);
		l->executor_id = copy_str(&br, &at);
	}
	if (br.failed || br.p != br.end) {
		store_labels_free(out);
		return -EINVAL;
	}
	out->n = n;
	return 0;
}

void store_labels_free(struct store_labels *l)
{
	free(l->labels);
	free(l->strings);
	*l = (struct store_labels){ 0 };
}

int store_labels_read(struct store_reader *r, size_t i, struct store_labels *out)
{
	void *data;
	size_t len;
	int err = store_reader_part(r, i, STORE_LABELS, &data, &len);

	if (err)
		return err;
	err = store_labels_parse(data, len, store_reader_head(r, i)->labels, out);
	free(data);
	if (err)
		sp_err("read segment %zu of %s: %s", i, store_reader_path(r),
		       err == -EINVAL ? "its labels are damaged" : strerror(-err));
	return err;
}

static int parse_names(struct byte_reader *br, struct store_samples *s, char **at)
{
	size_t n = (size_t)byte_reader_bounded(br, (uint64_t)(br->end - br->p));

	s->names = calloc(n ? n : 1, sizeof(*s->names));
	if (!s->names)
		return -ENOMEM;
	for (size_t i = 0; i < n && !br->failed; i++)
		s->names[i] = (char *)copy_str(br, at);
	s->nnames = n;
	return br->failed ? -EINVAL : 0;
}

static int parse_nodes(struct byte_reader *br, struct store_samples *s)
{
	size_t n = (size_t)byte_reader_bounded(br, (uint64_t)(br->end - br->p) / 3);

	s->nodes = calloc(n + 1, sizeof(*s->nodes));
	if (!s->nodes)
		return -ENOMEM;
	for (size_t i = 1; i <= n && !br->failed; i++) {
		struct store_frame_node *f = &s->nodes[i];
		uint64_t name;

		f->parent = (uint32_t)byte_reader_bounded(br, i - 1);  /* parents come first */
		name = byte_reader_bounded(br, s->nnames ? s->nnames - 1 : 0);
		f->frame.type = (enum frame_type)byte_reader_bounded(br, FRAME_TYPE_MAX - 1);
		f->frame.name = s->nnames ? s->names[name] : "";
	}
	s->nnodes = n;
	return br->failed ? -EINVAL : 0;
}

static int parse_samples(struct byte_reader *br, struct store_samples *s, uint64_t first_ns,
			 size_t nlabels)
{
	size_t n = (size_t)byte_reader_bounded(br, (uint64_t)(br->end - br->p) / 5);
	uint64_t t = first_ns;

	s->samples = calloc(n ? n : 1, sizeof(*s->samples));
	if (!s->samples)
		return -ENOMEM;
	for (size_t i = 0; i < n && !br->failed; i++) {
		struct store_sample *x = &s->samples[i];
		uint8_t ks;

		t += byte_reader_varint(br);
		x->timestamp_ns = t;
		x->leaf = (uint32_t)byte_reader_bounded(br, s->nnodes);
		x->labels = (uint32_t)byte_reader_bounded(br, nlabels ? nlabels - 1 : 0);
		ks = byte_reader_u8(br);
		x->kind = ks >> 4;
		x->state = ks & 15;
		x->weight = byte_reader_varint(br);
		if (!nlabels || x->kind > SAMPLE_TASK || (x->kind == SAMPLE_CPU && !x->weight))
			br->failed = true;
	}
	s->n = n;
	return br->failed || br->p != br->end ? -EINVAL : 0;
}

int store_samples_parse(const void *data, size_t len, uint64_t first_ns, size_t nlabels,
			struct store_samples *out)
{
	struct byte_reader br = byte_reader_of(data, len);
	char *at;
	int err;

	*out = (struct store_samples){ 0 };
	out->data = malloc(2 * len + 1);   /* each name and its NUL */
	if (!out->data)
		return -ENOMEM;
	at = out->data;
	err = parse_names(&br, out, &at);
	if (!err)
		err = parse_nodes(&br, out);
	if (!err)
		err = parse_samples(&br, out, first_ns, nlabels);
	if (err)
		store_samples_free(out);
	return err;
}

void store_samples_free(struct store_samples *s)
{
	free(s->samples);
	free(s->nodes);
	free(s->names);
	free(s->data);
	*s = (struct store_samples){ 0 };
}

int store_samples_read(struct store_reader *r, size_t i, size_t nlabels,
		       struct store_samples *out)
{
	void *data;
	size_t len;
	int err = store_reader_part(r, i, STORE_SAMPLES, &data, &len);

	if (err)
		return err;
	err = store_samples_parse(data, len, store_reader_head(r, i)->first_ns, nlabels, out);
	free(data);
	if (err)
		sp_err("read segment %zu of %s: %s", i, store_reader_path(r),
		       err == -EINVAL ? "its samples are damaged" : strerror(-err));
	return err;
}

size_t store_sample_frames(const struct store_samples *s, uint32_t leaf, struct frame *out,
			   size_t max)
{
	size_t n = 0;

	for (uint32_t node = leaf; node; node = s->nodes[node].parent, n++)
		if (n < max)
			out[n] = s->nodes[node].frame;
	return n;
}

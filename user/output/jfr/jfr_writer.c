/* jfr_writer.c - see jfr_writer.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "output/jfr/jfr_chunk.h"
#include "output/jfr/jfr_metadata.h"
#include "output/jfr/jfr_out.h"
#include "output/jfr/jfr_writer.h"

struct jfr_writer {
	char *path;
	struct jfr_out *out;
	struct jfr_chunk *chunk;
	struct jfr_chunk_context ctx;
	struct jfr_label *labels;      /* copies */
	size_t chunk_bytes;
	int error;                     /* sticky -errno */
	struct jfr_writer_stats stats;
};

static void free_labels(struct jfr_label *labels, size_t n)
{
	if (!labels)
		return;
	for (size_t i = 0; i < n; i++) {
		free((char *)labels[i].key);
		free((char *)labels[i].value);
	}
	free(labels);
}

static void writer_free(struct jfr_writer *w)
{
	if (!w)
		return;
	jfr_chunk_free(w->chunk);
	free_labels(w->labels, w->ctx.nlabels);
	free(w->path);
	free(w);
}

static int copy_labels(struct jfr_writer *w, const struct jfr_recording_info *info)
{
	if (!info->nlabels)
		return 0;
	if (!info->labels)
		return -EINVAL;
	w->labels = calloc(info->nlabels, sizeof(*w->labels));
	if (!w->labels)
		return -ENOMEM;
	w->ctx.nlabels = info->nlabels;
	for (size_t i = 0; i < info->nlabels; i++) {
		const char *k = info->labels[i].key, *v = info->labels[i].value;

		w->labels[i].key = strdup(k ? k : "");
		w->labels[i].value = strdup(v ? v : "");
		if (!w->labels[i].key || !w->labels[i].value)
			return -ENOMEM;
	}
	w->ctx.labels = w->labels;
	return 0;
}

struct jfr_writer *jfr_writer_open(const char *path, const struct jfr_recording_info *info,
				   const struct jfr_writer_options *opts)
{
	struct jfr_writer *w;
	int err;

	if (!path || !info) {
		sp_err("JFR %s: no path or recording info", path ? path : "(null)");
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w || !(w->path = strdup(path))) {
		err = -ENOMEM;
		goto fail;
	}
	if ((err = copy_labels(w, info)))
		goto fail;
	if (!(w->ctx.metadata_body = jfr_metadata_body())) {
		err = -ENOMEM;
		goto fail;
	}
	if (!(w->chunk = jfr_chunk_new())) {
		err = -ENOMEM;
		goto fail;
	}
	w->ctx.start_monotonic_ns = info->start_monotonic_ns;
	w->ctx.start_realtime_ns = info->start_realtime_ns;
	w->ctx.cpu_interval_ns = info->cpu_interval_ns;
	w->ctx.wall_interval_ns = info->wall_interval_ns;
	w->ctx.destination = w->path;
	w->chunk_bytes = opts && opts->chunk_bytes ? opts->chunk_bytes : JFR_DEFAULT_CHUNK_BYTES;
	jfr_chunk_begin(w->chunk, info->start_monotonic_ns);
	/* Opened last: a failure above leaves no file behind. */
	w->out = jfr_out_open(path, opts && opts->gzip);
	if (!w->out) {
		err = -errno;
		writer_free(w);
		errno = -err;
		return NULL;
	}
	return w;
fail:
	sp_err("JFR %s: %s", path, strerror(-err));
	writer_free(w);
	errno = -err;
	return NULL;
}

size_t jfr_writer_memory(const struct jfr_writer *w)
{
	return sizeof(*w) + jfr_chunk_memory(w->chunk);
}

static void note_memory(struct jfr_writer *w)
{
	size_t m = jfr_writer_memory(w);

	if (m > w->stats.peak_memory)
		w->stats.peak_memory = m;
}

/* Writes the current chunk and starts the next one. */
static int finish_chunk(struct jfr_writer *w, bool final)
{
	long long n;

	note_memory(w);
	w->stats.events += jfr_chunk_events(w->chunk);
	w->stats.truncated_stacks += jfr_chunk_truncated(w->chunk);
	n = jfr_chunk_write(w->chunk, w->out, &w->ctx, final);
	if (n < 0) {
		if (n == -ENOMEM)
			sp_err("JFR %s: out of memory writing a chunk", w->path);
		w->error = (int)n;
		return w->error;
	}
	w->stats.chunks++;
	w->stats.bytes += n;
	return 0;
}

int jfr_writer_add_sample(struct jfr_writer *w, const struct jfr_sample *s)
{
	int ret;

	if (w->error)
		return w->error;
	if ((ret = jfr_chunk_check_sample(s)))
		return ret;
	ret = jfr_chunk_add_sample(w->chunk, s);
	if (ret) {
		sp_err("JFR %s: out of memory adding a sample", w->path);
		w->error = ret;
		return ret;
	}
	w->stats.samples++;
	if (jfr_chunk_bytes(w->chunk) < w->chunk_bytes)
		return 0;
	if ((ret = finish_chunk(w, false)))
		return ret;
	jfr_chunk_release(w->chunk);
	return 0;
}

int jfr_writer_idle(struct jfr_writer *w)
{
	if (w->error)
		return w->error;
	if (jfr_chunk_events(w->chunk) && finish_chunk(w, false))
		return w->error;
	jfr_chunk_trim(w->chunk);
	return 0;
}

int jfr_writer_close_stats(struct jfr_writer *w, struct jfr_writer_stats *out)
{
	int ret = w->error;

	/* A file ends with a complete chunk, never with an empty tail: the
	 * last chunk is written even when it holds no samples. */
	if (!ret)
		ret = finish_chunk(w, true);
	ret = jfr_out_close(w->out, ret != 0) ?: ret;
	if (out)
		*out = w->stats;
	writer_free(w);
	return ret;
}

void jfr_writer_discard(struct jfr_writer *w)
{
	jfr_out_close(w->out, 1);
	writer_free(w);
}

int jfr_writer_close(struct jfr_writer *w)
{
	return jfr_writer_close_stats(w, NULL);
}

void jfr_writer_stats(const struct jfr_writer *w, struct jfr_writer_stats *out)
{
	*out = w->stats;
	out->events += jfr_chunk_events(w->chunk);
}

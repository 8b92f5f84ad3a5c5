/* otlp_store.c - see otlp_store.h. */
#include <errno.h>
#include <string.h>

#include "base/log.h"
#include "export/otlp_store.h"

static void add_totals(struct otlp_totals *sum, const struct otlp_totals *t)
{
	sum->segments += t->segments;
	sum->samples += t->samples;
	sum->cpu_samples += t->cpu_samples;
	for (int k = 0; k < OTLP_KINDS; k++)
		sum->values[k] += t->values[k];
}

/* Encodes b and hands it to s. */
static int submit(struct otlp_batch *b, struct store_reader *r, struct otlp_sender *s,
		  struct otlp_totals *queued)
{
	struct otlp_totals t;
	uint8_t *body;
	size_t len;
	int err = otlp_batch_encode(b, &body, &len);

	if (err) {
		sp_err("OTLP profiles of %s: %s", store_reader_path(r), strerror(-err));
		return err;
	}
	otlp_batch_totals(b, &t);
	add_totals(queued, &t);
	otlp_sender_submit(s, body, len, t.samples);
	return 0;
}

int otlp_store_submit(struct store_reader *r, size_t batch_segments, struct otlp_sender *s,
		      struct otlp_totals *queued)
{
	struct otlp_batch_settings set = { .info = store_reader_info(r) };
	size_t n = store_reader_segments(r), per = batch_segments ? batch_segments : 1;
	int err = 0;

	*queued = (struct otlp_totals){ 0 };
	for (size_t i = 0; i < n && !err; i += per) {
		struct otlp_batch *b = otlp_batch_new(&set);

		if (!b) {
			sp_err("OTLP profiles of %s: %s", store_reader_path(r), strerror(ENOMEM));
			return -ENOMEM;
		}
		for (size_t j = i; j < i + per && j < n && !err; j++)
			err = otlp_batch_add_segment(b, r, j);
		if (!err)
			err = submit(b, r, s, queued);
		otlp_batch_free(b);
	}
	return err;
}

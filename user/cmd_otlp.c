/* cmd_otlp.c - see cmd_otlp.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/atomic_file.h"
#include "base/json_writer.h"
#include "base/log.h"
#include "cmd_folded_input.h"
#include "cmd_otlp.h"
#include "export/otlp_store.h"

int cmd_otlp_option(const char *cmd, int opt, const char *arg, struct cmd_otlp *o)
{
	uint64_t n;

	switch (opt) {
	case 0x4f40:
		if (cmd_parse_positive(cmd, "--otlp-batch", arg, &n))
			return -1;
		o->batch_segments = n;
		return 1;
	case 0x4f41:
		o->stats_path = arg;
		return 1;
	}
	return otlp_option(cmd, opt, arg, &o->export);
}

static void totals_json(const struct otlp_totals *t, struct json_writer *w)
{
	json_begin_object(w);
	json_key(w, "segments");
	json_uint(w, t->segments);
	json_key(w, "samples");
	json_uint(w, t->samples);
	json_key(w, "cpu_samples");
	json_uint(w, t->cpu_samples);
	json_key(w, "wall_ns");
	json_uint(w, t->values[OTLP_WALL]);
	json_key(w, "off_cpu_ns");
	json_uint(w, t->values[OTLP_OFF_CPU]);
	json_end_object(w);
}

/* {"exported": what the requests held, "sender": its counters}, as
 * summary.json's "otlp" */
static int write_stats(const char *path, const struct otlp_totals *t,
		       const struct otlp_sender_stats *st, const char *url)
{
	struct atomic_file af;
	struct json_writer w;
	FILE *f = atomic_file_open(&af, path);

	if (!f)
		return -errno;
	json_init(&w, f);
	json_begin_object(&w);
	json_key(&w, "exported");
	totals_json(t, &w);
	json_key(&w, "sender");
	otlp_sender_stats_json(st, url, &w);
	json_end_object(&w);
	fputc('\n', f);
	return atomic_file_commit(&af, 0);
}

static uint64_t sum(const uint64_t *v, int n)
{
	uint64_t total = 0;

	for (int i = 0; i < n; i++)
		total += v[i];
	return total;
}

int cmd_otlp_send_store(struct store_reader *r, struct cmd_otlp *o)
{
	struct otlp_sender *s = otlp_sender_start(&o->export.sender);
	struct otlp_sender_stats st;
	struct otlp_totals t;
	int err;

	if (!s)
		return 1;
	err = otlp_store_submit(r, o->batch_segments, s, &t);
	/* Each request goes, is refused or gives up: the wait ends. */
	while (!otlp_sender_drain(s, 1000))
		;
	otlp_sender_stop(s, &st);
	sp_info("OTLP: %llu of %llu samples (%llu on CPU, %llu off-CPU intervals) sent to %s "
		"in %llu requests; %llu retries; %llu samples dropped",
		(unsigned long long)st.samples_sent, (unsigned long long)t.samples,
		(unsigned long long)t.cpu_samples, (unsigned long long)(t.samples - t.cpu_samples),
		o->export.sender.url, (unsigned long long)st.batches_sent, (unsigned long long)st.retries,
		(unsigned long long)sum(st.samples_dropped, OTLP_DROPS));
	if (o->stats_path && write_stats(o->stats_path, &t, &st, o->export.sender.url))
		err = err ? err : -EIO;
	return err || sum(st.batches_dropped, OTLP_DROPS) ? 1 : 0;
}

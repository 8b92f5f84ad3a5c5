/* otlp_cost.c - what exporting a recording as OTLP profiles costs per
 * sample: the CPU time to turn each segment of a sample store into a
 * request (otlp_batch_add of its parsed labels and samples, then
 * otlp_batch_encode), the request's bytes, and what gzip would make of
 * them. Reading and parsing the segment (what the recorder has in memory
 * already) is timed apart.
 *
 * usage: otlp_cost DIR/samples.store
 * Prints per store: samples (CPU samples and off-CPU intervals), requests,
 * CPU ns per sample (parse; add and encode), bytes per sample (plain,
 * gzip'd). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "export/otlp_profiles.h"
#include "output/store_segment.h"
#include "bench_clock.h"

struct cost {
	uint64_t samples, requests, bytes, gzip_bytes;
	double parse_s, encode_s;
};

static size_t gzip_size(const uint8_t *data, size_t len)
{
	uLongf out_len = compressBound(len);
	uint8_t *out = malloc(out_len);
	size_t n = out && compress2(out, &out_len, data, len, 6) == Z_OK ? out_len : 0;

	free(out);
	return n;
}

static int segment(struct store_reader *r, size_t i, struct cost *c)
{
	const struct store_segment_head *h = store_reader_head(r, i);
	struct otlp_batch_settings set = { .info = store_reader_info(r) };
	struct otlp_batch *b = otlp_batch_new(&set);
	struct store_labels labels;
	struct store_samples ss;
	struct otlp_totals t;
	double t0 = seconds(CLOCK_THREAD_CPUTIME_ID), t1;
	uint8_t *body;
	size_t len;

	if (!b || store_labels_read(r, i, &labels))
		return -1;
	if (store_samples_read(r, i, labels.n, &ss))
		return -1;
	t1 = seconds(CLOCK_THREAD_CPUTIME_ID);
	if (otlp_batch_add(b, &labels, &ss, h->first_ns, h->last_ns) ||
	    otlp_batch_encode(b, &body, &len))
		return -1;
	c->encode_s += seconds(CLOCK_THREAD_CPUTIME_ID) - t1;
	c->parse_s += t1 - t0;
	otlp_batch_totals(b, &t);
	c->samples += t.samples;
	c->requests++;
	c->bytes += len;
	c->gzip_bytes += gzip_size(body, len);
	free(body);
	otlp_batch_free(b);
	store_samples_free(&ss);
	store_labels_free(&labels);
	return 0;
}

int main(int argc, char **argv)
{
	struct store_reader *r;
	struct cost c = { 0 };

	if (argc != 2) {
		fprintf(stderr, "usage: otlp_cost DIR/samples.store\n");
		return 2;
	}
	if (!(r = store_reader_open(argv[1])))
		return 1;
	for (size_t i = 0; i < store_reader_segments(r); i++)
		if (segment(r, i, &c)) {
			fprintf(stderr, "otlp_cost: segment %zu failed\n", i);
			return 1;
		}
	store_reader_close(r);
	if (!c.samples)
		return 1;
	printf("%s: %llu samples in %llu requests; CPU per sample: parse %.0f ns, "
	       "add and encode %.0f ns; bytes per sample: %.1f (gzip'd %.1f); peak RSS %ld KiB\n",
	       argv[1], (unsigned long long)c.samples, (unsigned long long)c.requests,
	       c.parse_s * 1e9 / (double)c.samples, c.encode_s * 1e9 / (double)c.samples,
	       (double)c.bytes / (double)c.samples, (double)c.gzip_bytes / (double)c.samples,
	       status_kib("VmHWM:"));
	return 0;
}

/* codec_fuzz.h - the body of the codec fuzzers (fuzz_codec_*.c): any bytes,
 * fed in pieces whose sizes the input picks, decode or fail cleanly. */
#ifndef SPARKPROF_CODEC_FUZZ_H
#define SPARKPROF_CODEC_FUZZ_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "spark/event_log_codec.h"

#define FUZZ_OUT_MAX (16u << 20)

static int fuzz_sink(const void *data, size_t len, void *ctx)
{
	uint64_t *seen = ctx;
	volatile uint8_t touch = 0;

	/* ASan checks that every byte handed out is readable. */
	for (size_t i = 0; i < len; i += 512)
		touch ^= ((const uint8_t *)data)[i];
	if (len)
		touch ^= ((const uint8_t *)data)[len - 1];
	*seen += len;
	return 0;
}

static int fuzz_codec(enum spark_codec codec, const uint8_t *data, size_t size)
{
	struct codec_stream *s = codec_stream_new(codec, FUZZ_OUT_MAX);
	uint64_t seen = 0;
	size_t step = size ? (data[0] % 64) + 1 : 1, pos = 0;
	int err = 0;

	if (!s)
		return 0;
	/* Small pieces first (headers split across feeds), then the rest. */
	for (int i = 0; i < 8 && pos < size && !err; i++) {
		size_t n = step < size - pos ? step : size - pos;

		err = codec_stream_feed(s, data + pos, n, fuzz_sink, &seen);
		pos += n;
	}
	if (!err && pos < size)
		err = codec_stream_feed(s, data + pos, size - pos, fuzz_sink, &seen);
	if (err && err != -EPROTO && err != -EFBIG && err != -ENOMEM)
		abort();
	if (err && codec_stream_feed(s, data, size, fuzz_sink, &seen) != err)
		abort();   /* a failed stream stays failed */
	if (seen != codec_stream_out_bytes(s) || seen > FUZZ_OUT_MAX)
		abort();
	(void)codec_stream_end(s);
	(void)codec_stream_why(s);
	codec_stream_free(s);
	return 0;
}

#endif

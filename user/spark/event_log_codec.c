/* event_log_codec.c - see event_log_codec.h. */
#include <errno.h>
#include <lz4.h>
#include <snappy-c.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "spark/event_log_codec.h"

/* lz4-java's LZ4BlockOutputStream: magic, token, three little-endian ints. */
#define LZ4_MAGIC "LZ4Block"
#define LZ4_HEADER 21
#define LZ4_METHOD_RAW 0x10
#define LZ4_METHOD_LZ4 0x20
#define LZ4_LEVEL_BASE 10

/* snappy-java's SnappyOutputStream: magic and two big-endian version ints. */
static const uint8_t snappy_magic[8] = { 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0 };
#define SNAPPY_HEADER 16
/* Spark's chunks are 32 KiB (spark.io.compression.snappy.blockSize); far
 * larger ones are taken for corruption rather than buffered. */
#define SNAPPY_CHUNK_MAX (64u << 20)

#define ZSTD_OUT_CHUNK (128u << 10)

enum phase { PH_HEADER, PH_BLOCK };

struct codec_stream {
	enum spark_codec codec;
	uint64_t max_out, out;
	int err;
	const char *why;
	int mid_frame;            /* zstd: inside a frame */
	ZSTD_DCtx *zd;
	uint8_t *zbuf;
	/* lz4 and snappy: a header (or length) being gathered, then a block */
	enum phase phase;
	uint8_t hdr[LZ4_HEADER];
	size_t hdr_len, hdr_need;
	int seen_header;          /* snappy: the stream header was read */
	int lz4_raw;
	size_t orig_len;          /* lz4: the block's plain length */
	uint8_t *blk, *plain;
	size_t blk_len, blk_need, blk_cap, plain_cap;
};

int spark_codec_of_name(const char *name, enum spark_codec *codec)
{
	static const struct {
		const char *ext;
		enum spark_codec codec;
	} exts[] = { { ".zstd", SPARK_CODEC_ZSTD }, { ".lz4", SPARK_CODEC_LZ4 },
		     { ".snappy", SPARK_CODEC_SNAPPY } };
	size_t n = strlen(name);

	for (int cut = 1; cut;) {
		cut = 0;
		if (n >= 11 && memcmp(name + n - 11, ".inprogress", 11) == 0)
			n -= 11, cut = 1;
		if (n >= 8 && memcmp(name + n - 8, ".compact", 8) == 0)
			n -= 8, cut = 1;
	}
	*codec = SPARK_CODEC_NONE;
	if (n >= 4 && memcmp(name + n - 4, ".lzf", 4) == 0)
		return -ENOTSUP;
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		size_t e = strlen(exts[i].ext);

		if (n >= e && memcmp(name + n - e, exts[i].ext, e) == 0)
			*codec = exts[i].codec;
	}
	return 0;
}

const char *spark_codec_name(enum spark_codec codec)
{
	switch (codec) {
	case SPARK_CODEC_ZSTD: return "zstd";
	case SPARK_CODEC_LZ4: return "lz4";
	case SPARK_CODEC_SNAPPY: return "snappy";
	default: return "none";
	}
}

static void set_header_need(struct codec_stream *s)
{
	s->phase = PH_HEADER;
	s->hdr_len = 0;
	if (s->codec == SPARK_CODEC_LZ4)
		s->hdr_need = LZ4_HEADER;
	else
		s->hdr_need = s->seen_header ? 4 : SNAPPY_HEADER;
}

struct codec_stream *codec_stream_new(enum spark_codec codec, uint64_t max_out)
{
	struct codec_stream *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->codec = codec;
	s->max_out = max_out;
	if (codec == SPARK_CODEC_ZSTD) {
		s->zd = ZSTD_createDCtx();
		s->zbuf = malloc(ZSTD_OUT_CHUNK);
		if (!s->zd || !s->zbuf) {
			codec_stream_free(s);
			return NULL;
		}
	}
	set_header_need(s);
	return s;
}

void codec_stream_free(struct codec_stream *s)
{
	if (!s)
		return;
	ZSTD_freeDCtx(s->zd);
	free(s->zbuf);
	free(s->blk);
	free(s->plain);
	free(s);
}

static int fail(struct codec_stream *s, int err, const char *why)
{
	s->err = err;
	s->why = why;
	return err;
}

static int emit(struct codec_stream *s, const void *p, size_t n, codec_sink sink, void *ctx)
{
	if (!n)
		return 0;
	if (n > s->max_out - s->out)
		return fail(s, -EFBIG, "more plain bytes than allowed");
	s->out += n;
	return sink(p, n, ctx);
}

/* zstd: the library's streaming decoder, which also takes frame after
 * frame (Spark closes one at every flush). */
static int feed_zstd(struct codec_stream *s, const void *data, size_t len,
		     codec_sink sink, void *ctx)
{
	ZSTD_inBuffer in = { data, len, 0 };
	int full = 0;

	while (in.pos < in.size || full) {
		ZSTD_outBuffer out = { s->zbuf, ZSTD_OUT_CHUNK, 0 };
		size_t r = ZSTD_decompressStream(s->zd, &out, &in);

		if (ZSTD_isError(r))
			return fail(s, -EPROTO, ZSTD_getErrorName(r));
		s->mid_frame = r != 0;
		full = out.pos == out.size;
		int err = emit(s, s->zbuf, out.pos, sink, ctx);
		if (err)
			return err;
	}
	return 0;
}

/* Gathers up to need bytes at buf (have so far) from *p; 1 when complete. */
static int gather(uint8_t *buf, size_t *have, size_t need, const uint8_t **p,
		  const uint8_t *end)
{
	size_t n = need - *have;

	if (n > (size_t)(end - *p))
		n = end - *p;
	memcpy(buf + *have, *p, n);
	*have += n;
	*p += n;
	return *have == need;
}

/* Makes room for need bytes at *buf, growing by what is there to copy, so
 * a length the file claims costs memory only as its bytes arrive. */
static int room(uint8_t **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 4096;
	while (c < need)
		c *= 2;
	uint8_t *n = realloc(*buf, c);
	if (!n)
		return -ENOMEM;
	*buf = n;
	*cap = c;
	return 0;
}

static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

/* An LZ4Block header, checked as lz4-java's LZ4BlockInputStream does. */
static int lz4_header(struct codec_stream *s)
{
	const uint8_t *h = s->hdr;
	int method = h[8] & 0xF0, level = LZ4_LEVEL_BASE + (h[8] & 0x0F);
	int32_t clen = (int32_t)le32(h + 9), olen = (int32_t)le32(h + 13);

	if (memcmp(h, LZ4_MAGIC, 8) != 0)
		return fail(s, -EPROTO, "no LZ4Block magic where a block starts");
	if (method != LZ4_METHOD_RAW && method != LZ4_METHOD_LZ4)
		return fail(s, -EPROTO, "unknown LZ4Block compression method");
	if (olen < 0 || clen < 0 || olen > 1 << level || (olen == 0) != (clen == 0) ||
	    (method == LZ4_METHOD_RAW && olen != clen) ||
	    (method == LZ4_METHOD_LZ4 && clen > LZ4_compressBound(olen)))
		return fail(s, -EPROTO, "impossible LZ4Block lengths");
	if (olen == 0) {
		if (le32(h + 17) != 0)
			return fail(s, -EPROTO, "LZ4Block end mark with a checksum");
		set_header_need(s);   /* another stream may follow */
		return 0;
	}
	s->lz4_raw = method == LZ4_METHOD_RAW;
	s->orig_len = olen;
	s->phase = PH_BLOCK;
	s->blk_len = 0;
	s->blk_need = clen;
	return 0;
}

static int lz4_block(struct codec_stream *s, codec_sink sink, void *ctx)
{
	set_header_need(s);
	if (s->lz4_raw)
		return emit(s, s->blk, s->blk_len, sink, ctx);
	if (room(&s->plain, &s->plain_cap, s->orig_len))
		return fail(s, -ENOMEM, "out of memory");
	int n = LZ4_decompress_safe((const char *)s->blk, (char *)s->plain,
				    (int)s->blk_len, (int)s->orig_len);
	if (n < 0 || (size_t)n != s->orig_len)
		return fail(s, -EPROTO, "an LZ4 block that does not decode to its length");
	return emit(s, s->plain, n, sink, ctx);
}

/* A snappy-java stream header, or a chunk's length (where a header may
 * start again: its first four bytes are no length snappy-java writes). */
static int snappy_header(struct codec_stream *s)
{
	if (!s->seen_header || s->hdr_need == SNAPPY_HEADER) {
		if (memcmp(s->hdr, snappy_magic, sizeof(snappy_magic)) != 0)
			return fail(s, -EPROTO, "no snappy-java stream header");
		if ((int32_t)be32(s->hdr + 12) < 1)
			return fail(s, -EPROTO, "bad snappy-java stream version");
		s->seen_header = 1;
		set_header_need(s);
		return 0;
	}
	uint32_t n = be32(s->hdr);

	if (n == be32(snappy_magic)) {
		s->hdr_need = SNAPPY_HEADER;   /* concatenated stream */
		return 0;
	}
	if (n == 0 || n > SNAPPY_CHUNK_MAX)
		return fail(s, -EPROTO, "impossible snappy chunk length");
	s->phase = PH_BLOCK;
	s->blk_len = 0;
	s->blk_need = n;
	return 0;
}

static int snappy_chunk(struct codec_stream *s, codec_sink sink, void *ctx)
{
	size_t n;

	set_header_need(s);
	if (snappy_uncompressed_length((const char *)s->blk, s->blk_len, &n) != SNAPPY_OK ||
	    n > SNAPPY_CHUNK_MAX)
		return fail(s, -EPROTO, "a snappy chunk without a valid length");
	if (room(&s->plain, &s->plain_cap, n ? n : 1))
		return fail(s, -ENOMEM, "out of memory");
	size_t got = n;
	if (snappy_uncompress((const char *)s->blk, s->blk_len, (char *)s->plain, &got) !=
		    SNAPPY_OK || got != n)
		return fail(s, -EPROTO, "a snappy chunk that does not decode");
	return emit(s, s->plain, got, sink, ctx);
}

/* lz4 and snappy: headers (lengths) and blocks, gathered across feeds. */
static int feed_framed(struct codec_stream *s, const uint8_t *p, const uint8_t *end,
		       codec_sink sink, void *ctx)
{
	int lz4 = s->codec == SPARK_CODEC_LZ4;

	while (p < end) {
		int err;

		if (s->phase == PH_HEADER) {
			if (!gather(s->hdr, &s->hdr_len, s->hdr_need, &p, end))
				break;
			err = lz4 ? lz4_header(s) : snappy_header(s);
		} else {
			size_t want = s->blk_len + (size_t)(end - p);

			if (room(&s->blk, &s->blk_cap, want < s->blk_need ? want : s->blk_need))
				return fail(s, -ENOMEM, "out of memory");
			if (!gather(s->blk, &s->blk_len, s->blk_need, &p, end))
				break;
			err = lz4 ? lz4_block(s, sink, ctx) : snappy_chunk(s, sink, ctx);
		}
		if (err)
			return err;
	}
	return 0;
}

int codec_stream_feed(struct codec_stream *s, const void *data, size_t len,
		      codec_sink sink, void *ctx)
{
	int err;

	if (s->err)
		return s->err;
	switch (s->codec) {
	case SPARK_CODEC_ZSTD:
		err = feed_zstd(s, data, len, sink, ctx);
		break;
	case SPARK_CODEC_LZ4:
	case SPARK_CODEC_SNAPPY:
		err = feed_framed(s, data, (const uint8_t *)data + len, sink, ctx);
		break;
	default:
		err = emit(s, data, len, sink, ctx);
		break;
	}
	if (err && !s->err)
		s->err = err;   /* the sink's: stop here too */
	return err;
}

int codec_stream_end(const struct codec_stream *s)
{
	switch (s->codec) {
	case SPARK_CODEC_ZSTD:
		return s->mid_frame;
	case SPARK_CODEC_LZ4:
	case SPARK_CODEC_SNAPPY:
		return s->phase == PH_BLOCK || s->hdr_len > 0;
	default:
		return 0;
	}
}

const char *codec_stream_why(const struct codec_stream *s)
{
	return s->why ? s->why : "no error";
}

uint64_t codec_stream_out_bytes(const struct codec_stream *s)
{
	return s->out;
}

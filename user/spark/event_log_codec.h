/* event_log_codec.h - the compressed framings Spark writes its event logs in.
 *
 * Spark compresses an event log with the codec named by
 * spark.eventLog.compression.codec and names the file after it
 * (APP.zstd, APP.lz4, APP.snappy; rolled logs events_N_APP.zstd ...).
 * Each codec frames its blocks its own way (the Java library's stream
 * format, not the command-line tools'):
 *   zstd    standard zstd frames (zstd-jni), one per flush;
 *   lz4     lz4-java's LZ4BlockOutputStream: "LZ4Block", a token (method
 *           and block size), little-endian compressed and original lengths
 *           and an xxhash32 checksum, then the block; an empty block ends a
 *           stream and another may follow.  A block is written only when
 *           its 32 KiB are full (Spark's flushes do not end one), so a
 *           running application's lz4 log shows only its full blocks;
 *   snappy  snappy-java's SnappyOutputStream: "\x82SNAPPY\0", two
 *           big-endian version ints, then chunks of a big-endian length and
 *           a raw snappy block; a header may start again (concatenation).
 * A decoder takes the file in pieces of any size and hands out the plain
 * bytes in pieces; the file is untrusted: lengths are checked against
 * what each format allows, a block that does not decode is an error, and
 * the plain bytes are bounded.  lz4 checksums are not checked (the library
 * is not linked for them): a block's lengths and LZ4_decompress_safe's
 * bounds are.
 */
#ifndef SPARKPROF_EVENT_LOG_CODEC_H
#define SPARKPROF_EVENT_LOG_CODEC_H

#include <stddef.h>
#include <stdint.h>

enum spark_codec {
	SPARK_CODEC_NONE = 0,
	SPARK_CODEC_ZSTD,
	SPARK_CODEC_LZ4,
	SPARK_CODEC_SNAPPY,
};

/* The codec of an event log file by its name's extension, after Spark's
 * ".inprogress" and a compacted log's ".compact" (both dropped): no
 * extension Spark gives a codec is SPARK_CODEC_NONE.  -ENOTSUP for
 * ".lzf" (Spark's fourth codec, not read). */
int spark_codec_of_name(const char *name, enum spark_codec *codec);

/* "none", "zstd", "lz4", "snappy". */
const char *spark_codec_name(enum spark_codec codec);

/* Receives plain bytes; non-zero stops decoding and is returned by
 * codec_stream_feed. */
typedef int (*codec_sink)(const void *data, size_t len, void *ctx);

struct codec_stream;

/* A decoder that hands out at most max_out plain bytes (past them,
 * -EFBIG).  NULL on allocation failure. */
struct codec_stream *codec_stream_new(enum spark_codec codec, uint64_t max_out);
void codec_stream_free(struct codec_stream *s);

/* Decodes len more bytes of the file into sink.  0; -EPROTO (the bytes are
 * not the codec's framing, see codec_stream_why), -EFBIG, -ENOMEM, or the
 * sink's non-zero return.  After an error the stream takes nothing more. */
int codec_stream_feed(struct codec_stream *s, const void *data, size_t len,
		      codec_sink sink, void *ctx);

/* At the end of the file: 0 when it ended between frames, blocks or
 * chunks; 1 when it was cut inside one (a log still being written, or cut
 * short: what came before has been handed out).  An lz4 stream without its
 * closing empty block is not "cut" (a running application's log has none). */
int codec_stream_end(const struct codec_stream *s);

/* What was wrong after -EPROTO: a short static text. */
const char *codec_stream_why(const struct codec_stream *s);

/* Plain bytes handed out so far. */
uint64_t codec_stream_out_bytes(const struct codec_stream *s);

#endif

/* test_jfr_writer.c - the JFR writer's files, checked structurally: chunk
 * headers, sizes, offsets, event framing, chunk rotation, bounded memory,
 * gzip, and refused samples.  (The JDK's `jfr` and async-profiler's
 * converter read the same files in tests/integration/test_jfr_*.py.)
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/log.h"
#include "output/jfr/jfr_buf.h"
#include "output/jfr/jfr_types.h"
#include "output/jfr/jfr_writer.h"
#include "sparkprof_events.h"
#include "tap.h"

static uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

struct walk {
	int chunks;
	int bad;                 /* structural errors found */
	uint64_t events[256];    /* count per event type id < 256 */
	int last_flags;
	uint64_t first_start_nanos;
};

/* Walks every chunk and every event of a file image. */
static void walk(const uint8_t *p, size_t len, struct walk *w)
{
	size_t off = 0;

	memset(w, 0, sizeof(*w));
	while (off < len) {
		const uint8_t *c = p + off;
		uint64_t size, cp, meta, pos;

		if (len - off < 68 || memcmp(c, "FLR\0", 4) || c[4] != 0 || c[5] != 2) {
			w->bad++;
			return;
		}
		size = be64(c + 8);
		cp = be64(c + 16);
		meta = be64(c + 24);
		if (size > len - off || cp < 68 || meta < 68 || cp >= size || meta >= size ||
		    c[64] != 0) {
			w->bad++;
			return;
		}
		if (!w->chunks)
			w->first_start_nanos = be64(c + 32);
		if (be64(c + 56) != 1000000000)
			w->bad++;
		w->last_flags = c[66] << 8 | c[67];
		if (off + size < len && w->last_flags != 1)
			w->bad++;           /* only the last chunk is final */
		for (pos = 68; pos < size;) {
			uint64_t esize, type;
			size_t n = jfr_varint_decode(c + pos, size - pos, &esize);
			size_t m = n ? jfr_varint_decode(c + pos + n, size - pos - n, &type) : 0;

			if (!n || !m || esize == 0 || esize > size - pos) {
				w->bad++;
				return;
			}
			if (type == 1 && pos != cp)
				w->bad++;
			if (type == 0 && pos != meta)
				w->bad++;
			if (type < 256)
				w->events[type]++;
			pos += esize;
		}
		w->chunks++;
		off += size;
	}
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *p;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	p = malloc(n ? n : 1);
	if (p && fread(p, 1, n, f) != (size_t)n) {
		free(p);
		p = NULL;
	}
	fclose(f);
	*len = n;
	return p;
}

static const char *const names[] = {
	"do_syscall_64", "__GI___libc_read", "JVM_Sleep",
	"org/apache/spark/executor/Executor$TaskRunner.run", "java/lang/Thread.run",
	"scala/collection/Iterator$$anon$10.hasNext",
};

/* Writes n samples with varied stacks; returns the writer's stats. */
static int write_file(const char *path, int n, size_t chunk_bytes, int gzip,
		      struct jfr_writer_stats *st)
{
	struct jfr_label labels[] = { { "applicationId", "app-20260101-0001" },
				      { "executorId", "7" }, { "stage", "3.0" } };
	struct jfr_recording_info info = { 5000000000ULL, 1767225600000000000ULL, 10101010,
					   1000000, labels, 3 };
	struct jfr_writer_options opts = { .gzip = gzip, .chunk_bytes = chunk_bytes };
	struct jfr_writer *w = jfr_writer_open(path, &info, &opts);
	struct frame frames[64];
	int ret = 0;

	if (!w)
		return -errno;
	for (int i = 0; i < n && !ret; i++) {
		struct jfr_sample s = {
			.timestamp_ns = 5000000000ULL + (uint64_t)i * 1000000,
			.os_tid = 100 + i % 17, .thread_name = "Executor task launch worker",
			.pid = 99, .kind = i % 5 ? JFR_SAMPLE_CPU : JFR_SAMPLE_WALL,
			.thread_state = i % 5 ? SP_STATE_RUNNING : SP_STATE_SLEEPING,
			.weight = 1 + (i % 5 == 0) * 3, .frames = frames,
			.nframes = 8 + i % 50,
		};

		for (int f = 0; f < s.nframes; f++) {
			frames[f].name = names[(f + i / 7) % 6];
			frames[f].type = (enum frame_type)((f * 7 + i) % FRAME_TYPE_MAX);
		}
		ret = jfr_writer_add_sample(w, &s);
	}
	if (ret) {
		jfr_writer_close(w);
		return ret;
	}
	return jfr_writer_close_stats(w, st);
}

static long vm_rss_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

/* A long recording's writer gives a written chunk's pages back: between
 * chunks it holds what the next chunk has used so far, not the largest
 * chunk's worth (the memory stays allocated: refilling allocates nothing,
 * test_steady_allocs.c). */
static void test_pages_released_between_chunks(const char *dir)
{
	static char frame_names[4096][24];
	struct jfr_recording_info info = { 5000000000ULL, 1767225600000000000ULL, 10101010,
					   1000000, NULL, 0 };
	struct jfr_writer_options opts = { .chunk_bytes = 8u << 20 };
	struct jfr_writer_stats st = { 0 };
	struct frame frames[48];
	char path[256];
	long peak = 0, rss, after;
	struct jfr_writer *w;
	int i;

	snprintf(path, sizeof(path), "%s/long.jfr", dir);
	w = jfr_writer_open(path, &info, &opts);
	CHECK(w != NULL, "writer opened");
	if (!w)
		return;
	for (i = 0; i < 4096; i++)
		snprintf(frame_names[i], sizeof(frame_names[i]), "pkg/Class%d.method", i);
	/* Distinct stacks, so the pools grow with the events. */
	for (i = 0; st.chunks == 0 && i < 2000000; i++) {
		struct jfr_sample s = {
			.timestamp_ns = 5000000000ULL + (uint64_t)i * 1000, .os_tid = 100 + i % 7,
			.thread_name = "worker", .pid = 99, .kind = JFR_SAMPLE_CPU,
			.thread_state = SP_STATE_RUNNING, .weight = 1, .frames = frames, .nframes = 48,
		};

		for (int f = 0; f < 48; f++)
			frames[f] = (struct frame){ frame_names[(i * 7 + f * f * 13 + i / 4096) % 4096],
						    FRAME_JIT };
		if (i % 1000 == 0 && (rss = vm_rss_kib()) > peak)
			peak = rss;
		if (jfr_writer_add_sample(w, &s))
			break;
		jfr_writer_stats(w, &st);
	}
	after = vm_rss_kib();
	CHECK(st.chunks == 1, "one 8 MiB chunk written after %d samples", i);
	CHECK(peak - after > 4096, "its pages went back: RSS %ld KiB while it filled, %ld after",
	      peak, after);
	CHECK(jfr_writer_close(w) == 0, "and the writer goes on to close");
	unlink(path);
}

int main(void)
{
	char dir[] = "/tmp/sparkprof-jfr-test-XXXXXX", path[256], gz_path[256], tmp[300];
	struct jfr_writer_stats st, st_small, st_big;
	struct walk wk;
	uint8_t *data;
	size_t len;
	int ret;

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		TAP_DONE();
	}
	snprintf(path, sizeof(path), "%s/one.jfr", dir);
	ret = write_file(path, 100, 0, 0, &st);
	CHECK(ret == 0, "100 samples written (%d)", ret);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	CHECK(access(tmp, F_OK) != 0, "no temporary file left after close");
	data = slurp(path, &len);
	CHECK(data != NULL, "file exists");
	walk(data, len, &wk);
	CHECK(!wk.bad, "structure of a one-chunk file is valid");
	CHECK(wk.chunks == 1 && wk.last_flags == 3, "one chunk, flagged final + compressed ints");
	CHECK(wk.events[JFR_EVENT_EXECUTION_SAMPLE] == 80, "80 CPU sample events (%llu)",
	      (unsigned long long)wk.events[JFR_EVENT_EXECUTION_SAMPLE]);
	CHECK(wk.events[JFR_EVENT_WALL_CLOCK_SAMPLE] == 20, "20 wall sample events");
	CHECK(wk.events[JFR_EVENT_PROFILE_LABEL] == 3, "3 label events");
	CHECK(wk.events[0] == 1 && wk.events[1] == 1, "one metadata and one constant-pool event");
	CHECK(wk.first_start_nanos == 1767225600000000000ULL,
	      "chunk start is the recording's realtime start");
	CHECK(st.samples == 100 && st.events == 100 && st.chunks == 1 && st.bytes == len,
	      "stats: samples, events, chunks, bytes (%llu vs %zu)",
	      (unsigned long long)st.bytes, len);
	/* A short Spark stage's writer: hundreds are open at once. */
	CHECK(st.peak_memory < 64 << 10, "a writer of 100 samples holds %zu bytes at most",
	      st.peak_memory);
	free(data);

	/* Small chunks: many complete chunks, each with labels and pools. */
	ret = write_file(path, 3000, 16384, 0, &st);
	data = slurp(path, &len);
	walk(data, len, &wk);
	CHECK(ret == 0 && !wk.bad, "3000 samples in 16 KiB chunks: valid structure");
	CHECK(wk.chunks > 5 && (uint64_t)wk.chunks == st.chunks,
	      "several chunks (%d)", wk.chunks);
	CHECK(wk.events[JFR_EVENT_PROFILE_LABEL] == 3u * wk.chunks, "labels in every chunk");
	CHECK(wk.events[0] == (uint64_t)wk.chunks && wk.events[1] == (uint64_t)wk.chunks,
	      "metadata and pools in every chunk");
	CHECK(wk.events[JFR_EVENT_EXECUTION_SAMPLE] + wk.events[JFR_EVENT_WALL_CLOCK_SAMPLE] == 3000,
	      "every sample written once");
	free(data);

	/* Memory is bounded by the chunk, not the recording's length. */
	ret = write_file(path, 20000, 65536, 0, &st_small);
	ret |= write_file(path, 200000, 65536, 0, &st_big);
	CHECK(ret == 0, "20000 and 200000 samples written");
	CHECK(st_big.chunks > 5 * st_small.chunks, "ten times the samples, more chunks");
	CHECK(st_big.peak_memory < 2 * st_small.peak_memory && st_big.peak_memory < 4u << 20,
	      "peak memory stays bounded: %zu bytes for 20000 samples, %zu for 200000",
	      st_small.peak_memory, st_big.peak_memory);

	/* gzip: decompresses to a valid file. */
	snprintf(gz_path, sizeof(gz_path), "%s/one.jfr.gz", dir);
	ret = write_file(gz_path, 3000, 16384, 1, &st);
	CHECK(ret == 0, "gzip file written");
	{
		gzFile gz = gzopen(gz_path, "rb");
		size_t cap = 1 << 24;
		uint8_t *buf = malloc(cap);
		int n = gz && buf ? gzread(gz, buf, cap) : -1;

		if (gz)
			gzclose(gz);
		CHECK(n > 0, "gzip file decompresses (%d bytes)", n);
		walk(buf, n > 0 ? n : 0, &wk);
		CHECK(!wk.bad && wk.chunks > 5 && (uint64_t)n == st.bytes,
		      "decompressed gzip file is a valid multi-chunk JFR file");
		data = slurp(gz_path, &len);
		CHECK(data && len > 2 && data[0] == 0x1f && data[1] == 0x8b && len < (size_t)n,
		      "the file on disk is gzip and smaller");
		free(data);
		free(buf);
	}

	test_pages_released_between_chunks(dir);

	/* Refused samples leave the writer usable. */
	{
		struct jfr_recording_info info = { 0, 0, 1, 0, NULL, 0 };
		struct jfr_writer *w = jfr_writer_open(path, &info, NULL);
		struct frame bad_frame = { "x", (enum frame_type)FRAME_TYPE_MAX };
		struct frame good = { "x", FRAME_NATIVE };
		struct jfr_sample s = { .timestamp_ns = 1, .os_tid = 1, .weight = 1,
					.frames = &good, .nframes = 1 };
		struct frame *deep = calloc(JFR_MAX_FRAMES + 10, sizeof(*deep));

		CHECK(w != NULL, "writer opened with NULL options");
		s.weight = 0;
		ret = jfr_writer_add_sample(w, &s);
		CHECK(ret == -EINVAL, "weight 0 is refused");
		s.weight = JFR_MAX_CPU_WEIGHT + 1;
		ret = jfr_writer_add_sample(w, &s);
		CHECK(ret == -EINVAL, "a huge CPU weight is refused");
		s.weight = 1;
		s.nframes = -1;
		ret = jfr_writer_add_sample(w, &s);
		CHECK(ret == -EINVAL, "negative nframes is refused");
		s.nframes = 1;
		s.frames = &bad_frame;
		ret = jfr_writer_add_sample(w, &s);
		CHECK(ret == -EINVAL, "unknown frame type is refused");
		s.frames = &good;
		s.kind = JFR_SAMPLE_WALL;
		s.thread_state = 17;
		ret = jfr_writer_add_sample(w, &s);
		CHECK(ret == -EINVAL, "unknown thread state is refused");
		s.kind = (enum jfr_sample_kind)9;
		ret = jfr_writer_add_sample(w, &s);
		CHECK(ret == -EINVAL, "unknown sample kind is refused");
		s.kind = JFR_SAMPLE_CPU;
		s.thread_name = NULL;
		s.nframes = 0;
		ret = jfr_writer_add_sample(w, &s);
		CHECK(ret == 0, "empty stack and no thread name accepted");
		for (int i = 0; i < JFR_MAX_FRAMES + 10; i++)
			deep[i] = (struct frame){ names[i % 6], FRAME_JIT };
		s.frames = deep;
		s.nframes = JFR_MAX_FRAMES + 10;
		ret = jfr_writer_add_sample(w, &s);
		CHECK(ret == 0, "a stack deeper than the limit is accepted");
		jfr_writer_stats(w, &st);
		CHECK(st.samples == 2, "only valid samples counted");
		ret = jfr_writer_close(w);
		CHECK(ret == 0, "writer closed");
		free(deep);
		data = slurp(path, &len);
		walk(data, len, &wk);
		CHECK(!wk.bad && wk.events[JFR_EVENT_EXECUTION_SAMPLE] == 2, "file holds the 2 samples");
		free(data);
	}

	/* A path that cannot be created: NULL, errno, nothing left behind. */
	{
		struct jfr_recording_info info = { 0 };
		struct jfr_writer *w;

		w = jfr_writer_open("/nonexistent-dir/x.jfr", &info, NULL);
		int err = errno;

		CHECK(w == NULL && err == ENOENT, "unwritable path: NULL with ENOENT");
	}

	/* An empty recording is still a valid file (labels, pools, metadata). */
	{
		struct jfr_label l = { "stage", "9" };
		struct jfr_recording_info info = { 10, 20, 1, 0, &l, 1 };
		struct jfr_writer *w = jfr_writer_open(path, &info, NULL);

		ret = w ? jfr_writer_close(w) : -1;
		CHECK(ret == 0, "empty recording written");
		data = slurp(path, &len);
		walk(data, len, &wk);
		CHECK(!wk.bad && wk.chunks == 1 && wk.events[JFR_EVENT_PROFILE_LABEL] == 1,
		      "empty recording: one valid chunk with its label");
		free(data);
	}

	unlink(path);
	unlink(gz_path);
	rmdir(dir);
	TAP_DONE();
}

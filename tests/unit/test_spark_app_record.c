/* test_spark_app_record.c - what Spark's own record says about an
 * application: event logs (real ones, tests/unit/data/spark/, made by
 * make_fixtures.py from pyspark 3.5.3), their codecs, REST replies, and
 * what bad input gets.
 *
 * Also, for tests/integration/test_spark_rest.py:
 *   --dump-log PATH         the record an event log gives, as text
 *   --dump-rest URL [APP]   the record a REST API gives, as text
 * (spark_record_dump.h; without the application's end time).
 */
#include <errno.h>
#include <lz4.h>
#include <signal.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>
#include <zstd.h>

#include "spark/event_log.h"
#include "spark/event_log_codec.h"
#include "spark/spark_rest.h"
#include "spark_record_dump.h"
#include "tap.h"

#define DATA "tests/unit/data/spark/"

static char *dump_of(const struct spark_app_record *r, int with_end)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	if (r)
		spark_record_dump(f, r, with_end);
	fclose(f);
	return text;
}

/* stderr goes to a file around a call, and what was said comes back. */
struct captured {
	int saved;
	FILE *tmp;
	char text[1024];
};

static void capture_start(struct captured *c)
{
	fflush(stderr);
	c->tmp = tmpfile();
	c->saved = dup(2);
	dup2(fileno(c->tmp), 2);
}

static const char *capture_end(struct captured *c)
{
	size_t n;

	fflush(stderr);
	dup2(c->saved, 2);
	close(c->saved);
	rewind(c->tmp);
	n = fread(c->text, 1, sizeof(c->text) - 1, c->tmp);
	c->text[n] = '\0';
	fclose(c->tmp);
	return c->text;
}

static int lines_of(const char *text)
{
	int n = 0;

	for (const char *p = text; *p; p++)
		n += *p == '\n';
	return n;
}

/* An event log in memory; its message (if any) in msg. */
static int parse_text(const char *text, struct spark_app_record **r, char *msg, size_t size)
{
	struct captured c;
	int err;

	capture_start(&c);
	err = spark_event_log_parse("test-log", text, strlen(text), r);
	snprintf(msg, size, "%s", capture_end(&c));
	return err;
}

/* A file's record; its message (if any) in msg. */
static int read_log(const char *path, struct spark_app_record **r, char *msg, size_t size)
{
	struct captured c;
	int err;

	capture_start(&c);
	err = spark_event_log_read(path, r);
	snprintf(msg, size, "%s", capture_end(&c));
	return err;
}

static int dump_mode(int argc, char **argv)
{
	struct spark_app_record *r;
	int err;

	if (strcmp(argv[1], "--dump-log") == 0 && argc == 3)
		err = spark_event_log_read(argv[2], &r);
	else if (strcmp(argv[1], "--dump-rest") == 0 && (argc == 3 || argc == 4))
		err = spark_rest_read(argv[2], argc == 4 ? argv[3] : NULL, &r);
	else
		return 2;
	if (err)
		return 1;
	spark_record_dump(stdout, r, 0);
	printf("truncated %d\n", r->truncated);
	spark_app_record_free(r);
	return 0;
}

/* --- hand-written events: what each field becomes, and what is refused */

#define APP_START "{\"Event\":\"SparkListenerApplicationStart\",\"App Name\":\"x\"," \
		  "\"App ID\":\"local-1\",\"Timestamp\":1000}\n"
#define TASK_END(tid, extra) "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":0," \
	"\"Stage Attempt ID\":0,\"Task Info\":{\"Task ID\":" #tid ",\"Index\":0,\"Attempt\":0," \
	"\"Launch Time\":1300,\"Finish Time\":1400,\"Executor ID\":\"1\",\"Host\":\"h\"" extra "}}\n"

static void test_fields(void)
{
	static const char log[] =
		APP_START
		"{\"Event\":\"SparkListenerJobStart\",\"Job ID\":0,\"Submission Time\":1100,"
		"\"Stage IDs\":[0,1],\"Stage Infos\":[{\"Stage ID\":1,\"Stage Name\":\"b\"},"
		"{\"Stage ID\":0,\"Stage Name\":\"a\"}],"
		"\"Properties\":{\"spark.sql.execution.id\":\"4\"}}\r\n"
		"\n"
		"{\"Event\":\"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart\","
		"\"executionId\":4,\"description\":\"select 1\",\"time\":1050}\n"
		"{\"Event\":\"SparkListenerStageSubmitted\",\"Stage Info\":{\"Stage ID\":0,"
		"\"Stage Attempt ID\":0,\"Stage Name\":\"a\",\"Number of Tasks\":1,"
		"\"Submission Time\":1200}}\n"
		"{\"Event\":\"SparkListenerSomethingNew\",\"x\":[}\n"
		TASK_END(7, ",\"Failed\":true")
		TASK_END(7, "")
		"{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":0,\"Task Info\":{\"Task ID\":8,"
		"\"Launch Time\":-1,\"Killed\":true,\"Executor ID\":"
		"\"0123456789012345678901234567890123456789012345678901234567890123456789\"}}\n"
		"{\"Event\":\"SparkListenerJobEnd\",\"Job ID\":0,\"Completion Time\":1500,"
		"\"Job Result\":{\"Result\":\"JobFailed\"}}\n"
		"{\"Event\":\"SparkListenerApplicationEnd\",\"Timestamp\":2000}";
	struct spark_app_record *r = NULL;
	char msg[512];
	int err = parse_text(log, &r, msg, sizeof(msg));

	CHECK(err == 0 && r, "a hand-written log reads (CRLF, a blank line, an unknown event)");
	if (!r)
		return;
	CHECK_STR(r->app_id, "local-1", "app id");
	CHECK(r->start_ms == 1000 && r->end_ms == 2000 && !r->truncated, "app times, not truncated");
	CHECK(r->njobs == 1 && r->jobs[0].sql_execution_id == 4 && r->jobs[0].failed &&
	      r->jobs[0].complete_ms == 1500, "job: its SQL execution, failed, completed");
	CHECK_STR(r->jobs[0].name, "b", "a job's name is its last stage's");
	CHECK_STR(r->jobs[0].description, "select 1", "a job without a description takes its SQL's");
	CHECK(r->nstages == 1 && r->stages[0].job_id == 0 && r->stages[0].sql_execution_id == 4,
	      "a stage's job and SQL execution are settled");
	CHECK_STR(r->stages[0].description, "select 1", "a stage's description from its job");
	CHECK(r->ntasks == 2 && r->tasks[0].tid == 7 && r->tasks[0].failed,
	      "a TID reported twice keeps its first report");
	CHECK(r->tasks[1].failed && r->tasks[1].launch_ms == 0, "killed is failed; -1 time is 0");
	CHECK(strlen(r->tasks[1].executor_id) == sizeof(r->tasks[1].executor_id) - 1, "a long executor id is cut to fit");
	CHECK(spark_app_record_task(r, 8) == &r->tasks[1] && !spark_app_record_task(r, 9),
	      "tasks are found by TID");
	spark_app_record_free(r);
}

static void test_refused(void)
{
	static const struct {
		const char *log, *says;
	} bad[] = {
		{ APP_START "[1]\n", "line 2: not a JSON object" },
		{ APP_START "{\"Event\":1}\n", "line 2: \"Event\" is not a string" },
		{ APP_START "{\"Nothing\":1}\n", "line 2: no \"Event\"" },
		{ APP_START "{\"Event\":\"SparkListenerJobEnd\",\"Job ID\":1} {}\n", "line 2: " },
		{ APP_START "{\"Event\":\"SparkListenerTaskEnd\",\"x\":[}\n", "line 2: not JSON" },
		{ APP_START "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":0}\n",
		  "line 2: no \"Task Info\" in SparkListenerTaskEnd" },
		{ APP_START TASK_END(1, ",\"Failed\":1"), "line 2: \"Failed\" is not a boolean" },
		{ APP_START "{\"Event\":\"SparkListenerStageSubmitted\",\"Stage Info\":{"
		  "\"Stage ID\":4294967296}}\n", "line 2: \"Stage ID\" is out of range" },
		{ APP_START "{\"Event\":\"SparkListenerJobStart\",\"Job ID\":0,\"Stage IDs\":[\"a\"]}\n",
		  "holds other than stage ids" },
		{ APP_START "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":0,\"Task Info\":{\n",
		  "line 2: an unfinished JSON object" },
		{ "", "holds no Spark event" },
		{ "\n\n", "holds no Spark event" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct spark_app_record *r = NULL;
		char msg[512];
		int err = parse_text(bad[i].log, &r, msg, sizeof(msg));

		CHECK(err == -EPROTO && !r && strstr(msg, bad[i].says) && strstr(msg, "test-log") &&
		      lines_of(msg) == 1, "refused with one line saying '%s'", bad[i].says);
		if (err != -EPROTO || !strstr(msg, bad[i].says))
			printf("#   %d: %s", err, msg);
		spark_app_record_free(r);
	}
}

static void test_cut_and_long(void)
{
	struct spark_app_record *r = NULL;
	char msg[512];
	int err = parse_text(APP_START TASK_END(1, "") "{\"Event\":\"SparkListenerTaskEnd\",\"St",
			     &r, msg, sizeof(msg));

	CHECK(err == 0 && r && r->truncated && r->ntasks == 1 && !msg[0],
	      "a last line cut short: the events before it are kept, the record says truncated");
	spark_app_record_free(r);
	err = parse_text(APP_START TASK_END(1, ""), &r, msg, sizeof(msg));
	CHECK(err == 0 && r && !r->truncated, "a whole last line: not truncated");
	spark_app_record_free(r);

	size_t n = SPARK_EVENT_LINE_MAX + 1024;
	char *big = malloc(n + 1);
	if (!big)
		return;
	const char *head = APP_START "{\"Event\":\"x\",\"pad\":\"";
	memset(big, ' ', n);
	memcpy(big, head, strlen(head));
	big[n] = '\0';
	err = parse_text(big, &r, msg, sizeof(msg));
	CHECK(err == -EPROTO && !r && strstr(msg, "line 2: a line longer than 64 MiB"),
	      "a line over 64 MiB is refused");
	if (!strstr(msg, "line 2: a line longer than 64 MiB"))
		printf("#   %d: %s", err, msg);
	free(big);
}

static void test_strings(void)
{
	size_t n = SPARK_STRING_MAX + 100;
	char *log = malloc(n + 256), *p = log;
	struct spark_app_record *r = NULL;
	char msg[512];

	if (!log)
		return;
	p += sprintf(p, "{\"Event\":\"SparkListenerApplicationStart\",\"App ID\":\"a\\u0000b\","
		     "\"App Name\":\"");
	memset(p, 'n', n);
	p += n;
	strcpy(p, "\"}\n");
	CHECK(parse_text(log, &r, msg, sizeof(msg)) == 0 && r, "long strings read");
	CHECK(r && strcmp(r->app_id, "a") == 0, "a string stops at an escaped NUL");
	CHECK(r && strlen(r->app_name) == SPARK_STRING_MAX, "a long string is cut at 64 KiB");
	spark_app_record_free(r);
	free(log);
}

/* --- codecs, on streams made here with the same libraries */

struct bytes {
	char *p;
	size_t len, cap;
};

static void put(struct bytes *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void put32(struct bytes *b, uint32_t v, int big_endian)
{
	uint8_t x[4];

	for (int i = 0; i < 4; i++)
		x[i] = big_endian ? v >> (24 - 8 * i) : v >> (8 * i);
	put(b, x, 4);
}

static int collect(const void *data, size_t len, void *ctx)
{
	put(ctx, data, len);
	return 0;
}

/* Decodes in pieces of step bytes; the plain bytes in *out. */
static int decode(enum spark_codec c, const struct bytes *in, size_t step, struct bytes *out,
		  int *cut)
{
	struct codec_stream *s = codec_stream_new(c, 1 << 20);
	int err = 0;

	out->len = 0;
	for (size_t pos = 0; !err && pos < in->len; pos += step)
		err = codec_stream_feed(s, in->p + pos, in->len - pos < step ? in->len - pos : step,
					collect, out);
	*cut = codec_stream_end(s);
	codec_stream_free(s);
	return err;
}

/* lz4-java's framing: a compressed block, a raw one, the end mark, and
 * a second stream after it. */
static void make_lz4(struct bytes *b, const char *text)
{
	size_t n = strlen(text);
	char block[256];
	int clen = LZ4_compress_default(text, block, (int)n, sizeof(block));

	put(b, "LZ4Block", 8);
	put(b, "\x20", 1);                 /* LZ4, blocks up to 1 KiB */
	put32(b, clen, 0);
	put32(b, n, 0);
	put32(b, 0x12345678, 0);           /* the checksum is not checked */
	put(b, block, clen);
	put(b, "LZ4Block\x10", 9);         /* raw */
	put32(b, 3, 0);
	put32(b, 3, 0);
	put32(b, 0, 0);
	put(b, "end", 3);
	put(b, "LZ4Block\x10", 9);         /* the end mark */
	put32(b, 0, 0);
	put32(b, 0, 0);
	put32(b, 0, 0);
	put(b, "LZ4Block\x10", 9);         /* another stream */
	put32(b, 1, 0);
	put32(b, 1, 0);
	put32(b, 0, 0);
	put(b, "!", 1);
}

/* snappy-java's framing, with a second header (concatenated streams). */
static void make_snappy(struct bytes *b, const char *text)
{
	char block[256];
	size_t clen = sizeof(block);

	snappy_compress(text, strlen(text), block, &clen);
	for (int i = 0; i < 2; i++) {
		put(b, "\x82SNAPPY\0", 8);
		put32(b, 1, 1);
		put32(b, 1, 1);
		put32(b, clen, 1);
		put(b, block, clen);
	}
}

static void make_zstd(struct bytes *b, const char *text)
{
	char frame[256];

	for (int i = 0; i < 2; i++) {
		size_t n = ZSTD_compress(frame, sizeof(frame), text, strlen(text), 1);

		put(b, frame, n);
	}
}

static void test_codec_streams(void)
{
	const char *text = "{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"3.5.3\"}\n";
	struct {
		enum spark_codec c;
		void (*make)(struct bytes *, const char *);
		const char *tail;
	} cs[] = { { SPARK_CODEC_LZ4, make_lz4, "end!" }, { SPARK_CODEC_SNAPPY, make_snappy, NULL },
		   { SPARK_CODEC_ZSTD, make_zstd, NULL } };

	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++) {
		struct bytes in = { 0 }, out = { 0 }, want = { 0 };
		const char *name = spark_codec_name(cs[i].c);
		int cut, ok = 1;

		cs[i].make(&in, text);
		put(&want, text, strlen(text));
		put(&want, cs[i].tail ? cs[i].tail : text, strlen(cs[i].tail ? cs[i].tail : text));
		for (size_t step = 1; step <= in.len; step = step * 3 + 1)
			ok &= decode(cs[i].c, &in, step, &out, &cut) == 0 && !cut &&
			      out.len == want.len && memcmp(out.p, want.p, want.len) == 0;
		CHECK(ok, "%s: decoded alike in pieces of any size, over stream boundaries", name);
		ok = 1;
		for (size_t len = 1; len < in.len; len++) {
			struct bytes part = { in.p, len, len };
			int err = decode(cs[i].c, &part, len, &out, &cut);

			int fine = err == 0 && out.len <= want.len && memcmp(out.p, want.p, out.len) == 0 &&
			      (cut || out.len == 0 || out.len == strlen(text) || cs[i].c == SPARK_CODEC_LZ4);
			if (!fine)
				printf("#   cut at %zu: err %d, %zu bytes out, cut %d\n", len, err, out.len, cut);
			ok &= fine;
		}
		CHECK(ok, "%s: cut anywhere, a prefix comes out and the cut is seen", name);
		in.p[in.len / 2] ^= 0x5a;
		in.p[0] ^= 0x01;
		CHECK(decode(cs[i].c, &in, in.len, &out, &cut) == -EPROTO, "%s: corrupt is EPROTO",
		      name);
		free(in.p);
		free(out.p);
		free(want.p);
	}
}

static void test_codec_limits(void)
{
	struct bytes in = { 0 }, out = { 0 };
	struct codec_stream *s;
	enum spark_codec c;
	static char zeros[4096];
	int cut;

	make_lz4(&in, "x");
	memcpy(in.p + 13, "\xff\xff\x00\x00", 4);   /* 64 KiB plain in a 1 KiB block */
	CHECK(decode(SPARK_CODEC_LZ4, &in, 7, &out, &cut) == -EPROTO, "lz4: lengths past the block size");
	in.len = 0;
	put(&in, "\x82SNAPPY\0\0\0\0\1\0\0\0\1\x7f\xff\xff\xff", 20);
	CHECK(decode(SPARK_CODEC_SNAPPY, &in, 5, &out, &cut) == -EPROTO, "snappy: a 2 GiB chunk");
	in.len = 0;
	put(&in, "SNAPPY", 6);
	put(&in, zeros, 20);
	CHECK(decode(SPARK_CODEC_SNAPPY, &in, 5, &out, &cut) == -EPROTO, "snappy: no header");
	in.len = 0;
	char frame[512];
	size_t n = ZSTD_compress(frame, sizeof(frame), zeros, sizeof(zeros), 1);
	put(&in, frame, n);
	s = codec_stream_new(SPARK_CODEC_ZSTD, 1000);
	CHECK(codec_stream_feed(s, in.p, in.len, collect, &out) == -EFBIG &&
	      codec_stream_feed(s, in.p, in.len, collect, &out) == -EFBIG,
	      "zstd: past max_out is EFBIG, and stays so");
	codec_stream_free(s);
	CHECK(spark_codec_of_name("events_1_app.zstd", &c) == 0 && c == SPARK_CODEC_ZSTD &&
	      spark_codec_of_name("app.lz4.inprogress", &c) == 0 && c == SPARK_CODEC_LZ4 &&
	      spark_codec_of_name("events_3_app.snappy.compact", &c) == 0 && c == SPARK_CODEC_SNAPPY &&
	      spark_codec_of_name("local-17.inprogress", &c) == 0 && c == SPARK_CODEC_NONE &&
	      spark_codec_of_name("app-2024.lzf", &c) == -ENOTSUP,
	      "codecs by name: .zstd .lz4 .snappy after .inprogress/.compact; lzf refused");
	free(in.p);
	free(out.p);
}

/* --- REST */

static void test_rest_time(void)
{
	CHECK(spark_rest_time("2026-11-28T09:30:00.123GMT", 26) == 1795858200123ull,
	      "REST times are GMT with ms");
	CHECK(spark_rest_time("1970-01-01T00:00:00.000GMT", 26) == 0 &&
	      spark_rest_time("2026-11-28T09:30:00.123Z", 24) == 0 &&
	      spark_rest_time("2026-13-28T09:30:00.123GMT", 26) == 0 &&
	      spark_rest_time("2026-11-28T09:30:00.123GMTx", 27) == 0 &&
	      spark_rest_time(NULL, 0) == 0, "other forms are 0");
}

/* A server in a child that answers one request with head, then pad bytes
 * of '[' (a reply that never ends as JSON); its port. */
static int serve_once(const char *head, size_t pad, pid_t *pid)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM, 0);

	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, 4) ||
	    getsockname(s, (struct sockaddr *)&a, &alen))
		return -1;
	if ((*pid = fork()) == 0) {
		static char buf[1 << 16];
		int c = accept(s, NULL, NULL);

		if (c < 0 || read(c, buf, sizeof(buf)) <= 0 || write(c, head, strlen(head)) < 0)
			_exit(1);
		memset(buf, '[', sizeof(buf));
		for (size_t sent = 0; sent < pad; sent += sizeof(buf))
			if (write(c, buf, sizeof(buf)) < 0)
				break;
		close(c);
		_exit(0);
	}
	close(s);
	return ntohs(a.sin_port);
}

static int rest_against(const char *head, size_t pad, char *msg, size_t size)
{
	struct spark_app_record *r = NULL;
	struct captured c;
	char url[64];
	pid_t pid = -1;
	int port = serve_once(head, pad, &pid), err;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", port);
	capture_start(&c);
	err = spark_rest_read(url, NULL, &r);
	snprintf(msg, size, "%s", capture_end(&c));
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	spark_app_record_free(r);
	return err;
}

static void test_rest_errors(void)
{
	char msg[1024];
	int err;

	err = rest_against("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
			   0, msg, sizeof(msg));
	CHECK(err == -EPROTO && strstr(msg, "/api/v1/applications: not JSON") && lines_of(msg) == 1,
	      "a reply that is not JSON: EPROTO, one line naming the URL");
	err = rest_against("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n[]",
			   0, msg, sizeof(msg));
	CHECK(err == -EPROTO && strstr(msg, "no application"), "no application: EPROTO");
	err = rest_against("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", 0, msg, sizeof(msg));
	CHECK(err == -ENOENT && strstr(msg, "HTTP 404") && lines_of(msg) == 1, "HTTP 404: ENOENT");
	err = rest_against("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n",
			   SPARK_REST_REPLY_MAX + (1 << 20), msg, sizeof(msg));
	CHECK(err == -EFBIG && strstr(msg, "over 64 MiB"), "a reply past 64 MiB: EFBIG");
	err = rest_against("HTTP/1.1 200 OK\r\nContent-Length: 999999999\r\n\r\n", 0, msg, sizeof(msg));
	CHECK(err == -EFBIG, "a reply announced past 64 MiB: EFBIG");

	struct spark_app_record *r = NULL;
	struct captured c;
	capture_start(&c);
	err = spark_rest_read("file:///etc", NULL, &r);
	capture_end(&c);
	CHECK(err == -EPROTONOSUPPORT && !r, "only http and https are spoken");
	capture_start(&c);
	err = spark_rest_read("http://127.0.0.1:1", NULL, &r);
	capture_end(&c);
	CHECK(err == -ECONNREFUSED && !r && strstr(c.text, "127.0.0.1:1/api/v1/applications"),
	      "nothing listening: ECONNREFUSED, naming the URL");
}

/* --- real logs (make_fixtures.py) */

static struct spark_app_record *read_ok(const char *path)
{
	struct spark_app_record *r = NULL;
	char msg[512];
	int err = read_log(path, &r, msg, sizeof(msg));

	if (err)
		printf("#   %s: %d %s", path, err, msg);
	return r;
}

static const struct spark_stage_info *stage_described(const struct spark_app_record *r,
						       const char *desc, int nth)
{
	for (size_t i = 0; i < r->nstages; i++)
		if (r->stages[i].description && strcmp(r->stages[i].description, desc) == 0 &&
		    nth-- == 0)
			return &r->stages[i];
	return NULL;
}

/* Tasks of one stage attempt: how many, and their summed metrics. */
struct stage_sums {
	int tasks, failed;
	uint64_t read, written, run, cpu;
	int sane;   /* finish >= launch, executor "driver", run within the two */
};

static struct stage_sums sums_of(const struct spark_app_record *r,
				 const struct spark_stage_info *s)
{
	struct stage_sums t = { .sane = 1 };

	for (size_t i = 0; s && i < r->ntasks; i++) {
		const struct spark_task *k = &r->tasks[i];

		if (k->stage != s->stage || k->stage_attempt != s->attempt)
			continue;
		t.tasks++;
		t.failed += k->failed;
		t.read += k->shuffle_read_bytes;
		t.written += k->shuffle_write_bytes;
		t.run += k->run_ms;
		t.cpu += k->cpu_ns;
		t.sane &= k->launch_ms >= r->start_ms && k->finish_ms >= k->launch_ms &&
			  k->run_ms <= k->finish_ms - k->launch_ms &&
			  strcmp(k->executor_id, "driver") == 0 && k->host[0];
	}
	return t;
}

/* Every task a damaged copy gives is the plain log's, field for field. */
static int tasks_within(const struct spark_app_record *r, const struct spark_app_record *plain)
{
	for (size_t i = 0; i < r->ntasks; i++) {
		const struct spark_task *t = spark_app_record_task(plain, r->tasks[i].tid);

		if (!t || memcmp(t, &r->tasks[i], sizeof(*t)) != 0)
			return 0;
	}
	return 1;
}

static int slurp(const char *path, struct bytes *b)
{
	FILE *f = fopen(path, "rb");
	char buf[4096];
	size_t n;

	b->len = 0;
	if (!f)
		return -1;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		put(b, buf, n);
	fclose(f);
	return 0;
}

static void spill(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (f) {
		fwrite(p, 1, n, f);
		fclose(f);
	}
}

/* A fixture cut at many places and with a byte changed at many places:
 * a record of the plain log's tasks, or EPROTO, never anything else. */
static void test_damage(const char *name, const struct spark_app_record *plain)
{
	char src[256], dst[256];
	struct bytes in = { 0 };
	int cuts_ok = 1, flips_ok = 1, truncated = 0, refused = 0;

	snprintf(src, sizeof(src), DATA "%s", name);
	snprintf(dst, sizeof(dst), "/tmp/sparkprof-test-%d-%s", (int)getpid(), name);
	if (slurp(src, &in) || in.len < 64) {
		CHECK(0, "%s: read", src);
		return;
	}
	for (int k = 1; k < 48; k++) {
		size_t at = in.len * k / 48 + k % 5;
		struct spark_app_record *r = NULL;
		char msg[512];
		int err;

		spill(dst, in.p, at);
		err = read_log(dst, &r, msg, sizeof(msg));
		/* Not truncated only where a cut falls between blocks or lines. */
		cuts_ok &= (err == 0 && tasks_within(r, plain)) ||
			   (err == -EPROTO && strstr(msg, "holds no Spark event"));
		truncated += err == 0 && r->truncated;
		spark_app_record_free(r);
		in.p[at] ^= 0x21;
		spill(dst, in.p, in.len);
		in.p[at] ^= 0x21;
		r = NULL;
		err = read_log(dst, &r, msg, sizeof(msg));
		/* Without checksums, a changed byte may still decode (to other
		 * values): what matters is that nothing else happens. */
		flips_ok &= err == 0 || err == -EPROTO;
		refused += err != 0;
		spark_app_record_free(r);
	}
	unlink(dst);
	/* lz4-java writes a block only when 32 KiB are in (Spark's flushes do
	 * not end one): a cut inside the first block leaves no event. */
	CHECK(cuts_ok && truncated > 10, "%s cut at 47 places: what came before, truncated (%d)",
	      name, truncated);
	CHECK(flips_ok, "%s with a byte changed at 47 places: a record or EPROTO (%d refused)",
	      name, refused);
	free(in.p);
}

/* The replies make_fixtures.py took from the plain run's REST API, read
 * by the REST parsers: the plain log's record (bar the end time). */
static int parse_rest_files(struct app_builder *b, struct jf_error *e)
{
	struct spark_rest_stage *kept = NULL;
	struct bytes body = { 0 };
	size_t nkept = 0, n;
	char *attempt = NULL, path[256];
	int err = slurp(DATA "rest/applications.json", &body) ? -ENOENT :
		  spark_rest_parse_apps(b, body.p, body.len, NULL, &attempt, e);

	err = err ?: slurp(DATA "rest/jobs.json", &body) ? -ENOENT :
		     spark_rest_parse_jobs(b, body.p, body.len, e);
	err = err ?: slurp(DATA "rest/sql.json", &body) ? -ENOENT :
		     spark_rest_parse_sql(b, body.p, body.len, &n, e);
	err = err ?: slurp(DATA "rest/stages.json", &body) ? -ENOENT :
		     spark_rest_parse_stages(b, body.p, body.len, &kept, &nkept, e);
	for (size_t i = 0; !err && i < nkept; i++) {
		snprintf(path, sizeof(path), DATA "rest/tasks_%d_%d.json", kept[i].stage,
			 kept[i].attempt);
		err = slurp(path, &body) ? -ENOENT :
		      spark_rest_parse_tasks(b, kept[i].stage, kept[i].attempt, body.p, body.len,
					     &n, e);
	}
	free(kept);
	free(attempt);
	free(body.p);
	return err;
}

static void test_rest_replies(const struct spark_app_record *plain)
{
	struct app_builder *b = app_builder_new();
	struct jf_error e = { 0 };
	struct spark_app_record *r;
	int err = parse_rest_files(b, &e);
	char *want = dump_of(plain, 0), *got;

	CHECK(err == 0, "the REST replies of the plain run parse");
	if (err)
		printf("#   %d: %s\n", err, e.why);
	r = app_builder_finish(b);
	got = dump_of(r, 0);
	CHECK_STR(got, want, "REST replies and event log give the same record");
	free(got);
	free(want);
	spark_app_record_free(r);

	b = app_builder_new();
	memset(&e, 0, sizeof(e));
	const char *stages = "[{\"stageId\":\"1\"}]";
	err = spark_rest_parse_stages(b, stages, strlen(stages), &(struct spark_rest_stage *){ 0 },
				      &(size_t){ 0 }, &e);
	CHECK(err == -EPROTO && strstr(e.why, "\"stageId\" is not an integer"),
	      "a REST reply of other types: EPROTO saying which field");
	app_builder_free(b);
}

static void check_plain_app(const struct spark_app_record *r)
{
	CHECK(strncmp(r->app_id, "local-", 6) == 0 && strcmp(r->app_name, "sparkprof-fixture") == 0 &&
	      strcmp(r->spark_version, "3.5.3") == 0 && !r->attempt_id, "app id, name, version");
	CHECK(r->start_ms > 1700000000000ull && r->end_ms > r->start_ms && !r->truncated &&
	      !r->tasks_dropped, "app start and end, nothing cut or dropped");
	CHECK(r->njobs == 3 && r->nstages == 5 && r->ntasks == 8, "3 jobs, 5 stage attempts, 8 tasks");
	if (r->njobs != 3 || r->nstages != 5)
		return;
	CHECK_STR(r->jobs[0].description, "sparkprof fixture: word count", "job 0: its description");
	CHECK(r->jobs[0].nstage_ids == 2 && r->jobs[0].sql_execution_id == -1 && !r->jobs[0].failed &&
	      r->jobs[0].complete_ms >= r->jobs[0].submit_ms, "job 0: stages, no SQL, succeeded");
	CHECK(r->jobs[1].sql_execution_id == 0 && r->jobs[1].description &&
	      strncmp(r->jobs[1].description, "collect at ", 11) == 0 &&
	      strstr(r->jobs[1].description, "make_fixtures.py:"),
	      "job 1 (SQL): the SQL execution's description (its call site)");
	CHECK_STR(r->jobs[2].description, "sparkprof fixture: retried task", "job 2: its description");
	CHECK(r->jobs[2].name && strncmp(r->jobs[2].name, "collect at ", 11) == 0,
	      "a job's name is its last stage's");
}

static void check_plain_stages(const struct spark_app_record *r)
{
	const struct spark_stage_info *map = stage_described(r, "sparkprof fixture: word count", 0);
	const struct spark_stage_info *reduce = stage_described(r, "sparkprof fixture: word count", 1);
	const struct spark_stage_info *retried = stage_described(r, "sparkprof fixture: retried task", 0);
	struct stage_sums m = sums_of(r, map), d = sums_of(r, reduce), t = sums_of(r, retried);

	CHECK(map && map->stage == 0 && map->num_tasks == 2 && map->job_id == 0 &&
	      strncmp(map->name, "reduceByKey at ", 15) == 0 && map->details &&
	      map->complete_ms >= map->submit_ms, "word count: the map stage's name, tasks, times");
	CHECK(m.tasks == 2 && m.written > 0 && m.read == 0 && m.sane && m.cpu > 0,
	      "map tasks: shuffle written, CPU time");
	CHECK(reduce && reduce->num_tasks == 1 && d.tasks == 1 && d.read == m.written && d.sane,
	      "the reduce task read what the map tasks wrote (%" PRIu64 " bytes)", m.written);
	for (int i = 0; i < 2; i++) {
		const struct spark_stage_info *s = &r->stages[2 + i];

		CHECK(s->sql_execution_id == 0 && s->job_id == 1 && s->description &&
		      strcmp(s->description, r->jobs[1].description) == 0,
		      "SQL stage %d: its execution's description", s->stage);
	}
	CHECK(sums_of(r, &r->stages[3]).read == sums_of(r, &r->stages[2]).written,
	      "SQL: the exchange read what was written");
	CHECK(retried && t.tasks == 2 && t.failed == 1 && t.sane, "retried: one failed attempt");
	const struct spark_task *first = spark_app_record_task(r, r->ntasks - 2);
	const struct spark_task *second = spark_app_record_task(r, r->ntasks - 1);
	CHECK(first && second && first->failed && first->attempt == 0 && !second->failed &&
	      second->attempt == 1 && second->index == first->index && second->cpu_ns > 0,
	      "the failed attempt 0 and its successful attempt 1");
}

/* Each codec, and the rolled layout, gives the plain log's record. */
static void test_same_records(const struct spark_app_record *plain)
{
	static const char *const names[] = { "eventlog.zstd", "eventlog.lz4", "eventlog.snappy",
					     "rolled" };
	char *want = dump_of(plain, 1);

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[256];

		snprintf(path, sizeof(path), DATA "%s", names[i]);
		struct spark_app_record *r = read_ok(path);
		char *got = dump_of(r, 1);

		CHECK(r && !r->truncated && got && strcmp(got, want) == 0,
		      "%s gives the plain log's record", names[i]);
		free(got);
		spark_app_record_free(r);
	}
	free(want);
}

static void test_bad_fixtures(const struct spark_app_record *plain)
{
	static const char *const cut[] = { "truncated.zstd.inprogress", "truncated.inprogress" };
	struct spark_app_record *r = NULL;
	char msg[512];
	int err;

	for (size_t i = 0; i < 2; i++) {
		char path[256];

		snprintf(path, sizeof(path), DATA "%s", cut[i]);
		err = read_log(path, &r, msg, sizeof(msg));
		CHECK(err == 0 && r && r->truncated && r->ntasks > 0 && r->ntasks < plain->ntasks &&
		      tasks_within(r, plain) && !msg[0],
		      "%s: the events before the cut, truncated, silently", cut[i]);
		spark_app_record_free(r);
		r = NULL;
	}
	err = read_log(DATA "malformed", &r, msg, sizeof(msg));
	CHECK(err == -EPROTO && !r && strstr(msg, DATA "malformed: line 10: not JSON") &&
	      strstr(msg, strerror(EPROTO)) && lines_of(msg) == 1,
	      "malformed: EPROTO, one line naming the file and line");
	err = read_log(DATA "no-such-log", &r, msg, sizeof(msg));
	CHECK(err == -ENOENT && strstr(msg, "no-such-log") && lines_of(msg) == 1, "missing: ENOENT");
	err = read_log(DATA "rest", &r, msg, sizeof(msg));
	CHECK(err == -ENOENT && strstr(msg, "no events_N file"), "a folder without events files");
}

static void test_fixtures(void)
{
	struct spark_app_record *plain = read_ok(DATA "eventlog");

	CHECK(plain != NULL, "the plain event log reads");
	if (!plain)
		return;
	check_plain_app(plain);
	check_plain_stages(plain);
	test_same_records(plain);
	test_bad_fixtures(plain);
	test_damage("eventlog", plain);
	test_damage("eventlog.zstd", plain);
	test_damage("eventlog.lz4", plain);
	test_damage("eventlog.snappy", plain);
	test_rest_replies(plain);
	spark_app_record_free(plain);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return dump_mode(argc, argv);
	test_fields();
	test_refused();
	test_cut_and_long();
	test_strings();
	test_codec_streams();
	test_codec_limits();
	test_rest_time();
	test_rest_errors();
	test_fixtures();
	TAP_DONE();
}

/* test_json_writer.c - the JSON emitter produces valid JSON for any names,
 * and a file streamed in pieces is escaped as the same text in one piece. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json_writer.h"
#include "tap.h"

static char *render(void (*fn)(struct json_writer *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json_writer w;

	json_init(&w, f);
	fn(&w);
	fclose(f);
	return buf;
}

static void doc(struct json_writer *w)
{
	json_begin_object(w);
	json_key(w, "name");
	json_string(w, "a\"b\\c\n\x01");
	json_key(w, "bad utf8");
	json_string(w, "x\xff\xc3(y\xe2\x82\xac");
	json_key(w, "list");
	json_begin_array(w);
	json_uint(w, 18446744073709551615ULL);
	json_int(w, -5);
	json_double(w, 0.25);
	json_double(w, 1.0 / 0.0);
	json_bool(w, 1);
	json_null(w);
	json_string(w, NULL);
	json_end_array(w);
	json_key(w, "empty");
	json_begin_object(w);
	json_end_object(w);
	json_end_object(w);
}

static char *escaped_string(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	json_write_escaped_script(f, s);
	fclose(f);
	return buf;
}

/* fd's bytes through json_write_escaped_script_fd; *err its result. */
static char *escaped_fd(const char *text, size_t len, uint64_t max, int *err)
{
	char *buf = NULL, path[] = "/tmp/sparkprof-json-XXXXXX";
	size_t out_len = 0;
	int fd = mkstemp(path);
	FILE *f = open_memstream(&buf, &out_len);

	unlink(path);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || lseek(fd, 0, SEEK_SET)) {
		*err = -EIO;
	} else {
		*err = json_write_escaped_script_fd(f, fd, max);
	}
	if (fd >= 0)
		close(fd);
	fclose(f);
	return buf;
}

/* A UTF-8 sequence, invalid bytes and script characters at every place
 * around the 64 KiB pieces the stream reads. */
static void check_stream(void)
{
	static const char *const tails[] = { "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x94\xa5",
					     "\xe2\x82", "\xff\xc3(", "</script>&\"\\\n" };
	size_t piece = 64 * 1024, size = 3 * piece;
	char *text = malloc(size + 16);
	int bad = 0, err;

	for (size_t t = 0; t < sizeof(tails) / sizeof(tails[0]); t++) {
		for (size_t at = piece - 4; at <= piece + 1; at++) {
			size_t n = strlen(tails[t]);
			char *want, *got;

			memset(text, 'a', size);
			memcpy(text + at, tails[t], n);
			memcpy(text + 2 * piece - 2, tails[t], n); /* and near the second */
			text[size] = '\0';
			want = escaped_string(text);
			got = escaped_fd(text, size, size, &err);
			bad += err || !want || !got || strcmp(want, got);
			free(want);
			free(got);
		}
	}
	CHECK(bad == 0, "a file streamed in 64 KiB pieces is escaped as the whole text (%d differ)",
	      bad);

	/* cut at the end of the file: an incomplete sequence is replaced */
	{
		char *got = escaped_fd("ab\xe2\x82", 4, 100, &err);

		CHECK_STR(got, "\"ab\\ufffd\\ufffd\"", "a sequence cut by the end of the file");
		free(got);
		got = escaped_fd("a\0b", 3, 100, &err);
		CHECK_STR(got, "\"a\\u0000b\"", "a NUL byte does not end the string");
		free(got);
		got = escaped_fd("", 0, 100, &err);
		CHECK(err == 0 && got && !strcmp(got, "\"\""), "an empty file is \"\"");
		free(got);
	}

	memset(text, 'x', size);
	free(escaped_fd(text, size, size - 1, &err));
	CHECK(err == -EFBIG, "a file larger than max_bytes: -EFBIG (%d)", err);

	/* 8 MB streamed without its size in heap */
	{
		size_t big = 8u << 20, before;
		char *big_text = malloc(big), path[] = "/tmp/sparkprof-json-XXXXXX";
		int fd = mkstemp(path);
		FILE *null = fopen("/dev/null", "w");
		struct mallinfo2 mi;

		memset(big_text, 'q', big);
		unlink(path);
		CHECK(fd >= 0 && write(fd, big_text, big) == (ssize_t)big && !lseek(fd, 0, SEEK_SET),
		      "an 8 MB file");
		free(big_text);
		fputc(' ', null); /* its buffer is allocated at the first write */
		mi = mallinfo2();
		before = mi.uordblks + mi.hblkhd;
		err = json_write_escaped_script_fd(null, fd, big);
		mi = mallinfo2();
		CHECK(err == 0 && mi.uordblks + mi.hblkhd <= before,
		      "streamed with no heap of its own (%d, %zd bytes)", err,
		      (ssize_t)(mi.uordblks + mi.hblkhd - before));
		fclose(null);
		close(fd);
	}
	free(text);
}

int main(void)
{
	char *out = render(doc);
	char cmd[] = "python3 -c 'import json,sys; d=json.load(sys.stdin); "
		     "assert d[\"name\"]==\"a\\\"b\\\\c\\n\\x01\"; "
		     "assert d[\"bad utf8\"]==\"x\\ufffd\\ufffd(y\\u20ac\"; "
		     "assert d[\"list\"]==[18446744073709551615,-5,0.25,None,True,None,None]; "
		     "assert d[\"empty\"]=={}'";
	FILE *py = popen(cmd, "w");

	CHECK(out && strstr(out, "\\ufffd"), "invalid UTF-8 replaced");
	fputs(out, py);
	CHECK(pclose(py) == 0, "python's json parser reads it back as written:\n%s", out);
	free(out);
	check_stream();
	TAP_DONE();
}

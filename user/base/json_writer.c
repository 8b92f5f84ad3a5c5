/* json_writer.c - see json_writer.h. */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "base/json_writer.h"

void json_init(struct json_writer *w, FILE *out)
{
	w->out = out;
	w->depth = 0;
	w->count[0] = 0;
	w->pending_key = 0;
}

/* Separates a value from the previous member of its container. */
static void before_value(struct json_writer *w)
{
	if (w->pending_key) {
		w->pending_key = 0;
		return;
	}
	if (w->count[w->depth]++)
		fputc(',', w->out);
	if (w->depth)
		fprintf(w->out, "\n%*s", 2 * w->depth, "");
}

static void open_container(struct json_writer *w, char c)
{
	before_value(w);
	fputc(c, w->out);
	if (w->depth + 1 < JSON_MAX_DEPTH)
		w->depth++;
	w->count[w->depth] = 0;
}

static void close_container(struct json_writer *w, char c)
{
	int had_members = w->count[w->depth];

	if (w->depth)
		w->depth--;
	if (had_members)
		fprintf(w->out, "\n%*s", 2 * w->depth, "");
	fputc(c, w->out);
	if (!w->depth)
		fputc('\n', w->out);
}

void json_begin_object(struct json_writer *w) { open_container(w, '{'); }
void json_end_object(struct json_writer *w) { close_container(w, '}'); }
void json_begin_array(struct json_writer *w) { open_container(w, '['); }
void json_end_array(struct json_writer *w) { close_container(w, ']'); }

/* Length of the valid UTF-8 sequence at s (avail bytes there), 0 if it is
 * not one, or -1 if its first avail bytes are the start of one. */
static int utf8_sequence_length(const unsigned char *s, size_t avail)
{
	int n;
	unsigned int cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (int i = 1; i < n; i++) {
		if ((size_t)i >= avail)
			return -1;
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Reject overlong forms, surrogates and values past U+10FFFF. */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

/* Escapes s[0..len) without quotes; returns the bytes taken.  Unless last,
 * a UTF-8 sequence cut off at len is left for the next call. */
static size_t write_escaped_bytes(FILE *out, const unsigned char *s, size_t len, int in_script,
				  int last)
{
	size_t i = 0;

	while (i < len) {
		int n;

		if (s[i] == '"' || s[i] == '\\') {
			fputc('\\', out);
			fputc(s[i++], out);
			continue;
		}
		if (s[i] < 0x20 || (in_script && (s[i] == '<' || s[i] == '>' || s[i] == '&'))) {
			fprintf(out, "\\u%04x", s[i++]);
			continue;
		}
		n = utf8_sequence_length(s + i, len - i);
		if (n < 0 && !last)
			break;
		if (n <= 0) {
			fputs("\\ufffd", out);
			i++;
			continue;
		}
		fwrite(s + i, 1, (size_t)n, out);
		i += (size_t)n;
	}
	return i;
}

static void write_escaped(FILE *out, const char *str, int in_script)
{
	fputc('"', out);
	write_escaped_bytes(out, (const unsigned char *)str, strlen(str), in_script, 1);
	fputc('"', out);
}

void json_write_escaped(FILE *out, const char *str)
{
	write_escaped(out, str, 0);
}

void json_write_escaped_script(FILE *out, const char *str)
{
	write_escaped(out, str, 1);
}

int json_write_escaped_script_fd(FILE *out, int fd, uint64_t max_bytes)
{
	unsigned char buf[64 * 1024];
	uint64_t total = 0;
	size_t have = 0, used;
	int eof = 0;

	fputc('"', out);
	while (!eof || have) {
		if (!eof) {
			ssize_t n = read(fd, buf + have, sizeof(buf) - have);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return -errno;
			eof = n == 0;
			total += (uint64_t)n;
			if (total > max_bytes)
				return -EFBIG;
			have += (size_t)n;
		}
		/* what is left is at most the start of one UTF-8 sequence */
		used = write_escaped_bytes(out, buf, have, 1, eof);
		memmove(buf, buf + used, have - used);
		have -= used;
	}
	fputc('"', out);
	return 0;
}

void json_key(struct json_writer *w, const char *key)
{
	before_value(w);
	json_write_escaped(w->out, key);
	fputs(": ", w->out);
	w->pending_key = 1;
}

void json_string(struct json_writer *w, const char *value)
{
	before_value(w);
	if (value)
		json_write_escaped(w->out, value);
	else
		fputs("null", w->out);
}

void json_uint(struct json_writer *w, uint64_t value)
{
	before_value(w);
	fprintf(w->out, "%llu", (unsigned long long)value);
}

void json_int(struct json_writer *w, int64_t value)
{
	before_value(w);
	fprintf(w->out, "%lld", (long long)value);
}

void json_double(struct json_writer *w, double value)
{
	before_value(w);
	if (isfinite(value))
		fprintf(w->out, "%.6g", value);
	else
		fputs("null", w->out);
}

void json_bool(struct json_writer *w, int value)
{
	before_value(w);
	fputs(value ? "true" : "false", w->out);
}

void json_null(struct json_writer *w)
{
	before_value(w);
	fputs("null", w->out);
}

/* json_writer.c - see json_writer.h. */
#include <math.h>

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

/* Length of the valid UTF-8 sequence at s, or 0 if it is not one. */
static int utf8_sequence_length(const unsigned char *s)
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

static void write_escaped(FILE *out, const char *str, int in_script)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', out);
	while (*s) {
		int n;

		if (*s == '"' || *s == '\\') {
			fputc('\\', out);
			fputc(*s++, out);
			continue;
		}
		if (*s < 0x20 || (in_script && (*s == '<' || *s == '>' || *s == '&'))) {
			fprintf(out, "\\u%04x", *s++);
			continue;
		}
		n = utf8_sequence_length(s);
		if (!n) {
			fputs("\\ufffd", out);
			s++;
			continue;
		}
		fwrite(s, 1, (size_t)n, out);
		s += n;
	}
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

/* json_writer.h - a small streaming JSON emitter for summary.json and
 * `list --json`. Strings are escaped and invalid UTF-8 is replaced by
 * U+FFFD, so the output is always valid JSON whatever the names contain.
 */
#ifndef SPARKPROF_JSON_WRITER_H
#define SPARKPROF_JSON_WRITER_H

#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json_writer {
	FILE *out;
	int depth;
	int count[JSON_MAX_DEPTH]; /* members written at each level */
	int pending_key;           /* a key was written, its value comes next */
};

void json_init(struct json_writer *w, FILE *out);
void json_begin_object(struct json_writer *w);
void json_end_object(struct json_writer *w);
void json_begin_array(struct json_writer *w);
void json_end_array(struct json_writer *w);
void json_key(struct json_writer *w, const char *key);
void json_string(struct json_writer *w, const char *value); /* NULL -> null */
void json_uint(struct json_writer *w, uint64_t value);
void json_int(struct json_writer *w, int64_t value);
void json_double(struct json_writer *w, double value);
void json_bool(struct json_writer *w, int value);
void json_null(struct json_writer *w);

/* Writes s as a JSON string literal (with quotes). */
void json_write_escaped(FILE *out, const char *s);
/* The same, with '<', '>' and '&' escaped too: safe inside an HTML <script>. */
void json_write_escaped_script(FILE *out, const char *s);

/* The same for what fd holds from its offset on, read in pieces (a large
 * summary.json is never in memory whole), at most max_bytes of it.  0,
 * -EFBIG past max_bytes, or -errno of a read (the literal is then cut). */
int json_write_escaped_script_fd(FILE *out, int fd, uint64_t max_bytes);

#endif

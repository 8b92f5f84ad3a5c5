/* json_fields.h - typed fields of JSON objects from outside input (Spark's
 * event log lines and REST replies, parsed by json-c).
 *
 * A missing field (or a null one) leaves its default unless required; a
 * field of the wrong type, or a missing required one, is -EPROTO with a
 * short reason in the jf_error, for the caller's one message.
 */
#ifndef SPARKPROF_JSON_FIELDS_H
#define SPARKPROF_JSON_FIELDS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jf_error {
	int err;          /* 0, or the first error */
	char why[256];    /* what was wrong */
};

/* Records an -EPROTO reason; returns -EPROTO. */
int jf_bad(struct jf_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* After an allocation or a bound failed (errno E2BIG: too many entries,
 * else out of memory): records it and returns -errno. */
int jf_nomem(struct jf_error *e);

/* o's member key, or NULL when o is no object, key is absent or null. */
struct json_object *jf_member(struct json_object *o, const char *key);

int jf_int(struct jf_error *e, struct json_object *o, const char *key, int64_t *v, bool required);
/* As jf_int, and within int32_t. */
int jf_i32(struct jf_error *e, struct json_object *o, const char *key, int32_t *v, bool required);
/* Times, durations and sizes: a negative one counts as unknown (0). */
int jf_u64(struct jf_error *e, struct json_object *o, const char *key, uint64_t *v);
int jf_bool(struct jf_error *e, struct json_object *o, const char *key, bool *v);
/* *s (len bytes, NUL-terminated by json-c) stays NULL when absent. */
int jf_str(struct jf_error *e, struct json_object *o, const char *key, const char **s, size_t *len);
int jf_obj(struct jf_error *e, struct json_object *o, const char *key, struct json_object **v,
	   bool required);
/* *v: an array, or NULL when absent (0 entries). */
int jf_arr(struct jf_error *e, struct json_object *o, const char *key, struct json_object **v,
	   size_t *n);
/* A string field, when present, into *dst as a bounded copy
 * (app_builder_set_str). */
int jf_copy(struct jf_error *e, struct json_object *o, const char *key, char **dst);
/* A string field, when present, into dst[size] (cut to fit). */
int jf_chars(struct jf_error *e, struct json_object *o, const char *key, char *dst, size_t size);

#endif

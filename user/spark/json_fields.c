/* json_fields.c - see json_fields.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "spark/json_fields.h"
#include "spark/spark_app_record.h"

int jf_bad(struct jf_error *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->why, sizeof(e->why), fmt, ap);
	va_end(ap);
	e->err = -EPROTO;
	return -EPROTO;
}

int jf_nomem(struct jf_error *e)
{
	int big = errno == E2BIG;

	e->err = big ? -E2BIG : -ENOMEM;
	snprintf(e->why, sizeof(e->why), "%s", big ? "too many entries" : "out of memory");
	return e->err;
}

struct json_object *jf_member(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v) ||
	    json_object_is_type(v, json_type_null))
		return NULL;
	return v;
}

int jf_int(struct jf_error *e, struct json_object *o, const char *key, int64_t *v, bool required)
{
	struct json_object *m = jf_member(o, key);

	if (!m)
		return required ? jf_bad(e, "no \"%s\"", key) : 0;
	if (!json_object_is_type(m, json_type_int))
		return jf_bad(e, "\"%s\" is not an integer", key);
	*v = json_object_get_int64(m);
	return 0;
}

int jf_i32(struct jf_error *e, struct json_object *o, const char *key, int32_t *v, bool required)
{
	int64_t x = *v;
	int err = jf_int(e, o, key, &x, required);

	if (err)
		return err;
	if (x < INT32_MIN || x > INT32_MAX)
		return jf_bad(e, "\"%s\" is out of range", key);
	*v = (int32_t)x;
	return 0;
}

int jf_u64(struct jf_error *e, struct json_object *o, const char *key, uint64_t *v)
{
	int64_t x = 0;
	int err = jf_int(e, o, key, &x, false);

	if (!err && jf_member(o, key))
		*v = x > 0 ? (uint64_t)x : 0;
	return err;
}

int jf_bool(struct jf_error *e, struct json_object *o, const char *key, bool *v)
{
	struct json_object *m = jf_member(o, key);

	if (!m)
		return 0;
	if (!json_object_is_type(m, json_type_boolean))
		return jf_bad(e, "\"%s\" is not a boolean", key);
	*v = json_object_get_boolean(m);
	return 0;
}

int jf_str(struct jf_error *e, struct json_object *o, const char *key, const char **s, size_t *len)
{
	struct json_object *m = jf_member(o, key);

	*s = NULL;
	*len = 0;
	if (!m)
		return 0;
	if (!json_object_is_type(m, json_type_string))
		return jf_bad(e, "\"%s\" is not a string", key);
	*s = json_object_get_string(m);
	*len = json_object_get_string_len(m);
	return 0;
}

int jf_obj(struct jf_error *e, struct json_object *o, const char *key, struct json_object **v,
	   bool required)
{
	struct json_object *m = jf_member(o, key);

	*v = NULL;
	if (!m)
		return required ? jf_bad(e, "no \"%s\"", key) : 0;
	if (!json_object_is_type(m, json_type_object))
		return jf_bad(e, "\"%s\" is not an object", key);
	*v = m;
	return 0;
}

int jf_arr(struct jf_error *e, struct json_object *o, const char *key, struct json_object **v,
	   size_t *n)
{
	struct json_object *m = jf_member(o, key);

	*v = NULL;
	*n = 0;
	if (!m)
		return 0;
	if (!json_object_is_type(m, json_type_array))
		return jf_bad(e, "\"%s\" is not a list", key);
	*v = m;
	*n = json_object_array_length(m);
	return 0;
}

int jf_copy(struct jf_error *e, struct json_object *o, const char *key, char **dst)
{
	const char *s;
	size_t len;
	int err = jf_str(e, o, key, &s, &len);

	if (err || !s)
		return err;
	if (app_builder_set_str(dst, s, len)) {
		errno = ENOMEM;
		return jf_nomem(e);
	}
	return 0;
}

int jf_chars(struct jf_error *e, struct json_object *o, const char *key, char *dst, size_t size)
{
	const char *s;
	size_t len;
	int err = jf_str(e, o, key, &s, &len);

	if (!err && s)
		snprintf(dst, size, "%.*s", (int)(len < size ? len : size - 1), s);
	return err;
}

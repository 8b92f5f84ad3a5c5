/* executor_spec.c - see executor_spec.h. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spark/executor_spec.h"

/* Executor ids are Spark ints; names (e.g. "driver") are short. */
#define MAX_NAME 64
#define MAX_ID INT32_MAX

struct spec_item {
	int64_t lo, hi;            /* numeric range, or lo = -1 for a name */
	char name[MAX_NAME];
};

struct executor_spec {
	bool all;
	size_t n;
	struct spec_item items[];
};

static int is_space(char c)
{
	return c == ' ' || c == '\t';
}

/* Decimal digits only, value <= MAX_ID; -1 when not a number. */
static int64_t parse_id(const char *s, size_t len)
{
	int64_t v = 0;

	if (len == 0 || len > 10)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v <= MAX_ID ? v : -1;
}

static int is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.';
}

static size_t strspn_len(const char *s, size_t len, const char *accept)
{
	size_t i = 0;

	while (i < len && s[i] && strchr(accept, s[i]))
		i++;
	return i;
}

static void set_err(char *err, size_t errlen, const char *fmt, const char *item,
		    size_t item_len)
{
	char shown[80];
	size_t n = item_len < sizeof(shown) - 1 ? item_len : sizeof(shown) - 1;

	if (!err || errlen == 0)
		return;
	/* Show the bad item printable so the message stays one line. */
	for (size_t i = 0; i < n; i++)
		shown[i] = (item[i] >= 0x20 && item[i] < 0x7f) ? item[i] : '?';
	shown[n] = '\0';
	snprintf(err, errlen, fmt, shown);
}

static int parse_item(const char *s, size_t len, struct spec_item *item, char *err,
		      size_t errlen)
{
	const char *dash = memchr(s, '-', len);

	if (len == 0) {
		set_err(err, errlen, "--executors: empty item%s", "", 0);
		return -EINVAL;
	}
	if (dash) {
		size_t llen = dash - s, rlen = len - llen - 1;
		int64_t lo = parse_id(s, llen), hi = parse_id(dash + 1, rlen);

		if (lo < 0 || hi < 0) {
			set_err(err, errlen,
				"--executors: bad range '%s' (want FROM-TO, two executor numbers)",
				s, len);
			return -EINVAL;
		}
		if (lo > hi) {
			set_err(err, errlen, "--executors: range '%s' runs backwards", s, len);
			return -EINVAL;
		}
		*item = (struct spec_item){ .lo = lo, .hi = hi };
		return 0;
	}
	int64_t id = parse_id(s, len);

	if (id >= 0) {
		*item = (struct spec_item){ .lo = id, .hi = id };
		return 0;
	}
	if (strspn_len(s, len, "0123456789") == len) {
		set_err(err, errlen, "--executors: bad item '%s' (executor number out of range)",
			s, len);
		return -EINVAL;
	}
	if (len >= MAX_NAME) {
		set_err(err, errlen, "--executors: executor id '%s...' is too long", s, len);
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++) {
		if (!is_name_char(s[i])) {
			set_err(err, errlen,
				"--executors: bad item '%s' (want *, an executor id or FROM-TO)",
				s, len);
			return -EINVAL;
		}
	}
	*item = (struct spec_item){ .lo = -1, .hi = -1 };
	memcpy(item->name, s, len);
	item->name[len] = '\0';
	return 0;
}

int executor_spec_parse(const char *spec, size_t len, struct executor_spec **out,
			char *err, size_t errlen)
{
	struct executor_spec *es;
	size_t items = 1, start = 0;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (!spec)
		len = 0;
	for (size_t i = 0; i < len; i++)
		if (spec[i] == ',')
			items++;
	es = calloc(1, sizeof(*es) + items * sizeof(es->items[0]));
	if (!es)
		return -ENOMEM;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && spec[i] != ',')
			continue;
		size_t a = start, b = i;
		int ret;

		while (a < b && is_space(spec[a]))
			a++;
		while (b > a && is_space(spec[b - 1]))
			b--;
		start = i + 1;
		if (b - a == 1 && spec[a] == '*') {
			es->all = true;
			continue;
		}
		ret = parse_item(spec + a, b - a, &es->items[es->n], err, errlen);
		if (ret < 0) {
			free(es);
			return ret;
		}
		es->n++;
	}
	*out = es;
	return 0;
}

bool executor_spec_matches(const struct executor_spec *spec, const char *executor_id)
{
	int64_t id;

	if (!spec || !executor_id)
		return false;
	if (spec->all)
		return true;
	id = parse_id(executor_id, strlen(executor_id));
	for (size_t i = 0; i < spec->n; i++) {
		const struct spec_item *it = &spec->items[i];

		if (it->lo < 0 ? strcmp(it->name, executor_id) == 0
			       : id >= it->lo && id <= it->hi)
			return true;
	}
	return false;
}

void executor_spec_free(struct executor_spec *spec)
{
	free(spec);
}

/* helper_log_parser.c - see helper_log_parser.h. */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "base/hex_digit.h"
#include "jvm/helper_log_parser.h"

/* A field cursor over one line (no NUL terminator in the buffer). */
struct cursor {
	const char *p, *end;
};

static int next_field(struct cursor *c, const char **s, size_t *len)
{
	if (c->p >= c->end || *c->p == ' ')
		return -EINVAL;
	const char *start = c->p;
	while (c->p < c->end && *c->p != ' ')
		c->p++;
	*s = start;
	*len = c->p - start;
	if (c->p < c->end)
		c->p++;   /* the separator */
	return 0;
}

static int parse_u64(struct cursor *c, int base, uint64_t *out)
{
	const char *s;
	size_t len;
	if (next_field(c, &s, &len) < 0 || len > 20)
		return -EINVAL;
	uint64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		int d = hex_digit_value(s[i]);
		if (d < 0 || d >= base)
			return -EINVAL;
		if (v > (UINT64_MAX - d) / base)
			return -EINVAL;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

static int parse_tid(struct cursor *c, pid_t *tid)
{
	uint64_t v;
	if (parse_u64(c, 10, &v) || v > INT_MAX)
		return -EINVAL;
	*tid = (pid_t)v;
	return 0;
}

/* Unescapes s[0..len) ("\xHH") and interns it. */
static int parse_name(struct string_pool *names, const char *s, size_t len, const char **out)
{
	char buf[HELPER_LOG_MAX_LINE];
	size_t o = 0;
	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] != '\\') {
			buf[o++] = s[i];
			continue;
		}
		if (i + 3 >= len || s[i + 1] != 'x' || hex_digit_value(s[i + 2]) < 0 ||
		    hex_digit_value(s[i + 3]) < 0)
			return -EINVAL;
		int v = hex_digit_value(s[i + 2]) * 16 + hex_digit_value(s[i + 3]);
		if (v == 0)
			return -EINVAL;
		buf[o++] = (char)v;
		i += 3;
	}
	*out = string_pool_intern(names, buf, o);
	return *out ? 0 : -ENOMEM;
}

/* The rest of the line as one name. */
static int parse_rest_name(struct string_pool *names, struct cursor *c, const char **out)
{
	return parse_name(names, c->p, c->end - c->p, out);
}

/* "NAME\tNAME...": at least one, none empty. */
static int parse_inline_names(struct string_pool *names, struct cursor *c,
			      const char **out, unsigned *depth)
{
	const char *p = c->p;
	*depth = 0;
	while (p < c->end) {
		const char *tab = memchr(p, '\t', c->end - p);
		const char *stop = tab ? tab : c->end;
		if (*depth == HELPER_LOG_MAX_INLINE_DEPTH)
			return -EINVAL;
		int err = parse_name(names, p, stop - p, &out[*depth]);
		if (err)
			return err;
		(*depth)++;
		p = tab ? tab + 1 : c->end;
		if (tab && p == c->end)
			return -EINVAL;
	}
	return *depth ? 0 : -EINVAL;
}

/* " N N...": at least one number, at most the deepest chain. */
static int parse_numbers(struct cursor *c, uint64_t *out, unsigned *depth)
{
	*depth = 0;
	while (c->p < c->end) {
		if (*depth == HELPER_LOG_MAX_INLINE_DEPTH || parse_u64(c, 10, &out[*depth]) ||
		    !out[*depth])
			return -EINVAL;
		(*depth)++;
	}
	/* parse_u64 takes a trailing separator: "1 " would pass as "1". */
	return *depth && c->end[-1] != ' ' ? 0 : -EINVAL;
}

static int parse_thread(struct string_pool *names, char letter, struct cursor *c,
			struct helper_record *rec)
{
	struct jvm_helper_thread_event *ev = &rec->thread;
	const char *s;
	size_t slen;
	*ev = (struct jvm_helper_thread_event){ .ts = rec->ts };
	if (parse_tid(c, &ev->tid))
		return -EINVAL;
	switch (letter) {
	case 'T':
		ev->kind = JVM_THREAD_NAMED;
		return parse_rest_name(names, c, &ev->name);
	case 'X':
		ev->kind = JVM_THREAD_ENDED;
		return c->p == c->end ? 0 : -EINVAL;
	default:   /* 'S' */
		if (next_field(c, &s, &slen) || c->p != c->end)
			return -EINVAL;
		if (slen == 4 && !memcmp(s, "idle", 4))
			ev->kind = JVM_THREAD_IDLE;
		else if (slen == 4 && !memcmp(s, "busy", 4))
			ev->kind = JVM_THREAD_BUSY;
		else
			return -EINVAL;
		return 0;
	}
}

int helper_log_parse_line(struct string_pool *names, struct string_pool *thread_names,
			  const char *line, size_t len, struct helper_record *rec)
{
	if (len < 2 || len > HELPER_LOG_MAX_LINE || line[1] != ' ')
		return -EINVAL;
	struct cursor c = { line + 2, line + len };
	const char *s;
	size_t slen;
	uint64_t pid;
	rec->ts = 0;
	switch (line[0]) {
	case 'H':
		rec->kind = HELPER_RECORD_HEADER;
		if (parse_u64(&c, 10, &rec->header.version) || parse_u64(&c, 10, &pid) ||
		    parse_u64(&c, 10, &rec->ts) || next_field(&c, &s, &slen))
			return -EINVAL;
		rec->header.attached = slen == 6 && !memcmp(s, "attach", 6);
		rec->header.continued = slen == 9 && !memcmp(s, "continued", 9);
		return 0;   /* the rest is the JVM's version */
	case 'L':
	case 'D':
		rec->kind = HELPER_RECORD_CODE;
		rec->code.is_method = line[0] == 'L';
		if (parse_u64(&c, 10, &rec->ts) || parse_u64(&c, 10, &rec->code.id) ||
		    parse_u64(&c, 16, &rec->code.start) || parse_u64(&c, 16, &rec->code.size))
			return -EINVAL;
		return parse_rest_name(names, &c, &rec->code.name);
	case 'I':
		rec->kind = HELPER_RECORD_INLINE;
		if (parse_u64(&c, 10, &rec->inl.id) || parse_u64(&c, 16, &rec->inl.start) ||
		    parse_u64(&c, 16, &rec->inl.end))
			return -EINVAL;
		return parse_inline_names(names, &c, rec->inl.names, &rec->inl.depth);
	case 'N':
		rec->kind = HELPER_RECORD_NAME;
		if (parse_u64(&c, 10, &rec->name.number) || !rec->name.number)
			return -EINVAL;
		return parse_rest_name(names, &c, &rec->name.name);
	case 'J':
		rec->kind = HELPER_RECORD_INLINE_NUMBERS;
		if (parse_u64(&c, 10, &rec->inl_numbers.id) ||
		    parse_u64(&c, 16, &rec->inl_numbers.start) ||
		    parse_u64(&c, 16, &rec->inl_numbers.end))
			return -EINVAL;
		return parse_numbers(&c, rec->inl_numbers.numbers, &rec->inl_numbers.depth);
	case 'U':
		rec->kind = HELPER_RECORD_UNLOAD;
		if (parse_u64(&c, 10, &rec->ts) || parse_u64(&c, 10, &rec->unload_id) || c.p != c.end)
			return -EINVAL;
		return 0;
	case 'T':
	case 'X':
	case 'S':
		rec->kind = HELPER_RECORD_THREAD;
		if (parse_u64(&c, 10, &rec->ts))
			return -EINVAL;
		return parse_thread(thread_names, line[0], &c, rec);
	case 'R':
		rec->kind = HELPER_RECORD_TIME;
		if (parse_u64(&c, 10, &rec->ts))
			return -EINVAL;
		if (!next_field(&c, &s, &slen) && c.p == c.end && slen == 8 &&
		    !memcmp(s, "snapshot", 8))
			rec->kind = HELPER_RECORD_SNAPSHOT_END;
		return 0;   /* other replays: what follows is not needed */
	case 'K':
		rec->kind = HELPER_RECORD_TIME;
		return parse_u64(&c, 10, &rec->ts);
	case 'G':
		rec->kind = HELPER_RECORD_CONTINUED;
		return parse_u64(&c, 10, &rec->ts) || c.p != c.end ? -EINVAL : 0;
	default:
		rec->kind = HELPER_RECORD_UNKNOWN;
		return 0;
	}
}

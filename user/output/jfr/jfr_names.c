/* jfr_names.c - see jfr_names.h. */
#include <string.h>

#include "output/jfr/jfr_names.h"

static const char replacement[] = "\xef\xbf\xbd";

/* Length of the well-formed sequence at s[0..len), or 0 when ill-formed;
 * *consumed is set to the bytes the ill-formed prefix covers (>= 1). */
static size_t utf8_sequence(const unsigned char *s, size_t len, size_t *consumed)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t need, i;

	if (c < 0x80) {
		*consumed = 1;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		need = 1;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;      /* no UTF-16 surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;      /* nothing above U+10FFFF */
	} else {
		*consumed = 1;
		return 0;
	}
	i = 1;
	if (i < len && s[i] >= lo && s[i] <= hi) {
		i++;
		while (i <= need && i < len && s[i] >= 0x80 && s[i] <= 0xbf)
			i++;
	}
	*consumed = i;
	return i == need + 1 ? i : 0;
}

bool jfr_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, used;

	while (i < len) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		if (!utf8_sequence(p + i, len - i, &used))
			return false;
		i += used;
	}
	return true;
}

void jfr_utf8_append(struct jfr_buf *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, start = 0, used;

	while (i < len) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		if (utf8_sequence(p + i, len - i, &used)) {
			i += used;
			continue;
		}
		jfr_buf_put(out, s + start, i - start);
		jfr_buf_put(out, replacement, 3);
		i += used;
		start = i;
	}
	jfr_buf_put(out, s + start, len - start);
}

bool jfr_split_python_name(const char *name, size_t len, struct jfr_python_name *out)
{
	const char *open = NULL, *colon = NULL, *end = name + len - 1;
	uint32_t line = 0;

	if (len < 4 || *end != ')')
		return false;
	for (const char *p = end; p > name; p--) {
		if (p[0] == '(' && p[-1] == ' ') {
			open = p;
			break;
		}
	}
	if (!open || open - 1 == name)
		return false;
	for (const char *p = end - 1; p > open && *p >= '0' && *p <= '9'; p--)
		colon = p[-1] == ':' ? p - 1 : colon;
	for (const char *p = colon ? colon + 1 : end; p < end && line < 100000000; p++)
		line = line * 10 + (uint32_t)(*p - '0');
	*out = (struct jfr_python_name){
		.function = name, .function_len = (size_t)(open - 1 - name),
		.file = open + 1, .file_len = (size_t)((colon ? colon : end) - open - 1),
		.line = line,
	};
	return out->file_len > 0;
}

void jfr_split_java_name(const char *name, size_t len, struct jfr_java_name *out)
{
	const char *paren = len ? memchr(name, '(', len) : NULL;
	size_t end = paren ? (size_t)(paren - name) : len;
	size_t dot = end;

	while (dot > 0 && name[dot - 1] != '.')
		dot--;
	/* dot is now one past the last '.' in name[0..end), or 0 if none. */
	if (dot >= 2 && dot < len && name[dot] != '(') {
		out->has_class = true;
		out->cls = name;
		out->cls_len = dot - 1;
		out->method = name + dot;
		out->method_len = len - dot;
		return;
	}
	out->has_class = false;
	out->cls = NULL;
	out->cls_len = 0;
	out->method = name;
	out->method_len = len;
}

/* test_python_code.c - CPython's line tables and str objects, decoded as
 * CPython itself reads them: the line of every instruction of code objects
 * compiled by each pyenv interpreter, 3.10 to 3.13 (data/python_lines.py). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "python/python_code.h"
#include "python/python_layout.h"
#include "tap.h"

static size_t unhex(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = 0;
	unsigned byte;

	while (n < cap && sscanf(hex + 2 * n, "%2x", &byte) == 1)
		out[n++] = (uint8_t)byte;
	return n;
}

/* One code object's line: every instruction's line against the decoder's. */
static int check_code(char *line, int *codes, int *instrs)
{
	static uint8_t table[1 << 16];
	char *save, *minor = strtok_r(line, " \n", &save), *first = strtok_r(NULL, " \n", &save);
	char *hex = strtok_r(NULL, " \n", &save), *pair;
	size_t len = hex ? unhex(hex, table, sizeof(table)) : 0;
	int wrong = 0;

	if (!minor || !first || !hex)
		return 1;
	while ((pair = strtok_r(NULL, " \n", &save))) {
		unsigned instr;
		int want, got;

		if (sscanf(pair, "%u:%d", &instr, &want) != 2)
			return 1;
		got = python_line_of(table, len, atoi(first), instr, atoi(minor) == 10);
		if (got != want && wrong++ < 3)
			printf("# 3.%s: instruction %u: line %d, CPython says %d\n", minor, instr, got,
			       want);
		(*instrs)++;
	}
	(*codes)++;
	return wrong;
}

static void check_version(const char *version)
{
	static char line[1 << 18];
	char cmd[512];
	int codes = 0, instrs = 0, wrong = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "\"$(pyenv root 2>/dev/null || echo $HOME/.pyenv)\"/versions/%s/bin/python3 "
		 "tests/unit/data/python_lines.py", version);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p))
		wrong += check_code(line, &codes, &instrs);
	if (p)
		pclose(p);
	CHECK(codes >= 10 && instrs > 1000 && !wrong,
	      "CPython %s: %d code objects, %d instructions, %d lines wrong", version, codes,
	      instrs, wrong);
}

static void check_strings(void)
{
	const struct python_layout *l12 = python_layout_of(12), *l10 = python_layout_of(10);
	uint8_t head[PYTHON_STR_HEAD] = { 0 }, chars[] = { 0xe9, 0x00, 0x41, 0x00 };
	uint64_t off, n = 5;
	unsigned width;
	char out[16];

	memcpy(head + 16, &n, sizeof(n));
	head[32] = 32 | 64 | 4; /* compact, ascii, kind 1 */
	CHECK(!python_str_layout(head, l12, &off, &n, &width) && off == 40 && n == 5 && width == 1,
	      "3.12 compact ASCII: data at 40");
	head[32] = 32 | 8; /* compact, kind 2 */
	CHECK(!python_str_layout(head, l10, &off, &n, &width) && off == 72 && width == 2,
	      "3.10 compact UCS-2: data at 72");
	head[32] = 8; /* not compact */
	CHECK(python_str_layout(head, l12, &off, &n, &width) == -EPROTO, "a legacy str is refused");
	python_str_utf8(chars, 2, 2, out, sizeof(out));
	CHECK(!strcmp(out, "\xc3\xa9" "A"), "UCS-2 to UTF-8: %s", out);
	CHECK(python_str_utf8(chars, 2, 2, out, 2) == 0 && out[0] == '\0',
	      "no room for a whole character: nothing");
	CHECK(python_line_of((const uint8_t *)"\x01", 1, 7, 0, false) == 0,
	      "a table whose first byte is not an entry: no line");
}

int main(void)
{
	const char *versions[] = { "3.10.13", "3.11.7", "3.12.1", "3.13.0" };

	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		check_version(versions[i]);
	check_strings();
	CHECK(python_layout_of(9) == NULL && python_layout_of(14) == NULL,
	      "3.9 and 3.14 have no layout: refused, not guessed");
	TAP_DONE();
}

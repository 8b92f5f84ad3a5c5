/* test_json_writer.c - the JSON emitter produces valid JSON for any names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	TAP_DONE();
}

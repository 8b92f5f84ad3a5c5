/* test_jfr_names.c - UTF-8 repair and Java frame name splitting. */
#include <string.h>

#include "output/jfr/jfr_names.h"
#include "tap.h"

static void check_repair(const char *in, size_t len, const char *want, const char *what)
{
	struct jfr_buf b;

	jfr_buf_init(&b);
	jfr_utf8_append(&b, in, len);
	jfr_buf_u8(&b, 0);
	CHECK_STR((const char *)b.data, want, "repair: %s", what);
	CHECK(jfr_utf8_valid((const char *)b.data, b.len - 1), "repaired %s is valid", what);
	CHECK(jfr_utf8_valid(in, len) == !strcmp(in, want) || len != strlen(in),
	      "validity of %s agrees with repair", what);
	jfr_buf_free(&b);
}

static void check_split(const char *name, int has_class, const char *cls, const char *method)
{
	struct jfr_java_name jn;
	char c[256] = "", m[256] = "";

	jfr_split_java_name(name, strlen(name), &jn);
	if (jn.cls)
		memcpy(c, jn.cls, jn.cls_len);
	memcpy(m, jn.method, jn.method_len);
	CHECK(jn.has_class == has_class, "split '%s': has_class %d", name, has_class);
	CHECK_STR(c, cls, "split '%s': class", name);
	CHECK_STR(m, method, "split '%s': method", name);
}

#define FFFD "\xef\xbf\xbd"

static void check_python(const char *name, const char *function, const char *file,
			 uint32_t line)
{
	struct jfr_python_name pn;
	bool ok = jfr_split_python_name(name, strlen(name), &pn);

	if (!function) {
		CHECK(!ok, "'%s' is not a Python frame name", name);
		return;
	}
	CHECK(ok && pn.function_len == strlen(function) &&
	      !memcmp(pn.function, function, pn.function_len) && pn.file_len == strlen(file) &&
	      !memcmp(pn.file, file, pn.file_len) && pn.line == line,
	      "'%s': function %s, file %s, line %u", name, function, file, line);
}

int main(void)
{
	check_python("probe_inner_hash (job.py:30)", "probe_inner_hash", "job.py", 30);
	check_python("K.method.<locals>.<genexpr> (a b.py:7)", "K.method.<locals>.<genexpr>",
		     "a b.py", 7);
	check_python("victim (hostile.py)", "victim", "hostile.py", 0);
	check_python("f (x (y).py:12)", "f (x", "y).py", 12);
	check_python("f (file.py:)", "f", "file.py:", 0);
	check_python("main", NULL, NULL, 0);
	check_python("(x.py:1)", NULL, NULL, 0);
	check_python(" (x.py:1)", NULL, NULL, 0);
	check_python("f ()", NULL, NULL, 0);
	check_repair("plain", 5, "plain", "ASCII");
	check_repair("\xc3\xa9t\xc3\xa9", 5, "\xc3\xa9t\xc3\xa9", "2-byte sequences");
	check_repair("\xe6\x97\xa5\xe6\x9c\xac", 6, "\xe6\x97\xa5\xe6\x9c\xac", "CJK");
	check_repair("\xf0\x9f\x94\xa5", 4, "\xf0\x9f\x94\xa5", "4-byte emoji");
	check_repair("a\xff" "b", 3, "a" FFFD "b", "stray 0xff");
	check_repair("a\x80\x80" "b", 4, "a" FFFD FFFD "b", "two lone continuation bytes");
	check_repair("\xc0\xaf", 2, FFFD FFFD, "overlong '/'");
	check_repair("\xed\xa0\x80", 3, FFFD FFFD FFFD, "UTF-16 surrogate");
	check_repair("\xf4\x90\x80\x80", 4, FFFD FFFD FFFD FFFD, "above U+10FFFF");
	/* A truncated sequence is one replacement (maximal subpart). */
	check_repair("x\xe6\x97", 3, "x" FFFD, "truncated 3-byte sequence at the end");
	check_repair("\xe6\x97y", 3, FFFD "y", "truncated 3-byte sequence before ASCII");
	check_repair("\xf0\x9f\x94", 3, FFFD, "truncated 4-byte sequence");
	check_repair("", 0, "", "empty");
	{
		struct jfr_buf b;

		jfr_buf_init(&b);
		jfr_utf8_append(&b, "a\0b", 3);
		CHECK(b.len == 3 && b.data[1] == 0, "NUL is kept as a valid byte");
		jfr_buf_free(&b);
	}

	check_split("org/apache/spark/executor/Executor$TaskRunner.run", 1,
		    "org/apache/spark/executor/Executor$TaskRunner", "run");
	check_split("java.lang.Thread.run", 1, "java.lang.Thread", "run");
	check_split("Foo.bar(Ljava.lang.String;)V", 1, "Foo", "bar(Ljava.lang.String;)V");
	check_split("Foo.<init>", 1, "Foo", "<init>");
	check_split("run", 0, "", "run");
	check_split(".run", 0, "", ".run");
	check_split("Foo.", 0, "", "Foo.");
	check_split("Foo.(I)V", 0, "", "Foo.(I)V");
	check_split("", 0, "", "");
	check_split("a.b.c", 1, "a.b", "c");
	check_split("\xe6\x97\xa5.\xe6\x9c\xac", 1, "\xe6\x97\xa5", "\xe6\x9c\xac");
	TAP_DONE();
}

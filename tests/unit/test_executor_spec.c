/* test_executor_spec.c - --executors SPEC parsing and matching. */
#include <errno.h>
#include <string.h>

#include "spark/executor_spec.h"
#include "tap.h"

static struct executor_spec *parse(const char *s, char *err, size_t errlen, int *ret)
{
	struct executor_spec *spec;

	*ret = executor_spec_parse(s, strlen(s), &spec, err, errlen);
	return spec;
}

int main(void)
{
	char err[200];
	int ret;
	struct executor_spec *s;

	s = parse("*", err, sizeof(err), &ret);
	CHECK(ret == 0 && s, "'*' parses");
	CHECK(executor_spec_matches(s, "1") && executor_spec_matches(s, "driver") &&
		      executor_spec_matches(s, "4711"),
	      "'*' matches numbers and driver");
	executor_spec_free(s);

	s = parse("1,3,5-8", err, sizeof(err), &ret);
	CHECK(ret == 0 && s, "'1,3,5-8' parses");
	const char *yes[] = { "1", "3", "5", "6", "7", "8", "08" };
	const char *no[] = { "0", "2", "4", "9", "10", "driver", "", "1a", "-1", "18" };
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		CHECK(executor_spec_matches(s, yes[i]), "'1,3,5-8' matches %s", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		CHECK(!executor_spec_matches(s, no[i]), "'1,3,5-8' does not match '%s'", no[i]);
	CHECK(!executor_spec_matches(s, NULL), "NULL id does not match");
	executor_spec_free(s);

	s = parse(" 2 , driver ", err, sizeof(err), &ret);
	CHECK(ret == 0 && executor_spec_matches(s, "2") && executor_spec_matches(s, "driver") &&
		      !executor_spec_matches(s, "3"),
	      "spaces around items, explicit driver");
	executor_spec_free(s);

	s = parse("3,*", err, sizeof(err), &ret);
	CHECK(ret == 0 && executor_spec_matches(s, "99"), "'*' inside a list selects all");
	executor_spec_free(s);

	s = parse("0-2147483647", err, sizeof(err), &ret);
	CHECK(ret == 0 && executor_spec_matches(s, "2147483647") &&
		      !executor_spec_matches(s, "2147483648"),
	      "full int range, no overflow");
	executor_spec_free(s);

	struct {
		const char *spec, *part;
	} bad[] = {
		{ "", "empty item" }, { "1,,2", "empty item" }, { "1,", "empty item" },
		{ "8-5", "'8-5' runs backwards" }, { "1-", "bad range '1-'" },
		{ "-3", "bad range '-3'" }, { "a-b", "bad range 'a-b'" },
		{ "1-2-3", "bad range '1-2-3'" }, { "1;2", "bad item '1;2'" },
		{ "exec/1", "bad item 'exec/1'" }, { "99999999999", "bad item" },
		{ "**", "bad item '**'" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s = parse(bad[i].spec, err, sizeof(err), &ret);
		CHECK(ret == -EINVAL && !s && strstr(err, bad[i].part) &&
			      strncmp(err, "--executors: ", 13) == 0 && !strchr(err, '\n'),
		      "'%s' is refused naming %s (got: %s)", bad[i].spec, bad[i].part, err);
	}
	char ctl[] = "1,\x01\x7f";
	s = parse(ctl, err, sizeof(err), &ret);
	CHECK(ret == -EINVAL && strstr(err, "'?" "?'"), "control bytes are shown as '?': %s", err);
	s = parse("5-3", err, 8, &ret);
	CHECK(ret == -EINVAL && strlen(err) == 7, "error text is cut to errlen");
	ret = executor_spec_parse("1,2", 1, &s, NULL, 0);
	CHECK(ret == 0 && executor_spec_matches(s, "1") &&
		      !executor_spec_matches(s, "2"),
	      "only len bytes are read");
	executor_spec_free(s);
	TAP_DONE();
}

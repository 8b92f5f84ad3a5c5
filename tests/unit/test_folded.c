/* test_folded.c - folded stack aggregation and its file format. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/folded.h"
#include "tap.h"

static char *slurp(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}

static int sum_counts(const char *stack, size_t len, uint64_t count, void *ctx)
{
	(void)stack;
	(void)len;
	*(uint64_t *)ctx += count;
	return 0;
}

int main(void)
{
	struct folded_profile *p = folded_profile_new(NULL);
	const struct frame stack[] = {
		{ "do_sys_read", FRAME_KERNEL }, { "read", FRAME_NATIVE },
		{ "Foo.bar", FRAME_JIT }, { "main", FRAME_NATIVE },
	};
	const struct frame odd[] = { { "a;b\nc", FRAME_NATIVE }, { "", FRAME_NATIVE } };
	char path[] = "/tmp/sparkprof-test-folded-XXXXXX";
	int fd = mkstemp(path);
	const char *text;

	close(fd);
	CHECK(folded_profile_add(p, "java-1", NULL, stack, 4, 2) == 0, "add a stack");
	CHECK(folded_profile_add(p, "java-1", NULL, stack, 4, 3) == 0, "add it again");
	CHECK(folded_profile_add(p, "java-1", "worker-0", stack + 2, 2, 1) == 0,
	      "add with a thread frame");
	CHECK(folded_profile_add(p, "x-2", NULL, odd, 2, 1) == 0, "add awkward names");
	CHECK(folded_profile_add(p, NULL, NULL, NULL, 0, 1) == 0, "add an empty stack");
	CHECK(folded_profile_total(p) == 8, "total counts every sample");
	CHECK(folded_profile_write(p, path) == 0, "write");
	text = slurp(path);
	CHECK(strstr(text, "java-1;main;Foo.bar;read;do_sys_read_[k] 5\n") != NULL,
	      "root first, kernel frames suffixed, counts merged");
	CHECK(strstr(text, "java-1;worker-0;main;Foo.bar 1\n") != NULL, "thread frame");
	CHECK(strstr(text, "x-2;[unknown];a_b_c 1\n") != NULL,
	      "';' and newlines in names cannot split the line, empty names read [unknown]");
	CHECK(strstr(text, "[no stack] 1\n") != NULL, "an empty stack is kept and said");
	CHECK(access(strcat(strcpy(malloc(strlen(path) + 8), path), ".tmp"), F_OK) != 0,
	      "no temporary file left");
	CHECK(folded_profile_write_scaled(p, path, 3) == 0, "write scaled");
	text = slurp(path);
	CHECK(strstr(text, "do_sys_read_[k] 2\n") && !strstr(text, "worker-0"),
	      "counts divided and rounded, zeros left out");
	CHECK(folded_profile_write(p, "/proc/no-such-dir/x.folded") < 0,
	      "an unwritable path fails with a message");
	unlink(path);
	/* the types the texts were written with, for the flame graph pages */
	CHECK(folded_profile_frame_type(p, "Foo.bar", 7) == FRAME_JIT, "a JIT frame's type");
	CHECK(folded_profile_frame_type(p, "read", 4) == FRAME_NATIVE, "a native frame's type");
	CHECK(folded_profile_frame_type(p, "do_sys_read_[k]", 15) == FRAME_KERNEL,
	      "a kernel frame's type, under its folded text");
	CHECK(folded_profile_frame_type(p, "java-1", 6) == -1, "root labels have no type");
	{
		const struct frame interp[] = { { "Foo.bar", FRAME_INTERPRETED } };
		uint64_t sum = 0;

		CHECK(folded_profile_add(p, "java-1", NULL, interp, 1, 1) == 0, "add an interpreted twin");
		CHECK(folded_profile_frame_type(p, "Foo.bar", 7) == FRAME_JIT,
		      "a name seen JIT and interpreted reads as JIT");
		CHECK(folded_profile_foreach(p, 1, sum_counts, &sum) == 0 && sum == folded_profile_total(p),
		      "foreach visits every count (%llu)", (unsigned long long)sum);
	}
	folded_profile_free(p);
	TAP_DONE();
}

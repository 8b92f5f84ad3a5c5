/* test_cpu_list.c - CPU list parsing, and the machine's own online list. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "sampler/cpu_list.h"
#include "tap.h"

static int parse(const char *text, int *cpus, int max)
{
	return cpu_list_parse(text, strlen(text), cpus, max);
}

int main(void)
{
	int cpus[64], n;

	n = parse("0-3,5,7-8\n", cpus, 64);
	CHECK(n == 7 && cpus[0] == 0 && cpus[3] == 3 && cpus[4] == 5 && cpus[6] == 8,
	      "ranges and singles: %d", n);
	CHECK(parse("0", cpus, 64) == 1 && cpus[0] == 0, "one CPU");
	CHECK(parse("", cpus, 64) == -EINVAL, "empty list");
	CHECK(parse("3-1", cpus, 64) == -EINVAL, "descending range");
	CHECK(parse("0,0", cpus, 64) == -EINVAL, "repeated CPU");
	CHECK(parse("1,", cpus, 64) == -EINVAL, "trailing comma");
	CHECK(parse("a", cpus, 64) == -EINVAL, "not a number");
	CHECK(parse("0-", cpus, 64) == -EINVAL, "open range");
	CHECK(parse("0-99999", cpus, 64) == -E2BIG, "absurd CPU number");
	CHECK(parse("0-70", cpus, 64) == -E2BIG, "more CPUs than room");
	n = cpu_list_online(cpus, 64);
	CHECK(n == sysconf(_SC_NPROCESSORS_ONLN), "online CPUs match sysconf (%d)", n);
	TAP_DONE();
}

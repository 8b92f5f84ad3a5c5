/* test_proc_stat.c - the /proc/PID/stat starttime parser, and the start
 * time of live processes. */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proc/proc_stat.h"
#include "tap.h"

static void test_parse(void)
{
	const char *stat = "1234 (a) b) c) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4242 99 100\n";
	uint64_t ticks = 0;
	CHECK(proc_stat_starttime(stat, strlen(stat), &ticks) == 0 && ticks == 4242,
	      "starttime after a comm holding ') '");
	CHECK(proc_stat_starttime("1 (x) S 1 2", 11, &ticks) == -EINVAL, "a short stat is rejected");
	const char *last = "1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 77";
	CHECK(proc_stat_starttime(last, strlen(last), &ticks) == 0 && ticks == 77,
	      "starttime as the last field, without a newline");
	const char *big = "1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 18446744073709551616 0";
	CHECK(proc_stat_starttime(big, strlen(big), &ticks) == -EINVAL, "a starttime over 64 bits");
	const char *hex = "1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 1f 0";
	CHECK(proc_stat_starttime(hex, strlen(hex), &ticks) == -EINVAL, "a starttime not decimal");
	CHECK(proc_stat_starttime("no paren at all", 15, &ticks) == -EINVAL, "no comm");
}

static void test_live(void)
{
	uint64_t started = 0;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	uint64_t now_ns = (uint64_t)now.tv_sec * 1000000000ull + now.tv_nsec;
	CHECK(proc_start_monotonic_ns(getpid(), &started) == 0, "our own start time");
	/* starttime has clock-tick resolution. */
	CHECK(started <= now_ns && started + 60ull * 1000000000ull > now_ns,
	      "we started in the last minute, not in the future (%llu, now %llu)",
	      (unsigned long long)started, (unsigned long long)now_ns);
	CHECK(proc_start_monotonic_ns(0x3fffffff, &started) == -ENOENT, "no such process: -ENOENT");
}

int main(void)
{
	test_parse();
	test_live();
	TAP_DONE();
}

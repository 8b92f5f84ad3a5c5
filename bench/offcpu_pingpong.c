/* offcpu_pingpong.c - heavy context switching: two threads pass a byte back
 * and forth over two pipes, so each round trip blocks each thread once.
 *
 * usage: offcpu_pingpong SECONDS [DELAY_SECONDS [CPU]]
 * Waits DELAY seconds (a profiler attaches meanwhile), then counts round
 * trips for SECONDS and prints "round_trips_per_s R switches_per_s S", where
 * S is the two threads' context switches (voluntary + involuntary, from
 * /proc) per second. With CPU, both threads are pinned to it.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];
static volatile int stop;
static pid_t echo_tid;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("sched_setaffinity");
}

/* Voluntary + involuntary context switches of one thread of this process. */
static uint64_t thread_switches(pid_t tid)
{
	char path[64], line[128];
	uint64_t total = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long n;

		if (sscanf(line, "voluntary_ctxt_switches: %llu", &n) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %llu", &n) == 1)
			total += n;
	}
	fclose(f);
	return total;
}

static void *echo(void *arg)
{
	char c;

	pin(*(int *)arg);
	echo_tid = gettid();
	while (read(ping[0], &c, 1) == 1 && !stop)
		if (write(pong[1], &c, 1) != 1)
			break;
	return NULL;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 5;
	int delay = argc > 2 ? atoi(argv[2]) : 0;
	int cpu = argc > 3 ? atoi(argv[3]) : -1;
	uint64_t trips = 0, start, end, measure_from, switches0 = 0, switches1;
	pthread_t thread;
	char c = 'x';

	if (seconds <= 0 || pipe(ping) || pipe(pong)) {
		fprintf(stderr, "usage: offcpu_pingpong SECONDS [DELAY_SECONDS [CPU]]\n");
		return 2;
	}
	pin(cpu);
	if (pthread_create(&thread, NULL, echo, &cpu)) {
		perror("pthread_create");
		return 1;
	}
	start = now_ns();
	measure_from = start + (uint64_t)delay * 1000000000ULL;
	end = measure_from + (uint64_t)seconds * 1000000000ULL;
	for (int measuring = 0;;) {
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			return 1;
		if ((trips & 255) == 0) {
			uint64_t now = now_ns();

			if (!measuring && now >= measure_from) {
				measuring = 1;
				trips = 0;
				measure_from = now;
				switches0 = thread_switches(gettid()) + thread_switches(echo_tid);
			}
			if (now >= end)
				break;
		}
		trips++;
	}
	end = now_ns();
	switches1 = thread_switches(gettid()) + thread_switches(echo_tid);
	stop = 1;
	if (write(ping[1], &c, 1) != 1)
		return 1;
	pthread_join(thread, NULL);
	printf("round_trips_per_s %.0f switches_per_s %.0f\n",
	       trips * 1e9 / (end - measure_from), (switches1 - switches0) * 1e9 / (end - measure_from));
	return 0;
}

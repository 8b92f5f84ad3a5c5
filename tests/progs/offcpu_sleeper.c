/* offcpu_sleeper.c - a workload with known off-CPU behaviour.
 *
 *   sleeper: burns the CPU for PHASE_MS, then sleeps PHASE_MS in
 *            sleep_a_while(): off-CPU half of its wall time, SLEEPING.
 *   reader:  blocks reading a pipe in read_pipe_blocking(); the main thread
 *            writes a byte every WRITE_EVERY_MS (so main is the waker).
 *   napper:  sleeps SHORT_NAP_US at a time in short_nap(): intervals far
 *            under a 1 ms minimum.
 *   waiter:  blocks for good in wait_forever(), reading a pipe nobody
 *            writes: off the CPU before any profiler starts.
 *
 * The syscalls are inline assembly inlined into functions built with frame
 * pointers, so a frame-pointer walk of the user stack finds the named
 * functions whatever libc does with rbp: read_pipe_blocking() holds the
 * syscall itself; sleep_a_while() and short_nap() call nap(), whose frame
 * holds the return address into them.
 *
 * Prints "tid NAME TID" per thread, "sym NAME ADDR" per function (runtime
 * addresses: the test works out the load bias with nm), "addr sleep_clock
 * ADDR" (the sleeper's own account of its time in sleep_a_while), then
 * "ready".
 * Runs for argv[1] seconds (default 10).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PHASE_MS 20
#define WRITE_EVERY_MS 50
#define SHORT_NAP_US 100

static pthread_barrier_t started;
static pid_t tid_sleeper, tid_reader, tid_napper, tid_waiter;
static int pipe_fds[2], silent_fds[2];
static volatile unsigned long sink;

/* Time the sleeper spent in sleep_a_while(), for the test to read from
 * outside (process_vm_readv at the printed address): seq is odd while the
 * other fields change. */
struct sleep_clock {
	volatile uint64_t seq, done_ns, since_ns;
} sleep_clock;

static inline __attribute__((always_inline)) long raw_syscall3(long nr, long a, long b, long c)
{
	long ret;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "0"(nr), "D"(a), "S"(b), "d"(c)
		     : "rcx", "r11", "memory");
	return ret;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__attribute__((noinline)) static void nap(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	raw_syscall3(SYS_nanosleep, (long)&ts, 0, 0);
}

__attribute__((noinline)) void sleep_a_while(void)
{
	nap(PHASE_MS * 1000000L);
	sink++; /* keeps the call above from becoming a tail call */
}

__attribute__((noinline)) void burn_cpu(void)
{
	uint64_t end = now_ns() + PHASE_MS * 1000000ULL;

	while (now_ns() < end)
		for (int i = 0; i < 1000; i++)
			sink += i;
}

__attribute__((noinline)) long read_pipe_blocking(int fd, char *buf)
{
	long n = raw_syscall3(SYS_read, fd, (long)buf, 1);

	sink++;
	return n;
}

__attribute__((noinline)) long wait_forever(int fd, char *buf)
{
	long n = raw_syscall3(SYS_read, fd, (long)buf, 1);

	sink++;
	return n;
}

__attribute__((noinline)) void short_nap(void)
{
	nap(SHORT_NAP_US * 1000L);
	sink++;
}

static void *sleeper(void *arg)
{
	(void)arg;
	tid_sleeper = gettid();
	pthread_barrier_wait(&started);
	for (;;) {
		uint64_t t;

		burn_cpu();
		t = now_ns();
		sleep_clock.seq++;
		sleep_clock.since_ns = t;
		sleep_clock.seq++;
		sleep_a_while();
		sleep_clock.seq++;
		sleep_clock.done_ns += now_ns() - t;
		sleep_clock.since_ns = 0;
		sleep_clock.seq++;
	}
	return NULL;
}

static void *reader(void *arg)
{
	char c;

	(void)arg;
	tid_reader = gettid();
	pthread_barrier_wait(&started);
	while (read_pipe_blocking(pipe_fds[0], &c) > 0)
		;
	return NULL;
}

static void *waiter(void *arg)
{
	char c;

	(void)arg;
	tid_waiter = gettid();
	pthread_barrier_wait(&started);
	wait_forever(silent_fds[0], &c);
	return NULL;
}

static void *napper(void *arg)
{
	(void)arg;
	tid_napper = gettid();
	pthread_barrier_wait(&started);
	for (;;)
		short_nap();
	return NULL;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 10;
	void *(*bodies[])(void *) = { sleeper, reader, napper, waiter };
	pthread_t threads[4];
	uint64_t end;

	if (seconds <= 0 || pipe(pipe_fds) || pipe(silent_fds)) {
		fprintf(stderr, "usage: offcpu_sleeper [SECONDS]\n");
		return 2;
	}
	pthread_barrier_init(&started, NULL, 5);
	for (int i = 0; i < 4; i++)
		if (pthread_create(&threads[i], NULL, bodies[i], NULL)) {
			perror("pthread_create");
			return 1;
		}
	pthread_barrier_wait(&started);
	printf("tid main %d\ntid sleeper %d\ntid reader %d\ntid napper %d\ntid waiter %d\n",
	       (int)gettid(), (int)tid_sleeper, (int)tid_reader, (int)tid_napper,
	       (int)tid_waiter);
	printf("sym sleep_a_while %p\nsym read_pipe_blocking %p\nsym short_nap %p\n"
	       "sym wait_forever %p\n", (void *)sleep_a_while, (void *)read_pipe_blocking,
	       (void *)short_nap, (void *)wait_forever);
	printf("sym waiter %p\n", (void *)waiter);
	printf("addr sleep_clock %p\n", (void *)&sleep_clock);
	printf("ready\n");
	fflush(stdout);

	end = now_ns() + (uint64_t)seconds * 1000000000ULL;
	while (now_ns() < end) {
		struct timespec ts = { 0, WRITE_EVERY_MS * 1000000L };

		nanosleep(&ts, NULL);
		if (write(pipe_fds[1], "x", 1) != 1)
			break;
	}
	return 0;
}

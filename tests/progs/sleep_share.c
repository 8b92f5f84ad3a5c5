/* sleep_share - a thread that sleeps part of its time and burns CPU the rest.
 *
 * usage: sleep_share SECONDS BURN_MS SLEEP_MS [LINGER_S]
 * The "sleepy" thread alternates burn_phase() (BURN_MS of its own CPU time)
 * and sleep_phase() (nanosleep SLEEP_MS, issued from the function itself).
 * At the end it prints "sleep_share F": the fraction of the thread's wall
 * time spent inside sleep_phase, by its own clock, which tests compare with
 * the profiler's wall-clock profile; and "slept_s S", that time in seconds.
 * Then the main thread waits LINGER_S more: a profiler far behind (an
 * emulated VM on a busy host) can still read the process's maps.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double seconds = 5, burn_ms = 20, sleep_ms = 20, linger_s;
static volatile unsigned long sink;
static double share, slept;

static double now(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void burn_phase(void)
{
	double end = now(CLOCK_THREAD_CPUTIME_ID) + burn_ms / 1e3;
	unsigned long x = sink;

	while (now(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005UL + 1;
	sink = x;
}

/* The syscall is issued here, not in libc (whose wrapper has no frame
 * pointer), so the frame-pointer walk keeps this function. */
__attribute__((noinline)) void sleep_phase(void)
{
	struct timespec ts = { 0, (long)(sleep_ms * 1e6) };
	long ret;

#if defined(__x86_64__)
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(35L /* __NR_nanosleep */), "D"(&ts), "S"(0L)
			 : "rcx", "r11", "memory");
#else
	ret = nanosleep(&ts, NULL);
#endif
	(void)ret;
}

static void *sleepy(void *arg)
{
	double start = now(CLOCK_MONOTONIC), t;

	(void)arg;
	while ((t = now(CLOCK_MONOTONIC)) - start < seconds) {
		burn_phase();
		t = now(CLOCK_MONOTONIC);
		sleep_phase();
		slept += now(CLOCK_MONOTONIC) - t;
	}
	share = slept / (now(CLOCK_MONOTONIC) - start);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t thread;

	if (argc > 1)
		seconds = atof(argv[1]);
	if (argc > 2)
		burn_ms = atof(argv[2]);
	if (argc > 3)
		sleep_ms = atof(argv[3]);
	if (argc > 4)
		linger_s = atof(argv[4]);
	printf("%d\n", getpid());
	fflush(stdout);
	pthread_create(&thread, NULL, sleepy, NULL);
	pthread_setname_np(thread, "sleepy");
	pthread_join(thread, NULL);
	printf("sleep_share %.4f\nslept_s %.3f\n", share, slept);
	fflush(stdout);
	nanosleep(&(struct timespec){ (time_t)linger_s,
				      (long)((linger_s - (double)(time_t)linger_s) * 1e9) }, NULL);
	return 0;
}

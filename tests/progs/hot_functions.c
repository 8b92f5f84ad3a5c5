/* hot_functions - a workload with known hot spots for the profiler's tests.
 *
 * usage: hot_functions SECONDS [cpu]
 *   cpu: SECONDS of the main thread's CPU time, not of wall-clock time, so
 *        that a busy machine does not shorten its work;
 *   main thread:  burn_heavy() runs 3x the iterations of burn_light(), in
 *                 alternation, so it gets 3x the CPU time;
 *   reader thread: syscall_reader() reads /dev/zero, so its time is spent
 *                 in the kernel under read(2).
 * Prints its pid on the first line so tests can find it, and at the end
 * "loops N": the work done, for benchmarks that measure slowdown.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static volatile int stop;

__attribute__((noinline)) static void spin(unsigned long iterations)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < iterations; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

__attribute__((noinline)) void burn_heavy(void)
{
	spin(3 * 200000);
}

__attribute__((noinline)) void burn_light(void)
{
	spin(200000);
}

/* read(2) issued from this function itself: libc's wrapper has no frame
 * pointer, so a sample in the kernel would lose its caller's frame. */
static inline __attribute__((always_inline)) long raw_read(int fd, void *buf, unsigned long len)
{
	long ret;

#if defined(__x86_64__)
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(0L /* __NR_read */), "D"((long)fd), "S"(buf), "d"(len)
			 : "rcx", "r11", "memory");
#else
	ret = read(fd, buf, len);
#endif
	return ret;
}

__attribute__((noinline)) void syscall_reader(int fd)
{
	static char buf[1 << 20];

	while (!stop)
		if (raw_read(fd, buf, sizeof(buf)) < 0)
			break;
}

static void *reader_main(void *arg)
{
	int fd = open("/dev/zero", O_RDONLY);

	(void)arg;
	if (fd >= 0)
		syscall_reader(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 5;
	clockid_t clock = argc > 2 && !strcmp(argv[2], "cpu") ? CLOCK_THREAD_CPUTIME_ID
							    : CLOCK_MONOTONIC;
	struct timespec start, now;
	unsigned long loops = 0;
	pthread_t reader;

	printf("%d\n", getpid());
	fflush(stdout);
	pthread_create(&reader, NULL, reader_main, NULL);
	clock_gettime(clock, &start);
	do {
		burn_heavy();
		burn_light();
		loops++;
		clock_gettime(clock, &now);
	} while ((double)(now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
	stop = 1;
	pthread_join(reader, NULL);
	printf("loops %lu\n", loops);
	return 0;
}

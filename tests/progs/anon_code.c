/* anon_code.c - a process that runs code it made in anonymous memory and
 * names it in /tmp/perf-PID.map, as a JIT without frame pointers would:
 *     anon_code SECONDS
 * spins in "anon_spin" for SECONDS. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* mov rax, rdi; 1: dec rax; jnz 1b; ret */
static const unsigned char spin_code[] = { 0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3 };

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3;
	void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char path[64];
	struct timespec t0, t;
	FILE *map;

	if (page == MAP_FAILED)
		return 1;
	memcpy(page, spin_code, sizeof(spin_code));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC))
		return 1;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	map = fopen(path, "w");
	if (!map)
		return 1;
	fprintf(map, "%lx %zx anon_spin\n", (unsigned long)page, sizeof(spin_code));
	fclose(map);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		((void (*)(long))page)(20000000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	unlink(path);
	return 0;
}

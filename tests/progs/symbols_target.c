/* symbols_target.c - a process with functions of known names, for the
 * symbolizer tests.
 *
 * Prints "NAME 0xADDRESS" for each known function (and for the vDSO's
 * clock_gettime), then "ready".  Without arguments it then waits until its
 * stdin is closed; with --spin it keeps calling the functions (a CPU-bound
 * workload) until stdin is closed.
 */
#include <dlfcn.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

/* A function whose symbol says it is 2 bytes long, followed by code that no
 * symbol covers: a symbolizer must not name that code "sized_short". */
__asm__(".text\n"
	".globl sized_short\n"
	".type sized_short, @function\n"
	"sized_short:\n"
	"  nop\n  nop\n  nop\n  nop\n  nop\n  nop\n  nop\n  nop\n  ret\n"
	".size sized_short, 2\n");
void sized_short(void);

/* A C++-mangled name, to check demangling: sparkprof::Target::run(int). */
int target_run(int x) __asm__("_ZN9sparkprof6Target3runEi");

volatile unsigned long sink;

__attribute__((noinline)) int target_run(int x)
{
	for (int i = 0; i < 1000; i++)
		sink += (unsigned long)(x * i);
	return (int)sink;
}

__attribute__((noinline)) void symtarget_leaf_alpha(void)
{
	for (int i = 0; i < 10000; i++)
		sink += (unsigned long)i;
}

__attribute__((noinline)) void symtarget_middle_beta(void)
{
	symtarget_leaf_alpha();
	sink ^= 0x5a5a;
}

__attribute__((noinline)) void symtarget_outer_gamma(void)
{
	symtarget_middle_beta();
	target_run(3);
}

static int stdin_closed(int timeout_ms)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };
	char buf[64];

	if (poll(&p, 1, timeout_ms) <= 0)
		return 0;
	return read(0, buf, sizeof(buf)) <= 0;
}

int main(int argc, char **argv)
{
	void *vdso = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
	void *vdso_gettime = vdso ? dlsym(vdso, "__vdso_clock_gettime") : NULL;
	int spin = argc > 1 && strcmp(argv[1], "--spin") == 0;

	printf("symtarget_leaf_alpha %p\n", (void *)symtarget_leaf_alpha);
	printf("symtarget_middle_beta %p\n", (void *)symtarget_middle_beta);
	printf("symtarget_outer_gamma %p\n", (void *)symtarget_outer_gamma);
	printf("sized_short %p\n", (void *)sized_short);
	printf("target_run %p\n", (void *)target_run);
	printf("vdso_base %p\n", (void *)getauxval(AT_SYSINFO_EHDR));
	if (vdso_gettime)
		printf("vdso_clock_gettime %p\n", vdso_gettime);
	printf("ready\n");
	fflush(stdout);
	while (!stdin_closed(spin ? 0 : -1))
		symtarget_outer_gamma();
	return 0;
}

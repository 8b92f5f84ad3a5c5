/* test_steady_allocs.c - the per-sample path (naming a stack, then filing
 * it in the node's and a stage's folded and JFR outputs) allocates nothing
 * once its stacks have been seen: every address is named once and every
 * stack stored once.  malloc and friends are replaced here by counting
 * wrappers around glibc's own, so every allocation of the code under test
 * (and of libc on its behalf) is counted. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/profile_outputs.h"
#include "symbols/proc_symbolizer.h"
#include "symbols/stack_resolver.h"
#include "tap.h"

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void __libc_free(void *p);

static unsigned long allocations;

void *malloc(size_t n)
{
	allocations++;
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	allocations++;
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	allocations++;
	return __libc_realloc(p, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	allocations++;
	*out = __libc_memalign(align, n);
	return *out ? 0 : 12; /* ENOMEM */
}

void free(void *p)
{
	__libc_free(p);
}

/* Code of this program and of libc, as a sampled stack would hold it. */
__attribute__((noinline)) static int leaf_a(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) static int leaf_b(int x)
{
	return x * 5 + 2;
}

/* A few kernel text addresses from /proc/kallsyms. */
static int kernel_addresses(uint64_t *out, int max)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512];
	int n = 0;

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type;

		if (sscanf(line, "%llx %c", &addr, &type) == 2 && addr && (type == 'T' || type == 't'))
			out[n++] = addr + 4;
		/* Spread them out. */
		for (int skip = 0; skip < 997 && fgets(line, sizeof(line), f); skip++)
			;
	}
	fclose(f);
	return n;
}

#define NSTACKS 6

struct test_stack {
	uint64_t kernel[4], user[4];
	size_t nkernel, nuser;
};

static void remove_tree(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		printf("# could not remove %s\n", dir);
}

int main(void)
{
	uint64_t kaddrs[8];
	int nk = kernel_addresses(kaddrs, 8);
	struct stack_resolver *r = stack_resolver_new();
	char dir[] = "/tmp/sparkprof-test-allocs-XXXXXX";
	struct output_settings settings = {
		.dir = mkdtemp(dir),
		.cpu_period_ns = 1000000,
		.wall = true,
		.wall_interval_ns = 10000000,
		.off_cpu = true,
		.jfr = true,
		.per_thread = true,
	};
	struct output_label label = { "scope", "node" };
	struct profile_outputs *outs = profile_outputs_new(&settings);
	struct profile_output *node = outs ? profile_outputs_get(outs, "all", &label, 1) : NULL;
	struct profile_output *stage = outs ? profile_outputs_get(outs, "exec-1/stage-3", &label, 1) : NULL;
	struct proc_symbolizer *self = r ? stack_resolver_inspect(r, getpid()) : NULL;
	struct user_names names = { .symbolizer = self };
	struct test_stack stacks[NSTACKS];
	static struct frame frames[STACK_MAX_FRAMES];
	unsigned long before, samples = 0;
	char thread_name[16];
	int failed = 0;

	CHECK(nk >= 4, "kernel text addresses read from /proc/kallsyms");
	CHECK(r && self && outs && node && stage, "resolver, own process and outputs set up");
	if (!(nk >= 4 && r && self && outs && node && stage))
		TAP_DONE();
	for (int i = 0; i < NSTACKS; i++) {
		struct test_stack *s = &stacks[i];

		s->nkernel = (size_t)(i % 3);
		for (size_t k = 0; k < s->nkernel; k++)
			s->kernel[k] = kaddrs[(i + (int)k) % nk];
		s->user[0] = (uint64_t)(uintptr_t)(i % 2 ? leaf_a : leaf_b) + 1;
		s->user[1] = (uint64_t)(uintptr_t)main + 8;
		s->user[2] = (uint64_t)(uintptr_t)memcpy + (uint64_t)i + 1;
		s->user[3] = (uint64_t)(uintptr_t)qsort + 3;
		s->nuser = 2 + (size_t)(i % 3);
	}

	/* Files n samples cycling through the stacks, on- and off-CPU, each
	 * in both outputs, under a thread name held in a reused buffer (as
	 * the recorder's is). */
#define FILE_SAMPLES(n)                                                                   \
	for (unsigned long j = 0; j < (n); j++, samples++) {                                  \
		const struct test_stack *ts = &stacks[j % NSTACKS];                               \
		struct resolved_sample s = {                                                  \
			.timestamp_ns = 1000000 + samples * 1000,                             \
			.pid = getpid(), .tid = getpid() + (pid_t)(j % 3), .ns_tid = -1,      \
			.kind = j % 4 == 3 ? SAMPLE_OFF_CPU : SAMPLE_CPU,                     \
			.off_cpu_ns = j % 4 == 3 ? 3000000 : 0,                              \
			.thread_name = thread_name, .root_label = "test-1",                   \
			.frames = frames,                                                     \
		};                                                                            \
		snprintf(thread_name, sizeof(thread_name), "worker-%lu", j % 3);              \
		s.nframes = stack_resolver_resolve(r, &names, s.timestamp_ns, ts->kernel,      \
						   ts->nkernel, ts->user, ts->nuser, frames,   \
						   STACK_MAX_FRAMES);                          \
		failed |= profile_output_add(outs, node, &s) != 0;                            \
		failed |= profile_output_add(outs, stage, &s) != 0;                           \
	}

	/* First sight of every address and stack, and JFR buffers grown to a
	 * chunk's size: a chunk is written and the next one reuses them. */
	FILE_SAMPLES(400000);
	before = allocations;
	FILE_SAMPLES(100000);
	CHECK(!failed, "every sample filed");
	CHECK(allocations == before,
	      "no allocation per sample on the steady path (%lu over 100000 samples)",
	      allocations - before);
	CHECK(stack_resolver_get_stats(r)->user_unknown == 0, "own code named");

	/* What the steady path saves is real work: a stack not seen before
	 * is stored (allocating as its tables grow). */
	before = allocations;
	for (int i = 0; i < 2000; i++) {
		struct frame f[2] = { { "[unknown]", FRAME_NATIVE }, { "main", FRAME_NATIVE } };
		struct resolved_sample s = {
			.timestamp_ns = 1000000 + samples++ * 1000, .pid = 1, .tid = 1,
			.kind = SAMPLE_CPU, .thread_name = "t", .root_label = thread_name,
			.frames = f, .nframes = 2,
		};

		snprintf(thread_name, sizeof(thread_name), "new-%d", i);
		profile_output_add(outs, node, &s);
	}
	CHECK(allocations > before, "new stacks are stored (%lu allocations for 2000)",
	      allocations - before);

	CHECK(profile_outputs_write(outs) == 0, "outputs written");
	profile_outputs_free(outs);
	proc_symbolizer_free(self);
	stack_resolver_free(r);
	remove_tree(dir);
	TAP_DONE();
}

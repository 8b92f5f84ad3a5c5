/* test_steady_allocs.c - the per-sample path (naming a stack, then adding
 * it with its labels to the sample store's open segment) allocates nothing
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

#include "output/sample_store.h"
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
	struct sample_store_settings settings = {
		.dir = mkdtemp(dir),
		.info = { .flags = STORE_PER_THREAD | STORE_WALL | STORE_OFF_CPU,
			  .cpu_period_ns = 1000000, .wall_interval_ns = 10000000 },
		.segment_bytes = SIZE_MAX,
		.segment_ns = UINT64_MAX,
	};
	struct sample_store *store = sample_store_open(&settings);
	struct proc_symbolizer *self = r ? stack_resolver_inspect(r, getpid()) : NULL;
	struct user_names names = { .symbolizer = self };
	struct test_stack stacks[NSTACKS];
	static struct frame frames[STACK_MAX_FRAMES];
	unsigned long before, samples = 0;
	char thread_name[16];
	int failed = 0;

	CHECK(nk >= 4, "kernel text addresses read from /proc/kallsyms");
	CHECK(r && self && store, "resolver, own process and store set up");
	if (!(nk >= 4 && r && self && store))
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

	/* Files n samples cycling through the stacks, on- and off-CPU, of a
	 * stage's task thread, under a thread name held in a reused buffer (as
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
		struct sample_labels l = { .pid = s.pid, .tid = s.tid, .process = "test-1",  \
					   .thread = thread_name, .app_id = "app-1",           \
					   .executor_id = "1", .stage = 3, .attempt = 0,       \
					   .task = (int64_t)(j % 3), .flags = LABEL_EXECUTOR_VIEWS }; \
		failed |= sample_store_add(store, &s, &l) != 0;                               \
	}

	/* First sight of every address, stack and label, and the segment's
	 * record array grown past what follows. */
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
			.kind = SAMPLE_CPU, .thread_name = "t", .frames = f, .nframes = 2,
		};
		struct sample_labels l = { .pid = 1, .tid = 1, .process = thread_name, .thread = "t",
					   .app_id = "", .executor_id = "", .stage = -1,
					   .attempt = -1, .task = -1 };

		snprintf(thread_name, sizeof(thread_name), "new-%d", i);
		sample_store_add(store, &s, &l);
	}
	CHECK(allocations > before, "new labels are stored (%lu allocations for 2000)",
	      allocations - before);

	CHECK(sample_store_finish(store) == 0, "the segment is written");
	sample_store_free(store);
	proc_symbolizer_free(self);
	stack_resolver_free(r);
	remove_tree(dir);
	TAP_DONE();
}

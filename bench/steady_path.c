/* steady_path.c - user-space cost of one sample after it left the ring
 * buffer: naming its stack (stack_resolver: kernel addresses from
 * /proc/kallsyms, user addresses in this program and libc) and adding it
 * with a stage's labels to the sample store, then the time to write every
 * view (the node's, the executor's, the stage's: folded, wall folded, JFR,
 * pages) from the store, as at the end of a recording.
 *
 * usage: steady_path SAMPLES [STACKS] [KERNEL_DEPTH] [USER_DEPTH]
 * (defaults 1000000 5000 8 32).  Needs root for kernel symbol addresses.
 * Prints CPU microseconds per sample, the write time and the peak RSS. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "output/sample_store.h"
#include "output/views.h"
#include "symbols/proc_symbolizer.h"
#include "symbols/stack_resolver.h"
#include "bench_clock.h"

/* Every 8th text symbol of the kernel, as return addresses inside them. */
static int kernel_addresses(uint64_t *out, int max)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512];
	int n = 0, i = 0;

	while (f && n < max && fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type;

		if (i++ % 8 == 0 && sscanf(line, "%llx %c", &addr, &type) == 2 && addr &&
		    (type == 'T' || type == 't') && !strchr(line, '['))
			out[n++] = addr + 4;
	}
	if (f)
		fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	long nsamples = argc > 1 ? atol(argv[1]) : 1000000;
	int nstacks = argc > 2 ? atoi(argv[2]) : 5000;
	int kdepth = argc > 3 ? atoi(argv[3]) : 8, udepth = argc > 4 ? atoi(argv[4]) : 32;
	static uint64_t kaddrs[4096];
	int nk = kernel_addresses(kaddrs, 4096);
	uint64_t *kst = calloc((size_t)nstacks * kdepth, sizeof(uint64_t));
	uint64_t *ust = calloc((size_t)nstacks * udepth, sizeof(uint64_t));
	static struct frame frames[STACK_MAX_FRAMES];
	char dir[] = "/tmp/sparkprof-bench-XXXXXX", tname[16], cmd[64];
	struct sample_store_settings settings = {
		.info = { .flags = STORE_WALL, .cpu_period_ns = 1000000,
			  .wall_interval_ns = 10000000, .frequency_hz = 1000 },
		.segment_bytes = 16u << 20, .segment_ns = UINT64_MAX,
	};
	struct views_settings vs = { .jfr = true, .html = true, .attribution = "thread" };
	struct stack_resolver *r;
	struct sample_store *store;
	struct store_reader *reader;
	struct views *views = NULL;
	char path[64];
	long rss_before, rss_added;
	struct user_names names;
	double cpu0, cpu1, cpu2, wall1, wall2;
	int err;

	if (nk < 16 || !kst || !ust || nstacks < 1 || kdepth < 0 || udepth < 1) {
		fprintf(stderr, "steady_path: needs readable kernel addresses (root) and sane sizes\n");
		return 2;
	}
	for (int i = 0; i < nstacks; i++) {
		for (int d = 0; d < kdepth; d++)
			kst[(size_t)i * kdepth + d] = kaddrs[(i * 31 + d * 17) % nk];
		/* Return addresses spread over 94 KB of libc's text after
		 * printf (memcpy, used before, sits near the end of the text:
		 * a third of them fell in data, never cached, as garbage is). */
		for (int d = 0; d < udepth; d++)
			ust[(size_t)i * udepth + d] =
				(uint64_t)(uintptr_t)printf + 0x40u * (unsigned)((i % 97) * 13 + d * 7) + 1;
		ust[(size_t)i * udepth] = (uint64_t)(uintptr_t)printf + (uint64_t)(i % 500);
	}
	settings.dir = mkdtemp(dir);
	r = stack_resolver_new();
	store = settings.dir ? sample_store_open(&settings) : NULL;
	if (!r || !store)
		return 1;
	vs.dir = settings.dir;
	names = (struct user_names){ .symbolizer = stack_resolver_inspect(r, getpid()) };
	rss_before = status_kib("VmRSS:");
	cpu0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
	for (long j = 0; j < nsamples; j++) {
		int i = (int)(((uint64_t)j * 2654435761u) % (uint64_t)nstacks);
		struct resolved_sample s = {
			.timestamp_ns = 1000000 + (uint64_t)j * 50000, .pid = 77, .tid = 78 + (pid_t)(j % 5),
			.kind = SAMPLE_CPU, .thread_name = tname, .frames = frames,
		};
		struct sample_labels l = { .pid = 77, .tid = s.tid, .process = "java-77",
					   .thread = tname, .app_id = "app-1", .executor_id = "1",
					   .stage = 3, .attempt = 0, .task = j % 5,
					   .flags = LABEL_EXECUTOR_VIEWS };

		snprintf(tname, sizeof(tname), "worker-%ld", j % 5);
		s.nframes = stack_resolver_resolve(r, &names, s.timestamp_ns, kst + (size_t)i * kdepth,
						   (size_t)kdepth, ust + (size_t)i * udepth,
						   (size_t)udepth, frames, STACK_MAX_FRAMES);
		sample_store_add(store, &s, &l);
		sample_store_tick(store, s.timestamp_ns);
	}
	cpu1 = seconds(CLOCK_PROCESS_CPUTIME_ID);
	rss_added = status_kib("VmRSS:");
	wall1 = seconds(CLOCK_MONOTONIC);
	err = sample_store_finish(store);
	snprintf(path, sizeof(path), "%s/%s", dir, STORE_FILE_NAME);
	reader = err ? NULL : store_reader_open(path);
	views = reader ? views_write(reader, &vs) : NULL;
	err = err || !views || views_first_error(views);
	store_reader_close(reader);
	wall2 = seconds(CLOCK_MONOTONIC);
	cpu2 = seconds(CLOCK_PROCESS_CPUTIME_ID);
	printf("steady_path: %ld samples over %d stacks (%d+%d frames), 3 views: "
	       "%.2f us CPU per sample (segments closed included); RSS +%ld MiB with every "
	       "sample added; writing every view %.3f s (%.3f s CPU)%s; peak RSS %ld MiB\n",
	       nsamples, nstacks, kdepth, udepth, (cpu1 - cpu0) * 1e6 / (double)nsamples,
	       (rss_added - rss_before) / 1024, wall2 - wall1, cpu2 - cpu1, err ? " FAILED" : "",
	       status_kib("VmHWM:") / 1024);
	views_free(views);
	sample_store_free(store);
	proc_symbolizer_free(names.symbolizer);
	stack_resolver_free(r);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) || err;
}

/* test_bpf_offcpu.c - the off-CPU tracer on the real kernel.
 *
 * Loads the sampler (filtering on one target) and the off-CPU tracer on its
 * maps, profiles build/progs/offcpu_sleeper for a few seconds and checks
 * what arrives: the sleeping thread's intervals, their state and stacks, the
 * pipe reader, threads blocked since before the start or before their
 * process became a target, the minimum duration, and that CPU samples plus
 * off-CPU time cover the sleeping thread's wall time.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sampler/bpf_offcpu.h"
#include "sampler/bpf_sampler.h"
#include "sampler/kernel_features.h"
#include "symbols/kallsyms.h"
#include "tap.h"

#define WORKLOAD "build/progs/offcpu_sleeper"
#define FREQUENCY_HZ 1000
#define MIN_OFF_CPU_NS 1000000ULL
#define WINDOW_NS 3000000000ULL

struct symbol {
	const char *name;
	uint64_t start, end; /* runtime addresses in the workload */
};

enum { SYM_SLEEP, SYM_READ, SYM_SHORT, SYM_WAIT, SYM_WAITER, NR_SYMS };

struct thread_stats {
	uint64_t cpu_samples;         /* in the window */
	uint64_t off_ns;              /* all off-CPU time, clipped to the window */
	uint64_t events;
	uint64_t in_func_events;      /* user stack has the thread's function */
	uint64_t in_func_sleeping;    /* ... and state SLEEPING */
	uint64_t in_func_off_ns;      /* their time, clipped to the window */
	uint64_t kernel_frame_events; /* kernel stack names the expected syscall */
	uint64_t waker_matches;       /* waker_tid is the expected waker (0: unknown) */
	uint64_t preempted_elsewhere; /* not in the function, state PREEMPTED */
};

struct run {
	pid_t pid, tid_main, tid_sleeper, tid_reader, tid_napper, tid_waiter;
	struct symbol syms[NR_SYMS];
	uint64_t t0, t1;
	struct kallsyms *ks;
	struct thread_stats sleeper, reader, napper, waiter;
	uint64_t waiter_first_ts;     /* its first interval's start */
	bool waiter_walked;           /* its user stack goes on to waiter() */
	uint64_t sleep_clock_addr;    /* the workload's struct sleep_clock */
	uint64_t slept0, slept1;      /* its time in sleep_a_while at t0, t1 */
	uint64_t queued0, queued1;    /* its time waiting on a runqueue at t0, t1 */
	uint64_t off_events, cpu_records, under_min, foreign;
	uint64_t sized, missized;     /* records whose length is / is not their frames' */
	/* A process made a target while running: `sleep`, blocked already. */
	pid_t late_pid;
	uint64_t late_seed0, late_seed1, late_events, late_first_ts, late_off_ns;
	bool late_sleeping_in_nanosleep, late_has_ustack;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

static bool ustack_has(const struct sp_stacks *st, const struct symbol *sym)
{
	for (int i = 0; i < st->ustack_bytes / 8 && i < SP_MAX_STACK_DEPTH; i++)
		if (st->frames[i] >= sym->start && st->frames[i] < sym->end)
			return true;
	return false;
}

/* The kernel frames follow the user frames the record holds. */
static bool kstack_names(const struct run *r, const struct sp_stacks *st, const char *word)
{
	const __u64 *kstack = st->frames + (st->ustack_bytes > 0 ? st->ustack_bytes / 8 : 0);

	for (int i = 0; i < st->kstack_bytes / 8 && i < SP_MAX_STACK_DEPTH; i++) {
		const char *name = kallsyms_lookup(r->ks, kstack[i]);

		if (name && strstr(name, word))
			return true;
	}
	return false;
}

static void count_off_cpu(struct run *r, const struct sp_off_cpu_event *e,
			  struct thread_stats *t, const struct symbol *sym,
			  const char *kernel_word, pid_t waker)
{
	uint64_t in_window = overlap(e->hdr.timestamp_ns, e->hdr.timestamp_ns + e->off_cpu_ns,
				     r->t0, r->t1);

	t->events++;
	t->off_ns += in_window;
	if (!ustack_has(&e->stacks, sym)) {
		if (e->state == SP_STATE_PREEMPTED)
			t->preempted_elsewhere++;
		return;
	}
	t->in_func_events++;
	t->in_func_off_ns += in_window;
	if (e->state == SP_STATE_SLEEPING)
		t->in_func_sleeping++;
	if (kstack_names(r, &e->stacks, kernel_word))
		t->kernel_frame_events++;
	if ((pid_t)e->waker_tid == waker)
		t->waker_matches++;
}

static struct thread_stats *thread_of(struct run *r, pid_t tid)
{
	if (tid == r->tid_sleeper)
		return &r->sleeper;
	if (tid == r->tid_reader)
		return &r->reader;
	if (tid == r->tid_napper)
		return &r->napper;
	return NULL;
}

/* A record is its fixed part and the frames it holds, nothing more. */
static void check_size(struct run *r, const struct sp_stacks *st, size_t fixed, size_t size)
{
	size_t frames = (st->ustack_bytes > 0 ? (size_t)st->ustack_bytes : 0) +
			(st->kstack_bytes > 0 ? (size_t)st->kstack_bytes : 0);

	if (size == fixed + frames)
		r->sized++;
	else
		r->missized++;
}

static int on_record(void *ctx, const void *data, size_t size)
{
	struct run *r = ctx;
	const struct sp_event_header *hdr = data;

	if (size < sizeof(*hdr))
		return 0;
	if (hdr->kind == SP_EVENT_CPU_SAMPLE && size >= sizeof(struct sp_cpu_sample))
		check_size(r, &((const struct sp_cpu_sample *)data)->stacks,
			   sizeof(struct sp_cpu_sample), size);
	else if (hdr->kind == SP_EVENT_OFF_CPU && size >= sizeof(struct sp_off_cpu_event))
		check_size(r, &((const struct sp_off_cpu_event *)data)->stacks,
			   sizeof(struct sp_off_cpu_event), size);
	if ((pid_t)hdr->tgid == r->late_pid && r->late_pid && hdr->kind == SP_EVENT_OFF_CPU &&
	    size >= sizeof(struct sp_off_cpu_event)) {
		const struct sp_off_cpu_event *e = data;

		r->off_events++;
		if (!r->late_events++) {
			r->late_first_ts = hdr->timestamp_ns;
			r->late_sleeping_in_nanosleep = e->state == SP_STATE_SLEEPING &&
							kstack_names(r, &e->stacks, "nanosleep");
			/* /bin/sleep has no frame pointers: the instruction
			 * pointer is all a walk can promise. */
			r->late_has_ustack = e->stacks.ustack_bytes >= 8 &&
					     e->stacks.frames[0] < 0x800000000000ULL;
		}
		r->late_off_ns += overlap(hdr->timestamp_ns, hdr->timestamp_ns + e->off_cpu_ns,
					  r->t0, r->t1);
		return 0;
	}
	if ((pid_t)hdr->tgid != r->pid && (pid_t)hdr->tgid != r->late_pid)
		r->foreign++;
	if (hdr->kind == SP_EVENT_CPU_SAMPLE) {
		struct thread_stats *t = thread_of(r, hdr->tid);

		r->cpu_records++;
		if (t && hdr->timestamp_ns >= r->t0 && hdr->timestamp_ns < r->t1)
			t->cpu_samples++;
	} else if (hdr->kind == SP_EVENT_OFF_CPU && size >= sizeof(struct sp_off_cpu_event)) {
		const struct sp_off_cpu_event *e = data;

		r->off_events++;
		if (e->off_cpu_ns < MIN_OFF_CPU_NS)
			r->under_min++;
		if ((pid_t)hdr->tid == r->tid_sleeper)
			count_off_cpu(r, e, &r->sleeper, &r->syms[SYM_SLEEP], "nanosleep", 0);
		else if ((pid_t)hdr->tid == r->tid_reader)
			count_off_cpu(r, e, &r->reader, &r->syms[SYM_READ], "read", 0);
		else if ((pid_t)hdr->tid == r->tid_napper)
			count_off_cpu(r, e, &r->napper, &r->syms[SYM_SHORT], "nanosleep", 0);
		else if ((pid_t)hdr->tid == r->tid_waiter) {
			if (!r->waiter.events) {
				r->waiter_first_ts = hdr->timestamp_ns;
				r->waiter_walked = ustack_has(&e->stacks, &r->syms[SYM_WAITER]);
			}
			count_off_cpu(r, e, &r->waiter, &r->syms[SYM_WAIT], "read", 0);
		}
	}
	return 0;
}

/* Link-time address and size of each symbol, from nm; the workload printed
 * its runtime addresses, so PIE or not, bias = runtime - link. */
static int resolve_symbols(struct run *r, const uint64_t runtime[NR_SYMS])
{
	char line[512];
	int found = 0;
	FILE *nm = popen("nm -S --defined-only " WORKLOAD, "r");

	if (!nm)
		return -errno;
	while (fgets(line, sizeof(line), nm)) {
		unsigned long long addr, size;
		char type, name[256];

		if (sscanf(line, "%llx %llx %c %255s", &addr, &size, &type, name) != 4)
			continue;
		for (int i = 0; i < NR_SYMS; i++) {
			if (strcmp(name, r->syms[i].name))
				continue;
			r->syms[i].start = runtime[i];
			r->syms[i].end = runtime[i] + size;
			found++;
		}
	}
	pclose(nm);
	return found == NR_SYMS ? 0 : -ENOENT;
}

/* Starts the workload and reads its tids and function addresses. */
static int start_workload(struct run *r)
{
	uint64_t runtime[NR_SYMS] = { 0 };
	int fds[2];
	char line[256];
	FILE *out;

	if (pipe(fds))
		return -errno;
	r->pid = fork();
	if (r->pid < 0)
		return -errno;
	if (r->pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execl(WORKLOAD, WORKLOAD, "30", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	out = fdopen(fds[0], "r");
	while (out && fgets(line, sizeof(line), out)) {
		char name[64];
		unsigned long long value;
		int tid;

		if (!strcmp(line, "ready\n"))
			break;
		if (sscanf(line, "tid %63s %d", name, &tid) == 2) {
			if (!strcmp(name, "main"))
				r->tid_main = tid;
			else if (!strcmp(name, "sleeper"))
				r->tid_sleeper = tid;
			else if (!strcmp(name, "reader"))
				r->tid_reader = tid;
			else if (!strcmp(name, "napper"))
				r->tid_napper = tid;
			else if (!strcmp(name, "waiter"))
				r->tid_waiter = tid;
		} else if (sscanf(line, "addr sleep_clock %llx", &value) == 1) {
			r->sleep_clock_addr = value;
		} else if (sscanf(line, "sym %63s %llx", name, &value) == 2) {
			for (int i = 0; i < NR_SYMS; i++)
				if (!strcmp(name, r->syms[i].name))
					runtime[i] = value;
		}
	}
	if (out)
		fclose(out);
	if (!r->sleep_clock_addr || !r->tid_sleeper || !r->tid_reader || !r->tid_napper || !r->tid_waiter || !r->tid_main)
		return -EPROTO;
	return resolve_symbols(r, runtime);
}

/* The sleeper's time in sleep_a_while up to now, from its own clock. */
static int read_sleep_clock(const struct run *r, uint64_t *slept)
{
	struct { uint64_t seq, done_ns, since_ns; } a, b;
	struct iovec remote = { (void *)r->sleep_clock_addr, sizeof(a) };

	for (int tries = 0; tries < 1000; tries++) {
		struct iovec la = { &a, sizeof(a) }, lb = { &b, sizeof(b) };
		uint64_t now = now_ns();

		if (process_vm_readv(r->pid, &la, 1, &remote, 1, 0) != sizeof(a) ||
		    process_vm_readv(r->pid, &lb, 1, &remote, 1, 0) != sizeof(b))
			return -errno;
		if (a.seq & 1 || memcmp(&a, &b, sizeof(a)))
			continue;
		*slept = a.done_ns + (a.since_ns ? now - a.since_ns : 0);
		return 0;
	}
	return -EAGAIN;
}

/* The sleeper's time runnable but waiting for a CPU, in ns (the second
 * field of schedstat); 0 when unreadable. */
static uint64_t read_queued(const struct run *r)
{
	char path[64];
	unsigned long long run = 0, queued = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", r->pid, r->tid_sleeper);
	f = fopen(path, "r");
	if (f && fscanf(f, "%llu %llu", &run, &queued) != 2)
		queued = 0;
	if (f)
		fclose(f);
	return queued;
}

static pid_t spawn_sleep(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		execlp("sleep", "sleep", "60", (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void poll_until(struct bpf_sampler *s, uint64_t deadline)
{
	while (now_ns() < deadline)
		bpf_sampler_poll(s, 50);
}

/* Whole-node tracing (no filter): what arrives from whom. */
struct node_run {
	pid_t self, workload;
	uint64_t self_records, workload_off_cpu, kthread_off_cpu, off_cpu;
};

static int on_node_record(void *ctx, const void *data, size_t size)
{
	struct node_run *n = ctx;
	const struct sp_event_header *hdr = data;

	if (size < sizeof(*hdr))
		return 0;
	if ((pid_t)hdr->tgid == n->self)
		n->self_records++;
	if (hdr->kind != SP_EVENT_OFF_CPU)
		return 0;
	n->off_cpu++;
	if ((pid_t)hdr->tgid == n->workload)
		n->workload_off_cpu++;
	/* Kernel threads every machine has, switching all the time. */
	if (!strncmp(hdr->comm, "kworker/", 8) || !strncmp(hdr->comm, "ksoftirqd/", 10) ||
	    !strncmp(hdr->comm, "rcu_", 4) || !strncmp(hdr->comm, "migration/", 10))
		n->kthread_off_cpu++;
	return 0;
}

/* This machine's kernel has every part (test_kernel_features checks): the
 * tracer here walks JVMs and seeds blocked threads, as on any such kernel. */
static const struct kernel_features *this_kernel(void)
{
	static struct kernel_features kernel;

	if (!kernel.release[0])
		kernel_features_probe(&kernel);
	return &kernel;
}

/* No filter: every process but the profiler's own, no kernel threads. */
static void check_whole_node(pid_t workload)
{
	struct node_run n = { .self = getpid(), .workload = workload };
	struct bpf_sampler_options sopts = {
		.frequency_hz = 99,
		.ringbuf_bytes = 8 << 20,
		.hotspot_walk = true,
		.kernel = this_kernel(),
		.on_record = on_node_record,
		.ctx = &n,
	};
	struct bpf_offcpu_options oopts = { .min_off_cpu_ns = MIN_OFF_CPU_NS,
					    .ringbuf_bytes = 8 << 20, .hotspot_walk = true,
					    .kernel = this_kernel() };
	struct bpf_sampler_fds fds;
	struct bpf_sampler *sampler = bpf_sampler_open(&sopts);
	struct bpf_offcpu *offcpu = NULL;
	int err = -1;

	if (sampler) {
		bpf_sampler_shared_fds(sampler, &fds);
		offcpu = bpf_offcpu_open(&fds, &oopts);
	}
	if (offcpu)
		err = bpf_offcpu_start(offcpu);
	CHECK(err == 0, "whole-node tracer starts");
	if (!err) {
		/* The profiler's own threads wait here, over and over. */
		poll_until(sampler, now_ns() + 500000000ULL);
		bpf_offcpu_stop(offcpu);
		poll_until(sampler, now_ns() + 100000000ULL);
	}
	bpf_offcpu_close(offcpu);
	bpf_sampler_close(sampler);
	printf("# whole node: %llu off-CPU records, %llu from the workload\n",
	       (unsigned long long)n.off_cpu, (unsigned long long)n.workload_off_cpu);
	CHECK(n.workload_off_cpu > 0, "whole node: the workload's intervals arrive");
	CHECK(n.self_records == 0, "whole node: nothing of the profiler itself (%llu)",
	      (unsigned long long)n.self_records);
	CHECK(n.kthread_off_cpu == 0, "whole node: no kernel thread's intervals (%llu)",
	      (unsigned long long)n.kthread_off_cpu);
}


int main(void)
{
	struct run r = {
		.syms = { { .name = "sleep_a_while" }, { .name = "read_pipe_blocking" },
			  { .name = "short_nap" }, { .name = "wait_forever" },
			  { .name = "waiter" } },
	};
	struct bpf_sampler_options sopts = {
		.frequency_hz = FREQUENCY_HZ,
		.filter_tgids = true,
		.ringbuf_bytes = 8 << 20,
		.hotspot_walk = true,
		.kernel = this_kernel(),
		.on_record = on_record,
		.ctx = &r,
	};
	struct bpf_offcpu_options oopts = {
		.filter_tgids = true,
		.min_off_cpu_ns = MIN_OFF_CPU_NS,
		.ringbuf_bytes = 8 << 20,
		.hotspot_walk = true,
		.kernel = this_kernel(),
	};
	struct bpf_sampler_fds fds;
	struct bpf_sampler *sampler;
	struct bpf_offcpu *offcpu;
	uint64_t counters[SP_CNT_MAX];
	double window, queued, share, slept_share, cover;
	int err;

	r.ks = kallsyms_load("/proc/kallsyms");
	CHECK(r.ks != NULL, "kernel symbols load");
	err = start_workload(&r);
	CHECK(err == 0, "workload %s starts and reports its tids and symbols (%s)", WORKLOAD,
	      strerror(-err));
	if (err || !r.ks)
		goto out;

	sampler = bpf_sampler_open(&sopts);
	CHECK(sampler != NULL, "sampler loads");
	if (!sampler)
		goto out;
	/* CHECK evaluates its condition twice: no calls inside. */
	err = bpf_sampler_add_target(sampler, r.pid);
	CHECK(err == 0, "workload is the target");
	err = bpf_sampler_mark_known(sampler, r.pid);
	CHECK(err == 0, "workload is known");
	bpf_sampler_shared_fds(sampler, &fds);
	offcpu = bpf_offcpu_open(&fds, &oopts);
	CHECK(offcpu != NULL, "off-CPU tracer loads on the sampler's maps");
	if (!offcpu) {
		bpf_sampler_close(sampler);
		goto out;
	}
	err = bpf_offcpu_prog_fd(offcpu);
	CHECK(err >= 0, "off-CPU program has an fd");
	err = bpf_sampler_start(sampler);
	CHECK(err == 0, "sampler starts");
	err = bpf_offcpu_start(offcpu);
	CHECK(err == 0, "off-CPU tracer starts");
	err = bpf_offcpu_start(offcpu);
	CHECK(err == -EALREADY, "a second start is refused");

	r.t0 = now_ns();
	r.queued0 = read_queued(&r);
	err = read_sleep_clock(&r, &r.slept0);
	r.t1 = r.t0 + WINDOW_NS;
	/* A second process, blocked in nanosleep, becomes a target while running. */
	r.late_pid = spawn_sleep();
	poll_until(sampler, r.t0 + WINDOW_NS / 3);
	r.late_seed0 = now_ns();
	err = r.late_pid > 0 ? bpf_sampler_add_target(sampler, r.late_pid) : -ECHILD;
	if (!err)
		err = bpf_sampler_mark_known(sampler, r.late_pid);
	if (!err)
		err = bpf_offcpu_seed(offcpu);
	if (!err) /* a second time: threads followed already are left alone */
		err = bpf_offcpu_seed(offcpu);
	r.late_seed1 = now_ns();
	CHECK(err == 0, "a late target is added and its threads seeded (%s)", strerror(-err));
	poll_until(sampler, r.t1);
	err = err ? err : read_sleep_clock(&r, &r.slept1);
	r.queued1 = read_queued(&r);
	CHECK(err == 0, "the sleeper's own clock reads (%s)", strerror(-err));
	bpf_offcpu_stop(offcpu); /* sends the intervals still open */
	bpf_sampler_stop(sampler);
	poll_until(sampler, now_ns() + 200000000ULL);
	err = bpf_sampler_counters(sampler, counters);
	CHECK(err == 0, "counters read");
	bpf_offcpu_close(offcpu);
	bpf_sampler_close(sampler);

	window = (double)(r.t1 - r.t0);
	printf("# records: %llu cpu, %llu off-cpu; counters: offcpu %llu short %llu lost %llu\n",
	       (unsigned long long)r.cpu_records, (unsigned long long)r.off_events,
	       (unsigned long long)counters[SP_CNT_OFFCPU_EVENTS],
	       (unsigned long long)counters[SP_CNT_OFFCPU_SHORT],
	       (unsigned long long)counters[SP_CNT_OFFCPU_LOST]);
	printf("# sleeper: %llu samples, off %.3f s, %llu events, %llu in sleep_a_while "
	       "(%llu sleeping, %llu with nanosleep in the kernel stack), %.3f s\n",
	       (unsigned long long)r.sleeper.cpu_samples, r.sleeper.off_ns / 1e9,
	       (unsigned long long)r.sleeper.events, (unsigned long long)r.sleeper.in_func_events,
	       (unsigned long long)r.sleeper.in_func_sleeping,
	       (unsigned long long)r.sleeper.kernel_frame_events, r.sleeper.in_func_off_ns / 1e9);
	printf("# reader: %llu events, %llu in read_pipe_blocking (%llu sleeping, %llu with waker 0, "
	       "%llu with read in the kernel stack); napper: %llu events\n",
	       (unsigned long long)r.reader.events, (unsigned long long)r.reader.in_func_events,
	       (unsigned long long)r.reader.in_func_sleeping,
	       (unsigned long long)r.reader.waker_matches,
	       (unsigned long long)r.reader.kernel_frame_events,
	       (unsigned long long)r.napper.events);

	CHECK(r.foreign == 0, "only the target's records arrive (%llu others)",
	      (unsigned long long)r.foreign);
	CHECK(counters[SP_CNT_OFFCPU_EVENTS] == r.off_events,
	      "every off-CPU event counted was delivered");
	CHECK(counters[SP_CNT_OFFCPU_LOST] == 0, "no off-CPU interval lost");
	CHECK(r.sized > 0 && r.missized == 0,
	      "every record is as long as the frames it holds (%llu of %llu)",
	      (unsigned long long)r.sized, (unsigned long long)(r.sized + r.missized));

	/* The sleeping thread: about half of its wall time in sleep_a_while
	 * (less when others take the CPU: the burn phase then lasts longer);
	 * its own clock says how much exactly. */
	share = r.sleeper.in_func_off_ns / window;
	slept_share = (r.slept1 - r.slept0) / window;
	printf("# sleeper: sleep_a_while share %.3f off-CPU, %.3f by its own clock\n", share,
	       slept_share);
	CHECK(share > slept_share * 0.9 && share < slept_share * 1.1,
	      "sleep_a_while's off-CPU time is the sleeper's sleeping share within 10%% "
	      "(%.3f, %.3f)", share, slept_share);
	CHECK(slept_share > 0.3, "the sleeper sleeps a large share (%.3f)", slept_share);
	CHECK(r.sleeper.in_func_events >= 50, "sleep_a_while intervals arrive (%llu)",
	      (unsigned long long)r.sleeper.in_func_events);
	CHECK(r.sleeper.in_func_sleeping == r.sleeper.in_func_events,
	      "every sleep_a_while interval is SLEEPING");
	CHECK(r.sleeper.kernel_frame_events * 10 >= r.sleeper.in_func_events * 9,
	      "their kernel stacks name nanosleep");
	CHECK(r.sleeper.preempted_elsewhere == r.sleeper.events - r.sleeper.in_func_events,
	      "the sleeper's other intervals (it only burns there) are PREEMPTED (%llu of %llu)",
	      (unsigned long long)r.sleeper.preempted_elsewhere,
	      (unsigned long long)(r.sleeper.events - r.sleeper.in_func_events));

	/* The pipe reader: SLEEPING in read_pipe_blocking, woken by main. */
	CHECK(r.reader.events >= 20, "pipe reader's intervals arrive (%llu)",
	      (unsigned long long)r.reader.events);
	CHECK(r.reader.in_func_sleeping * 10 >= r.reader.events * 9,
	      "pipe reader waits SLEEPING in read_pipe_blocking");
	CHECK(r.reader.kernel_frame_events * 10 >= r.reader.events * 9,
	      "its kernel stacks name read");
	CHECK(r.reader.waker_matches == r.reader.events && r.sleeper.waker_matches == r.sleeper.in_func_events,
	      "no waker is claimed (waker_tid is 0)");

	/* A thread blocked since before the start, until after the end: one
	 * interval from the start to the stop, stack walked while blocked. */
	printf("# waiter: %llu events, first at t0%+.3f ms, %.3f s in the window\n",
	       (unsigned long long)r.waiter.events,
	       ((double)r.waiter_first_ts - (double)r.t0) / 1e6, r.waiter.off_ns / 1e9);
	CHECK(r.waiter.events == 1, "a thread blocked all along sends one interval (%llu)",
	      (unsigned long long)r.waiter.events);
	CHECK(r.waiter_first_ts <= r.t0 && r.waiter_first_ts + 100000000ULL > r.t0,
	      "it starts when the tracer started");
	CHECK(r.waiter.off_ns >= WINDOW_NS, "it lasts until the stop");
	CHECK(r.waiter.in_func_sleeping == 1 && r.waiter.kernel_frame_events == 1,
	      "it is SLEEPING in wait_forever, reading");
	CHECK(r.waiter_walked, "its user stack, walked while it was blocked, goes on to its caller");

	/* The late target: one interval from its seeding to the stop. */
	printf("# late target: %llu events, first at seed%+.3f ms, %.3f s in the window\n",
	       (unsigned long long)r.late_events,
	       ((double)r.late_first_ts - (double)r.late_seed0) / 1e6, r.late_off_ns / 1e9);
	CHECK(r.late_events == 1, "a late target blocked all along sends one interval (%llu)",
	      (unsigned long long)r.late_events);
	CHECK(r.late_first_ts >= r.late_seed0 && r.late_first_ts <= r.late_seed1,
	      "it starts when its threads were seeded");
	CHECK(r.late_off_ns >= r.t1 - r.late_seed1, "it lasts until the stop");
	CHECK(r.late_sleeping_in_nanosleep && r.late_has_ustack,
	      "it is SLEEPING in nanosleep, with a user stack walked while blocked");

	/* The minimum: short naps are counted, never sent. */
	CHECK(r.under_min == 0, "no interval under the minimum is sent (%llu)",
	      (unsigned long long)r.under_min);
	CHECK(counters[SP_CNT_OFFCPU_SHORT] >= 1000, "short intervals are counted (%llu)",
	      (unsigned long long)counters[SP_CNT_OFFCPU_SHORT]);

	/* On-CPU samples and off-CPU time cover the sleeper's wall time. */
	/* Waits for a CPU under MIN_OFF_CPU_NS are not sent: on a busy node
	 * the time the sleeper spent on a runqueue may be missing, no more. */
	cover = (r.sleeper.cpu_samples * (1e9 / FREQUENCY_HZ) + r.sleeper.off_ns) / window;
	queued = (double)(r.queued1 - r.queued0) / window;
	printf("# sleeper: covered %.3f, on a runqueue %.3f\n", cover, queued);
	CHECK(cover + queued > 0.9 && cover < 1.1,
	      "CPU samples plus off-CPU time cover the sleeper's wall time within 10%%, "
	      "short waits for a CPU aside (%.3f, %.3f)", cover, queued);
	check_whole_node(r.pid);
out:
	if (r.pid > 0) {
		kill(r.pid, SIGKILL);
		waitpid(r.pid, NULL, 0);
	}
	if (r.late_pid > 0) {
		kill(r.late_pid, SIGKILL);
		waitpid(r.late_pid, NULL, 0);
	}
	kallsyms_free(r.ks);
	TAP_DONE();
}

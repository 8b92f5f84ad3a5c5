// SPDX-License-Identifier: GPL-2.0
/* offcpu.bpf.c - off-CPU intervals of profiled threads, from sched_switch.
 *
 * When a profiled thread leaves a CPU we keep the time, its state and its
 * user stack in task-local storage; when it comes back we send one struct
 * sp_off_cpu_event, with its kernel stack, if it stayed off for at least
 * min_off_cpu_ns.
 *
 * Task storage rather than a hash keyed by tid: the kernel frees an entry
 * when its task is freed (a thread that exits while off-CPU leaks nothing,
 * a recycled tid never meets a stale entry), it has no capacity to size or
 * fill, and the lookup follows a pointer from the task instead of hashing.
 * A thread that is not profiled never gets an entry, so its switch-in costs
 * one failed lookup.
 *
 * The user stack can only be read while the thread is current, so every
 * profiled switch-out pays for one bpf_get_stack() even when the interval
 * turns out short. The kernel stack, the dearer one, is read at switch-in
 * from the thread's saved kernel stack (bpf_get_task_stack), only for the
 * intervals that are sent.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "user_stack.bpf.h"
#include "maps.bpf.h"

#define PF_KTHREAD 0x00200000
#define TASK_INTERRUPTIBLE 0x0001
#define TASK_UNINTERRUPTIBLE 0x0002
#define TASK_DEAD 0x0080
#define TASK_NOLOAD 0x0400

const volatile bool filter_tgids = false;      /* only tgids in target_tgids */
const volatile bool include_kthreads = false;  /* kernel threads' waits too */
const volatile __u32 self_tgid = 0;            /* the profiler itself: never traced */
const volatile __u64 min_off_cpu_ns = 1000000;
const volatile __u64 wakeup_bytes = 1 << 20;
/* sched_switch passes prev's state (Linux 5.18 on); before, it is read
 * from the task, where a wake-up racing the switch can already have set
 * it running. */
const volatile bool switch_passes_state = true;

/* Set by user space at each start: intervals that began before it (left
 * over from an earlier start/stop) are not reported. */
__u64 session_start_ns = 0;

char LICENSE[] SEC("license") = "GPL";

/* A JVM's thread keeps up to SP_MAX_USER_DEPTH frames (16 KiB) here while
 * it is off the CPU; allocated on a thread's first profiled switch-out. */
struct off_cpu_start {
	__u64 off_ts;     /* when the thread left the CPU; 0: on CPU or already reported */
	__u32 state;      /* enum sp_thread_state */
	__s32 ustack_bytes;
	__u32 ustack_flags;
	__u32 anchor_index;
	__u64 ustack[SP_MAX_USER_DEPTH];
};

/* An interval's record is built here, then sent with the bytes it holds. */
struct off_cpu_record {
	__u8 bytes[sizeof(struct sp_off_cpu_event) + SP_MAX_FRAMES_BYTES];
};

/* One per program that builds records: the flush's iterator can be
 * preempted, and the switch that preempts it sends on the same CPU. */
enum { RECORD_OF_SWITCH, RECORD_OF_FLUSH, RECORD_SLOTS };

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RECORD_SLOTS);
	__type(key, __u32);
	__type(value, struct off_cpu_record);
} off_cpu_records SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct off_cpu_start);
} off_cpu_starts SEC(".maps");

static __always_inline bool is_profiled(struct task_struct *task)
{
	__u32 tgid = task->tgid;

	if (task->pid == 0 || tgid == self_tgid)
		return false;
	if (!include_kthreads && (task->flags & PF_KTHREAD))
		return false;
	if (filter_tgids && !bpf_map_lookup_elem(&target_tgids, &tgid))
		return false;
	return true;
}

/* The task's state field: __state since Linux 5.14, state before. */
struct task_struct___state_long {
	long state;
} __attribute__((preserve_access_index));

static __always_inline unsigned int task_state(struct task_struct *task)
{
	if (bpf_core_field_exists(task->__state))
		return BPF_CORE_READ(task, __state);
	return BPF_CORE_READ((struct task_struct___state_long *)task, state);
}

static __always_inline __u32 thread_state(bool preempt, unsigned int prev_state)
{
	/* Preempted, or yielded while still runnable: waiting for a CPU. */
	if (preempt || prev_state == 0)
		return SP_STATE_PREEMPTED;
	if (prev_state & TASK_INTERRUPTIBLE)
		return SP_STATE_SLEEPING;
	if (prev_state & TASK_UNINTERRUPTIBLE)
		/* TASK_IDLE waits are idle, not blocked on a device. */
		return prev_state & TASK_NOLOAD ? SP_STATE_SLEEPING : SP_STATE_UNINTERRUPTIBLE;
	return SP_STATE_OTHER;
}

/* The current task (prev) leaves the CPU. walk: see on_switch. */
static __always_inline void switch_out(void *ctx, struct task_struct *prev, bool preempt,
				       unsigned int prev_state, __u64 now, const bool walk)
{
	struct off_cpu_start *start;

	/* An exiting thread's last switch: it never comes back. */
	if (prev_state & TASK_DEAD)
		return;
	if (!is_profiled(prev))
		return;
	start = bpf_task_storage_get(&off_cpu_starts, prev, NULL,
				     BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!start) {
		sp_count(SP_CNT_OFFCPU_LOST);
		return;
	}
	start->state = thread_state(preempt, prev_state);
	start->ustack_flags = 0;
	start->anchor_index = 0;
	if (prev->flags & PF_KTHREAD)
		start->ustack_bytes = 0;
	else
		start->ustack_bytes = user_stack(ctx, prev, start->ustack, &start->ustack_flags,
						 &start->anchor_index, walk);
	/* Last: a concurrent flush only claims an interval once it is whole. */
	asm volatile("" ::: "memory");
	*(volatile __u64 *)&start->off_ts = now;
}

/* bytes is what the walk returned: a negative errno reads as huge. */
static __always_inline __u32 copy_frames(__u64 *dst, const __u64 *src, __s32 bytes)
{
	__u32 n = bytes;

	if (n > SP_MAX_USER_DEPTH * sizeof(__u64) || bpf_probe_read_kernel(dst, n, src))
		return 0;
	return n;
}

/* Sends the interval that started at off_ts and ends at now. */
static __always_inline void send_interval(struct task_struct *task, struct off_cpu_start *start,
					  __u64 off_ts, __u64 now, __u32 slot)
{
	struct sp_off_cpu_event *event;
	struct off_cpu_record *rec;
	__u32 tgid = task->tgid;
	__s32 kbytes, ubytes;
	__u32 copied;
	__u64 size;

	rec = bpf_map_lookup_elem(&off_cpu_records, &slot);
	if (!rec)
		return;
	event = (struct sp_off_cpu_event *)rec->bytes;
	event->hdr.kind = SP_EVENT_OFF_CPU;
	event->hdr.cpu = bpf_get_smp_processor_id();
	event->hdr.tgid = tgid;
	event->hdr.tid = task->pid;
	event->hdr.timestamp_ns = off_ts;
	bpf_probe_read_kernel_str(event->hdr.comm, sizeof(event->hdr.comm), task->comm);
	event->off_cpu_ns = now - off_ts;
	event->state = start->state;
	/* Not recorded: sched_wakeup runs in interrupt context for timer and
	 * device wake-ups, where current is not the waker, and without
	 * CONFIG_KALLSYMS_ALL BPF cannot read preempt_count to tell. */
	event->waker_tid = 0;

	/* The user stack was read at switch-out; copy only the frames captured. */
	ubytes = start->ustack_bytes;
	event->stacks.ustack_flags = start->ustack_flags;
	event->stacks.anchor_index = start->anchor_index;
	copied = copy_frames(event->stacks.frames, start->ustack, ubytes);
	/* What the record holds: a stack that could not be read, or copied,
	 * is sent as its errno. */
	if (ubytes > 0 && !copied)
		ubytes = -14; /* EFAULT */
	event->stacks.ustack_bytes = ubytes < 0 ? ubytes : (__s32)copied;
	if (ubytes < 0)
		sp_count(SP_CNT_LOST_USTACK);
	if (start->ustack_flags & SP_USTACK_TRUNCATED)
		sp_count(SP_CNT_USTACK_TRUNCATED);
	if (start->ustack_flags & SP_USTACK_ANCHOR)
		sp_count(SP_CNT_ANCHOR_USED);
	/* The kernel stack of a thread off the CPU is still the one it left
	 * with, so it is read now, only for intervals that are sent. */
	kbytes = bpf_get_task_stack(task, sp_kstack_slot(&event->stacks),
				    SP_MAX_STACK_DEPTH * sizeof(__u64), 0);
	event->stacks.kstack_bytes = kbytes;
	if (kbytes < 0)
		sp_count(SP_CNT_LOST_KSTACK);
	size = sizeof(*event) + copied;
	if (kbytes > 0)
		size += (__u32)kbytes;
	if (size > sizeof(*rec))
		size = sizeof(*rec);
	if (bpf_ringbuf_output(&events, rec, size, sp_wakeup_flags(tgid, wakeup_bytes))) {
		sp_count(SP_CNT_OFFCPU_LOST);
		return;
	}
	sp_count(SP_CNT_OFFCPU_EVENTS);
}

/* next comes back on the CPU. */
static __always_inline void switch_in(struct task_struct *next, __u64 now)
{
	struct off_cpu_start *start;
	__u64 off_ts;

	if (next->pid == 0)
		return;
	/* Without F_CREATE: threads never profiled have no entry. */
	start = bpf_task_storage_get(&off_cpu_starts, next, NULL, 0);
	if (!start || !start->off_ts)
		return;
	/* Claim the interval: a concurrent flush may race for it. */
	off_ts = __atomic_exchange_n(&start->off_ts, 0, __ATOMIC_ACQ_REL);
	if (!off_ts || off_ts < session_start_ns)
		return;
	if (now - off_ts < min_off_cpu_ns) {
		sp_count(SP_CNT_OFFCPU_SHORT);
		return;
	}
	send_interval(next, start, off_ts, now, RECORD_OF_SWITCH);
}

static __always_inline void handle_switch(unsigned long long *ctx, bool preempt,
					  struct task_struct *prev, struct task_struct *next,
					  const bool walk)
{
	__u64 now = bpf_ktime_get_ns();
	/* The fourth argument exists only where switch_passes_state is set:
	 * the verifier skips this read elsewhere, the flag being read-only. */
	unsigned int prev_state = switch_passes_state ? (unsigned int)ctx[3] : task_state(prev);

	switch_out(ctx, prev, preempt, prev_state, now, walk);
	switch_in(next, now);
}

/* User space loads one of the two (sampler/kernel_features.h): with the
 * HotSpot walker, or frame pointers alone where the kernel lacks what the
 * walker uses (Linux before 5.17). */
SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	handle_switch(ctx, preempt, prev, next, true);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch_fp, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	handle_switch(ctx, preempt, prev, next, false);
	return 0;
}

/* Run by user space at the end of a recording, while on_switch is still
 * attached: sends every interval still open, cut at this moment. */
SEC("iter/task")
int flush_open_intervals(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct off_cpu_start *start;
	__u64 off_ts, now;

	/* A thread on a CPU (or in the middle of a switch) has no open
	 * interval worth sending; its entry may also be a seed that lost a
	 * race with its switch-in (see seed_open_intervals). */
	if (!task || task->on_cpu)
		return 0;
	start = bpf_task_storage_get(&off_cpu_starts, task, NULL, 0);
	if (!start || !start->off_ts)
		return 0;
	off_ts = __atomic_exchange_n(&start->off_ts, 0, __ATOMIC_ACQ_REL);
	if (!off_ts || off_ts < session_start_ns)
		return 0;
	now = bpf_ktime_get_ns();
	if (now - off_ts < min_off_cpu_ns) {
		sp_count(SP_CNT_OFFCPU_SHORT);
		return 0;
	}
	send_interval(task, start, off_ts, now, RECORD_OF_FLUSH);
	return 0;
}

DEFINE_HOTSPOT_WALK(task, READ_TASK)

#define X86_USER_STACK_TOP 0x00007ffffffff000ULL

/* A frame-pointer walk of a thread's user stack from its saved registers,
 * in the form bpf_get_stack() gives: the instruction pointer, then return
 * addresses. Returns the bytes written. */
static __always_inline __s32 walk_user_stack(struct task_struct *task, __u64 *frames)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	__u64 bp, frame[2];
	int n = 0;

	if (!regs)
		return -14; /* -EFAULT */
	frames[n++] = regs->ip;
	bp = regs->bp;
	for (int i = 1; i < SP_MAX_STACK_DEPTH; i++) {
		if (!bp || (bp & 7) || bp >= X86_USER_STACK_TOP)
			break;
		if (bpf_copy_from_user_task(frame, sizeof(frame), (void *)bp, task, 0))
			break;
		if (!frame[1])
			break;
		frames[i] = frame[1];
		n = i + 1;
		/* Frames grow towards higher addresses: anything else is not a
		 * frame-pointer chain. */
		if (frame[0] <= bp)
			break;
		bp = frame[0];
	}
	return n * sizeof(__u64);
}

/* Run by user space right after on_switch is attached, and again after it
 * adds targets: a profiled thread already off the CPU and not yet followed
 * gets an interval from now, with its user stack walked from its saved
 * registers (sched_switch cannot read it later: it runs in another task's
 * address space).
 * A thread that comes back on a CPU between the on_cpu test and the store
 * leaves a stale seed behind; its next switch-out overwrites it, and the
 * flush skips threads on a CPU, so it is never sent.
 * Loaded only where the kernel has sleepable task iterators and
 * bpf_copy_from_user_task (Linux 5.18). */
SEC("iter.s/task")
int seed_open_intervals(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	const struct sp_hotspot_info *jvm;
	struct off_cpu_start *start;
	struct walk_state *w;
	__u32 zero = 0;
	__u64 off_ts;

	if (!task || task->on_cpu || task->exit_state || (task_state(task) & TASK_DEAD))
		return 0;
	if (!is_profiled(task))
		return 0;
	start = bpf_task_storage_get(&off_cpu_starts, task, NULL,
				     BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!start) {
		sp_count(SP_CNT_OFFCPU_LOST);
		return 0;
	}
	jvm = hotspot_jvm_of(task);
	w = bpf_map_lookup_elem(&walk_task_states, &zero);
	/* Left the CPU after the start: followed already, unless user space
	 * has since described its JVM and the stack was walked without. */
	if (start->off_ts >= session_start_ns) {
		if (!jvm || !w || (start->ustack_flags & SP_USTACK_WALKED))
			return 0;
		/* Hold the interval while its stack is rewritten. */
		off_ts = __atomic_exchange_n(&start->off_ts, 0, __ATOMIC_ACQ_REL);
		if (!off_ts)
			return 0;
	} else {
		off_ts = 0;
		start->state = thread_state(false, task_state(task));
	}
	start->ustack_flags = 0;
	start->anchor_index = 0;
	if (task->flags & PF_KTHREAD)
		start->ustack_bytes = 0;
	else if (jvm && w)
		start->ustack_bytes = hotspot_walk_task(task, jvm, start->ustack, &start->ustack_flags,
							&start->anchor_index, w, NULL);
	else
		start->ustack_bytes = walk_user_stack(task, start->ustack);
	asm volatile("" ::: "memory");
	*(volatile __u64 *)&start->off_ts = off_ts ? off_ts : bpf_ktime_get_ns();
	return 0;
}

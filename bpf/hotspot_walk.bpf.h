/* hotspot_walk.bpf.h - user stacks of HotSpot JVMs, walked further than
 * bpf_get_stack() can (docs/stack-walker.md has the facts behind it).
 *
 * - Depth: up to SP_MAX_USER_DEPTH frames; kernel.perf_event_max_stack
 *   (127) caps bpf_get_stack().
 * - Interpreted frames: a return address in the interpreter is replaced by
 *   its frame's Method* (fp[-3]), tagged, for user space to name.
 * - Waits: glibc has no frame pointers, so a walk from a futex wait stops
 *   in libc. HotSpot records the thread's last Java frame in its
 *   JavaFrameAnchor before it leaves Java code; the walk goes on from there.
 *   The JavaThread is found through libjvm's thread-local Thread::_thr_current.
 *
 * The stack is copied in 32 KiB windows where its top is known (a
 * JavaThread's _stack_base) and walked in the copy: one read per window
 * costs about what two single reads do. Elsewhere frames are read one by one.
 * The current task's stack is read directly (sampling, switch-out); another
 * task's only from sleepable programs (bpf_copy_from_user_task).
 */
#ifndef SPARKPROF_HOTSPOT_WALK_BPF_H
#define SPARKPROF_HOTSPOT_WALK_BPF_H

#include "maps.bpf.h"

#define WALK_COPY_BYTES (32 * 1024)
#define USER_ADDR_END (1ULL << 47)

/* The walk's state lives in a map value, not on the BPF stack: the
 * verifier then treats it as unknown at each step instead of following
 * every value through the loop (which it cannot finish). Per CPU: a
 * program runs to completion on its CPU; each object that includes this
 * header gets its own. */
struct walk_state {
	__u64 copy_lo, copy_len;      /* the copied stack bytes [copy_lo, +copy_len) */
	__u64 stack_top;              /* the JavaThread's stack base; 0: unknown */
	__u64 interp_lo, interp_hi;
	__u64 fp;                     /* frame to read next */
	__u64 reached;                /* the highest frame read */
	__u32 n;
	__u32 truncated;
};

struct walk_copy {
	__u8 bytes[WALK_COPY_BYTES];  /* a per-CPU value holds at most 32 KiB */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct walk_state);
} walk_states SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct walk_copy);
} walk_copies SEC(".maps");

/* Another task's walk (sleepable programs: seeding threads already off the
 * CPU) reads nothing in bulk; one at a time, so one slot. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct walk_state);
} walk_task_states SEC(".maps");

/* What bpf_loop's steps get: pointers only. */
struct walk_ctx {
	struct walk_state *w;
	struct walk_copy *copy;       /* NULL: no bulk copy */
	struct task_struct *task;     /* whose stack (read_task only) */
	__u64 *frames;                /* SP_MAX_USER_DEPTH slots */
};

/* Copies up to WALK_COPY_BYTES of the current task's stack from lo, as many
 * as the stack holds (avail). Returns the bytes copied, or -1. The bound is
 * checked right at the call, on the register passed: clang may spill a
 * length before an earlier check, and verifiers before 6.8 (6.1's) forget
 * the bound of a scalar reloaded from such a spill. */
static __always_inline __s64 walk_copy_window(struct walk_copy *copy, __u64 lo, __u64 avail)
{
	__u64 len = avail < WALK_COPY_BYTES ? avail : WALK_COPY_BYTES;

	barrier_var(len);
	if (len < 16 || len > WALK_COPY_BYTES)
		return -1;
	if (bpf_probe_read_user(copy->bytes, len, (void *)lo))
		return -1;
	return len;
}

/* Two ways to read user memory: the current task's (any program) and
 * another task's (sleepable programs only). A program may not even contain
 * a call it is not allowed to make, so each way gets its own copy of the
 * walker (DEFINE_HOTSPOT_WALK). */
#define READ_CURRENT(c, dst, addr) bpf_probe_read_user(dst, sizeof(*(dst)), (void *)(addr))
#define READ_TASK(c, dst, addr) \
	bpf_copy_from_user_task(dst, sizeof(*(dst)), (void *)(addr), (c)->task, 0)

#define DEFINE_HOTSPOT_WALK(NAME, READ)						\
static __always_inline int walk_read_##NAME(struct walk_ctx *c, __u64 addr, __u64 *out) \
{										\
	struct walk_state *w = c->w;						\
	__u64 off = addr - w->copy_lo;						\
										\
	/* Past the copy: copy the next window (frames lie ever higher, and	\
	 * a frame's slots just below its frame pointer come along). */	\
	if (c->copy && off >= w->copy_len && addr < w->stack_top &&		\
	    addr >= w->copy_lo) {						\
		__u64 lo = (addr - 64) & ~7ULL;					\
		__s64 len = walk_copy_window(c->copy, lo, w->stack_top - lo);	\
										\
		w->copy_len = 0;						\
		if (len > 0) {							\
			w->copy_lo = lo;					\
			w->copy_len = len;					\
		}								\
		off = addr - w->copy_lo;					\
	}									\
	if (c->copy && addr >= w->copy_lo && off + 8 <= w->copy_len) {		\
		*out = *(__u64 *)&c->copy->bytes[off & (WALK_COPY_BYTES - 8)];	\
		return 0;							\
	}									\
	return READ(c, out, addr);						\
}										\
										\
/* Records pc, whose frame's frame pointer is fp: an interpreted frame as	\
 * its Method*. */								\
static __always_inline void walk_note_##NAME(struct walk_ctx *c, __u64 pc, __u64 fp) \
{										\
	struct walk_state *w = c->w;						\
	__u64 value = pc, method;						\
	__u32 n = w->n;								\
										\
	if (n >= SP_MAX_USER_DEPTH) {						\
		w->truncated = 1;						\
		return;								\
	}									\
	if (pc >= w->interp_lo && pc < w->interp_hi && fp > 24 &&		\
	    !walk_read_##NAME(c, fp - 24, &method) && method && method < USER_ADDR_END) \
		value = method | SP_USTACK_METHOD_TAG;				\
	c->frames[n & (SP_MAX_USER_DEPTH - 1)] = value;				\
	w->n = n + 1;								\
}										\
										\
static long walk_step_##NAME(__u64 index, struct walk_ctx *c)			\
{										\
	struct walk_state *w = c->w;						\
	__u64 next_fp, ret;							\
										\
	if (!w->fp || (w->fp & 7) || w->fp >= USER_ADDR_END ||			\
	    walk_read_##NAME(c, w->fp, &next_fp) ||				\
	    walk_read_##NAME(c, w->fp + 8, &ret) || !ret)			\
		return 1;							\
	w->reached = w->fp;							\
	walk_note_##NAME(c, ret, next_fp);					\
	if (w->truncated)							\
		return 1;							\
	/* Callers' frames lie higher: anything else is no frame chain. */	\
	if (next_fp <= w->fp)							\
		return 1;							\
	w->fp = next_fp;							\
	return 0;								\
}										\
										\
/* The walked thread's JavaThread, through libjvm's TLS: the dtv (fsbase	\
 * + 8), libjvm's block in it, Thread::_thr_current there. GC and VM	\
 * threads set it too: only a JavaThread has the JavaThread vtable. */	\
static __always_inline __u64 java_thread_##NAME(struct walk_ctx *c,		\
						const struct sp_hotspot_info *jvm) \
{										\
	struct task_struct *task = c->task;					\
	__u64 fsbase = BPF_CORE_READ(task, thread.fsbase), dtv, block, thread, vtable; \
										\
	if (!jvm->tls_modid || !fsbase || READ(c, &dtv, fsbase + 8) ||		\
	    READ(c, &block, dtv + 16 * (__u64)jvm->tls_modid) ||		\
	    !block || block == (__u64)-1 ||					\
	    READ(c, &thread, block + jvm->thr_current_offset) || !thread ||	\
	    READ(c, &vtable, thread) || vtable != jvm->java_thread_vtable)	\
		return 0;							\
	return thread;								\
}										\
										\
/* Walks task's user stack into frames (SP_MAX_USER_DEPTH slots). Returns	\
 * the bytes written, or a negative errno; *flags and *anchor_index say	\
 * how it was walked. w and copy (NULL: no bulk read) are scratch. */	\
static __always_inline __s32 hotspot_walk_##NAME(struct task_struct *task,	\
		const struct sp_hotspot_info *jvm, __u64 *frames, __u32 *flags,	\
		__u32 *anchor_index, struct walk_state *w, struct walk_copy *copy) \
{										\
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);	\
	struct walk_ctx c = { .w = w, .copy = copy, .task = task, .frames = frames }; \
	__u64 sp, thread, stack_base = 0, anchor[3] = {}, below[2] = {}, len;	\
										\
	*flags = SP_USTACK_WALKED;						\
	*anchor_index = 0;							\
	if (!regs)								\
		return -14; /* -EFAULT */					\
	w->interp_lo = jvm->interp_lo;						\
	w->interp_hi = jvm->interp_hi;						\
	w->copy_lo = w->copy_len = w->stack_top = 0;				\
	w->n = 0;								\
	w->truncated = 0;							\
	w->reached = 0;								\
	sp = BPF_CORE_READ(regs, sp) & ~7ULL;					\
	thread = java_thread_##NAME(&c, jvm);					\
	if (thread) {								\
		READ(&c, &stack_base, thread + jvm->stack_base_offset);		\
		READ(&c, &anchor[0], thread + jvm->anchor_offset + jvm->last_java_sp_offset); \
		READ(&c, &anchor[1], thread + jvm->anchor_offset + jvm->last_java_pc_offset); \
		READ(&c, &anchor[2], thread + jvm->anchor_offset + jvm->last_java_fp_offset); \
	}									\
	/* One read of the stack, up to its top: reading past it fails. */	\
	if (copy && stack_base > sp) {						\
		len = walk_copy_window(copy, sp, stack_base - sp);		\
		if ((__s64)len > 0) {						\
			w->copy_lo = sp;					\
			w->copy_len = len;					\
			w->stack_top = stack_base;				\
		}								\
	}									\
	w->fp = BPF_CORE_READ(regs, bp);					\
	walk_note_##NAME(&c, BPF_CORE_READ(regs, ip), w->fp);			\
	bpf_loop(SP_MAX_USER_DEPTH + 1, walk_step_##NAME, &c, 0);		\
	/* Stopped short of the last Java frame (in glibc, without frame	\
	 * pointers): go on from the anchor. When last_Java_fp is not set,	\
	 * the callee pushed the frame pointer just below last_Java_sp. */	\
	if (!w->truncated && anchor[0] > sp && anchor[0] <= stack_base &&	\
	    w->reached < anchor[0] &&						\
	    !walk_read_##NAME(&c, anchor[0] - 16, &below[0]) &&		\
	    !walk_read_##NAME(&c, anchor[0] - 8, &below[1])) {			\
		w->fp = anchor[2] ? anchor[2] : below[0];			\
		*anchor_index = w->n;						\
		*flags |= SP_USTACK_ANCHOR;					\
		walk_note_##NAME(&c, anchor[1] ? anchor[1] : below[1], w->fp);	\
		bpf_loop(SP_MAX_USER_DEPTH + 1, walk_step_##NAME, &c, 0);	\
	}									\
	if (w->truncated)							\
		*flags |= SP_USTACK_TRUNCATED;					\
	return (w->n & (2 * SP_MAX_USER_DEPTH - 1)) * sizeof(__u64);		\
}

DEFINE_HOTSPOT_WALK(current, READ_CURRENT)

/* Walks the current task's user stack (sampling, switch-out). */
static __always_inline __s32 hotspot_walk(struct task_struct *task,
					  const struct sp_hotspot_info *jvm, __u64 *frames,
					  __u32 *flags, __u32 *anchor_index)
{
	__u32 zero = 0;
	struct walk_state *w = bpf_map_lookup_elem(&walk_states, &zero);
	struct walk_copy *copy = bpf_map_lookup_elem(&walk_copies, &zero);

	if (!w || !copy)
		return -14; /* -EFAULT */
	return hotspot_walk_current(task, jvm, frames, flags, anchor_index, w, copy);
}

/* The layout of task's JVM, if user space described it. The entry belongs
 * to the process that was alive when it was made: the first walk stamps it
 * with the process's start time, and a later process with the same pid
 * does not match. */
static __always_inline const struct sp_hotspot_info *hotspot_jvm_of(struct task_struct *task)
{
	__u32 tgid = task->tgid;
	struct sp_hotspot_info *jvm = bpf_map_lookup_elem(&hotspot_jvms, &tgid);
	__u64 started;

	if (!jvm)
		return NULL;
	started = BPF_CORE_READ(task, group_leader, start_time);
	if (!jvm->start_time)
		__sync_val_compare_and_swap(&jvm->start_time, 0, started);
	return jvm->start_time == started ? jvm : NULL;
}

#endif

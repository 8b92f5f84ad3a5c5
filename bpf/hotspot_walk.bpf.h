/* hotspot_walk.bpf.h - user stacks of HotSpot JVMs, walked further than
 * bpf_get_stack() can (docs/stack-walker.md has the facts behind it).
 *
 * - Depth: up to SP_MAX_USER_DEPTH frames; kernel.perf_event_max_stack
 *   (127) caps bpf_get_stack().
 * - Interpreted frames: a return address in the interpreter is replaced by
 *   its frame's Method* (fp[-3]), tagged, for user space to name.
 * - Compiled frames are stepped over by their size, as HotSpot does: the
 *   code heap's segment map leads from a pc to its CodeBlob. Without
 *   -XX:+PreserveFramePointer their rbp is no frame pointer, and a walk by
 *   frame pointers would stop at the first of them.
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
/* A segment map byte is a hop back of up to 254 segments: 32 hops cover a
 * blob of 500 KiB or more. A compiled frame is under 64 KiB. */
#define WALK_MAX_HOPS 32
#define WALK_MAX_FRAME_WORDS (64 * 1024 / 8)
#define WALK_FREE_SEGMENT 0xff
/* A method has at most 65535 locals and 255 argument slots. */
#define WALK_MAX_SENDER_GAP ((65535 + 255) * 8ULL)

/* The walk's state lives in a map value, not on the BPF stack: the
 * verifier then treats it as unknown at each step instead of following
 * every value through the loop (which it cannot finish). Per CPU: a
 * program runs to completion on its CPU; each object that includes this
 * header gets its own. */
struct walk_state {
	__u64 copy_lo, copy_len;      /* the copied stack bytes [copy_lo, +copy_len) */
	__u64 stack_top;              /* the JavaThread's stack base; 0: unknown */
	__u64 interp_lo, interp_hi;
	__u64 code_lo, code_hi;
	struct sp_code_heap code_heaps[SP_MAX_CODE_HEAPS];
	__u32 n_code_heaps, frame_size_offset;
	__u64 pc, sp, fp;             /* the frame last noted: its caller is next */
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

static __always_inline bool walk_in_interpreter(const struct walk_state *w, __u64 pc)
{
	return pc >= w->interp_lo && pc < w->interp_hi;
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
	if (walk_in_interpreter(w, pc) && fp > 24 &&				\
	    !walk_read_##NAME(c, fp - 24, &method) && method && method < USER_ADDR_END) \
		value = method | SP_USTACK_METHOD_TAG;				\
	/* Kept by the barrier: 6.1's verifier loses a spilled index's bound. */ \
	barrier_var(n);								\
	c->frames[n & (SP_MAX_USER_DEPTH - 1)] = value;				\
	w->n = n + 1;								\
}										\
										\
/* The code heap's segment map byte for pc's segment; its segment index. */ \
static __always_inline int walk_segment_##NAME(struct walk_ctx *c, __u64 pc,	\
		__u64 *lo, __u64 *seg, __u32 *log2, __u64 *segmap)		\
{										\
	struct walk_state *w = c->w;						\
										\
	*segmap = 0;								\
	for (int i = 0; i < SP_MAX_CODE_HEAPS; i++) {				\
		if (i < w->n_code_heaps && pc >= w->code_heaps[i].lo &&		\
		    pc < w->code_heaps[i].hi) {					\
			*lo = w->code_heaps[i].lo;				\
			*segmap = w->code_heaps[i].segmap;			\
			*log2 = w->code_heaps[i].log2_segment & 31;		\
		}								\
	}									\
	if (!*segmap)								\
		return 1;							\
	*seg = (pc - *lo) >> *log2;						\
	return 0;								\
}										\
										\
/* The caller of the compiled frame last noted, found as HotSpot finds it:	\
 * the segment map hops back from the pc to its block, whose CodeBlob	\
 * gives the frame's size; the return address and the caller's rbp lie	\
 * just below the sender's sp. 1: not compiled code, or no frame size. */	\
static __always_inline int walk_compiled_##NAME(struct walk_ctx *c, __u64 *sender_sp, \
						__u64 *ret, __u64 *fp)		\
{										\
	struct walk_state *w = c->w;						\
	__u64 pc = w->pc, lo = 0, seg = 0, segmap = 0;				\
	__u32 log2 = 0;								\
	__s32 words;								\
	__u8 hop;								\
										\
	if (!w->sp || pc < w->code_lo || pc >= w->code_hi ||			\
	    walk_in_interpreter(w, pc) ||					\
	    walk_segment_##NAME(c, pc, &lo, &seg, &log2, &segmap) ||		\
	    READ(c, &hop, segmap + seg) || hop == WALK_FREE_SEGMENT)		\
		return 1;							\
	for (int i = 0; i < WALK_MAX_HOPS && hop; i++) {			\
		if (hop > seg)							\
			return 1;						\
		seg -= hop;							\
		if (READ(c, &hop, segmap + seg))				\
			return 1;						\
	}									\
	if (hop || READ(c, &words, lo + (seg << log2) + w->frame_size_offset) || \
	    words <= 0 || words > WALK_MAX_FRAME_WORDS)				\
		return 1;							\
	*sender_sp = w->sp + (__u64)words * 8;					\
	/* A Java frame's caller is code in the cache too: compiled code, the	\
	 * interpreter or the call stub. */					\
	return walk_read_##NAME(c, *sender_sp - 8, ret) ||			\
	       walk_read_##NAME(c, *sender_sp - 16, fp) ||			\
	       *ret < w->code_lo || *ret >= w->code_hi;				\
}										\
										\
/* An interpreted frame's caller's sp: its saved sender sp (fp[-1]). A	\
 * c2i adapter or the callee's locals lie between the frame and its	\
 * caller, and a compiled caller's frame size counts from that sp. */	\
static __always_inline __u64 walk_interpreted_sender_sp_##NAME(struct walk_ctx *c, \
								 __u64 fp)	\
{										\
	struct walk_state *w = c->w;						\
	__u64 sender;								\
										\
	if (!walk_in_interpreter(w, w->pc) ||					\
	    walk_read_##NAME(c, fp - 8, &sender) || (sender & 7) ||		\
	    sender < fp + 16 || sender - (fp + 16) > WALK_MAX_SENDER_GAP)	\
		return fp + 16;							\
	return sender;								\
}										\
										\
static long walk_step_##NAME(__u64 index, struct walk_ctx *c)			\
{										\
	struct walk_state *w = c->w;						\
	__u64 next_sp, next_fp, ret;						\
										\
	if (walk_compiled_##NAME(c, &next_sp, &ret, &next_fp)) {		\
		if (!w->fp || (w->fp & 7) || w->fp >= USER_ADDR_END ||		\
		    walk_read_##NAME(c, w->fp, &next_fp) ||			\
		    walk_read_##NAME(c, w->fp + 8, &ret))			\
			return 1;						\
		next_sp = walk_interpreted_sender_sp_##NAME(c, w->fp);		\
	}									\
	/* Callers' frames lie higher: anything else is no frame chain. */	\
	if (!ret || next_sp <= w->sp || next_sp >= USER_ADDR_END)		\
		return 1;							\
	w->reached = next_sp - 16;						\
	walk_note_##NAME(c, ret, next_fp);					\
	w->pc = ret;								\
	w->sp = next_sp;							\
	w->fp = next_fp;							\
	return w->truncated ? 1 : 0;						\
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
	w->code_lo = jvm->code_lo;						\
	w->code_hi = jvm->code_hi;						\
	__builtin_memcpy(w->code_heaps, jvm->code_heaps, sizeof(w->code_heaps)); \
	w->n_code_heaps = jvm->n_code_heaps;					\
	w->frame_size_offset = jvm->frame_size_offset;				\
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
	w->pc = BPF_CORE_READ(regs, ip);					\
	w->sp = sp;								\
	walk_note_##NAME(&c, w->pc, w->fp);					\
	bpf_loop(SP_MAX_USER_DEPTH + 1, walk_step_##NAME, &c, 0);		\
	/* Stopped short of the last Java frame (in glibc, without frame	\
	 * pointers): go on from the anchor. When last_Java_fp is not set,	\
	 * the callee pushed the frame pointer just below last_Java_sp. */	\
	if (!w->truncated && anchor[0] > sp && anchor[0] <= stack_base &&	\
	    w->reached < anchor[0] &&						\
	    !walk_read_##NAME(&c, anchor[0] - 16, &below[0]) &&		\
	    !walk_read_##NAME(&c, anchor[0] - 8, &below[1])) {			\
		w->fp = anchor[2] ? anchor[2] : below[0];			\
		w->pc = anchor[1] ? anchor[1] : below[1];			\
		w->sp = anchor[0];						\
		*anchor_index = w->n;						\
		*flags |= SP_USTACK_ANCHOR;					\
		walk_note_##NAME(&c, w->pc, w->fp);				\
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

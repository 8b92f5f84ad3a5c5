/* python_walk.bpf.h - Python frames of CPython threads (3.10 to 3.13).
 *
 * CPython is built without frame pointers, so bpf_get_stack() stops a frame
 * or two above the sampled instruction. The interpreter keeps its own frame
 * chain: thread state -> current frame -> previous ... Each frame's code
 * object and instruction index go to user space, which names them
 * (user/python/python_code.h) and decides what to keep of the native part.
 *
 * The thread's state is found by walking the interpreter's thread list for
 * the one whose thread id is the current thread's: its kernel TID (3.11 and
 * later), or its pthread_t, which glibc makes the thread's FS base (3.10).
 * Everything read is a user address the process controls: reads may fail
 * or return garbage, which at worst ends the walk or sends a code pointer
 * user space will not name (it checks the object's type again).
 */
#ifndef SPARKPROF_PYTHON_WALK_BPF_H
#define SPARKPROF_PYTHON_WALK_BPF_H

#include "maps.bpf.h"

#define PY_NATIVE_FRAMES 32     /* bpf_get_stack()'s part: the leaf's native frames */
#define PY_MAX_FRAMES 128       /* Python frames kept, innermost first */
#define PY_MAX_THREADS 64       /* thread states looked at */
#define PY_FRAME_READ 104       /* the most bytes of a frame read at once */
#define PY_OWNER_CSTACK 3       /* 3.12+: a C entry's shim frame, no code of its own */

/* CPython processes whose threads are walked (tgid -> layout); as
 * hotspot_jvms, LRU and guarded by the start time. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct sp_python_info);
} python_procs SEC(".maps");

struct python_walk_ctx {
	const struct sp_python_info *py;
	__u64 *frames;          /* SP_MAX_USER_DEPTH slots */
	__u64 at;               /* thread state, then frame, to read next */
	__u64 want_tid;         /* the current thread's TID or FS base */
	__u32 n;                /* slots used */
	__u32 start;            /* slots bpf_get_stack() used */
};

static __always_inline bool py_user_ptr(__u64 p)
{
	return p && p < USER_ADDR_END && !(p & 7);
}

static __always_inline __u64 py_read_u64(__u64 addr)
{
	__u64 v = 0;

	if (bpf_probe_read_user(&v, sizeof(v), (const void *)addr))
		return 0;
	return v;
}

static long py_find_thread(__u64 i, void *arg)
{
	struct python_walk_ctx *c = arg;
	const struct sp_python_info *py = c->py;
	__u64 tstate = c->at;

	if (!py_user_ptr(tstate))
		return 1;
	if (py_read_u64(tstate + py->tstate_tid) == c->want_tid)
		return 1;
	c->at = py_read_u64(tstate + py->tstate_next);
	return 0;
}

#define PY_FRAME_WORDS (PY_FRAME_READ / 8)

/* The frame's word holding byte off (fields are read as aligned words: the
 * verifier refuses unaligned reads at a variable stack offset). */
static __always_inline __u64 py_word(const __u64 *f, __u32 off)
{
	__u32 i = off / 8;

	return i < PY_FRAME_WORDS ? f[i] : 0;
}

/* The frame's first bytes; the length is bounded at the call, on the
 * register passed (see walk_copy_window). */
static __always_inline long py_read_frame(__u64 *f, __u64 addr, __u64 len)
{
	barrier_var(len);
	if (len < 8 || len > PY_FRAME_READ)
		return -1;
	return bpf_probe_read_user(f, len, (const void *)addr);
}

/* One frame: its code and position to frames[], then on to its caller. */
static long py_walk_frame(__u64 i, void *arg)
{
	struct python_walk_ctx *c = arg;
	const struct sp_python_info *py = c->py;
	__u64 f[PY_FRAME_WORDS] = {};
	__u64 code, instr, slot, owner;

	if (!py_user_ptr(c->at) || c->n - c->start >= PY_MAX_FRAMES)
		return 1;
	if (py_read_frame(f, c->at, py->frame_bytes))
		return 1;
	code = py_word(f, py->frame_code);
	instr = py_word(f, py->frame_instr);
	if (py->code_units)
		instr = instr > code + py->code_units ? (instr - code - py->code_units) / 2 : 0;
	else
		instr = (__s32)instr > 0 ? (__u32)instr : 0;
	c->at = py_word(f, py->frame_previous);
	if (py->frame_owner != SP_PY_NO_FIELD) {
		owner = py_word(f, py->frame_owner) >> (py->frame_owner % 8 * 8) & 0xff;
		if (owner == PY_OWNER_CSTACK)
			return 0;
	}
	if (!py_user_ptr(code) || py_read_u64(code + 8) != py->code_type)
		return 0;
	slot = c->n & (SP_MAX_USER_DEPTH - 1);
	c->frames[slot] = sp_py_frame(code, (__u32)instr);
	c->n++;
	return 0;
}

static __always_inline const struct sp_python_info *python_proc_of(struct task_struct *task)
{
	__u32 tgid = task->tgid;
	struct sp_python_info *py = bpf_map_lookup_elem(&python_procs, &tgid);
	__u64 started;

	if (!py)
		return NULL;
	started = BPF_CORE_READ(task, group_leader, start_time);
	if (!py->start_time)
		__sync_val_compare_and_swap(&py->start_time, 0, started);
	return py->start_time == started ? py : NULL;
}

/* After native_bytes of native frames in frames[], appends the current
 * thread's Python frames. Returns the user stack's bytes; *flags gets
 * SP_USTACK_PYTHON when the thread has an interpreter state. */
static __always_inline int python_walk(struct task_struct *task,
				       const struct sp_python_info *py, __u64 *frames,
				       int native_bytes, __u32 *flags)
{
	struct python_walk_ctx c = { .py = py, .frames = frames };
	__u64 tstate, frame;

	if (native_bytes < 0)
		native_bytes = 0;
	c.start = (__u32)native_bytes / 8;
	if (c.start > PY_NATIVE_FRAMES)
		c.start = PY_NATIVE_FRAMES;
	/* bpf_get_stack() follows frame pointers into code that keeps none
	 * (numpy's loops) and reads data from there on: the native part ends
	 * at its first word that is no user address, which could otherwise
	 * carry SP_USTACK_PYTHON_TAG's bit (a double >= 2.0 does) and read as
	 * a Python frame. */
	for (__u32 i = 0; i < PY_NATIVE_FRAMES; i++) {
		if (i >= c.start)
			break;
		if (frames[i] >= USER_ADDR_END) {
			c.start = i;
			break;
		}
	}
	c.n = c.start;
	c.want_tid = py->tid_is_pthread ? task->thread.fsbase : (__u64)task->pid;
	c.at = py_read_u64(py->interp + py->interp_threads);
	bpf_loop(PY_MAX_THREADS, py_find_thread, &c, 0);
	tstate = c.at;
	if (!py_user_ptr(tstate) || py_read_u64(tstate + py->tstate_tid) != c.want_tid)
		return c.start * 8;
	frame = py_read_u64(tstate + py->tstate_frame);
	if (py->cframe_frame != SP_PY_NO_FIELD && py_user_ptr(frame))
		frame = py_read_u64(frame + py->cframe_frame);
	c.at = frame;
	bpf_loop(PY_MAX_FRAMES + 32, py_walk_frame, &c, 0);
	*flags |= SP_USTACK_PYTHON;
	if (py_user_ptr(c.at))
		*flags |= SP_USTACK_TRUNCATED; /* callers beyond PY_MAX_FRAMES */
	return c.n * 8;
}

#endif

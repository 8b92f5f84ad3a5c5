/* user_stack.bpf.h - the current task's user stack, by the walker that
 * knows its process: HotSpot's for a described JVM, CPython's (after the
 * native leaf) for a described interpreter, else frame pointers alone.
 * Shared by the sampler and the switch-out tracer.
 */
#ifndef SPARKPROF_USER_STACK_BPF_H
#define SPARKPROF_USER_STACK_BPF_H

#include "hotspot_walk.bpf.h"
#include "python_walk.bpf.h"

/* Inside exec the saved registers are the old program's while the memory
 * may already be the new one's: a walk would read one with the other. */
static __always_inline bool in_exec(struct task_struct *task)
{
	if (!bpf_core_field_exists(task->in_execve))
		return false;
	return BPF_CORE_READ_BITFIELD_PROBED(task, in_execve);
}

/* Fills frames; returns their bytes or a negative errno. walk (a constant
 * in each program) leaves the walkers out of programs loaded on kernels
 * without their helpers; task is then only read with probes. */
static __always_inline int user_stack(void *ctx, struct task_struct *task, __u64 *frames,
				      __u32 *flags, __u32 *anchor_index, const bool walk)
{
	const struct sp_hotspot_info *jvm;
	const struct sp_python_info *py;

	if (in_exec(task)) {
		*flags |= SP_USTACK_IN_EXEC;
		return 0;
	}
	if (walk && (jvm = hotspot_jvm_of(task)))
		return hotspot_walk(task, jvm, frames, flags, anchor_index);
	if (walk && (py = python_proc_of(task)))
		return python_walk(task, py, frames,
				   bpf_get_stack(ctx, frames, PY_NATIVE_FRAMES * sizeof(__u64),
						 BPF_F_USER_STACK),
				   flags);
	return bpf_get_stack(ctx, frames, SP_MAX_STACK_DEPTH * sizeof(__u64), BPF_F_USER_STACK);
}

#endif

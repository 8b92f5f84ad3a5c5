// SPDX-License-Identifier: GPL-2.0
/* profile.bpf.c - on-CPU sampling: one record per cpu-clock sample.
 *
 * Attached by user space to a software cpu-clock perf event on every online
 * CPU. It only filters and copies: tgid, tid, cpu, time, comm and the raw
 * kernel and user stacks. Symbolization and attribution happen in user space.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "maps.bpf.h"
#include "user_stack.bpf.h"

#define PF_KTHREAD 0x00200000

const volatile bool filter_tgids = false;   /* only tgids in target_tgids */
const volatile bool follow_children = false; /* add forked children of targets */
const volatile __u32 self_tgid = 0;          /* the profiler itself: never sampled */
const volatile __u64 wakeup_bytes = 1 << 20;

char LICENSE[] SEC("license") = "GPL";

/* A record is built here, then sent with as many bytes as it holds. */
struct cpu_record {
	__u8 bytes[sizeof(struct sp_cpu_sample) + SP_MAX_FRAMES_BYTES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_record);
} cpu_records SEC(".maps");

/* One sample of the current thread. walk (a constant in each program) picks
 * the HotSpot walker for described JVMs, or frame pointers alone: the
 * walker's helpers and bpf_loop callbacks must not even appear in a program
 * loaded on a kernel without them (Linux before 5.17). */
static __always_inline int record_sample(struct bpf_perf_event_data *ctx, const bool walk)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct task_struct *task;
	struct sp_cpu_sample *sample;
	struct cpu_record *rec;
	unsigned int flags;
	__u32 zero = 0;
	__u64 size;

	if (tid == 0) {
		sp_count(SP_CNT_IDLE);
		return 0;
	}
	if (tgid == self_tgid)
		return 0;
	if (filter_tgids && !bpf_map_lookup_elem(&target_tgids, &tgid))
		return 0;

	rec = bpf_map_lookup_elem(&cpu_records, &zero);
	if (!rec)
		return 0;
	sample = (struct sp_cpu_sample *)rec->bytes;
	sample->hdr.kind = SP_EVENT_CPU_SAMPLE;
	sample->hdr.cpu = bpf_get_smp_processor_id();
	sample->hdr.tgid = tgid;
	sample->hdr.tid = tid;
	sample->hdr.timestamp_ns = bpf_ktime_get_ns();
	bpf_get_current_comm(sample->hdr.comm, sizeof(sample->hdr.comm));

	sample->stacks.ustack_flags = 0;
	sample->stacks.anchor_index = 0;
	if (walk) {
		task = bpf_get_current_task_btf();
		flags = task->flags;
	} else {
		task = (struct task_struct *)bpf_get_current_task();
		flags = BPF_CORE_READ(task, flags);
	}
	if (flags & PF_KTHREAD)
		sample->stacks.ustack_bytes = 0; /* kernel threads have no user stack */
	else
		sample->stacks.ustack_bytes = user_stack(ctx, task, sample->stacks.frames,
							 &sample->stacks.ustack_flags,
							 &sample->stacks.anchor_index, walk);
	if (sample->stacks.ustack_bytes < 0)
		sp_count(SP_CNT_LOST_USTACK);
	if (sample->stacks.ustack_flags & SP_USTACK_TRUNCATED)
		sp_count(SP_CNT_USTACK_TRUNCATED);
	if (sample->stacks.ustack_flags & SP_USTACK_ANCHOR)
		sp_count(SP_CNT_ANCHOR_USED);
	if (sample->stacks.ustack_flags & SP_USTACK_PYTHON)
		sp_count(SP_CNT_PYTHON_STACKS);
	sample->stacks.kstack_bytes = bpf_get_stack(ctx, sp_kstack_slot(&sample->stacks),
						    SP_MAX_STACK_DEPTH * sizeof(__u64), 0);
	if (sample->stacks.kstack_bytes < 0)
		sp_count(SP_CNT_LOST_KSTACK);
	size = sizeof(*sample);
	if (sample->stacks.ustack_bytes > 0)
		size += (__u32)sample->stacks.ustack_bytes;
	if (sample->stacks.kstack_bytes > 0)
		size += (__u32)sample->stacks.kstack_bytes;
	if (size > sizeof(*rec))
		size = sizeof(*rec);
	if (bpf_ringbuf_output(&events, rec, size, sp_wakeup_flags(tgid, wakeup_bytes))) {
		sp_count(SP_CNT_LOST_RINGBUF);
		return 0;
	}
	sp_count(SP_CNT_SAMPLES);
	return 0;
}

/* User space loads one of the two (sampler/kernel_features.h). */
SEC("perf_event")
int sample_cpu(struct bpf_perf_event_data *ctx)
{
	return record_sample(ctx, true);
}

SEC("perf_event")
int sample_cpu_fp(struct bpf_perf_event_data *ctx)
{
	return record_sample(ctx, false);
}

/* A process user space has inspected ran exec: its memory map, command line
 * and maybe its runtime (a shell becoming a JVM) are new. Tell user space,
 * and make the next sample wake it at once to inspect it again. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(note_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = task->tgid;
	struct sp_event_header *hdr;

	if (!bpf_map_lookup_elem(&known_tgids, &tgid))
		return 0;
	bpf_map_delete_elem(&known_tgids, &tgid);
	hdr = bpf_ringbuf_reserve(&events, sizeof(*hdr), 0);
	if (!hdr) {
		sp_count(SP_CNT_LOST_RINGBUF);
		return 0;
	}
	hdr->kind = SP_EVENT_EXEC;
	hdr->cpu = bpf_get_smp_processor_id();
	hdr->tgid = tgid;
	hdr->tid = task->pid;
	hdr->timestamp_ns = bpf_ktime_get_ns();
	bpf_get_current_comm(hdr->comm, sizeof(hdr->comm));
	bpf_ringbuf_submit(hdr, 0);
	return 0;
}

/* `record -- cmd` profiles the command and everything it forks. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(follow_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 parent_tgid = parent->tgid, child_tgid = child->tgid;
	__u8 one = 1;

	if (!follow_children || parent_tgid == child_tgid)
		return 0;
	if (bpf_map_lookup_elem(&target_tgids, &parent_tgid))
		bpf_map_update_elem(&target_tgids, &child_tgid, &one, BPF_ANY);
	return 0;
}

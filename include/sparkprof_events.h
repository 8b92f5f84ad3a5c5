/* sparkprof_events.h - records the BPF programs send to user space.
 *
 * Shared by bpf/ and user/.  Every record in the "events" ring buffer starts
 * with struct sp_event_header; user space dispatches on header.kind.
 * Stacks travel raw (not as stack-map ids): stage attribution and JFR need
 * every sample's own thread and time, and raw stacks cannot collide or fill
 * a stack map.
 */
#ifndef SPARKPROF_EVENTS_H
#define SPARKPROF_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h> /* user space; BPF gets the types from vmlinux.h */
#endif

/* bpf_get_stack() is capped by kernel.perf_event_max_stack (127 by default). */
#define SP_MAX_STACK_DEPTH 127
#define SP_COMM_LEN 16

enum sp_event_kind {
	SP_EVENT_CPU_SAMPLE = 1, /* cpu-clock sample of a running thread */
	SP_EVENT_OFF_CPU = 2,    /* a thread's interval off the CPU */
	SP_EVENT_EXEC = 3,       /* a known process exec'd: a header alone */
};

/* Counters kept per CPU in the "counters" map; user space sums them. */
enum sp_counter {
	SP_CNT_SAMPLES,          /* samples sent to user space */
	SP_CNT_IDLE,             /* samples of the idle task, dropped */
	SP_CNT_LOST_RINGBUF,     /* lost: ring buffer full */
	SP_CNT_LOST_KSTACK,      /* kernel stack could not be read (sample kept) */
	SP_CNT_LOST_USTACK,      /* user stack could not be read (sample kept) */
	SP_CNT_OFFCPU_EVENTS,    /* off-CPU intervals sent */
	SP_CNT_OFFCPU_LOST,      /* lost: ring buffer full or no slot for an off-CPU interval */
	SP_CNT_OFFCPU_SHORT,     /* off-CPU intervals under the minimum, dropped */
	SP_CNT_MAX,
};

/* Task states at switch-out, as user space reports them. */
enum sp_thread_state {
	SP_STATE_RUNNING = 0,       /* on CPU (CPU samples) */
	SP_STATE_PREEMPTED = 1,     /* runnable, switched out involuntarily */
	SP_STATE_SLEEPING = 2,      /* TASK_INTERRUPTIBLE: waiting for an event */
	SP_STATE_UNINTERRUPTIBLE = 3, /* TASK_UNINTERRUPTIBLE: typically disk I/O */
	SP_STATE_OTHER = 4,
};

struct sp_event_header {
	__u32 kind;          /* enum sp_event_kind */
	__u32 cpu;
	__u32 tgid;          /* process id as the root PID namespace sees it */
	__u32 tid;
	__u64 timestamp_ns;  /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	char comm[SP_COMM_LEN];
};

struct sp_stacks {
	/* Bytes written by bpf_get_stack(), or a negative errno. */
	__s32 kstack_bytes;
	__s32 ustack_bytes;
	__u64 kstack[SP_MAX_STACK_DEPTH];
	__u64 ustack[SP_MAX_STACK_DEPTH];
};

struct sp_cpu_sample {
	struct sp_event_header hdr;
	struct sp_stacks stacks;
};

struct sp_off_cpu_event {
	struct sp_event_header hdr;   /* timestamp_ns: when the thread left the CPU */
	__u64 off_cpu_ns;             /* how long it stayed off */
	__u32 state;                  /* enum sp_thread_state */
	__u32 waker_tid;              /* 0 when unknown */
	struct sp_stacks stacks;      /* where it left the CPU */
};

#endif

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

/* bpf_get_stack() is capped by kernel.perf_event_max_stack (127 by default):
 * kernel stacks, and user stacks of processes that are not walked as JVMs. */
#define SP_MAX_STACK_DEPTH 127
/* User stacks of JVMs user space has described (struct sp_hotspot_info) are
 * walked by bpf/hotspot_walk.bpf.h, to this depth. */
#define SP_MAX_USER_DEPTH 2048
#define SP_COMM_LEN 16
/* HotSpot's code cache has up to three heaps (non-nmethods, profiled,
 * non-profiled). */
#define SP_MAX_CODE_HEAPS 4

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
	SP_CNT_USTACK_TRUNCATED, /* user stacks cut at SP_MAX_USER_DEPTH */
	SP_CNT_ANCHOR_USED,      /* user stacks continued from a JVM's last Java frame */
	SP_CNT_PYTHON_STACKS,    /* user stacks with a Python thread's frames */
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

/* What the walker needs to know of one JVM (map hotspot_jvms, key tgid),
 * read by user space from the JVM's vmStructs (docs/stack-walker.md). */
struct sp_hotspot_info {
	__u64 start_time;             /* the process's (task start_time): set by BPF
				       * at first use, so a reused pid is not walked
				       * with another process's layout */
	__u64 interp_lo, interp_hi;   /* the interpreter's code */
	__u64 java_thread_vtable;     /* what a JavaThread's first word holds */
	__u64 thr_current_offset;     /* Thread::_thr_current in libjvm's TLS block */
	__u32 tls_modid;              /* libjvm's TLS module id; 0: anchors unused */
	__u32 anchor_offset;          /* JavaThread::_anchor */
	__u32 last_java_sp_offset;    /* in JavaFrameAnchor */
	__u32 last_java_fp_offset;
	__u32 last_java_pc_offset;
	__u32 stack_base_offset;      /* JavaThread::_stack_base */
	/* The code cache, for stepping over compiled frames by their size
	 * (their rbp is no frame pointer without -XX:+PreserveFramePointer).
	 * n_code_heaps 0: frame pointers only. */
	__u64 code_lo, code_hi;       /* CodeCache::_low_bound, _high_bound */
	struct sp_code_heap {
		__u64 lo, hi;         /* the heap's reserved memory */
		__u64 segmap;         /* a byte per segment: hops back to its block */
		__u32 log2_segment;
		__u32 pad;
	} code_heaps[SP_MAX_CODE_HEAPS];
	__u32 n_code_heaps;
	__u32 frame_size_offset;      /* of CodeBlob::_frame_size (words), from the block */
};

/* What the Python walker needs to know of one CPython process (map
 * python_procs, key tgid), from the interpreter's version and symbols
 * (user/python/python_layout.h). Offsets are in bytes; SP_PY_NO_FIELD: the
 * version has no such field. */
#define SP_PY_NO_FIELD 0xffff
struct sp_python_info {
	__u64 start_time;             /* as sp_hotspot_info's */
	__u64 interp;                 /* the main PyInterpreterState */
	__u64 code_type;              /* &PyCode_Type: what a code object's ob_type holds */
	__u16 interp_threads;         /* its first PyThreadState */
	__u16 tstate_next;
	__u16 tstate_tid;             /* native_thread_id, or thread_id (pthread_t) */
	__u16 tstate_frame;           /* frame, cframe or current_frame */
	__u16 cframe_frame;           /* _PyCFrame.current_frame; SP_PY_NO_FIELD: none */
	__u16 frame_previous;
	__u16 frame_code;
	__u16 frame_instr;            /* instruction pointer, or f_lasti (int) */
	__u16 frame_owner;            /* SP_PY_NO_FIELD: none (3.10) */
	__u16 code_units;             /* co_code_adaptive; 0: frame_instr is f_lasti */
	__u16 frame_bytes;            /* read of a frame: past its last field used */
	__u8 tid_is_pthread;          /* match thread_id against the FS base (3.10) */
	__u8 pad;
};

/* In a walked user stack, a Python frame is its code object with this bit
 * set; the instruction index rides in the bits a user address leaves free
 * (SP_PY_FRAME_* below). */
#define SP_USTACK_PYTHON_TAG (1ULL << 62)
#define SP_PY_CODE_MASK ((1ULL << 47) - 8)
#define SP_PY_INSTR_MAX ((1u << 18) - 1)
static inline __u64 sp_py_frame(__u64 code, __u32 instr)
{
	if (instr > SP_PY_INSTR_MAX)
		instr = SP_PY_INSTR_MAX;
	return SP_USTACK_PYTHON_TAG | ((__u64)(instr >> 3) << 47) | (code & SP_PY_CODE_MASK) |
	       (instr & 7);
}
static inline __u64 sp_py_frame_code(__u64 frame) { return frame & SP_PY_CODE_MASK; }
static inline __u32 sp_py_frame_instr(__u64 frame)
{
	return (__u32)(((frame >> 47) & 0x7fff) << 3 | (frame & 7));
}

/* In a walked user stack, an interpreted frame is its Method* (fp[-3])
 * with this bit set instead of a pc in the interpreter: user addresses
 * never have it. */
#define SP_USTACK_METHOD_TAG (1ULL << 63)

/* ustack_flags */
#define SP_USTACK_WALKED 1u       /* by the HotSpot walker, not bpf_get_stack() */
#define SP_USTACK_TRUNCATED 2u    /* cut at SP_MAX_USER_DEPTH: the root side is missing */
#define SP_USTACK_ANCHOR 4u       /* frames from anchor_index on were reached from the
				   * thread's last Java frame (native part unwalkable) */
#define SP_USTACK_PYTHON 8u       /* native frames from bpf_get_stack(), then the
				   * thread's Python frames (SP_USTACK_PYTHON_TAG) */
#define SP_USTACK_IN_EXEC 16u     /* the thread was inside exec: no user frames, as its
				   * registers and memory belong to different programs */

/* Stacks end every record that has them: ustack_bytes / 8 user addresses,
 * then kstack_bytes / 8 kernel addresses, each leaf first. A record is as
 * long as what it holds, as copying records is most of what a record costs
 * the drain. The user part comes first because the Java
 * walker fills it frame by frame at a fixed place; the kernel stack is one
 * helper call, which can write at a bounded variable offset. */
struct sp_stacks {
	__s32 kstack_bytes;           /* bytes of kernel frames, or a negative errno */
	__s32 ustack_bytes;           /* bytes of user frames, or a negative errno */
	__u32 ustack_flags;           /* SP_USTACK_* */
	__u32 anchor_index;           /* with SP_USTACK_ANCHOR */
	__u64 frames[];               /* user (up to SP_MAX_USER_DEPTH), then kernel
				       * (up to SP_MAX_STACK_DEPTH) */
};

/* Room for the most frames a record holds. */
#define SP_MAX_FRAMES_BYTES ((SP_MAX_USER_DEPTH + SP_MAX_STACK_DEPTH) * sizeof(__u64))

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

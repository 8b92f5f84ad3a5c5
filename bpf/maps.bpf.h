/* maps.bpf.h - maps shared by every sparkprof BPF object.
 *
 * Each object declares them; user space loads the sampler first and makes
 * the others reuse its map fds (bpf_map__reuse_fd), so all records meet in
 * one ring buffer and one set of counters.
 */
#ifndef SPARKPROF_MAPS_BPF_H
#define SPARKPROF_MAPS_BPF_H

#include "sparkprof_events.h"

#define SP_MAX_TARGETS 65536

/* Records to user space. Size is set by user space before load. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SP_CNT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* Processes to profile when filtering (tgid -> 1). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SP_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u8);
} target_tgids SEC(".maps");

/* Processes user space has already inspected (tgid -> 1). A sample of any
 * other process wakes user space at once, so it reads /proc/PID/maps while
 * the process is still alive. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SP_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u8);
} known_tgids SEC(".maps");

/* JVMs whose user stacks are walked by hotspot_walk.bpf.h (tgid -> layout).
 * Nobody deletes the entry of a JVM that exits (its start time keeps a
 * later process with its pid from using it): LRU makes room for new ones. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct sp_hotspot_info);
} hotspot_jvms SEC(".maps");

static __always_inline void sp_count(__u32 counter)
{
	__u64 *value = bpf_map_lookup_elem(&counters, &counter);

	if (value)
		*value += 1;
}

/* Where a record's kernel frames go: right after the user frames it holds.
 * The clamp keeps the variable offset inside the record for the verifier. */
static __always_inline __u64 *sp_kstack_slot(struct sp_stacks *stacks)
{
	__s64 off = stacks->ustack_bytes;

	/* One 64-bit register, compared where it is used: a 32-bit clamp
	 * left clang offsetting by an unclamped copy. */
	barrier_var(off);
	if (off < 0)
		off = 0;
	if (off > SP_MAX_USER_DEPTH * sizeof(__u64))
		off = SP_MAX_USER_DEPTH * sizeof(__u64);
	barrier_var(off);
	return (__u64 *)((__u8 *)stacks->frames + off);
}

/* Waking the consumer costs an IPI per record in a VM; batch wake-ups: only
 * past the fill threshold, or for a process user space has not seen yet.
 * User space also polls on a timer. */
static __always_inline __u64 sp_wakeup_flags(__u32 tgid, __u64 wakeup_bytes)
{
	if (!bpf_map_lookup_elem(&known_tgids, &tgid))
		return BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

#endif

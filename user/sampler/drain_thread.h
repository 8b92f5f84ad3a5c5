/* drain_thread.h - drains the ring buffer on a thread of its own and hands
 * the records over in batches.
 *
 * Naming a record can be slow: a new process's maps and ELF files, a JVM's
 * helper log or perf map, all of them files another user may have made
 * large or slow. Done on the thread that drains the ring buffer, that time
 * stalls the drain and the node's samples are lost (ring buffer full). This
 * thread only copies records into a queue; the recorder names them from the
 * queue at its own pace. The queue is bounded: past its limit, records are
 * dropped and counted, and memory stays bounded whatever the consumer does.
 */
#ifndef SPARKPROF_DRAIN_THREAD_H
#define SPARKPROF_DRAIN_THREAD_H

#include <stddef.h>
#include <stdint.h>

#include "sampler/bpf_sampler.h"

struct drain_thread;

/* NULL with errno on failure. */
struct drain_thread *drain_thread_new(size_t max_queued_bytes);
void drain_thread_free(struct drain_thread *dt);

/* The sampler's record callback (bpf_sampler_options.on_record, with the
 * drain thread as ctx): copies the record into the producer's block,
 * which is queued when full or at drain_thread_flush.  One producer
 * thread at a time. */
int drain_thread_push(void *dt, const void *record, size_t size);
/* Queues what the producer's block holds: the thread does it after each
 * poll, and a caller pushing records itself when it is done. */
void drain_thread_flush(struct drain_thread *dt);

/* Starts polling sampler on the thread. 0 or -errno. */
int drain_thread_start(struct drain_thread *dt, struct bpf_sampler *sampler);
/* Stops and joins the thread; records still in the ring buffer are then
 * the caller's to poll (queued the same way, then drain_thread_flush). */
void drain_thread_stop(struct drain_thread *dt);

/* Waits up to timeout_ms for records, then hands queued records to fn in
 * arrival order: all of them, or (budget_ms > 0) those it can in about
 * budget_ms, so that a starved consumer still looks at the clock and its
 * signals. Returns how many, or the thread's poll error (-errno). */
int drain_thread_take(struct drain_thread *dt, int timeout_ms, int budget_ms,
		      bpf_sampler_record_fn fn, void *ctx);

/* Blocks the queue has allocated so far (not reused ones). */
uint64_t drain_thread_blocks_made(struct drain_thread *dt);

/* Bytes of the blocks it holds: queued, being filled, and spare. */
uint64_t drain_thread_memory(struct drain_thread *dt);

/* Records dropped because the queue was full. */
uint64_t drain_thread_dropped(struct drain_thread *dt);

#endif

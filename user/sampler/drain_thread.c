/* drain_thread.c - see drain_thread.h. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "sampler/drain_thread.h"

/* Emptied blocks are kept for reuse, as many as were in use at once (queued
 * or being read) in the last one or two windows: a block made afresh is
 * mapped and its pages faulted in and zeroed one by one, and at 10 kHz on
 * two CPUs, where the main thread takes records in bursts and nine blocks
 * were in use at times, keeping two made 40 blocks a second: zeroing and
 * faulting took half the recorder's CPU.  A quiet node keeps one or two;
 * after a burst (the main thread writing outputs) the spares go back
 * within two windows.  A block lasts about 10 ms at 10 kHz on two CPUs. */
#define BLOCK_BYTES (256u << 10)
#define SPARES_MAX 32
#define SPARE_WINDOW_NS (2000000000ull)
#define POLL_MS 100
#define DRAIN_NICE -10

/* Records are stored back to back in blocks: a size, then the bytes,
 * padded to 8. */
struct block {
	struct block *next;
	size_t used, cap;
	unsigned char data[];
};

struct drain_thread {
	pthread_mutex_t lock;
	pthread_cond_t filled;          /* the queue went from empty to not */
	struct block *head, *tail;      /* queued, oldest first */
	/* The producer's block, filled without the lock and queued when full
	 * or at drain_thread_flush: a lock per record was 7% of the
	 * recorder's CPU at 10 kHz. */
	struct block *filling;
	struct block *spare;            /* emptied blocks kept for reuse */
	size_t nspare;
	size_t in_use;                  /* blocks queued or being read */
	size_t peak_in_use, last_peak;  /* the most at once, this window and the last */
	uint64_t window_start_ns;
	uint64_t blocks_made;
	uint64_t held_bytes;            /* every block's allocation: queued, filling, spare */
	size_t queued_bytes, max_bytes;
	uint64_t dropped;
	int poll_error;
	bool stopping, running;
	pthread_t thread;
	struct bpf_sampler *sampler;
};

struct drain_thread *drain_thread_new(size_t max_queued_bytes)
{
	struct drain_thread *dt = calloc(1, sizeof(*dt));
	pthread_condattr_t attr;

	if (!dt)
		return NULL;
	pthread_mutex_init(&dt->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&dt->filled, &attr);
	pthread_condattr_destroy(&attr);
	dt->max_bytes = max_queued_bytes;
	return dt;
}

static void free_blocks(struct block *b)
{
	while (b) {
		struct block *next = b->next;

		free(b);
		b = next;
	}
}

void drain_thread_free(struct drain_thread *dt)
{
	if (!dt)
		return;
	drain_thread_stop(dt);
	free_blocks(dt->head);
	free_blocks(dt->filling);
	free_blocks(dt->spare);
	pthread_cond_destroy(&dt->filled);
	pthread_mutex_destroy(&dt->lock);
	free(dt);
}

static size_t slot_bytes(size_t size)
{
	return sizeof(size_t) + ((size + 7) & ~(size_t)7);
}

static void recycle_block(struct drain_thread *dt, struct block *b);

/* Queues the producer's block if it holds records (lock held). */
static void queue_filling(struct drain_thread *dt)
{
	struct block *b = dt->filling;

	if (!b || !b->used)
		return;
	if (dt->tail) {
		dt->tail->next = b;
	} else {
		dt->head = b;
		pthread_cond_signal(&dt->filled);   /* the queue was empty */
	}
	dt->tail = b;
	dt->queued_bytes += b->used;
	dt->filling = NULL;
}

/* A new producer's block with room for need bytes, or NULL when the queue
 * is at its bound (lock held). */
static struct block *new_filling(struct drain_thread *dt, size_t need)
{
	size_t cap = need > BLOCK_BYTES ? need : BLOCK_BYTES;
	struct block *b;

	if (dt->queued_bytes + cap > dt->max_bytes)
		return NULL;
	if (dt->spare && dt->spare->cap >= need) {
		b = dt->spare;
		dt->spare = b->next;
		dt->nspare--;
	} else {
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->cap = cap;
		dt->blocks_made++;
		dt->held_bytes += sizeof(*b) + cap;
	}
	if (++dt->in_use > dt->peak_in_use)
		dt->peak_in_use = dt->in_use;
	b->next = NULL;
	b->used = 0;
	return b;
}

int drain_thread_push(void *ctx, const void *record, size_t size)
{
	struct drain_thread *dt = ctx;
	size_t need = slot_bytes(size);
	struct block *b = dt->filling;

	if (!b || b->cap - b->used < need) {
		pthread_mutex_lock(&dt->lock);
		queue_filling(dt);
		if (dt->filling && dt->filling->cap < need) {  /* empty, too small */
			recycle_block(dt, dt->filling);
			dt->filling = NULL;
		}
		if (!dt->filling)
			dt->filling = new_filling(dt, need);
		b = dt->filling;
		if (!b || b->cap - b->used < need) {
			b = NULL;
			dt->dropped++;
		}
		pthread_mutex_unlock(&dt->lock);
		if (!b)
			return 0;
	}
	memcpy(b->data + b->used, &size, sizeof(size));
	memcpy(b->data + b->used + sizeof(size), record, size);
	b->used += need;
	return 0;
}

void drain_thread_flush(struct drain_thread *dt)
{
	if (!dt->filling || !dt->filling->used)
		return;
	pthread_mutex_lock(&dt->lock);
	queue_filling(dt);
	pthread_mutex_unlock(&dt->lock);
}

static void *drain(void *arg)
{
	struct drain_thread *dt = arg;

	/* On a node whose CPUs are all busy, a drain that waits its turn
	 * behind every runnable task lets the ring buffer fill: it is given a
	 * larger share. Its work per wake-up is a copy, so it takes little. */
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), DRAIN_NICE))
		sp_debug("drain thread: nice %d: %s", DRAIN_NICE, strerror(errno));

	for (;;) {
		int n;

		pthread_mutex_lock(&dt->lock);
		bool stop = dt->stopping;
		pthread_mutex_unlock(&dt->lock);
		if (stop)
			break;
		n = bpf_sampler_poll(dt->sampler, POLL_MS);
		drain_thread_flush(dt);
		if (n < 0) {
			pthread_mutex_lock(&dt->lock);
			dt->poll_error = n;
			pthread_cond_signal(&dt->filled);
			pthread_mutex_unlock(&dt->lock);
			break;
		}
	}
	return NULL;
}

int drain_thread_start(struct drain_thread *dt, struct bpf_sampler *sampler)
{
	int err;

	dt->sampler = sampler;
	dt->stopping = false;
	err = pthread_create(&dt->thread, NULL, drain, dt);
	if (err)
		return -err;
	pthread_setname_np(dt->thread, "sparkprof-drain");
	dt->running = true;
	return 0;
}

void drain_thread_stop(struct drain_thread *dt)
{
	if (!dt->running)
		return;
	pthread_mutex_lock(&dt->lock);
	dt->stopping = true;
	pthread_mutex_unlock(&dt->lock);
	pthread_join(dt->thread, NULL);
	dt->running = false;
}

/* The oldest block, taken off the queue (lock held). */
static struct block *pop_block(struct drain_thread *dt)
{
	struct block *b = dt->head;

	if (b) {
		dt->head = b->next;
		if (!dt->head)
			dt->tail = NULL;
		dt->queued_bytes -= b->used;
		b->next = NULL;
	}
	return b;
}

/* The spares worth keeping: the most blocks in use at once lately. */
static size_t spares_wanted(const struct drain_thread *dt)
{
	size_t want = dt->peak_in_use > dt->last_peak ? dt->peak_in_use : dt->last_peak;

	return want < SPARES_MAX ? want : SPARES_MAX;
}

/* Starts a new window every SPARE_WINDOW_NS, freeing the spares the last
 * two did not need (lock held). */
static void roll_window(struct drain_thread *dt, uint64_t now)
{
	if (now - dt->window_start_ns < SPARE_WINDOW_NS)
		return;
	dt->window_start_ns = now;
	dt->last_peak = dt->peak_in_use;
	dt->peak_in_use = dt->in_use;
	while (dt->nspare > spares_wanted(dt)) {
		struct block *b = dt->spare;

		dt->spare = b->next;
		dt->nspare--;
		dt->held_bytes -= sizeof(*b) + b->cap;
		free(b);
	}
}

static void recycle_block(struct drain_thread *dt, struct block *b)
{
	dt->in_use--;
	if (dt->nspare < spares_wanted(dt) && b->cap == BLOCK_BYTES) {
		b->next = dt->spare;
		dt->spare = b;
		dt->nspare++;
	} else {
		dt->held_bytes -= sizeof(*b) + b->cap;
		free(b);
	}
}

int drain_thread_take(struct drain_thread *dt, int timeout_ms, int budget_ms,
		      bpf_sampler_record_fn fn, void *ctx)
{
	uint64_t deadline = 0;
	struct block *b;
	int n = 0, err;

	pthread_mutex_lock(&dt->lock);
	if (!dt->head && !dt->poll_error && timeout_ms > 0) {
		struct timespec until;

		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += timeout_ms / 1000;
		until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&dt->filled, &dt->lock, &until);
	}
	err = dt->poll_error;
	roll_window(dt, monotonic_ns());
	if (budget_ms > 0)
		deadline = monotonic_ns() + (uint64_t)budget_ms * 1000000ULL;
	/* A block at a time, named without the lock (the thread goes on
	 * queueing meanwhile), until the queue is empty or the budget spent. */
	while ((b = pop_block(dt))) {
		pthread_mutex_unlock(&dt->lock);
		for (size_t off = 0; off < b->used;) {
			size_t size;

			memcpy(&size, b->data + off, sizeof(size));
			fn(ctx, b->data + off + sizeof(size), size);
			off += slot_bytes(size);
			n++;
		}
		pthread_mutex_lock(&dt->lock);
		recycle_block(dt, b);
		if (deadline && monotonic_ns() >= deadline)
			break;
	}
	pthread_mutex_unlock(&dt->lock);
	return err ? err : n;
}

/* A counter the producer updates under the lock. */
static uint64_t read_counter(struct drain_thread *dt, const uint64_t *counter)
{
	uint64_t n;

	pthread_mutex_lock(&dt->lock);
	n = *counter;
	pthread_mutex_unlock(&dt->lock);
	return n;
}

uint64_t drain_thread_blocks_made(struct drain_thread *dt)
{
	return read_counter(dt, &dt->blocks_made);
}

uint64_t drain_thread_memory(struct drain_thread *dt)
{
	return read_counter(dt, &dt->held_bytes);
}

uint64_t drain_thread_dropped(struct drain_thread *dt)
{
	return read_counter(dt, &dt->dropped);
}

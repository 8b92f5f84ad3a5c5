/* test_drain_thread.c - the ring buffer's drain never waits for the code
 * that names records: records queue up, in order, within a bound, while the
 * consumer is busy (a slow perf map, a slow /proc file); blocks are reused
 * as long as bursts need them. */
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "sampler/drain_thread.h"
#include "tap.h"

struct consumer {
	sem_t entered, release;
	uint32_t next;          /* the value the next record must carry */
	int in_order, seen;
	size_t bad_size;
};

/* Blocks in its first record until the producer has pushed everything: a
 * push that waited for the consumer would never finish. */
static int consume(void *ctx, const void *rec, size_t size)
{
	struct consumer *c = ctx;
	uint32_t v;

	if (c->seen++ == 0) {
		sem_post(&c->entered);
		sem_wait(&c->release);
	}
	memcpy(&v, rec, sizeof(v));
	c->in_order += v == c->next;
	c->next = v + 1;
	if (size != sizeof(v) + (v % 97) * 8)
		c->bad_size++;
	return 0;
}

static int slow(void *ctx, const void *rec, size_t size)
{
	(void)ctx;
	(void)rec;
	(void)size;
	usleep(1000);
	return 0;
}

static int consume_none(void *ctx, const void *rec, size_t size)
{
	(void)ctx;
	(void)rec;
	(void)size;
	return 0;
}

struct taker {
	struct drain_thread *dt;
	struct consumer *c;
	int taken;
};

static void *take(void *arg)
{
	struct taker *t = arg;

	t->taken = drain_thread_take(t->dt, 1000, 0, consume, t->c);
	return NULL;
}

static void push(struct drain_thread *dt, uint32_t v)
{
	unsigned char rec[4 + 96 * 8] = { 0 };

	memcpy(rec, &v, sizeof(v));
	drain_thread_push(dt, rec, sizeof(v) + (v % 97) * 8);
}

int main(void)
{
	struct drain_thread *dt = drain_thread_new(16u << 20);
	struct consumer c = { .next = 0 };
	struct taker t = { dt, &c, 0 };
	pthread_t thread;

	CHECK(dt != NULL, "a drain thread's queue");
	if (!dt)
		TAP_DONE();
	sem_init(&c.entered, 0, 0);
	sem_init(&c.release, 0, 0);

	push(dt, 0);
	CHECK(drain_thread_take(dt, 0, 0, consume_none, NULL) == 0,
	      "a record pushed waits in the producer's block");
	drain_thread_flush(dt);
	pthread_create(&thread, NULL, take, &t);
	sem_wait(&c.entered);
	/* The consumer is stuck in record 0: 20000 more records still queue. */
	for (uint32_t v = 1; v <= 20000; v++)
		push(dt, v);
	drain_thread_flush(dt);
	sem_post(&c.release);
	pthread_join(thread, NULL);
	CHECK(t.taken == 20001, "the records pushed meanwhile were all queued and taken (%d)",
	      t.taken);
	int n;
	CHECK(c.in_order == 20001 && c.bad_size == 0, "in order, sizes kept (%d in order)",
	      c.in_order);
	CHECK(drain_thread_dropped(dt) == 0, "nothing dropped under the bound");

	/* Past the bound, records are dropped and counted, not blocked on. */
	uint32_t pushed = 0;
	for (; pushed < 200000; pushed++)
		push(dt, c.next + pushed);
	drain_thread_flush(dt);
	uint64_t dropped = drain_thread_dropped(dt);
	CHECK(dropped > 0 && dropped < pushed, "over 16 MiB queued, %llu of %u dropped",
	      (unsigned long long)dropped, pushed);
	n = drain_thread_take(dt, 0, 0, consume, &c);
	CHECK((uint64_t)n + dropped == pushed, "the rest is handed over (%d)", n);
	CHECK(drain_thread_take(dt, 10, 0, consume, &c) == 0, "an empty queue waits, then gives 0");

	/* A budget: a slow consumer gets back to its loop after about that
	 * long (here after the first 256 KiB block: 10 records of 25 KB). */
	static unsigned char big[25000];
	for (int i = 0; i < 30; i++)
		drain_thread_push(dt, big, sizeof(big));
	drain_thread_flush(dt);
	n = drain_thread_take(dt, 0, 1, slow, NULL);
	CHECK(n == 10, "a 1 ms budget stops after the first block (%d records)", n);
	n = drain_thread_take(dt, 0, 0, slow, NULL);
	CHECK(n == 20, "the rest stays queued for the next take (%d)", n);
	drain_thread_free(dt);

	/* Bursts of nine blocks (the main thread busy, then taking them all):
	 * after the first, every block is a reused one.  Blocks made afresh
	 * are mapped and faulted in page by page: at 10 kHz that was half the
	 * recorder's CPU. */
	dt = drain_thread_new(64u << 20);
	uint64_t made_first = 0, made;
	for (int round = 0; round < 20; round++) {
		for (int i = 0; i < 90; i++)
			drain_thread_push(dt, big, sizeof(big));
		drain_thread_flush(dt);
		drain_thread_take(dt, 0, 0, consume_none, NULL);
		if (!round)
			made_first = drain_thread_blocks_made(dt);
	}
	made = drain_thread_blocks_made(dt);
	CHECK(made_first >= 9 && made == made_first,
	      "20 bursts of 9 blocks make %llu blocks, all in the first",
	      (unsigned long long)made);
	CHECK(drain_thread_memory(dt) >= 9 * (256u << 10), "it holds them as spares: %llu bytes",
	      (unsigned long long)drain_thread_memory(dt));
	/* Two quiet windows later the spares are gone: a burst makes its
	 * blocks again. */
	for (int i = 0; i < 3; i++) {
		drain_thread_push(dt, big, sizeof(big));
		drain_thread_flush(dt);
		drain_thread_take(dt, 0, 0, consume_none, NULL);
		usleep(2100 * 1000);
	}
	CHECK(drain_thread_memory(dt) <= 2 * ((256u << 10) + 64),
	      "two quiet windows later it holds at most two blocks: %llu bytes",
	      (unsigned long long)drain_thread_memory(dt));
	for (int i = 0; i < 90; i++)
		drain_thread_push(dt, big, sizeof(big));
	drain_thread_flush(dt);
	drain_thread_take(dt, 0, 0, consume_none, NULL);
	CHECK(drain_thread_blocks_made(dt) >= made + 7,
	      "after 6 s with one block in use, a burst makes %llu blocks again",
	      (unsigned long long)(drain_thread_blocks_made(dt) - made));
	drain_thread_free(dt);
	TAP_DONE();
}

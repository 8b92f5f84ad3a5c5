/* test_fifo_arena.c - items freed in order reuse their chunks: a steady
 * stream allocates nothing once warm; the arena says what it holds. */
#include <stdint.h>
#include <string.h>

#include "base/fifo_arena.h"
#include "tap.h"

int main(void)
{
	struct fifo_arena *a = fifo_arena_new(4096);
	void *held[64];
	int ok = 1;

	CHECK(a != NULL, "an arena");
	if (!a)
		TAP_DONE();
	/* A window of 32 items of varying size, slid over 100k items. */
	for (unsigned i = 0; i < 100000; i++) {
		size_t size = 8 + (i % 13) * 24;

		held[i % 64] = fifo_arena_alloc(a, size);
		if (!held[i % 64] || ((uintptr_t)held[i % 64] & 7)) {
			ok = 0;
			break;
		}
		memset(held[i % 64], (int)(i & 0xff), size);
		if (i >= 32) {
			/* The oldest held item still has its bytes. */
			unsigned old = i - 32;
			const unsigned char *p = held[old % 64];

			ok &= p[0] == (old & 0xff) && p[8 + (old % 13) * 24 - 1] == (old & 0xff);
			fifo_arena_release_oldest(a);
		}
		if (i == 1000)
			CHECK(fifo_arena_chunks_made(a) <= 4, "warm after 1000 items (%zu chunks)",
			      fifo_arena_chunks_made(a));
	}
	CHECK(ok, "items are 8-aligned and keep their bytes until released");
	CHECK(fifo_arena_chunks_made(a) <= 4, "100k items later, no more chunks (%zu)",
	      fifo_arena_chunks_made(a));
	size_t warm = fifo_arena_memory(a);

	CHECK(warm >= 4096 && warm <= fifo_arena_chunks_made(a) * (4096 + 64),
	      "it holds its chunks: %zu bytes", warm);
	void *big = fifo_arena_alloc(a, 10000);
	CHECK(big != NULL, "an item bigger than a chunk gets its own");
	memset(big, 1, 10000);
	CHECK(fifo_arena_memory(a) >= warm + 10000, "and holds it too");
	for (int i = 0; i < 33; i++)
		fifo_arena_release_oldest(a);
	CHECK(fifo_arena_memory(a) <= 2 * (4096 + 64) + 10000 + 64,
	      "all released, it keeps two spare chunks and the empty last one (%zu bytes)",
	      fifo_arena_memory(a));
	fifo_arena_free(a);
	TAP_DONE();
}

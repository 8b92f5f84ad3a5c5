/* retired_index.c - see retired_index.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow_array.h"
#include "output/retired_index.h"

#define PAGE_PLACES 4096u
#define PAGE_BYTES (PAGE_PLACES * sizeof(uint64_t))
#define PAGES_KEPT 4
/* The newest names: open addressing, written out as a run when half full. */
#define TABLE_SLOTS 16384u
#define BLOCK_NAMES 512u        /* 4 KiB of a run: one read */

/* A name's entry; runs are sorted by tag, then seq. */
struct name_entry {
	uint32_t tag;
	uint32_t seq1;          /* seq + 1; 0: an empty slot */
};

struct place_page {
	struct spill_ref ref;   /* its copy in the spill file (bytes 0: none) */
	uint64_t *mem;          /* NULL: not in memory */
	uint64_t used;          /* when last used, by the index's clock */
	bool dirty;             /* mem differs from the copy */
};

struct name_run {
	struct spill_ref ref;
	size_t count;
	uint32_t *fences;       /* the first tag of each block */
};

struct retired_index {
	struct spill_file *spill;
	struct place_page *pages;
	size_t npages, cappages, resident;
	uint64_t clock;
	uint64_t nplaces;       /* highest seq set, plus one */
	bool writes_off;        /* a page did not write: changed pages stay in memory */
	struct name_entry *table;
	size_t ntable;
	struct name_run *runs;
	size_t nruns, capruns;
	struct name_entry block[BLOCK_NAMES];
};

/* Blocks of a run of count names: also its fences. */
static size_t blocks_of(size_t count)
{
	return (count + BLOCK_NAMES - 1) / BLOCK_NAMES;
}

/* Reads len bytes at offset, all of them: 0, or -errno (-EIO when short). */
static int read_whole(struct spill_file *spill, uint64_t offset, void *buf, size_t len)
{
	long got = spill_file_read(spill, offset, buf, len);

	return got == (long)len ? 0 : got < 0 ? (int)got : -EIO;
}

struct retired_index *retired_index_new(struct spill_file *spill)
{
	struct retired_index *ix = calloc(1, sizeof(*ix));

	if (!ix) {
		errno = ENOMEM;
		return NULL;
	}
	ix->spill = spill;
	return ix;
}

void retired_index_free(struct retired_index *ix)
{
	if (!ix)
		return;
	for (size_t i = 0; i < ix->npages; i++)
		free(ix->pages[i].mem);
	for (size_t i = 0; i < ix->nruns; i++)
		free(ix->runs[i].fences);
	free(ix->pages);
	free(ix->runs);
	free(ix->table);
	free(ix);
}

/* ---- places ---- */

/* Takes the least recently used page but want out of memory, writing it
 * to the spill file if it changed (over its copy, once it has one): its
 * memory, or NULL when none can go.  Then the caller allocates, and memory
 * grows rather than losing a place; after a failed write only unchanged
 * pages go, so a full disk costs one message. */
static uint64_t *evict_page(struct retired_index *ix, size_t want)
{
	struct place_page *lru = NULL;
	uint64_t *mem;
	int err;

	for (size_t i = 0; i < ix->npages; i++) {
		struct place_page *p = &ix->pages[i];

		if (p->mem && i != want && !(p->dirty && ix->writes_off) &&
		    (!lru || p->used < lru->used))
			lru = p;
	}
	if (!lru)
		return NULL;
	if (lru->dirty) {
		err = lru->ref.bytes ? spill_file_rewrite(ix->spill, &lru->ref, lru->mem, PAGE_BYTES)
				     : spill_file_put(ix->spill, lru->mem, PAGE_BYTES, &lru->ref);
		if (err) {
			ix->writes_off = true;
			return NULL;
		}
		lru->dirty = false;
	}
	mem = lru->mem;
	lru->mem = NULL;
	ix->resident--;
	return mem;
}

/* The page holding seq, in memory; NULL with *err. */
static uint64_t *page_of(struct retired_index *ix, uint32_t seq, int *err)
{
	size_t i = seq / PAGE_PLACES;
	struct place_page *p;
	uint64_t *mem = NULL;

	*err = 0;
	if (i >= ix->npages) {
		if (grow_array((void **)&ix->pages, &ix->cappages, i + 1, sizeof(*ix->pages))) {
			*err = -ENOMEM;
			return NULL;
		}
		memset(ix->pages + ix->npages, 0, (i + 1 - ix->npages) * sizeof(*ix->pages));
		ix->npages = i + 1;
	}
	p = &ix->pages[i];
	if (!p->mem) {
		if (ix->resident >= PAGES_KEPT)
			mem = evict_page(ix, i);
		if (!mem && !(mem = malloc(PAGE_BYTES))) {
			*err = -ENOMEM;
			return NULL;
		}
		if (!p->ref.bytes) {
			memset(mem, 0, PAGE_BYTES);
		} else if ((*err = read_whole(ix->spill, p->ref.offset, mem, PAGE_BYTES))) {
			free(mem);
			return NULL;
		}
		p->mem = mem;
		ix->resident++;
	}
	p->used = ++ix->clock;
	return p->mem;
}

int retired_index_set_place(struct retired_index *ix, uint32_t seq, uint64_t place)
{
	uint64_t *page;
	int err;

	if (seq > ix->nplaces)
		return -EINVAL;
	if (!(page = page_of(ix, seq, &err)))
		return err;
	page[seq % PAGE_PLACES] = place;
	ix->pages[seq / PAGE_PLACES].dirty = true;
	if (seq == ix->nplaces)
		ix->nplaces++;
	return 0;
}

int retired_index_place(struct retired_index *ix, uint32_t seq, uint64_t *place)
{
	uint64_t *page;
	int err;

	*place = 0;
	if (seq >= ix->nplaces)
		return 0;
	if (!(page = page_of(ix, seq, &err)))
		return err;
	*place = page[seq % PAGE_PLACES];
	return 0;
}

/* ---- names ---- */

static int by_tag(const void *a, const void *b)
{
	const struct name_entry *x = a, *y = b;

	if (x->tag != y->tag)
		return x->tag < y->tag ? -1 : 1;
	return x->seq1 < y->seq1 ? -1 : x->seq1 > y->seq1;
}

static int add_run(struct retired_index *ix, struct spill_ref ref, size_t count,
		   uint32_t *fences)
{
	if (grow_array((void **)&ix->runs, &ix->capruns, ix->nruns + 1, sizeof(*ix->runs))) {
		free(fences);
		return -ENOMEM;
	}
	ix->runs[ix->nruns++] = (struct name_run){ ref, count, fences };
	return 0;
}

/* Reads a run block by block. */
struct run_reader {
	const struct name_run *run;
	size_t pos, at, n;
	struct name_entry buf[BLOCK_NAMES];
};

/* The reader's next entry, or NULL at the end (*err set on a failed read). */
static const struct name_entry *next_entry(struct spill_file *spill, struct run_reader *r,
					   int *err)
{
	if (r->at == r->n) {
		size_t n = r->run->count - r->pos;

		if (!n)
			return NULL;
		n = n < BLOCK_NAMES ? n : BLOCK_NAMES;
		if ((*err = read_whole(spill, r->run->ref.offset + r->pos * sizeof(r->buf[0]), r->buf,
				       n * sizeof(r->buf[0]))))
			return NULL;
		r->pos += n;
		r->at = 0;
		r->n = n;
	}
	return &r->buf[r->at++];
}

/* Merges the two newest runs into one, read and written a block at a
 * time: the older one is at least as large, so each name is merged about
 * log2(names / table) times over a run. */
static int merge_newest(struct retired_index *ix)
{
	struct name_run *a = &ix->runs[ix->nruns - 2], *b = &ix->runs[ix->nruns - 1];
	size_t count = a->count + b->count, nout = 0, done = 0;
	struct run_reader *r = calloc(2, sizeof(*r));
	uint32_t *fences = malloc(blocks_of(count) * sizeof(*fences));
	const struct name_entry *x, *y;
	struct spill_ref ref = { 0, 0 };
	int err = 0;

	if (!r || !fences) {
		err = -ENOMEM;
		goto out;
	}
	r[0].run = a;
	r[1].run = b;
	x = next_entry(ix->spill, &r[0], &err);
	y = err ? NULL : next_entry(ix->spill, &r[1], &err);
	while (!err && (x || y)) {
		const struct name_entry **take = !y || (x && by_tag(x, y) <= 0) ? &x : &y;

		if (done % BLOCK_NAMES == 0)
			fences[done / BLOCK_NAMES] = (*take)->tag;
		ix->block[nout++] = **take;
		done++;
		*take = next_entry(ix->spill, &r[take == &x ? 0 : 1], &err);
		if (nout == BLOCK_NAMES || (!x && !y)) {
			err = err ?: spill_file_append(ix->spill, ix->block,
						       nout * sizeof(ix->block[0]), &ref);
			nout = 0;
		}
	}
	if (!err && done != count)
		err = -EIO;
	if (err)
		goto out;
	spill_file_discard(ix->spill, &a->ref);
	spill_file_discard(ix->spill, &b->ref);
	free(a->fences);
	free(b->fences);
	*a = (struct name_run){ ref, count, fences };
	fences = NULL;
	ix->nruns--;
out:
	free(fences);
	free(r);
	return err;
}

/* Writes the table out as the newest run (the table kept as it was when
 * that fails) and merges as a binary counter carries, while the run below
 * is no larger. */
static int flush_table(struct retired_index *ix)
{
	struct name_entry *sorted = malloc(ix->ntable * sizeof(*sorted));
	uint32_t *fences = malloc(blocks_of(ix->ntable) * sizeof(*fences));
	struct spill_ref ref;
	size_t n = 0;
	int err;

	if (!sorted || !fences) {
		free(sorted);
		free(fences);
		return -ENOMEM;
	}
	for (size_t i = 0; i < TABLE_SLOTS; i++)
		if (ix->table[i].seq1)
			sorted[n++] = ix->table[i];
	qsort(sorted, n, sizeof(*sorted), by_tag);
	for (size_t i = 0; i < n; i += BLOCK_NAMES)
		fences[i / BLOCK_NAMES] = sorted[i].tag;
	err = spill_file_put(ix->spill, sorted, n * sizeof(*sorted), &ref);
	free(sorted);
	if (err) {
		free(fences);
		return err;
	}
	if ((err = add_run(ix, ref, n, fences)))
		return err;
	memset(ix->table, 0, TABLE_SLOTS * sizeof(*ix->table));
	ix->ntable = 0;
	/* A merge that fails leaves the runs as they were: the next flush
	 * tries again. */
	while (ix->nruns >= 2 && ix->runs[ix->nruns - 2].count <= ix->runs[ix->nruns - 1].count)
		if (merge_newest(ix))
			break;
	return 0;
}

int retired_index_add_name(struct retired_index *ix, uint32_t tag, uint32_t seq)
{
	size_t mask = TABLE_SLOTS - 1, j;
	int err;

	if (!ix->table && !(ix->table = calloc(TABLE_SLOTS, sizeof(*ix->table))))
		return -ENOMEM;
	if ((ix->ntable + 1) * 2 > TABLE_SLOTS && (err = flush_table(ix)))
		return err;
	for (j = tag & mask; ix->table[j].seq1; j = (j + 1) & mask)
		;
	ix->table[j] = (struct name_entry){ tag, seq + 1 };
	ix->ntable++;
	return 0;
}

/* Calls fn for each entry of run under tag: the blocks from the last whose
 * first tag is below it (the entries may begin there) while their first
 * tag is not above it. */
static int find_in_run(struct retired_index *ix, const struct name_run *run, uint32_t tag,
		       int (*fn)(uint32_t seq, void *ctx), void *ctx)
{
	size_t nblocks = blocks_of(run->count), lo = 0, hi = nblocks;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (run->fences[mid] < tag)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t b = lo ? lo - 1 : 0; b < nblocks; b++) {
		size_t n = run->count - b * BLOCK_NAMES;
		int err;

		if (b >= lo && run->fences[b] > tag)
			break;
		n = n < BLOCK_NAMES ? n : BLOCK_NAMES;
		if ((err = read_whole(ix->spill,
				      run->ref.offset + b * BLOCK_NAMES * sizeof(ix->block[0]),
				      ix->block, n * sizeof(ix->block[0]))))
			return err;
		for (size_t i = 0; i < n; i++) {
			struct name_entry e = ix->block[i];
			int ret;

			if (e.tag > tag)
				return 0;
			if (e.tag == tag && (ret = fn(e.seq1 - 1, ctx)))
				return ret;
		}
	}
	return 0;
}

int retired_index_find(struct retired_index *ix, uint32_t tag,
		       int (*fn)(uint32_t seq, void *ctx), void *ctx)
{
	size_t mask = TABLE_SLOTS - 1;
	int ret;

	if (ix->table)
		for (size_t j = tag & mask; ix->table[j].seq1; j = (j + 1) & mask)
			if (ix->table[j].tag == tag && (ret = fn(ix->table[j].seq1 - 1, ctx)))
				return ret;
	for (size_t r = ix->nruns; r-- > 0;)
		if ((ret = find_in_run(ix, &ix->runs[r], tag, fn, ctx)))
			return ret;
	return 0;
}

size_t retired_index_memory(const struct retired_index *ix)
{
	size_t n = sizeof(*ix) + ix->cappages * sizeof(*ix->pages) + ix->resident * PAGE_BYTES +
		   (ix->table ? TABLE_SLOTS * sizeof(*ix->table) : 0) +
		   ix->capruns * sizeof(*ix->runs);

	for (size_t r = 0; r < ix->nruns; r++)
		n += blocks_of(ix->runs[r].count) * sizeof(*ix->runs[r].fences);
	return n;
}

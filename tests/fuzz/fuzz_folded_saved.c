/* fuzz_folded_saved.c - folded_tree_add_saved on any bytes, twice into
 * one tree (the second merges), then the tree written and saved again;
 * and the bytes cut in two, both put in a spill file and merged as
 * streams (folded_saved_merge), which must succeed exactly when both
 * halves read as saved trees, and then give their tree to the byte. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "output/folded.h"

static int check(uint32_t node, uint32_t parent, const char *text, size_t len, int type,
		 uint64_t self, void *ctx)
{
	(void)text, (void)len, (void)type, (void)self;
	if (parent >= node || node >= *(size_t *)ctx)
		abort();
	return 0;
}

/* The saved bytes of a tree of one or two saved trees; -EINVAL when one
 * is not a saved tree. */
static int saved_of(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, void **out,
		    size_t *len)
{
	struct folded_tree *t = folded_tree_new();
	int err = t ? folded_tree_add_saved(t, a, alen) : -ENOMEM;

	if (!err && b)
		err = folded_tree_add_saved(t, b, blen);
	if (!err)
		err = folded_tree_save(t, out, len);
	folded_tree_free(t);
	return err;
}

static void check_merge(const uint8_t *data, size_t size)
{
	size_t cut = size ? (size_t)data[0] * size / 256 : 0;
	struct spill_file *spill = spill_file_new("/tmp", "fuzzed trees");
	struct spill_ref a = { 0, 0 }, b = { 0, 0 }, merged;
	void *want = NULL, *got = NULL;
	size_t want_len = 0;
	int err, whole;

	if (!spill || spill_file_put(spill, data, cut, &a) ||
	    spill_file_put(spill, data + cut, size - cut, &b)) {
		spill_file_free(spill);
		return;
	}
	whole = saved_of(data, cut, data + cut, size - cut, &want, &want_len);
	err = folded_saved_merge(spill, &a, &b, &merged);
	if (err != -ENOMEM && whole != -ENOMEM && !err != !whole)
		abort();        /* merged a half that does not read, or refused good ones */
	if (!err && !whole &&
	    (merged.bytes != want_len || spill_file_get(spill, &merged, &got) ||
	     memcmp(got, want, want_len)))
		abort();        /* not the tree of both */
	free(want);
	free(got);
	spill_file_free(spill);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct folded_tree *t = folded_tree_new();
	size_t nodes, len;
	void *saved;

	if (!t)
		return 0;
	folded_tree_add_saved(t, data, size);
	folded_tree_add_saved(t, data, size);
	nodes = folded_tree_node_count(t);
	folded_tree_foreach(t, 3, check, &nodes);
	if (!folded_tree_save(t, &saved, &len)) {
		struct folded_tree *again = folded_tree_new();

		/* what the tree saves always reads back */
		if (again && folded_tree_add_saved(again, saved, len))
			abort();
		folded_tree_free(again);
		free(saved);
	}
	folded_tree_free(t);
	check_merge(data, size);
	return 0;
}

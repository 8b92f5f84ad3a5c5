/* fuzz_folded_saved.c - folded_tree_add_saved on any bytes, twice into
 * one tree (the second merges), then the tree written and saved again. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "output/folded.h"

static int check(uint32_t node, uint32_t parent, const char *text, size_t len, int type,
		 uint64_t self, void *ctx)
{
	(void)text, (void)len, (void)type, (void)self;
	if (parent >= node || node >= *(size_t *)ctx)
		abort();
	return 0;
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
	return 0;
}

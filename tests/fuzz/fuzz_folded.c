/* fuzz_folded.c - the folded-stack parser (flame_tree_parse) on any bytes,
 * then the tree through the pprof encoder. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "output/flame_tree.h"
#include "output/pprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct flame_tree *t = flame_tree_new();
	struct pprof_options po = { .sample_type = "samples", .unit = "count", .multiplier = 1 };
	char err[128];
	uint8_t *out;
	size_t len, n;

	if (!t)
		return 0;
	/* Both columns, as a diff reads them. */
	flame_tree_parse(t, (const char *)data, size, 0, err, sizeof(err));
	flame_tree_parse(t, (const char *)data, size / 2, 1, err, sizeof(err));
	const struct flame_node *nodes = flame_tree_nodes(t, &n);
	for (size_t i = 1; i < n; i++)
		if (nodes[i].parent >= i || !flame_tree_name(t, nodes[i].name))
			abort();
	if (!pprof_encode(t, &po, &out, &len))
		free(out);
	flame_tree_free(t);
	return 0;
}

/* pprof.c - see pprof.h. The protobuf is protobuf-c's (output/pprof_out.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/atomic_file.h"
#include "base/log.h"
#include "base/grow_array.h"
#include "output/pprof.h"

const char *const pprof_type_files[FLAME_TYPES] = {
	[FRAME_NATIVE] = "[native]", [FRAME_CPP] = "[c++]", [FRAME_KERNEL] = "[kernel]",
	[FRAME_JIT] = "[jit]", [FRAME_INLINED] = "[inlined]",
	[FRAME_INTERPRETED] = "[interpreted]", [FRAME_PYTHON] = "[python]", [FLAME_JAVA] = "[java]",
};
const char *const pprof_type_suffixes[FLAME_TYPES] = {
	[FRAME_NATIVE] = "", [FRAME_CPP] = "", [FRAME_KERNEL] = "_[k]", [FRAME_JIT] = "_[j]",
	[FRAME_INLINED] = "_[i]", [FRAME_INTERPRETED] = "_[0]", [FRAME_PYTHON] = "_[p]",
	[FLAME_JAVA] = "",
};

/* Functions and locations: one each per (name, type) that occurs; their
 * ids in func_ids. */
static void functions(struct pprof_out *out, const struct flame_tree *t, uint32_t *func_ids)
{
	size_t nnodes;
	const struct flame_node *nodes = flame_tree_nodes(t, &nnodes);
	uint32_t next_id = 1;
	char system_name[4096];

	for (size_t i = 1; i < nnodes; i++) {
		size_t key = (size_t)nodes[i].name * FLAME_TYPES + nodes[i].type;
		const char *name = flame_tree_name(t, nodes[i].name);

		if (func_ids[key])
			continue;
		func_ids[key] = next_id;
		snprintf(system_name, sizeof(system_name), "%s%s", name,
			 pprof_type_suffixes[nodes[i].type]);
		pprof_out_function(out, next_id++, name, system_name,
				   pprof_type_files[nodes[i].type]);
	}
}

/* A sample per node with self counts: its stack, leaf first. Stacks with
 * no frames (a bare count, node 0) are samples with no locations. */
static int samples(struct pprof_out *out, const struct flame_tree *t, const uint32_t *func_ids,
		   uint64_t multiplier)
{
	size_t nnodes, cap = 64, n;
	const struct flame_node *nodes = flame_tree_nodes(t, &nnodes);
	uint64_t *locs = malloc(cap * sizeof(*locs));

	for (size_t i = 0; locs && i < nnodes; i++) {
		int64_t value = (int64_t)(nodes[i].self[0] * multiplier);

		if (!nodes[i].self[0])
			continue;
		n = 0;
		for (uint32_t k = (uint32_t)i; k && locs; k = nodes[k].parent) {
			if (n == cap && grow_array((void **)&locs, &cap, n + 1, sizeof(*locs)))
				break;
			locs[n++] = func_ids[(size_t)nodes[k].name * FLAME_TYPES + nodes[k].type];
		}
		pprof_out_sample(out, locs, n, &value, 1, NULL, 0);
	}
	free(locs);
	return locs ? 0 : -ENOMEM;
}

int pprof_encode(const struct flame_tree *t, const struct pprof_options *o, uint8_t **out,
		 size_t *out_len)
{
	struct pprof_out p;
	/* function (and location) id per (name, type): name * FLAME_TYPES + type */
	size_t nkeys = flame_tree_name_count(t) * FLAME_TYPES;
	uint32_t *func_ids = calloc(nkeys ? nkeys : 1, sizeof(*func_ids));
	int err = func_ids ? pprof_out_init(&p) : -ENOMEM;

	if (err) {
		free(func_ids);
		return err;
	}
	pprof_out_value_type(&p, false, o->sample_type, o->unit, 0);
	if (o->period)
		pprof_out_value_type(&p, true, o->period_type, o->period_unit, (int64_t)o->period);
	functions(&p, t, func_ids);
	err = samples(&p, t, func_ids, o->multiplier ? o->multiplier : 1);
	free(func_ids);
	if (err || p.failed) {
		pprof_out_free(&p);
		return -ENOMEM;
	}
	*out = p.bytes.data;
	*out_len = p.bytes.len;
	p.bytes = (struct byte_buf){ 0 };
	pprof_out_free(&p);
	return 0;
}

static int gzip_to(FILE *f, const uint8_t *data, size_t len)
{
	z_stream z = { 0 };
	uint8_t buf[65536];
	int zerr;

	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (uint8_t *)data;
	do {
		size_t chunk = len > (1u << 30) ? (1u << 30) : len;

		z.avail_in = (uInt)chunk;
		len -= chunk;
		do {
			z.next_out = buf;
			z.avail_out = sizeof(buf);
			zerr = deflate(&z, len ? Z_NO_FLUSH : Z_FINISH);
			if (fwrite(buf, 1, sizeof(buf) - z.avail_out, f) != sizeof(buf) - z.avail_out) {
				deflateEnd(&z);
				return -EIO;
			}
		} while (z.avail_out == 0);
	} while (len);
	deflateEnd(&z);
	return zerr == Z_STREAM_END ? 0 : -EIO;
}

int pprof_write(const struct flame_tree *t, const struct pprof_options *o, const char *path)
{
	struct atomic_file af;
	uint8_t *data;
	size_t len;
	FILE *f;
	int err = pprof_encode(t, o, &data, &len);

	if (err) {
		sp_err("write %s: out of memory", path);
		return err;
	}
	f = atomic_file_open(&af, path);
	if (!f) {
		free(data);
		return -errno;
	}
	err = gzip_to(f, data, len);
	free(data);
	return atomic_file_commit(&af, err);
}

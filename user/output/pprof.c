/* pprof.c - see pprof.h. A hand-written protobuf encoder: the profile has
 * a dozen fields, a library would be larger than this file. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/atomic_file.h"
#include "base/log.h"
#include "base/strmap.h"
#include "output/pb.h"
#include "output/pprof.h"

uint64_t pprof_string_id(struct pprof_strings *s, const char *str)
{
	int inserted;
	size_t len = strlen(str);
	void **slot = strmap_slot(s->index, str, len, &inserted);

	if (!slot) {
		s->out->failed = true;
		return 0;
	}
	if (inserted) {
		*slot = (void *)(uintptr_t)(++s->count);
		pb_bytes(s->out, PPROF_STRING_TABLE, str, len);
	}
	return (uint64_t)(uintptr_t)*slot - 1;
}

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

static void value_type(struct pb *b, unsigned field, struct pprof_strings *s, struct pb *msg,
		       const char *type, const char *unit)
{
	pb_uint(msg, PPROF_VALUE_TYPE_TYPE, pprof_string_id(s, type));
	pb_uint(msg, PPROF_VALUE_TYPE_UNIT, pprof_string_id(s, unit));
	pb_message(b, field, msg);
}

int pprof_encode(const struct flame_tree *t, const struct pprof_options *o, uint8_t **out,
		 size_t *out_len)
{
	struct pb prof = { 0 }, msg = { 0 }, inner = { 0 }, packed = { 0 };
	struct pprof_strings s = { strmap_new(), &prof, 0 };
	size_t nnodes;
	const struct flame_node *nodes = flame_tree_nodes(t, &nnodes);
	/* function (and location) id per (name, type): name * FLAME_TYPES + type */
	size_t nkeys = flame_tree_name_count(t) * FLAME_TYPES;
	uint32_t *func_ids = calloc(nkeys ? nkeys : 1, sizeof(*func_ids));
	uint32_t next_id = 1;
	char system_name[4096];

	if (!s.index || !func_ids) {
		strmap_free(s.index, NULL);
		free(func_ids);
		return -ENOMEM;
	}
	pprof_string_id(&s, ""); /* index 0 is the empty string */
	value_type(&prof, PPROF_SAMPLE_TYPE, &s, &msg, o->sample_type, o->unit);
	if (o->period) {
		value_type(&prof, PPROF_PERIOD_TYPE, &s, &msg, o->period_type, o->period_unit);
		pb_uint(&prof, PPROF_PERIOD, o->period);
	}
	/* Functions and locations: one each per (name, type) that occurs. */
	for (size_t i = 1; i < nnodes; i++) {
		size_t key = (size_t)nodes[i].name * FLAME_TYPES + nodes[i].type;
		const char *name = flame_tree_name(t, nodes[i].name);
		uint32_t id;

		if (func_ids[key])
			continue;
		id = func_ids[key] = next_id++;
		snprintf(system_name, sizeof(system_name), "%s%s", name, pprof_type_suffixes[nodes[i].type]);
		pb_uint(&msg, PPROF_FUNCTION_ID, id);
		pb_uint(&msg, PPROF_FUNCTION_NAME, pprof_string_id(&s, name));
		pb_uint(&msg, PPROF_FUNCTION_SYSTEM_NAME, pprof_string_id(&s, system_name));
		pb_uint(&msg, PPROF_FUNCTION_FILENAME, pprof_string_id(&s, pprof_type_files[nodes[i].type]));
		pb_message(&prof, PPROF_FUNCTION, &msg);
		pb_uint(&msg, PPROF_LOCATION_ID, id);
		pb_uint(&inner, PPROF_LINE_FUNCTION_ID, id);
		pb_message(&msg, PPROF_LOCATION_LINE, &inner);
		pb_message(&prof, PPROF_LOCATION, &msg);
	}
	/* A sample per node with self counts: its stack, leaf first. */
	for (size_t i = 1; i < nnodes; i++) {
		if (!nodes[i].self[0])
			continue;
		for (uint32_t n = (uint32_t)i; n; n = nodes[n].parent)
			pb_varint(&packed, func_ids[(size_t)nodes[n].name * FLAME_TYPES + nodes[n].type]);
		pb_message(&msg, PPROF_SAMPLE_LOCATION_ID, &packed);
		pb_varint(&packed, nodes[i].self[0] * (o->multiplier ? o->multiplier : 1));
		pb_message(&msg, PPROF_SAMPLE_VALUE, &packed);
		pb_message(&prof, PPROF_SAMPLE, &msg);
	}
	/* Stacks with no frames (a bare count) are samples with no locations. */
	if (nodes[0].self[0]) {
		pb_varint(&packed, nodes[0].self[0] * (o->multiplier ? o->multiplier : 1));
		pb_message(&msg, PPROF_SAMPLE_VALUE, &packed);
		pb_message(&prof, PPROF_SAMPLE, &msg);
	}
	strmap_free(s.index, NULL);
	free(func_ids);
	free(msg.data);
	free(inner.data);
	free(packed.data);
	if (prof.failed) {
		free(prof.data);
		return -ENOMEM;
	}
	*out = prof.data;
	*out_len = prof.len;
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

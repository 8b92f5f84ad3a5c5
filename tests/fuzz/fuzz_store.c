/* fuzz_store.c - a sample store file (output/store_file.h) from arbitrary
 * bytes: its header and segment heads, each segment's labels and samples,
 * and every segment's rows merged, as the views read them. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "output/store_merge.h"
#include "output/store_segment.h"

static void read_segments(struct store_reader *r)
{
	for (size_t i = 0; i < store_reader_segments(r); i++) {
		struct store_labels labels;
		struct store_samples s;
		struct frame frames[64];

		if (store_labels_read(r, i, &labels))
			continue;
		if (!store_samples_read(r, i, labels.n, &s)) {
			for (size_t k = 0; k < s.n; k++)
				if (s.samples[k].labels >= labels.n ||
				    store_sample_frames(&s, s.samples[k].leaf, frames, 64) > s.nnodes)
					abort();
			store_samples_free(&s);
		}
		store_labels_free(&labels);
	}
}

/* The parts' parsers on the bytes themselves: zlib keeps most mutations
 * from reaching them through a file. */
static void parse_parts(const uint8_t *data, size_t size)
{
	struct store_labels labels;
	struct store_samples s;

	if (size < 1)
		return;
	if (!store_labels_parse(data + 1, size - 1, data[0], &labels)) {
		for (size_t i = 0; i < labels.n; i++)
			if (!labels.labels[i].process || !labels.labels[i].thread)
				abort();
		store_labels_free(&labels);
	}
	if (!store_samples_parse(data + 1, size - 1, 0, data[0], &s)) {
		for (size_t k = 0; k < s.n; k++)
			if (s.samples[k].leaf > s.nnodes || s.samples[k].labels >= data[0])
				abort();
		store_samples_free(&s);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("store", 0);
	struct store_reader *r;
	struct store_merge *m;
	struct store_node n;

	parse_parts(data, size);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	r = store_reader_open_fd(fd, "fuzz");
	if (!r)
		return 0;
	read_segments(r);
	m = store_merge_open(r);
	while (m && store_merge_next(m, &n) == 1)
		if (!n.depth || n.depth > STORE_DEPTH_MAX || n.len > STORE_TEXT_MAX)
			abort();
	store_merge_close(m);
	store_reader_close(r);
	return 0;
}

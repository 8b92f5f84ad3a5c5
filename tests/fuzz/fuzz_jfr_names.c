/* fuzz_jfr_names.c - the JFR writer's handling of outside names: UTF-8
 * repair and Java name splitting on any bytes, and whole samples built from
 * the input written through the writer (frame names, thread names, labels).
 *
 * Checks: repaired text is valid UTF-8 and equals the input when the input
 * was valid; the split parts lie inside the name; the writer accepts every
 * such sample and produces a file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "output/jfr/jfr_buf.h"
#include "output/jfr/jfr_names.h"
#include "output/jfr/jfr_writer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct jfr_buf b;
	struct jfr_java_name jn;
	char path[64];

	jfr_buf_init(&b);
	jfr_utf8_append(&b, s, size);
	if (b.failed || !jfr_utf8_valid((const char *)b.data, b.len))
		abort();
	if (jfr_utf8_valid(s, size) && (b.len != size || (size && memcmp(b.data, s, size))))
		abort();
	jfr_buf_free(&b);

	jfr_split_java_name(s, size, &jn);
	if (jn.method < s || jn.method + jn.method_len > s + size)
		abort();
	if (jn.has_class && (jn.cls != s || jn.cls_len == 0 || jn.method_len == 0 ||
			     jn.cls_len + 1 + jn.method_len != size || s[jn.cls_len] != '.'))
		abort();

	/* NUL-separated pieces become frame, thread and label names. */
	{
		char *copy = malloc(size + 1);
		struct frame frames[16];
		const char *pieces[16];
		int n = 0;
		struct jfr_label label;
		struct jfr_recording_info info = { 1, 2, 3, 4, &label, 1 };
		struct jfr_writer *w;
		struct jfr_sample smp = { 0 };

		if (!copy)
			return 0;
		memcpy(copy, data, size);
		copy[size] = 0;
		pieces[n++] = copy;
		for (size_t i = 0; i < size && n < 16; i++)
			if (!copy[i])
				pieces[n++] = copy + i + 1;
		for (int i = 0; i < n; i++)
			frames[i] = (struct frame){ pieces[i],
						    (enum frame_type)((unsigned char)pieces[i][0] % FRAME_TYPE_MAX) };
		label = (struct jfr_label){ pieces[0], pieces[n - 1] };
		snprintf(path, sizeof(path), "/tmp/fuzz_jfr_names.%d.jfr", (int)getpid());
		sp_log_set_level(SP_LOG_ERROR);
		w = jfr_writer_open(path, &info, NULL);
		if (!w)
			abort();
		smp = (struct jfr_sample){ .timestamp_ns = 5, .os_tid = (uint32_t)size,
					   .thread_name = pieces[n / 2], .kind = JFR_SAMPLE_WALL,
					   .thread_state = 2, .weight = 1, .frames = frames,
					   .nframes = n };
		if (jfr_writer_add_sample(w, &smp))
			abort();
		smp.kind = JFR_SAMPLE_CPU;
		if (jfr_writer_add_sample(w, &smp))
			abort();
		if (jfr_writer_close(w))
			abort();
		unlink(path);
		free(copy);
	}
	return 0;
}

/* fuzz_attach_reply.c - the HotSpot attach reply parsers on arbitrary
 * bytes (a hostile or broken JVM may send anything). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/jvm_attach.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jvm_attach_reply r;
	char *buf = malloc(size ? size : 1), line[128];
	int code;
	bool ran;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (jvm_attach_parse_reply(buf, size, &r) == 0) {
		if (r.text < buf || r.text + r.text_len > buf + size)
			abort();
		jvm_attach_one_line(r.text, r.text_len, line, sizeof(line));
		if (strlen(line) >= sizeof(line) || strchr(line, '\n'))
			abort();
	}
	if (jvm_attach_load_result(buf, size, &code, &ran) == 0 && (code != 0 || !ran))
		abort();
	jvm_attach_one_line(buf, size, line, sizeof(line));
	jvm_attach_one_line(buf, size, line, 1);
	free(buf);
	return 0;
}

/* fuzz_jvm_cmdline.c - the JVM command-line, option-string and environ
 * parsers on arbitrary bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/jvm_process.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jvm_cmdline c;
	struct jvm_flags f;
	char *buf = malloc(size ? size : 1);
	const char *v;
	size_t vl;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	jvm_flags_init(&c.flags);
	if (jvm_cmdline_parse(buf, size, &c) == 0) {
		if (memchr(c.main, '\0', sizeof(c.main)) == NULL)
			abort();
		if (c.main_kind == JVM_MAIN_NONE && c.main[0])
			abort();
	}
	jvm_flags_init(&f);
	jvm_flags_apply_option_string(&f, buf, size);
	jvm_flags_apply_option(&f, buf, size);
	if (jvm_environ_get(buf, size, "JAVA_TOOL_OPTIONS", &v, &vl)) {
		if (v < buf || v + vl > buf + size)
			abort();
		jvm_flags_apply_option_string(&f, v, vl);
	}
	free(buf);
	return 0;
}

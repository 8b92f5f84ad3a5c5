/* fuzz_jvm_release.c - the JDK `release` file and version parsers. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/jvm_process.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1), v[16];
	int major;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	major = jvm_release_parse(buf, size, v, sizeof(v));
	if (major < 0 || major >= 1000 || memchr(v, '\0', sizeof(v)) == NULL)
		abort();
	major = jvm_version_major(buf, size);
	if (major < 0 || major >= 1000)
		abort();
	jvm_release_parse(buf, size, v, 0);
	free(buf);
	return 0;
}

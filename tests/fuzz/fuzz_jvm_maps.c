/* fuzz_jvm_maps.c - the maps scan used to find JVMs and loaded helpers. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/jvm_process.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jvm_maps_info m;
	char *buf = malloc(size ? size : 1);

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	jvm_maps_scan(buf, size, JVM_HELPER_BASENAME, &m);
	if (memchr(m.libjvm_path, '\0', sizeof(m.libjvm_path)) == NULL)
		abort();
	if (m.libjvm_path[0] && !m.has_libjvm)
		abort();
	jvm_maps_scan(buf, size, NULL, &m);
	free(buf);
	return 0;
}

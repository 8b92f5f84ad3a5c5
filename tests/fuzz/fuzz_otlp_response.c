/* fuzz_otlp_response.c - a Collector's answer (export/otlp_sender.h): an
 * ExportProfilesServiceResponse or a google.rpc.Status from arbitrary
 * bytes; the first byte picks which. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export/otlp_sender.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char msg[64];
	int64_t rejected;

	if (size < 1)
		return 0;
	if (!otlp_response_parse(data + 1, size - 1, data[0] & 1, &rejected, msg, sizeof(msg)) &&
	    strlen(msg) >= sizeof(msg))
		abort();
	return 0;
}

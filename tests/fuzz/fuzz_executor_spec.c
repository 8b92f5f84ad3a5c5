/* fuzz_executor_spec.c - --executors SPEC comes from the user. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spark/executor_spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct executor_spec *spec;
	char err[128];
	int ret = executor_spec_parse((const char *)data, size, &spec, err, sizeof(err));

	if (ret < 0) {
		/* an error is one printable line */
		if (spec || !err[0] || strchr(err, '\n'))
			abort();
		return 0;
	}
	(void)executor_spec_matches(spec, "1");
	(void)executor_spec_matches(spec, "driver");
	(void)executor_spec_matches(spec, "2147483647");
	executor_spec_free(spec);
	return 0;
}

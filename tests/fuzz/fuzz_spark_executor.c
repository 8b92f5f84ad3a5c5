/* fuzz_spark_executor.c - /proc/PID/{cmdline,environ,cgroup} are outside
 * input.  The data is split at the first two 0xff bytes into the three. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spark/spark_executor.h"

static void check_id(const char *id, size_t max)
{
	size_t n = strnlen(id, max);

	if (n == max || strchr(id, '/') || strcmp(id, "..") == 0)
		abort(); /* ids name directories: never a path */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	const char *s1 = memchr(p, 0xff, size);
	const char *s2 = s1 ? memchr(s1 + 1, 0xff, end - s1 - 1) : NULL;
	size_t cmd_len = s1 ? (size_t)(s1 - p) : size;
	struct spark_executor e;
	int ret = spark_executor_parse_cmdline(p, cmd_len, &e);

	if (ret < -1 && ret != -22)
		abort();
	if (ret == 1) {
		if (s1)
			spark_executor_parse_environ(s1 + 1, (s2 ? s2 : end) - s1 - 1, &e);
		if (s2)
			spark_executor_parse_cgroup(s2 + 1, end - s2 - 1, &e);
		if (!e.executor_id[0] || e.backend == SPARK_BACKEND_NONE)
			abort();
		check_id(e.app_id, sizeof(e.app_id));
		check_id(e.executor_id, sizeof(e.executor_id));
		check_id(e.container_id, sizeof(e.container_id));
		check_id(e.pod_name, sizeof(e.pod_name));
		check_id(e.pod_uid, sizeof(e.pod_uid));
	}
	return 0;
}

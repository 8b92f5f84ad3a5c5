/* fuzz_event_log.c - event log lines (JSON events) are outside input: any
 * bytes give a record or an error, within the bounds of event_log.h. */
#include <stdint.h>
#include <stdlib.h>

#include "quiet_stderr.h"
#include "spark/event_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spark_app_record *r = NULL;
	int saved = quiet_stderr();
	int err = spark_event_log_parse("fuzz", data, size, &r);

	restore_stderr(saved);
	if (err ? r != NULL : r == NULL)
		abort();
	if (r) {
		/* Sorted and settled: lookups find every entry. */
		for (size_t i = 0; i < r->ntasks; i++)
			if (spark_app_record_task(r, r->tasks[i].tid) != &r->tasks[i])
				abort();
		for (size_t i = 0; i < r->nstages; i++)
			if (!spark_app_record_stage(r, r->stages[i].stage, r->stages[i].attempt))
				abort();
		if (r->ntasks > SPARK_TASKS_MAX)
			abort();
	}
	spark_app_record_free(r);
	return 0;
}

/* fuzz_spark_rest.c - Spark REST replies are outside input.  The first
 * byte picks the parser (applications, jobs, sql, stages, a taskList,
 * a time), the rest is the reply; then the record is settled. */
#include <stdint.h>
#include <stdlib.h>

#include "spark/spark_rest.h"

static void parse(struct app_builder *b, uint8_t which, const char *body, size_t len)
{
	struct jf_error e = { 0 };
	struct spark_rest_stage *kept = NULL;
	char *attempt = NULL;
	size_t n = 0;

	switch (which % 6) {
	case 0:
		spark_rest_parse_apps(b, body, len, which & 8 ? "app-1" : NULL, &attempt, &e);
		break;
	case 1:
		spark_rest_parse_jobs(b, body, len, &e);
		break;
	case 2:
		spark_rest_parse_sql(b, body, len, &n, &e);
		break;
	case 3:
		spark_rest_parse_stages(b, body, len, &kept, &n, &e);
		break;
	case 4:
		spark_rest_parse_tasks(b, which >> 3, 0, body, len, &n, &e);
		break;
	default:
		(void)spark_rest_time(body, len);
		break;
	}
	free(attempt);
	free(kept);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct app_builder *b = app_builder_new();
	struct spark_app_record *r;

	if (!b || !size) {
		app_builder_free(b);
		return 0;
	}
	parse(b, data[0], (const char *)data + 1, size - 1);
	r = app_builder_finish(b);
	for (size_t i = 0; r && i < r->nstages; i++)
		if (r->stages[i].job_id >= 0 && !spark_app_record_job(r, r->stages[i].job_id))
			abort();
	spark_app_record_free(r);
	return 0;
}

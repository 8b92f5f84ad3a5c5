/* spark_rest.h - reading an application's record from Spark's REST API:
 * a running driver's UI (http://host:4040) or a History Server.
 *
 * GET /api/v1/applications picks the application (and its latest
 * attempt, when it has attempt ids), then under it /jobs, /sql (the SQL
 * executions' descriptions and jobs, paged; absent before Spark 3.0),
 * /stages?details=false, and each stage attempt's
 * /stages/S/A/taskList, paged by SPARK_REST_PAGE tasks.
 *
 * The record is the one the event log of the same application gives
 * (event_log.h): only stage attempts that were submitted (not pending or
 * skipped) and task attempts that ended (not running) are kept.
 *
 * A reply is outside input: each is bounded (SPARK_REST_REPLY_MAX), each
 * request has a timeout, only http and https are spoken, and a reply that
 * is not what Spark sends is -EPROTO with one message naming the URL.
 */
#ifndef SPARKPROF_SPARK_REST_H
#define SPARKPROF_SPARK_REST_H

#include <stddef.h>

#include "spark/json_fields.h"
#include "spark/spark_app_record.h"

#define SPARK_REST_REPLY_MAX (64u << 20)
#define SPARK_REST_TIMEOUT_MS 60000      /* one request, connecting included */
#define SPARK_REST_PAGE 1000             /* tasks or SQL executions a request */

/* base_url: "http://host:4040" (a trailing '/' or "/api/v1" is fine);
 * app_id: NULL for the first application listed (a driver serves one).
 * 0 and *out (spark_app_record_free), or -errno after one message. */
int spark_rest_read(const char *base_url, const char *app_id, struct spark_app_record **out);

/* --- the replies' parsers, for tests and the fuzzer: each takes one
 * reply's body (len bytes, not NUL-terminated) into b, and returns 0 or
 * -EPROTO / -ENOMEM / -E2BIG with e saying why. */

/* /applications: the application app_id (NULL: the first) into b's
 * application fields; *attempt_id: its latest attempt's id, or NULL
 * when it has none (free it). */
int spark_rest_parse_apps(struct app_builder *b, const char *body, size_t len,
			  const char *app_id, char **attempt_id, struct jf_error *e);
int spark_rest_parse_jobs(struct app_builder *b, const char *body, size_t len,
			  struct jf_error *e);
/* *entries: the executions in this page. */
int spark_rest_parse_sql(struct app_builder *b, const char *body, size_t len,
			 size_t *entries, struct jf_error *e);

struct spark_rest_stage {
	int32_t stage, attempt;
};
/* *kept (*nkept of them; free it): the stage attempts kept, whose tasks
 * are to be read. */
int spark_rest_parse_stages(struct app_builder *b, const char *body, size_t len,
			    struct spark_rest_stage **kept, size_t *nkept, struct jf_error *e);
/* One page of a stage attempt's tasks; *entries: the tasks in the page. */
int spark_rest_parse_tasks(struct app_builder *b, int32_t stage, int32_t attempt,
			   const char *body, size_t len, size_t *entries, struct jf_error *e);

/* "2026-11-28T09:30:00.123GMT" (how the REST API writes times) in
 * Unix time, ms; 0 when s (len bytes) is not that. */
uint64_t spark_rest_time(const char *s, size_t len);

#endif

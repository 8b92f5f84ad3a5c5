/* spark_rest.c - see spark_rest.h.  libcurl fetches, json-c parses, the
 * builder (spark_app_record) keeps. */
#include <curl/curl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/grow_array.h"
#include "base/log.h"
#include "spark/spark_rest.h"

/* REST replies are flat: lists of objects of objects. */
#define JSON_DEPTH 64

uint64_t spark_rest_time(const char *s, size_t len)
{
	char buf[32];
	struct tm tm = { 0 };
	int ms, used = -1;

	if (!s || len >= sizeof(buf))
		return 0;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (sscanf(buf, "%4d-%2d-%2dT%2d:%2d:%2d.%3dGMT%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
		   &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms, &used) != 7 || used != (int)len ||
	    tm.tm_year < 1970 || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 ||
	    tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60 || ms < 0)
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	time_t t = timegm(&tm);
	return t < 0 ? 0 : (uint64_t)t * 1000 + ms;
}

/* A time field, when present and in that form. */
static int time_field(struct jf_error *e, struct json_object *o, const char *key, uint64_t *v)
{
	const char *s;
	size_t len;
	int err = jf_str(e, o, key, &s, &len);

	if (!err && s)
		*v = spark_rest_time(s, len);
	return err;
}

/* The body as JSON of type want; NULL after jf_bad. */
static struct json_object *parse_body(const char *body, size_t len, enum json_type want,
				      struct jf_error *e)
{
	struct json_tokener *tok = json_tokener_new_ex(JSON_DEPTH);
	struct json_object *o = NULL;

	if (!tok) {
		errno = ENOMEM;
		jf_nomem(e);
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	if (len > SPARK_REST_REPLY_MAX)
		jf_bad(e, "a reply over %u MiB", SPARK_REST_REPLY_MAX >> 20);
	else if (!(o = json_tokener_parse_ex(tok, body, (int)len)) ||
		 json_tokener_get_parse_end(tok) != len)
		jf_bad(e, "not JSON (%s)", o ? "text after it" :
		       json_tokener_error_desc(json_tokener_get_error(tok)));
	else if (!json_object_is_type(o, want))
		jf_bad(e, "not a JSON %s", want == json_type_array ? "list" : "object");
	json_tokener_free(tok);
	if (e->err && o) {
		json_object_put(o);
		o = NULL;
	}
	return o;
}

/* The application's fields from an /applications entry. */
static int app_fields(struct app_builder *b, struct json_object *app, char **attempt_id,
		      struct jf_error *e)
{
	struct spark_app_record *a = app_builder_app(b);
	struct json_object *attempts, *last;
	size_t n;
	int err = jf_copy(e, app, "id", &a->app_id) ?: jf_copy(e, app, "name", &a->app_name) ?:
		  jf_arr(e, app, "attempts", &attempts, &n);

	if (err)
		return err;
	if (!a->app_id)
		return jf_bad(e, "an application without an id");
	if (!n)
		return jf_bad(e, "an application without attempts");
	/* The History Server lists the latest attempt first. */
	last = json_object_array_get_idx(attempts, 0);
	return jf_copy(e, last, "attemptId", attempt_id) ?:
	       jf_copy(e, last, "attemptId", &a->attempt_id) ?:
	       jf_copy(e, last, "appSparkVersion", &a->spark_version) ?:
	       jf_u64(e, last, "startTimeEpoch", &a->start_ms) ?:
	       jf_u64(e, last, "endTimeEpoch", &a->end_ms);
}

int spark_rest_parse_apps(struct app_builder *b, const char *body, size_t len,
			  const char *app_id, char **attempt_id, struct jf_error *e)
{
	struct json_object *apps = parse_body(body, len, json_type_array, e), *pick = NULL;
	int err;

	*attempt_id = NULL;
	if (!apps)
		return e->err;
	for (size_t i = 0; !pick && i < json_object_array_length(apps); i++) {
		struct json_object *app = json_object_array_get_idx(apps, i);
		struct json_object *id = jf_member(app, "id");

		if (!app_id || (json_object_is_type(id, json_type_string) &&
				strcmp(json_object_get_string(id), app_id) == 0))
			pick = app;
	}
	if (pick)
		err = app_fields(b, pick, attempt_id, e);
	else
		err = app_id ? jf_bad(e, "no application %.64s", app_id) : jf_bad(e, "no application");
	json_object_put(apps);
	if (err) {
		free(*attempt_id);
		*attempt_id = NULL;
	}
	return err;
}

/* A list of ids (stage ids in int32_t, job ids in int64_t) as int64_t. */
static int id_list(struct jf_error *e, struct json_object *o, const char *key, int64_t max,
		   int64_t **ids, size_t *n)
{
	struct json_object *arr;
	int err = jf_arr(e, o, key, &arr, n);

	*ids = NULL;
	if (err || !*n)
		return err;
	if (!(*ids = malloc(*n * sizeof(**ids))))
		return jf_nomem(e);
	for (size_t i = 0; i < *n; i++) {
		struct json_object *v = json_object_array_get_idx(arr, i);

		(*ids)[i] = json_object_get_int64(v);
		if (!json_object_is_type(v, json_type_int) || (*ids)[i] < 0 || (*ids)[i] > max) {
			free(*ids);
			*ids = NULL;
			return jf_bad(e, "\"%s\" holds other than ids", key);
		}
	}
	return 0;
}

static int job_stage_ids(struct app_builder *b, int64_t job_id, struct json_object *job,
			 struct jf_error *e)
{
	int64_t *ids;
	int32_t *v;
	size_t n;
	int err = id_list(e, job, "stageIds", INT32_MAX, &ids, &n);

	if (err)
		return err;
	v = malloc((n ? n : 1) * sizeof(*v));
	for (size_t i = 0; v && i < n; i++)
		v[i] = (int32_t)ids[i];
	if (!v || app_builder_job_stages(b, job_id, v, n))
		err = jf_nomem(e);
	free(v);
	free(ids);
	return err;
}

static int one_job(struct app_builder *b, struct json_object *o, struct jf_error *e)
{
	const char *status;
	size_t len;
	int64_t id = 0;
	struct spark_job *j;
	int err = jf_int(e, o, "jobId", &id, true) ?: jf_str(e, o, "status", &status, &len) ?:
		  job_stage_ids(b, id, o, e);

	if (err)
		return err;
	if (!(j = app_builder_job(b, id)))
		return jf_nomem(e);
	j->failed = status && strcmp(status, "FAILED") == 0;
	return jf_copy(e, o, "name", &j->name) ?: jf_copy(e, o, "description", &j->description) ?:
	       time_field(e, o, "submissionTime", &j->submit_ms) ?:
	       time_field(e, o, "completionTime", &j->complete_ms);
}

int spark_rest_parse_jobs(struct app_builder *b, const char *body, size_t len,
			  struct jf_error *e)
{
	struct json_object *jobs = parse_body(body, len, json_type_array, e);
	int err = 0;

	if (!jobs)
		return e->err;
	for (size_t i = 0; !err && i < json_object_array_length(jobs); i++)
		err = one_job(b, json_object_array_get_idx(jobs, i), e);
	json_object_put(jobs);
	return err;
}

static int one_sql(struct app_builder *b, struct json_object *o, struct jf_error *e)
{
	static const char *const lists[] = { "runningJobIds", "successJobIds", "failedJobIds" };
	const char *d;
	size_t len;
	int64_t id = 0;
	int err = jf_int(e, o, "id", &id, true) ?: jf_str(e, o, "description", &d, &len);

	if (err)
		return err;
	if (id < 0)
		return jf_bad(e, "a negative SQL execution id");
	if ((err = app_builder_sql(b, id, d ? d : "", len))) {
		errno = -err;
		return jf_nomem(e);
	}
	for (size_t l = 0; !err && l < sizeof(lists) / sizeof(lists[0]); l++) {
		int64_t *ids;
		size_t n;

		err = id_list(e, o, lists[l], INT64_MAX, &ids, &n);
		for (size_t i = 0; !err && i < n; i++)
			if ((err = app_builder_sql_job(b, id, ids[i]))) {
				errno = -err;
				err = jf_nomem(e);
			}
		free(ids);
	}
	return err;
}

int spark_rest_parse_sql(struct app_builder *b, const char *body, size_t len,
			 size_t *entries, struct jf_error *e)
{
	struct json_object *execs = parse_body(body, len, json_type_array, e);
	int err = 0;

	*entries = 0;
	if (!execs)
		return e->err;
	*entries = json_object_array_length(execs);
	for (size_t i = 0; !err && i < *entries; i++)
		err = one_sql(b, json_object_array_get_idx(execs, i), e);
	json_object_put(execs);
	return err;
}

/* Stage attempts the event log would hold: submitted ones. */
static int stage_kept(const char *status)
{
	return status && (strcmp(status, "ACTIVE") == 0 || strcmp(status, "COMPLETE") == 0 ||
			  strcmp(status, "FAILED") == 0);
}

static int one_stage(struct app_builder *b, struct json_object *o, struct spark_rest_stage *ref,
		     int *kept, struct jf_error *e)
{
	const char *status;
	size_t len;
	struct spark_stage_info *s;
	int32_t id = 0, attempt = 0;
	int err = jf_i32(e, o, "stageId", &id, true) ?: jf_i32(e, o, "attemptId", &attempt, true) ?:
		  jf_str(e, o, "status", &status, &len);

	*kept = !err && stage_kept(status);
	if (err || !*kept)
		return err;
	if (!(s = app_builder_stage(b, id, attempt)))
		return jf_nomem(e);
	*ref = (struct spark_rest_stage){ id, attempt };
	s->failed = strcmp(status, "FAILED") == 0;
	return jf_copy(e, o, "name", &s->name) ?: jf_copy(e, o, "details", &s->details) ?:
	       jf_copy(e, o, "description", &s->description) ?:
	       jf_i32(e, o, "numTasks", &s->num_tasks, false) ?:
	       time_field(e, o, "submissionTime", &s->submit_ms) ?:
	       time_field(e, o, "completionTime", &s->complete_ms);
}

int spark_rest_parse_stages(struct app_builder *b, const char *body, size_t len,
			    struct spark_rest_stage **kept, size_t *nkept, struct jf_error *e)
{
	struct json_object *stages = parse_body(body, len, json_type_array, e);
	size_t n = stages ? json_object_array_length(stages) : 0;
	int err = 0;

	*nkept = 0;
	*kept = NULL;
	if (!stages)
		return e->err;
	if (!(*kept = malloc((n ? n : 1) * sizeof(**kept))))
		err = jf_nomem(e);
	for (size_t i = 0; !err && i < n; i++) {
		int keep;

		err = one_stage(b, json_object_array_get_idx(stages, i), &(*kept)[*nkept], &keep, e);
		*nkept += !err && keep;
	}
	json_object_put(stages);
	if (err) {
		free(*kept);
		*kept = NULL;
		*nkept = 0;
	}
	return err;
}

static int rest_metrics(struct json_object *m, struct spark_task *t, struct jf_error *e)
{
	struct json_object *rd, *wr;
	uint64_t remote = 0, local = 0;
	int err = jf_obj(e, m, "shuffleReadMetrics", &rd, false) ?:
		  jf_obj(e, m, "shuffleWriteMetrics", &wr, false) ?:
		  jf_u64(e, m, "executorRunTime", &t->run_ms) ?:
		  jf_u64(e, m, "executorCpuTime", &t->cpu_ns) ?:
		  jf_u64(e, m, "jvmGcTime", &t->gc_ms) ?:
		  jf_u64(e, m, "memoryBytesSpilled", &t->memory_spill_bytes) ?:
		  jf_u64(e, m, "diskBytesSpilled", &t->disk_spill_bytes) ?:
		  jf_u64(e, rd, "remoteBytesRead", &remote) ?:
		  jf_u64(e, rd, "localBytesRead", &local) ?:
		  jf_u64(e, wr, "bytesWritten", &t->shuffle_write_bytes);

	t->shuffle_read_bytes = remote + local;
	return err;
}

/* Task attempts the event log would hold: ended ones. */
static int task_ended(const char *status, bool *failed)
{
	*failed = status && (strcmp(status, "FAILED") == 0 || strcmp(status, "KILLED") == 0);
	return status && (*failed || strcmp(status, "SUCCESS") == 0);
}

static int one_task(struct app_builder *b, struct json_object *o, struct spark_task *t,
		    struct jf_error *e)
{
	struct json_object *metrics;
	const char *status, *launch;
	size_t slen, llen;
	uint64_t duration = 0;
	int err = jf_int(e, o, "taskId", &t->tid, true) ?: jf_str(e, o, "status", &status, &slen) ?:
		  jf_i32(e, o, "index", &t->index, false) ?:
		  jf_i32(e, o, "attempt", &t->attempt, false) ?:
		  jf_str(e, o, "launchTime", &launch, &llen) ?:
		  jf_u64(e, o, "duration", &duration) ?:
		  jf_chars(e, o, "executorId", t->executor_id, sizeof(t->executor_id)) ?:
		  jf_chars(e, o, "host", t->host, sizeof(t->host)) ?:
		  jf_obj(e, o, "taskMetrics", &metrics, false) ?:
		  rest_metrics(metrics, t, e);

	if (err || !task_ended(status, &t->failed))
		return err;
	/* The REST API gives the duration; the event log's finish time is
	 * launch + duration (TaskInfo.duration). */
	t->launch_ms = spark_rest_time(launch, llen);
	t->finish_ms = t->launch_ms ? t->launch_ms + duration : 0;
	if (app_builder_task(b, t)) {
		errno = ENOMEM;
		return jf_nomem(e);
	}
	return 0;
}

int spark_rest_parse_tasks(struct app_builder *b, int32_t stage, int32_t attempt,
			   const char *body, size_t len, size_t *entries, struct jf_error *e)
{
	struct json_object *tasks = parse_body(body, len, json_type_array, e);
	int err = 0;

	*entries = 0;
	if (!tasks)
		return e->err;
	*entries = json_object_array_length(tasks);
	for (size_t i = 0; !err && i < *entries; i++) {
		struct spark_task t = { .stage = stage, .stage_attempt = attempt };

		err = one_task(b, json_object_array_get_idx(tasks, i), &t, e);
	}
	json_object_put(tasks);
	return err;
}

/* --- HTTP */

struct rest {
	CURL *curl;
	char *root;              /* http://host:port/api/v1/applications */
	char *app;               /* root/APP[/ATTEMPT] */
	char *body;              /* the last reply */
	size_t len, cap;
	int too_big, nomem;
	struct jf_error e;
};

static size_t on_data(char *p, size_t size, size_t n, void *ctx)
{
	struct rest *rs = ctx;
	size_t len = size * n;

	if (len > SPARK_REST_REPLY_MAX - rs->len) {
		rs->too_big = 1;
		return 0;
	}
	if (grow_array((void **)&rs->body, &rs->cap, rs->len + len, 1)) {
		rs->nomem = 1;
		return 0;
	}
	memcpy(rs->body + rs->len, p, len);
	rs->len += len;
	return len;
}

static int curl_errno(const struct rest *rs, CURLcode c)
{
	switch (c) {
	case CURLE_OPERATION_TIMEDOUT: return -ETIMEDOUT;
	case CURLE_COULDNT_CONNECT: return -ECONNREFUSED;
	case CURLE_COULDNT_RESOLVE_HOST: return -EHOSTUNREACH;
	case CURLE_URL_MALFORMAT: return -EINVAL;
	case CURLE_UNSUPPORTED_PROTOCOL: return -EPROTONOSUPPORT;
	case CURLE_OUT_OF_MEMORY: return -ENOMEM;
	case CURLE_FILESIZE_EXCEEDED: return -EFBIG;
	case CURLE_WRITE_ERROR: return rs->nomem ? -ENOMEM : rs->too_big ? -EFBIG : -EIO;
	default: return -EIO;
	}
}

/* GETs url into rs->body.  0; -ENOENT for HTTP 404 (reported unless
 * missing_ok); or -errno after a message. */
static int get(struct rest *rs, const char *url, int missing_ok)
{
	CURLcode c;
	long code = 0;
	int err;

	rs->len = rs->too_big = rs->nomem = 0;
	curl_easy_setopt(rs->curl, CURLOPT_URL, url);
	c = curl_easy_perform(rs->curl);
	if (c == CURLE_OK)
		curl_easy_getinfo(rs->curl, CURLINFO_RESPONSE_CODE, &code);
	if (c == CURLE_OK && code == 200)
		return 0;
	err = c != CURLE_OK ? curl_errno(rs, c) : code == 404 ? -ENOENT : -EIO;
	if (err == -ENOENT && missing_ok)
		return err;
	if (c == CURLE_OK)
		sp_err("GET %s: HTTP %ld: %s", url, code, strerror(-err));
	else
		sp_err("GET %s: %s: %s", url, err == -EFBIG ? "a reply over 64 MiB" :
		       curl_easy_strerror(c), strerror(-err));
	return err;
}

/* After a parser failed on url's reply. */
static int parse_failed(struct rest *rs, const char *url, int err)
{
	sp_err("GET %s: %s: %s", url, rs->e.why, strerror(-err));
	return err;
}

static int rest_init(struct rest *rs, const char *base_url)
{
	size_t n = strlen(base_url);

	memset(rs, 0, sizeof(*rs));
	while (n && base_url[n - 1] == '/')
		n--;
	if (n >= 7 && memcmp(base_url + n - 7, "/api/v1", 7) == 0)
		n -= 7;
	if (asprintf(&rs->root, "%.*s/api/v1/applications", (int)n, base_url) < 0) {
		rs->root = NULL;
		return -ENOMEM;
	}
	if (!(rs->curl = curl_easy_init()))
		return -ENOMEM;
	curl_easy_setopt(rs->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(rs->curl, CURLOPT_TIMEOUT_MS, (long)SPARK_REST_TIMEOUT_MS);
	curl_easy_setopt(rs->curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	curl_easy_setopt(rs->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(rs->curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(rs->curl, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(rs->curl, CURLOPT_MAXREDIRS, 5L);
	curl_easy_setopt(rs->curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)SPARK_REST_REPLY_MAX);
	curl_easy_setopt(rs->curl, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(rs->curl, CURLOPT_USERAGENT, "sparkprof");
	curl_easy_setopt(rs->curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(rs->curl, CURLOPT_WRITEDATA, rs);
	return 0;
}

static void rest_free(struct rest *rs)
{
	if (rs->curl)
		curl_easy_cleanup(rs->curl);
	free(rs->root);
	free(rs->app);
	free(rs->body);
}

/* --- the application's pages */

/* GETs the URL printf makes, into rs->body; its URL in *url (free it). */
static int get_fmt(struct rest *rs, char **url, int missing_ok, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int get_fmt(struct rest *rs, char **url, int missing_ok, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(url, fmt, ap);
	va_end(ap);
	if (n < 0) {
		*url = NULL;
		sp_err("%s: %s", rs->root, strerror(ENOMEM));
		return -ENOMEM;
	}
	return get(rs, *url, missing_ok);
}

/* /applications, and rs->app: the application's own URL. */
static int fetch_app(struct rest *rs, struct app_builder *b, const char *app_id)
{
	char *attempt = NULL, *id, *att = NULL;
	int err = get(rs, rs->root, 0);

	if (err)
		return err;
	if ((err = spark_rest_parse_apps(b, rs->body, rs->len, app_id, &attempt, &rs->e)))
		return parse_failed(rs, rs->root, err);
	/* Ids come from the reply: escaped into the path. */
	id = curl_easy_escape(rs->curl, app_builder_app(b)->app_id, 0);
	if (attempt)
		att = curl_easy_escape(rs->curl, attempt, 0);
	if (!id || (attempt && !att) ||
	    asprintf(&rs->app, "%s/%s%s%s", rs->root, id, att ? "/" : "", att ? att : "") < 0) {
		rs->app = NULL;
		sp_err("%s: %s", rs->root, strerror(ENOMEM));
		err = -ENOMEM;
	}
	curl_free(id);
	curl_free(att);
	free(attempt);
	return err;
}

static int fetch_jobs(struct rest *rs, struct app_builder *b)
{
	char *url;
	int err = get_fmt(rs, &url, 0, "%s/jobs", rs->app);

	if (!err && (err = spark_rest_parse_jobs(b, rs->body, rs->len, &rs->e)))
		parse_failed(rs, url, err);
	free(url);
	return err;
}

/* SQL executions, a page at a time; none before Spark 3.0 (404). */
static int fetch_sql(struct rest *rs, struct app_builder *b)
{
	size_t offset = 0, n = SPARK_REST_PAGE;
	int err = 0;

	for (size_t page = 0; !err && n == SPARK_REST_PAGE &&
			      page <= SPARK_SQL_MAX / SPARK_REST_PAGE; page++) {
		char *url;

		err = get_fmt(rs, &url, page == 0,
			      "%s/sql?details=false&planDescription=false&offset=%zu&length=%d",
			      rs->app, offset, SPARK_REST_PAGE);
		if (err == -ENOENT && page == 0) {
			free(url);
			return 0;
		}
		if (!err && (err = spark_rest_parse_sql(b, rs->body, rs->len, &n, &rs->e)))
			parse_failed(rs, url, err);
		offset += n;
		free(url);
	}
	return err;
}

/* One stage attempt's tasks, a page at a time. */
static int fetch_tasks(struct rest *rs, struct app_builder *b, struct spark_rest_stage s)
{
	size_t offset = 0, n = SPARK_REST_PAGE;
	int err = 0;

	while (!err && n == SPARK_REST_PAGE && offset < SPARK_TASKS_MAX) {
		char *url;

		err = get_fmt(rs, &url, 0, "%s/stages/%d/%d/taskList?offset=%zu&length=%d",
			      rs->app, s.stage, s.attempt, offset, SPARK_REST_PAGE);
		if (!err && (err = spark_rest_parse_tasks(b, s.stage, s.attempt, rs->body, rs->len,
							  &n, &rs->e)))
			parse_failed(rs, url, err);
		offset += n;
		free(url);
	}
	return err;
}

static int fetch_stages(struct rest *rs, struct app_builder *b)
{
	struct spark_rest_stage *kept = NULL;
	size_t n = 0;
	char *url;
	int err = get_fmt(rs, &url, 0, "%s/stages?details=false", rs->app);

	if (!err && (err = spark_rest_parse_stages(b, rs->body, rs->len, &kept, &n, &rs->e)))
		parse_failed(rs, url, err);
	free(url);
	for (size_t i = 0; !err && i < n; i++)
		err = fetch_tasks(rs, b, kept[i]);
	free(kept);
	return err;
}

int spark_rest_read(const char *base_url, const char *app_id, struct spark_app_record **out)
{
	struct rest rs;
	struct app_builder *b = app_builder_new();
	int err = b ? rest_init(&rs, base_url) : -ENOMEM;

	*out = NULL;
	if (err) {
		sp_err("%s: %s", base_url, strerror(-err));
	} else {
		err = fetch_app(&rs, b, app_id) ?: fetch_jobs(&rs, b) ?: fetch_sql(&rs, b) ?:
		      fetch_stages(&rs, b);
	}
	if (b)
		rest_free(&rs);
	if (err) {
		app_builder_free(b);
		return err;
	}
	if (!(*out = app_builder_finish(b))) {
		sp_err("%s: %s", base_url, strerror(ENOMEM));
		return -ENOMEM;
	}
	return 0;
}

/* event_log.c - see event_log.h.  Files are decoded in pieces
 * (event_log_codec), cut into lines, and each wanted line is parsed by
 * json-c into the builder (spark_app_record). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/grow_array.h"
#include "base/log.h"
#include "spark/event_log.h"
#include "spark/event_log_codec.h"
#include "spark/json_fields.h"

/* Spark's SQL plans nest deeply; json-c's own default (32) is too small. */
#define JSON_DEPTH 1024
#define READ_CHUNK (1u << 20)

struct reader {
	struct app_builder *b;
	struct json_tokener *tok;
	const char *file;        /* for messages */
	uint64_t line;           /* lines read from this file */
	char *partial;           /* a line's start, waiting for its end */
	size_t plen, pcap;
	uint64_t bytes;          /* plain bytes of every file so far */
	struct jf_error e;       /* what was wrong with an event */
	int truncated;
	uint64_t events;         /* lines that were events */
};

typedef int (*event_fn)(struct reader *r, struct json_object *ev);

/* --- events */

/* spark.sql.execution.id is a property, so a string; -1 unless a number. */
static int64_t sql_id_of(struct json_object *props)
{
	struct json_object *m = jf_member(props, "spark.sql.execution.id");
	const char *s = m && json_object_is_type(m, json_type_string) ? json_object_get_string(m) : "";
	char *end;
	long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	return *end || errno ? -1 : v;
}

static int on_log_start(struct reader *r, struct json_object *ev)
{
	return jf_copy(&r->e, ev, "Spark Version", &app_builder_app(r->b)->spark_version);
}

static int on_app_start(struct reader *r, struct json_object *ev)
{
	struct spark_app_record *a = app_builder_app(r->b);

	return jf_copy(&r->e, ev, "App ID", &a->app_id) ?:
	       jf_copy(&r->e, ev, "App Name", &a->app_name) ?:
	       jf_copy(&r->e, ev, "App Attempt ID", &a->attempt_id) ?:
	       jf_u64(&r->e, ev, "Timestamp", &a->start_ms);
}

static int on_app_end(struct reader *r, struct json_object *ev)
{
	return jf_u64(&r->e, ev, "Timestamp", &app_builder_app(r->b)->end_ms);
}

static int stage_id_at(struct json_object *arr, size_t i, int32_t *id)
{
	struct json_object *e = json_object_array_get_idx(arr, i);
	int64_t v = json_object_get_int64(e);

	if (!json_object_is_type(e, json_type_int) || v < 0 || v > INT32_MAX)
		return 0;
	*id = (int32_t)v;
	return 1;
}

/* The name of the last stage (by id) of a job's Stage Infos, or NULL. */
static const char *last_stage_name(struct json_object *infos, size_t n)
{
	const char *name = NULL;
	int64_t last = -1;

	for (size_t i = 0; i < n; i++) {
		struct json_object *info = json_object_array_get_idx(infos, i);
		struct json_object *id = jf_member(info, "Stage ID"), *nm = jf_member(info, "Stage Name");

		if (json_object_is_type(id, json_type_int) && json_object_get_int64(id) >= last &&
		    json_object_is_type(nm, json_type_string)) {
			last = json_object_get_int64(id);
			name = json_object_get_string(nm);
		}
	}
	return name;
}

/* A job's stage ids, and its name: its last stage's (as Spark's UI). */
static int job_stages(struct reader *r, struct json_object *ev, int64_t id)
{
	struct json_object *ids, *infos;
	size_t n, ninfo;
	int err = jf_arr(&r->e, ev, "Stage IDs", &ids, &n) ?:
		  jf_arr(&r->e, ev, "Stage Infos", &infos, &ninfo);
	const char *name;
	struct spark_job *j;
	int32_t *v;

	if (err)
		return err;
	name = last_stage_name(infos, ninfo);
	if (!(v = malloc((n ? n : 1) * sizeof(*v))))
		return jf_nomem(&r->e);
	for (size_t i = 0; !err && i < n; i++)
		if (!stage_id_at(ids, i, &v[i]))
			err = jf_bad(&r->e, "\"Stage IDs\" holds other than stage ids");
	if (!err && (app_builder_job_stages(r->b, id, v, n) || !(j = app_builder_job(r->b, id)) ||
		     (name && app_builder_set_str(&j->name, name, strlen(name)))))
		err = jf_nomem(&r->e);
	free(v);
	return err;
}

static int on_job_start(struct reader *r, struct json_object *ev)
{
	struct json_object *props;
	struct spark_job *j;
	int64_t id = 0;
	int err = jf_int(&r->e, ev, "Job ID", &id, true) ?:
		  jf_obj(&r->e, ev, "Properties", &props, false) ?:
		  job_stages(r, ev, id);

	if (err)
		return err;
	if (!(j = app_builder_job(r->b, id)))
		return jf_nomem(&r->e);
	j->sql_execution_id = sql_id_of(props);
	return jf_u64(&r->e, ev, "Submission Time", &j->submit_ms) ?:
	       jf_copy(&r->e, props, "spark.job.description", &j->description);
}

static int on_job_end(struct reader *r, struct json_object *ev)
{
	struct json_object *res;
	const char *result;
	size_t len;
	int64_t id = 0;
	int err = jf_int(&r->e, ev, "Job ID", &id, true) ?: jf_obj(&r->e, ev, "Job Result", &res, false) ?:
		  jf_str(&r->e, res, "Result", &result, &len);
	struct spark_job *j = err ? NULL : app_builder_job(r->b, id);

	if (err)
		return err;
	if (!j)
		return jf_nomem(&r->e);
	j->failed = result && strcmp(result, "JobSucceeded") != 0;
	return jf_u64(&r->e, ev, "Completion Time", &j->complete_ms);
}

/* Stage submitted or completed: the same Stage Info, with the completion
 * time and failure in the second; the job's properties in the first. */
static int on_stage(struct reader *r, struct json_object *ev)
{
	struct json_object *info, *props, *failure;
	struct spark_stage_info *s;
	int32_t id = 0, attempt = 0;
	int err = jf_obj(&r->e, ev, "Stage Info", &info, true) ?:
		  jf_i32(&r->e, info, "Stage ID", &id, true) ?:
		  jf_i32(&r->e, info, "Stage Attempt ID", &attempt, false) ?:
		  jf_obj(&r->e, ev, "Properties", &props, false);

	if (err)
		return err;
	if (!(s = app_builder_stage(r->b, id, attempt)))
		return jf_nomem(&r->e);
	if ((failure = jf_member(info, "Failure Reason")))
		s->failed = true;
	if (props && sql_id_of(props) >= 0)
		s->sql_execution_id = sql_id_of(props);
	return jf_copy(&r->e, info, "Stage Name", &s->name) ?:
	       jf_copy(&r->e, info, "Details", &s->details) ?:
	       jf_i32(&r->e, info, "Number of Tasks", &s->num_tasks, false) ?:
	       jf_u64(&r->e, info, "Submission Time", &s->submit_ms) ?:
	       jf_u64(&r->e, info, "Completion Time", &s->complete_ms) ?:
	       jf_copy(&r->e, props, "spark.job.description", &s->description);
}

static int task_metrics(struct reader *r, struct json_object *m, struct spark_task *t)
{
	struct json_object *rd, *wr;
	uint64_t remote = 0, local = 0;
	int err = jf_obj(&r->e, m, "Shuffle Read Metrics", &rd, false) ?:
		  jf_obj(&r->e, m, "Shuffle Write Metrics", &wr, false) ?:
		  jf_u64(&r->e, m, "Executor Run Time", &t->run_ms) ?:
		  jf_u64(&r->e, m, "Executor CPU Time", &t->cpu_ns) ?:
		  jf_u64(&r->e, m, "JVM GC Time", &t->gc_ms) ?:
		  jf_u64(&r->e, m, "Memory Bytes Spilled", &t->memory_spill_bytes) ?:
		  jf_u64(&r->e, m, "Disk Bytes Spilled", &t->disk_spill_bytes) ?:
		  jf_u64(&r->e, rd, "Remote Bytes Read", &remote) ?:
		  jf_u64(&r->e, rd, "Local Bytes Read", &local) ?:
		  jf_u64(&r->e, wr, "Shuffle Bytes Written", &t->shuffle_write_bytes);

	t->shuffle_read_bytes = remote + local;
	return err;
}

static int on_task_end(struct reader *r, struct json_object *ev)
{
	struct json_object *info, *metrics;
	struct spark_task t = { 0 };
	bool killed = false;
	int err = jf_i32(&r->e, ev, "Stage ID", &t.stage, true) ?:
		  jf_i32(&r->e, ev, "Stage Attempt ID", &t.stage_attempt, false) ?:
		  jf_obj(&r->e, ev, "Task Info", &info, true) ?:
		  jf_int(&r->e, info, "Task ID", &t.tid, true) ?:
		  jf_i32(&r->e, info, "Index", &t.index, false) ?:
		  jf_i32(&r->e, info, "Attempt", &t.attempt, false) ?:
		  jf_u64(&r->e, info, "Launch Time", &t.launch_ms) ?:
		  jf_u64(&r->e, info, "Finish Time", &t.finish_ms) ?:
		  jf_chars(&r->e, info, "Executor ID", t.executor_id, sizeof(t.executor_id)) ?:
		  jf_chars(&r->e, info, "Host", t.host, sizeof(t.host)) ?:
		  jf_bool(&r->e, info, "Failed", &t.failed) ?:
		  jf_bool(&r->e, info, "Killed", &killed) ?:
		  jf_obj(&r->e, ev, "Task Metrics", &metrics, false) ?:
		  task_metrics(r, metrics, &t);

	if (err)
		return err;
	t.failed = t.failed || killed;
	if (app_builder_task(r->b, &t)) {
		errno = ENOMEM;
		return jf_nomem(&r->e);
	}
	return 0;
}

static int on_sql_start(struct reader *r, struct json_object *ev)
{
	const char *d;
	size_t len;
	int64_t id = 0;
	int err = jf_int(&r->e, ev, "executionId", &id, true) ?:
		  jf_str(&r->e, ev, "description", &d, &len);

	if (err)
		return err;
	if (id < 0)
		return jf_bad(&r->e, "\"executionId\" is negative");
	if ((err = app_builder_sql(r->b, id, d ? d : "", len))) {
		errno = -err;
		return jf_nomem(&r->e);
	}
	return 0;
}

static const struct {
	const char *name;
	event_fn fn;
} events[] = {
	{ "SparkListenerLogStart", on_log_start },
	{ "SparkListenerApplicationStart", on_app_start },
	{ "SparkListenerApplicationEnd", on_app_end },
	{ "SparkListenerJobStart", on_job_start },
	{ "SparkListenerJobEnd", on_job_end },
	{ "SparkListenerStageSubmitted", on_stage },
	{ "SparkListenerStageCompleted", on_stage },
	{ "SparkListenerTaskEnd", on_task_end },
	{ "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart", on_sql_start },
};

static event_fn event_of(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if (strlen(events[i].name) == len && memcmp(events[i].name, name, len) == 0)
			return events[i].fn;
	return NULL;
}

/* --- lines */

/* The name of a line's event when the line starts as Spark writes every
 * event ({"Event":"NAME",...), so that events not read are skipped
 * unparsed. */
static int quick_name(const char *line, size_t len, const char **name, size_t *nlen)
{
	static const char head[] = "{\"Event\":\"";
	size_t h = sizeof(head) - 1;
	const char *q;

	if (len < h || memcmp(line, head, h) != 0 || !(q = memchr(line + h, '"', len - h)) ||
	    memchr(line + h, '\\', q - (line + h)))
		return 0;
	*name = line + h;
	*nlen = q - *name;
	return 1;
}

static int parse_event(struct reader *r, struct json_object *o)
{
	const char *name;
	size_t len;
	event_fn fn;
	int err;

	if (!json_object_is_type(o, json_type_object))
		return jf_bad(&r->e, "not a JSON object");
	if ((err = jf_str(&r->e, o, "Event", &name, &len)))
		return err;
	if (!name)
		return jf_bad(&r->e, "no \"Event\"");
	r->events++;
	fn = event_of(name, len);
	if (fn && (err = fn(r, o)) == -EPROTO)
		snprintf(r->e.why + strlen(r->e.why), sizeof(r->e.why) - strlen(r->e.why), " in %.64s", name);
	return fn ? err : 0;
}

/* One line: 0; 1 when it is the start of an event (said only of the last
 * line: one cut short); or -errno. */
static int parse_line(struct reader *r, const char *line, size_t len, int last)
{
	const char *name;
	size_t nlen;
	struct json_object *o;
	int err;

	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (!len)
		return 0;
	if (!last && quick_name(line, len, &name, &nlen) && !event_of(name, nlen)) {
		r->events++;
		return 0;
	}
	json_tokener_reset(r->tok);
	o = json_tokener_parse_ex(r->tok, line, (int)len);
	if (!o) {
		enum json_tokener_error e = json_tokener_get_error(r->tok);

		if (e == json_tokener_continue)
			return last ? 1 : jf_bad(&r->e, "an unfinished JSON object");
		return jf_bad(&r->e, "not JSON (%s)", json_tokener_error_desc(e));
	}
	if (json_tokener_get_parse_end(r->tok) < len)
		err = jf_bad(&r->e, "text after the JSON object");
	else
		err = parse_event(r, o);
	json_object_put(o);
	return err;
}

static int append_partial(struct reader *r, const char *p, size_t n)
{
	if (n > SPARK_EVENT_LINE_MAX - r->plen)
		return jf_bad(&r->e, "a line longer than %u MiB", SPARK_EVENT_LINE_MAX >> 20);
	if (grow_array((void **)&r->partial, &r->pcap, r->plen + n, 1)) {
		errno = ENOMEM;
		return jf_nomem(&r->e);
	}
	memcpy(r->partial + r->plen, p, n);
	r->plen += n;
	return 0;
}

/* Plain bytes in: whole lines are parsed where they lie, a line's start
 * is kept until its end comes. */
static int lines_sink(const void *data, size_t len, void *ctx)
{
	struct reader *r = ctx;
	const char *p = data, *end = p + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		int err;

		if (!nl)
			return append_partial(r, p, end - p);
		if (r->plen) {
			err = append_partial(r, p, nl - p) ?: parse_line(r, r->partial, r->plen, 0);
			r->plen = 0;
		} else if ((size_t)(nl - p) > SPARK_EVENT_LINE_MAX) {
			err = jf_bad(&r->e, "a line longer than %u MiB", SPARK_EVENT_LINE_MAX >> 20);
		} else {
			err = parse_line(r, p, nl - p, 0);
		}
		if (err)
			return err;
		r->line++;
		p = nl + 1;
	}
	return 0;
}

/* The end of a file, cut inside a compressed block or not: a last line
 * without its newline is parsed; one cut short is tolerated in the last
 * file only. */
static int end_of_file(struct reader *r, int cut, int last)
{
	if (r->plen) {
		int ret = parse_line(r, r->partial, r->plen, 1);

		r->plen = 0;
		if (ret < 0)
			return ret;
		cut |= ret;
	}
	if (cut && !last)
		return jf_bad(&r->e, "cut short, yet a later file follows");
	r->truncated |= cut;
	return 0;
}

/* --- files */

/* The one message of a failed read; cs: the file's decoder, if any. */
static void report(const struct reader *r, const struct codec_stream *cs,
		   enum spark_codec codec, int err)
{
	if (r->e.err)
		sp_err("%s: line %" PRIu64 ": %s: %s", r->file, r->line, r->e.why, strerror(-err));
	else if (err == -EPROTO && cs)
		sp_err("%s: not a valid %s stream (%s): %s", r->file, spark_codec_name(codec),
		       codec_stream_why(cs), strerror(EPROTO));
	else if (err == -EFBIG)
		sp_err("%s: more than %llu GiB of events: %s", r->file, SPARK_EVENT_LOG_MAX >> 30,
		       strerror(EFBIG));
	else
		sp_err("%s: %s", r->file, strerror(-err));
}

static int open_log(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0) {
		err = -errno;
		sp_err("open %s: %s", path, strerror(errno));
		return err;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		err = S_ISREG(st.st_mode) ? -errno : -EINVAL;
		sp_err("%s: not a regular file: %s", path, strerror(-err));
		close(fd);
		return err;
	}
	return fd;
}

/* Decodes fd into the reader to its end.  0 or -errno (reported). */
static int pump(struct reader *r, int fd, struct codec_stream *cs, enum spark_codec codec,
		int last)
{
	char *buf = malloc(READ_CHUNK);
	int err = buf ? 0 : -ENOMEM;

	while (!err) {
		ssize_t n = read(fd, buf, READ_CHUNK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			sp_err("read %s: %s", r->file, strerror(errno));
			break;
		}
		err = n ? codec_stream_feed(cs, buf, n, lines_sink, r)
			: end_of_file(r, codec_stream_end(cs), last);
		if (err)
			report(r, cs, codec, err);
		if (!n)
			break;
	}
	if (!buf)
		sp_err("%s: %s", r->file, strerror(ENOMEM));
	free(buf);
	return err;
}

/* One file of a log, its codec by its name. */
static int read_file(struct reader *r, const char *path, const char *name, int last)
{
	enum spark_codec codec;
	struct codec_stream *cs;
	int fd, err;

	if (spark_codec_of_name(name, &codec)) {
		sp_err("%s: compressed with lzf, which is not read: %s", path, strerror(ENOTSUP));
		return -ENOTSUP;
	}
	if ((fd = open_log(path)) < 0)
		return fd;
	cs = codec_stream_new(codec, SPARK_EVENT_LOG_MAX - r->bytes);
	if (!cs) {
		sp_err("%s: %s", path, strerror(ENOMEM));
		close(fd);
		return -ENOMEM;
	}
	r->file = path;
	r->line = 1;
	err = pump(r, fd, cs, codec, last);
	r->bytes += codec_stream_out_bytes(cs);
	codec_stream_free(cs);
	close(fd);
	return err;
}

/* --- rolled logs (eventlog_v2_APP/events_N_APP...) */

struct rolled_file {
	uint64_t index;
	int compact;
	char *name;
};

static int cmp_rolled(const void *a, const void *b)
{
	const struct rolled_file *x = a, *y = b;

	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* N of "events_N_...", 0 when name is no events file. */
static int rolled_index(const char *name, uint64_t *index)
{
	const char *p = name + 7;
	char *end;

	if (strncmp(name, "events_", 7) != 0 || *p < '0' || *p > '9')
		return 0;
	errno = 0;
	*index = strtoull(p, &end, 10);
	return *end == '_' && !errno;
}

static void free_rolled(struct rolled_file *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(f[i].name);
	free(f);
}

/* The events files of dir, by N.  0 or -errno (reported). */
static int list_rolled(const char *dir, struct rolled_file **out, size_t *count)
{
	DIR *d = opendir(dir);
	struct rolled_file *f = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	int err = 0;

	if (!d) {
		err = -errno;
		sp_err("open %s: %s", dir, strerror(errno));
		return err;
	}
	while (!err && (e = readdir(d))) {
		uint64_t index;
		size_t len = strlen(e->d_name);

		if (!rolled_index(e->d_name, &index))
			continue;
		if (n >= SPARK_EVENT_FILES_MAX)
			err = -E2BIG;
		else if (grow_array((void **)&f, &cap, n + 1, sizeof(*f)) ||
			 !(f[n].name = strdup(e->d_name)))
			err = -ENOMEM;
		else {
			f[n].index = index;
			f[n].compact = len > 8 && strcmp(e->d_name + len - 8, ".compact") == 0;
			n++;
		}
	}
	closedir(d);
	if (!err && !n)
		err = -ENOENT;
	if (err) {
		sp_err("%s: %s: %s", dir, err == -E2BIG ? "too many events files" :
		       err == -ENOENT ? "no events_N file" : "listing", strerror(-err));
		free_rolled(f, n);
		return err;
	}
	qsort(f, n, sizeof(*f), cmp_rolled);
	*out = f;
	*count = n;
	return 0;
}

/* Every events file from the last compacted one (which sums up those
 * before it), in order. */
static int read_rolled(struct reader *r, const char *dir)
{
	struct rolled_file *f = NULL;
	size_t n = 0, first = 0;
	int err = list_rolled(dir, &f, &n);

	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		if (f[i].compact)
			first = i;
	for (size_t i = first; !err && i < n; i++) {
		char *path;

		if (asprintf(&path, "%s/%s", dir, f[i].name) < 0) {
			sp_err("%s: %s", dir, strerror(ENOMEM));
			err = -ENOMEM;
			break;
		}
		err = read_file(r, path, f[i].name, i + 1 == n);
		free(path);
	}
	free_rolled(f, n);
	return err;
}

/* --- entry points */

static int reader_init(struct reader *r, const char *name)
{
	memset(r, 0, sizeof(*r));
	r->file = name;
	r->line = 1;
	r->b = app_builder_new();
	r->tok = json_tokener_new_ex(JSON_DEPTH);
	if (!r->b || !r->tok) {
		app_builder_free(r->b);
		if (r->tok)
			json_tokener_free(r->tok);
		sp_err("%s: %s", name, strerror(ENOMEM));
		return -ENOMEM;
	}
	json_tokener_set_flags(r->tok, JSON_TOKENER_STRICT);
	return 0;
}

/* Hands over the record when err is 0 and events were read. */
static int reader_done(struct reader *r, const char *name, int err, struct spark_app_record **out)
{
	json_tokener_free(r->tok);
	free(r->partial);
	if (!err && !r->events) {
		sp_err("%s: holds no Spark event: %s", name, strerror(EPROTO));
		err = -EPROTO;
	}
	if (err) {
		app_builder_free(r->b);
		return err;
	}
	app_builder_app(r->b)->truncated = r->truncated;
	*out = app_builder_finish(r->b);
	if (!*out) {
		sp_err("%s: %s", name, strerror(ENOMEM));
		return -ENOMEM;
	}
	return 0;
}

int spark_event_log_read(const char *path, struct spark_app_record **out)
{
	struct reader r;
	struct stat st;
	const char *base = strrchr(path, '/');
	int err;

	*out = NULL;
	if (stat(path, &st) != 0) {
		err = -errno;
		sp_err("%s: %s", path, strerror(errno));
		return err;
	}
	if ((err = reader_init(&r, path)))
		return err;
	if (S_ISDIR(st.st_mode))
		err = read_rolled(&r, path);
	else
		err = read_file(&r, path, base ? base + 1 : path, 1);
	return reader_done(&r, path, err, out);
}

int spark_event_log_parse(const char *name, const void *data, size_t len,
			  struct spark_app_record **out)
{
	struct reader r;
	int err;

	*out = NULL;
	if ((err = reader_init(&r, name)))
		return err;
	err = len > SPARK_EVENT_LOG_MAX ? -EFBIG : lines_sink(data, len, &r);
	if (!err)
		err = end_of_file(&r, 0, 1);
	if (err)
		report(&r, NULL, SPARK_CODEC_NONE, err);
	return reader_done(&r, name, err, out);
}

/* spark_app_record.c - see spark_app_record.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow_array.h"
#include "spark/spark_app_record.h"

/* Ids to array positions: open addressing over 64-bit keys (a TID, a job
 * id, a stage and attempt packed), kept at most half full. */
struct id_index {
	uint64_t *keys;
	uint32_t *vals;     /* position + 1; 0 = empty */
	size_t size, count; /* size: a power of two, or 0 */
};

struct sql_exec {
	int64_t id;
	char *description;
	int64_t *job_ids;
	size_t njobs, cap;
};

struct app_builder {
	struct spark_app_record rec;
	size_t stages_cap, jobs_cap, tasks_cap, nsql, sql_cap;
	size_t listed;      /* stage ids of all jobs and job ids of all executions */
	struct sql_exec *sql;
	struct id_index stage_ix, job_ix, task_ix, sql_ix;
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

/* The slot of key: where it is, or the empty slot it would go to. */
static size_t id_slot(const struct id_index *ix, uint64_t key)
{
	size_t mask = ix->size - 1, i = mix64(key) & mask;

	while (ix->vals[i] && ix->keys[i] != key)
		i = (i + 1) & mask;
	return i;
}

static int id_find(const struct id_index *ix, uint64_t key, size_t *pos)
{
	if (!ix->size)
		return 0;
	size_t i = id_slot(ix, key);
	if (!ix->vals[i])
		return 0;
	*pos = ix->vals[i] - 1;
	return 1;
}

static int id_grow(struct id_index *ix)
{
	struct id_index n = { .size = ix->size ? ix->size * 2 : 64 };

	n.keys = malloc(n.size * sizeof(*n.keys));
	n.vals = calloc(n.size, sizeof(*n.vals));
	if (!n.keys || !n.vals) {
		free(n.keys);
		free(n.vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ix->size; i++) {
		if (!ix->vals[i])
			continue;
		size_t j = id_slot(&n, ix->keys[i]);
		n.keys[j] = ix->keys[i];
		n.vals[j] = ix->vals[i];
	}
	n.count = ix->count;
	free(ix->keys);
	free(ix->vals);
	*ix = n;
	return 0;
}

static int id_put(struct id_index *ix, uint64_t key, size_t pos)
{
	if (2 * (ix->count + 1) > ix->size && id_grow(ix))
		return -ENOMEM;
	size_t i = id_slot(ix, key);
	ix->keys[i] = key;
	ix->vals[i] = (uint32_t)pos + 1;
	ix->count++;
	return 0;
}

static void id_free(struct id_index *ix)
{
	free(ix->keys);
	free(ix->vals);
}

struct app_builder *app_builder_new(void)
{
	return calloc(1, sizeof(struct app_builder));
}

static void free_sql(struct app_builder *b)
{
	for (size_t i = 0; i < b->nsql; i++) {
		free(b->sql[i].description);
		free(b->sql[i].job_ids);
	}
	free(b->sql);
	b->sql = NULL;
	b->nsql = 0;
}

static void free_indexes(struct app_builder *b)
{
	id_free(&b->stage_ix);
	id_free(&b->job_ix);
	id_free(&b->task_ix);
	id_free(&b->sql_ix);
}

static void free_record_fields(struct spark_app_record *r)
{
	for (size_t i = 0; i < r->nstages; i++) {
		free(r->stages[i].name);
		free(r->stages[i].details);
		free(r->stages[i].description);
	}
	for (size_t i = 0; i < r->njobs; i++) {
		free(r->jobs[i].name);
		free(r->jobs[i].description);
		free(r->jobs[i].stage_ids);
	}
	free(r->stages);
	free(r->jobs);
	free(r->tasks);
	free(r->app_id);
	free(r->app_name);
	free(r->attempt_id);
	free(r->spark_version);
}

void app_builder_free(struct app_builder *b)
{
	if (!b)
		return;
	free_record_fields(&b->rec);
	free_sql(b);
	free_indexes(b);
	free(b);
}

void spark_app_record_free(struct spark_app_record *r)
{
	if (!r)
		return;
	free_record_fields(r);
	free(r);
}

struct spark_app_record *app_builder_app(struct app_builder *b)
{
	return &b->rec;
}

int app_builder_set_str(char **dst, const char *s, size_t len)
{
	char *c = NULL;

	if (s) {
		const char *nul = memchr(s, '\0', len);

		if (nul)
			len = nul - s;
		if (len > SPARK_STRING_MAX)
			len = SPARK_STRING_MAX;
		c = malloc(len + 1);
		if (!c)
			return -ENOMEM;
		memcpy(c, s, len);
		c[len] = '\0';
	}
	free(*dst);
	*dst = c;
	return 0;
}

/* Finds key in ix, or appends a zeroed element to *arr (of *n, room *cap)
 * under it; its position in *pos.  0, -ENOMEM or -E2BIG. */
static int find_or_add(struct id_index *ix, uint64_t key, void **arr, size_t *n,
		       size_t *cap, size_t elem, size_t max, size_t *pos)
{
	if (id_find(ix, key, pos))
		return 0;
	if (*n >= max)
		return -E2BIG;
	if (grow_array(arr, cap, *n + 1, elem) || id_put(ix, key, *n))
		return -ENOMEM;
	*pos = (*n)++;
	memset((char *)*arr + *pos * elem, 0, elem);
	return 1;
}

static uint64_t stage_key(int32_t stage, int32_t attempt)
{
	return (uint64_t)(uint32_t)stage << 32 | (uint32_t)attempt;
}

struct spark_stage_info *app_builder_stage(struct app_builder *b, int32_t stage, int32_t attempt)
{
	struct spark_app_record *r = &b->rec;
	size_t pos;
	int ret = find_or_add(&b->stage_ix, stage_key(stage, attempt), (void **)&r->stages,
			      &r->nstages, &b->stages_cap, sizeof(*r->stages), SPARK_STAGES_MAX, &pos);

	if (ret < 0) {
		errno = -ret;
		return NULL;
	}
	struct spark_stage_info *s = &r->stages[pos];
	if (ret == 1) {
		s->stage = stage;
		s->attempt = attempt;
		s->job_id = -1;
		s->sql_execution_id = -1;
	}
	return s;
}

struct spark_job *app_builder_job(struct app_builder *b, int64_t job_id)
{
	struct spark_app_record *r = &b->rec;
	size_t pos;
	int ret = find_or_add(&b->job_ix, (uint64_t)job_id, (void **)&r->jobs, &r->njobs,
			      &b->jobs_cap, sizeof(*r->jobs), SPARK_JOBS_MAX, &pos);

	if (ret < 0) {
		errno = -ret;
		return NULL;
	}
	if (ret == 1) {
		r->jobs[pos].job_id = job_id;
		r->jobs[pos].sql_execution_id = -1;
	}
	return &r->jobs[pos];
}

int app_builder_job_stages(struct app_builder *b, int64_t job_id, const int32_t *ids, size_t n)
{
	struct spark_job *j = app_builder_job(b, job_id);
	int32_t *copy = NULL;

	if (!j)
		return -errno;
	b->listed -= j->nstage_ids;
	if (n > SPARK_JOB_STAGES_MAX)
		n = SPARK_JOB_STAGES_MAX;
	if (n > SPARK_LISTED_MAX - b->listed)
		n = SPARK_LISTED_MAX - b->listed;
	if (n && !(copy = malloc(n * sizeof(*copy))))
		return -ENOMEM;
	if (n)
		memcpy(copy, ids, n * sizeof(*copy));
	free(j->stage_ids);
	j->stage_ids = copy;
	j->nstage_ids = n;
	b->listed += n;
	return 0;
}

static struct sql_exec *sql_entry(struct app_builder *b, int64_t exec_id, int *err)
{
	size_t pos;
	int ret = find_or_add(&b->sql_ix, (uint64_t)exec_id, (void **)&b->sql, &b->nsql,
			      &b->sql_cap, sizeof(*b->sql), SPARK_SQL_MAX, &pos);

	*err = ret < 0 ? ret : 0;
	if (ret < 0)
		return NULL;
	b->sql[pos].id = exec_id;
	return &b->sql[pos];
}

int app_builder_sql(struct app_builder *b, int64_t exec_id, const char *desc, size_t len)
{
	int err;
	struct sql_exec *e = sql_entry(b, exec_id, &err);

	return e ? app_builder_set_str(&e->description, desc, len) : err;
}

int app_builder_sql_job(struct app_builder *b, int64_t exec_id, int64_t job_id)
{
	int err;
	struct sql_exec *e = sql_entry(b, exec_id, &err);

	if (!e)
		return err;
	if (e->njobs >= SPARK_JOB_STAGES_MAX || b->listed >= SPARK_LISTED_MAX)
		return -E2BIG;
	if (grow_array((void **)&e->job_ids, &e->cap, e->njobs + 1, sizeof(*e->job_ids)))
		return -ENOMEM;
	e->job_ids[e->njobs++] = job_id;
	b->listed++;
	return 0;
}

int app_builder_task(struct app_builder *b, const struct spark_task *t)
{
	struct spark_app_record *r = &b->rec;
	size_t pos;
	int ret = find_or_add(&b->task_ix, (uint64_t)t->tid, (void **)&r->tasks, &r->ntasks,
			      &b->tasks_cap, sizeof(*r->tasks), SPARK_TASKS_MAX, &pos);

	if (ret == -E2BIG) {
		r->tasks_dropped++;
		return 0;
	}
	if (ret < 0)
		return ret;
	if (ret == 1) {
		r->tasks[pos] = *t;
		r->tasks[pos].executor_id[sizeof(t->executor_id) - 1] = '\0';
		r->tasks[pos].host[sizeof(t->host) - 1] = '\0';
	}
	return 0;
}

static int cmp_stage(const void *a, const void *b)
{
	const struct spark_stage_info *x = a, *y = b;

	if (x->stage != y->stage)
		return x->stage < y->stage ? -1 : 1;
	return (x->attempt > y->attempt) - (x->attempt < y->attempt);
}

static int cmp_job(const void *a, const void *b)
{
	const struct spark_job *x = a, *y = b;

	return (x->job_id > y->job_id) - (x->job_id < y->job_id);
}

static int cmp_task(const void *a, const void *b)
{
	const struct spark_task *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

struct listing {
	int32_t stage;
	uint32_t job;       /* position in the sorted jobs */
};

static int cmp_listing(const void *a, const void *b)
{
	const struct listing *x = a, *y = b;

	if (x->stage != y->stage)
		return x->stage < y->stage ? -1 : 1;
	return (x->job > y->job) - (x->job < y->job);
}

static int job_ran_at(const struct spark_job *j, uint64_t t)
{
	return t >= j->submit_ms && (!j->complete_ms || t <= j->complete_ms);
}

/* Job positions listing each stage id, by stage id then job id. */
static struct listing *list_stages(const struct spark_app_record *r, size_t *n)
{
	size_t total = 0, k = 0;
	struct listing *l;

	for (size_t j = 0; j < r->njobs; j++)
		total += r->jobs[j].nstage_ids;
	l = malloc((total ? total : 1) * sizeof(*l));
	if (!l)
		return NULL;
	for (size_t j = 0; j < r->njobs; j++)
		for (size_t i = 0; i < r->jobs[j].nstage_ids; i++)
			l[k++] = (struct listing){ r->jobs[j].stage_ids[i], (uint32_t)j };
	if (total)
		qsort(l, total, sizeof(*l), cmp_listing);
	*n = total;
	return l;
}

/* A stage attempt's job: of the jobs that list its stage (later jobs list
 * the stages they skip too), the first one running when the attempt was
 * submitted, else the first one.  Stages and listings are sorted by stage
 * id and walked together; the search for a running job has a budget
 * overall, so that hostile lists cost bounded time. */
static int settle_stage_jobs(struct spark_app_record *r)
{
	size_t n, lo = 0, budget = 64u << 20;
	struct listing *l = list_stages(r, &n);

	if (!l)
		return -ENOMEM;
	for (size_t s = 0; s < r->nstages; s++) {
		struct spark_stage_info *st = &r->stages[s];
		size_t hi;

		while (lo < n && l[lo].stage < st->stage)
			lo++;
		for (hi = lo; hi < n && l[hi].stage == st->stage; hi++)
			;
		if (lo == hi || st->job_id >= 0)
			continue;
		st->job_id = r->jobs[l[lo].job].job_id;
		for (size_t i = lo; i < hi && budget; i++, budget--) {
			if (job_ran_at(&r->jobs[l[i].job], st->submit_ms)) {
				st->job_id = r->jobs[l[i].job].job_id;
				break;
			}
		}
	}
	free(l);
	return 0;
}

static const struct sql_exec *find_sql(const struct app_builder *b, int64_t id)
{
	size_t pos;

	return id >= 0 && id_find(&b->sql_ix, (uint64_t)id, &pos) ? &b->sql[pos] : NULL;
}

/* Jobs' SQL executions (from the executions' job lists, where the source
 * gives them there) and descriptions: their own, else their execution's. */
static int settle_jobs(struct app_builder *b)
{
	struct spark_app_record *r = &b->rec;

	for (size_t i = 0; i < b->nsql; i++) {
		for (size_t k = 0; k < b->sql[i].njobs; k++) {
			const struct spark_job *found =
				spark_app_record_job(r, b->sql[i].job_ids[k]);

			if (found && found->sql_execution_id < 0)
				((struct spark_job *)found)->sql_execution_id = b->sql[i].id;
		}
	}
	for (size_t i = 0; i < r->njobs; i++) {
		struct spark_job *j = &r->jobs[i];
		const struct sql_exec *e = find_sql(b, j->sql_execution_id);

		if (!j->description && e && e->description &&
		    app_builder_set_str(&j->description, e->description, strlen(e->description)))
			return -ENOMEM;
	}
	return 0;
}

/* Stages' SQL executions and descriptions: their own, else their job's,
 * else their execution's. */
static int settle_stages(struct app_builder *b)
{
	struct spark_app_record *r = &b->rec;

	if (settle_stage_jobs(r))
		return -ENOMEM;
	for (size_t i = 0; i < r->nstages; i++) {
		struct spark_stage_info *s = &r->stages[i];
		const struct spark_job *j = s->job_id >= 0 ? spark_app_record_job(r, s->job_id) : NULL;
		const struct sql_exec *e;
		const char *d;

		if (s->sql_execution_id < 0 && j)
			s->sql_execution_id = j->sql_execution_id;
		e = find_sql(b, s->sql_execution_id);
		d = j && j->description ? j->description : e ? e->description : NULL;
		if (!s->description && d && app_builder_set_str(&s->description, d, strlen(d)))
			return -ENOMEM;
	}
	return 0;
}

struct spark_app_record *app_builder_finish(struct app_builder *b)
{
	struct spark_app_record *r = &b->rec, *out;

	if (r->nstages)
		qsort(r->stages, r->nstages, sizeof(*r->stages), cmp_stage);
	if (r->njobs)
		qsort(r->jobs, r->njobs, sizeof(*r->jobs), cmp_job);
	if (r->ntasks)
		qsort(r->tasks, r->ntasks, sizeof(*r->tasks), cmp_task);
	if (settle_jobs(b) || settle_stages(b) || !(out = malloc(sizeof(*out)))) {
		app_builder_free(b);
		errno = ENOMEM;
		return NULL;
	}
	*out = *r;
	memset(r, 0, sizeof(*r));
	app_builder_free(b);
	return out;
}

const struct spark_stage_info *spark_app_record_stage(const struct spark_app_record *r,
						      int32_t stage, int32_t attempt)
{
	struct spark_stage_info key = { .stage = stage, .attempt = attempt };

	return r->nstages ? bsearch(&key, r->stages, r->nstages, sizeof(key), cmp_stage) : NULL;
}

const struct spark_job *spark_app_record_job(const struct spark_app_record *r, int64_t job_id)
{
	struct spark_job key = { .job_id = job_id };

	return r->njobs ? bsearch(&key, r->jobs, r->njobs, sizeof(key), cmp_job) : NULL;
}

const struct spark_task *spark_app_record_task(const struct spark_app_record *r, int64_t tid)
{
	struct spark_task key = { .tid = tid };

	return r->ntasks ? bsearch(&key, r->tasks, r->ntasks, sizeof(key), cmp_task) : NULL;
}

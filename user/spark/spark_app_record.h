/* spark_app_record.h - what Spark's own record says about one application:
 * its stage attempts (names, descriptions, times), jobs and task attempts
 * (times and metrics), for joining profiles with Spark's names and times.
 *
 * Two readers fill one: event_log.h (the event log Spark writes) and
 * spark_rest.h (the REST API of a running driver or a History Server).
 * Both go through the builder below, which bounds what is kept and
 * settles, once everything is in, which job ran each stage and which
 * description each carries, so that both readers agree on them.
 */
#ifndef SPARKPROF_SPARK_APP_RECORD_H
#define SPARKPROF_SPARK_APP_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bounds on what a record keeps of untrusted input. */
#define SPARK_TASKS_MAX   (2u << 20)  /* task attempts; later ones are counted, not kept */
#define SPARK_STAGES_MAX  (1u << 20)  /* stage attempts */
#define SPARK_JOBS_MAX    (1u << 20)
#define SPARK_SQL_MAX     (1u << 20)  /* SQL executions */
#define SPARK_JOB_STAGES_MAX (1u << 16) /* stage ids listed by one job; cut past it */
#define SPARK_LISTED_MAX  (16u << 20) /* stage ids of all jobs with job ids of all SQL executions */
#define SPARK_STRING_MAX  (64u << 10) /* names, details, descriptions: cut past it */

struct spark_task {                   /* one task attempt that ended */
	int64_t tid;                  /* Spark's task id (TID) */
	int32_t stage, stage_attempt;
	int32_t index;                /* index in the stage's task set (the partition, bar retries) */
	int32_t attempt;
	char executor_id[32];         /* cut to fit (ids are "driver" or numbers) */
	char host[128];               /* cut to fit */
	uint64_t launch_ms, finish_ms; /* Unix time, ms */
	uint64_t run_ms;              /* executorRunTime */
	uint64_t cpu_ns;              /* executorCpuTime */
	uint64_t gc_ms;               /* jvmGCTime */
	uint64_t shuffle_read_bytes;  /* remote + local */
	uint64_t shuffle_write_bytes;
	uint64_t memory_spill_bytes, disk_spill_bytes;
	bool failed;                  /* failed or killed */
};

struct spark_stage_info {            /* one stage attempt that was submitted */
	int32_t stage, attempt;
	char *name;                   /* e.g. "collect at job.py:12"; NULL: none */
	char *details;                /* the call stack Spark shows */
	char *description;            /* spark.job.description, else the SQL execution's */
	int64_t job_id;               /* the job that ran it; -1: not known */
	int64_t sql_execution_id;     /* -1: none */
	uint64_t submit_ms, complete_ms; /* 0: not (yet) */
	int32_t num_tasks;
	bool failed;
};

struct spark_job {
	int64_t job_id;
	char *name;                   /* its last stage's name, as Spark's UI shows it */
	char *description;            /* spark.job.description, else the SQL execution's */
	int64_t sql_execution_id;     /* -1: none */
	int32_t *stage_ids;           /* every stage it listed, run or skipped */
	size_t nstage_ids;
	uint64_t submit_ms, complete_ms;
	bool failed;
};

struct spark_app_record {
	char *app_id, *app_name;      /* NULL: not seen */
	char *attempt_id;             /* NULL: none (local, standalone) */
	char *spark_version;          /* NULL: not known */
	uint64_t start_ms, end_ms;    /* end 0: no end seen (running, or cut short) */
	struct spark_stage_info *stages; /* by stage id, then attempt */
	size_t nstages;
	struct spark_job *jobs;       /* by job id */
	size_t njobs;
	struct spark_task *tasks;     /* by TID */
	size_t ntasks;
	uint64_t tasks_dropped;       /* task attempts past SPARK_TASKS_MAX */
	bool truncated;               /* the source ended inside an event or a block */
};

void spark_app_record_free(struct spark_app_record *r);

/* Binary searches; NULL when absent. */
const struct spark_stage_info *spark_app_record_stage(const struct spark_app_record *r,
						      int32_t stage, int32_t attempt);
const struct spark_job *spark_app_record_job(const struct spark_app_record *r, int64_t job_id);
const struct spark_task *spark_app_record_task(const struct spark_app_record *r, int64_t tid);

/* Building a record, for the readers.  Entries are found by id and
 * created on first use, so events may come in any order; the pointers
 * returned stay valid only until the next call.  Strings are copied, cut
 * at SPARK_STRING_MAX and at a NUL.  NULL from a lookup: out of memory
 * or past a bound (errno ENOMEM or E2BIG). */
struct app_builder;

struct app_builder *app_builder_new(void);
void app_builder_free(struct app_builder *b);

/* The record's application fields (app_id ...), to be set with
 * app_builder_set_str and plain stores. */
struct spark_app_record *app_builder_app(struct app_builder *b);
struct spark_stage_info *app_builder_stage(struct app_builder *b, int32_t stage, int32_t attempt);
struct spark_job *app_builder_job(struct app_builder *b, int64_t job_id);
/* Sets a job's stage list (replacing any). 0 or -ENOMEM. */
int app_builder_job_stages(struct app_builder *b, int64_t job_id, const int32_t *ids, size_t n);
/* A SQL execution's description (len bytes, not NUL-terminated). 0, -ENOMEM, -E2BIG. */
int app_builder_sql(struct app_builder *b, int64_t exec_id, const char *desc, size_t len);
/* A job a SQL execution ran (for sources that list them there). 0 or -errno. */
int app_builder_sql_job(struct app_builder *b, int64_t exec_id, int64_t job_id);
/* Adds an ended task attempt; a TID seen before keeps its first report
 * (Spark reports a lost map output's task again, without metrics).
 * 0, or -ENOMEM; past SPARK_TASKS_MAX it is counted in tasks_dropped. */
int app_builder_task(struct app_builder *b, const struct spark_task *t);

/* Replaces *dst by a bounded copy of len bytes at s (NULL s: none).
 * 0 or -ENOMEM. */
int app_builder_set_str(char **dst, const char *s, size_t len);

/* Settles each stage's job, SQL execution and description and each
 * job's description, sorts, and hands over the record; frees b.  NULL on
 * allocation failure (b freed too). */
struct spark_app_record *app_builder_finish(struct app_builder *b);

#endif

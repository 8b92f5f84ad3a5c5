/* spark_record_dump.h - a spark_app_record as text, one line an entry, for
 * comparing records from different sources (tests only). */
#ifndef SPARKPROF_SPARK_RECORD_DUMP_H
#define SPARKPROF_SPARK_RECORD_DUMP_H

#include <inttypes.h>
#include <stdio.h>

#include "base/hash.h"
#include "spark/spark_app_record.h"

static inline const char *dump_s(const char *s)
{
	return s ? s : "-";
}

static inline uint64_t dump_h(const char *s)
{
	return s ? fnv1a(FNV1A_INIT, s, strlen(s)) : 0;
}

/* with_end: print the application's end time (a running application's
 * REST API and event log agree only on its start). */
static inline void spark_record_dump(FILE *f, const struct spark_app_record *r, int with_end)
{
	fprintf(f, "app %s name=%s attempt=%s version=%s start=%" PRIu64 " end=%" PRIu64
		" dropped=%" PRIu64 "\n", dump_s(r->app_id), dump_s(r->app_name),
		dump_s(r->attempt_id), dump_s(r->spark_version), r->start_ms,
		with_end ? r->end_ms : 0, r->tasks_dropped);
	for (size_t i = 0; i < r->njobs; i++) {
		const struct spark_job *j = &r->jobs[i];

		fprintf(f, "job %" PRId64 " sql=%" PRId64 " submit=%" PRIu64 " complete=%" PRIu64
			" failed=%d name=%s desc=%s stages=", j->job_id, j->sql_execution_id,
			j->submit_ms, j->complete_ms, j->failed, dump_s(j->name),
			dump_s(j->description));
		for (size_t k = 0; k < j->nstage_ids; k++)
			fprintf(f, "%s%d", k ? "," : "", j->stage_ids[k]);
		fputc('\n', f);
	}
	for (size_t i = 0; i < r->nstages; i++) {
		const struct spark_stage_info *s = &r->stages[i];

		fprintf(f, "stage %d.%d job=%" PRId64 " sql=%" PRId64 " tasks=%d submit=%" PRIu64
			" complete=%" PRIu64 " failed=%d name=%s details=%016" PRIx64 " desc=%s\n",
			s->stage, s->attempt, s->job_id, s->sql_execution_id, s->num_tasks,
			s->submit_ms, s->complete_ms, s->failed, dump_s(s->name), dump_h(s->details),
			dump_s(s->description));
	}
	for (size_t i = 0; i < r->ntasks; i++) {
		const struct spark_task *t = &r->tasks[i];

		fprintf(f, "task %" PRId64 " stage=%d.%d index=%d.%d exec=%s host=%s launch=%" PRIu64
			" finish=%" PRIu64 " run=%" PRIu64 " cpu=%" PRIu64 " gc=%" PRIu64
			" shuffle_read=%" PRIu64 " shuffle_write=%" PRIu64 " spill=%" PRIu64 "/%" PRIu64
			" failed=%d\n", t->tid, t->stage, t->stage_attempt, t->index, t->attempt,
			t->executor_id, t->host, t->launch_ms, t->finish_ms, t->run_ms, t->cpu_ns,
			t->gc_ms, t->shuffle_read_bytes, t->shuffle_write_bytes, t->memory_spill_bytes,
			t->disk_spill_bytes, t->failed);
	}
}

#endif

/* record_summary.c - see record_summary.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/json_writer.h"
#include "base/log.h"
#include "base/version.h"
#include "jvm/java_process.h"
#include "output/views.h"
#include "python/python_process.h"
#include "record/process_table.h"
#include "record/record_otlp.h"
#include "record/record_summary.h"
#include "sampler/kernel_features.h"
#include "spark/executor_stages.h"

static void write_time(struct json_writer *w, uint64_t realtime_ns)
{
	time_t secs = (time_t)(realtime_ns / 1000000000ULL);
	struct tm tm;
	char text[64];

	gmtime_r(&secs, &tm);
	snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(realtime_ns % 1000000000ULL / 1000000));
	json_string(w, text);
}

struct named_uint {
	const char *key;
	uint64_t value;
};

static void write_uints(struct json_writer *w, const struct named_uint *v, size_t n)
{
	json_begin_object(w);
	for (size_t i = 0; i < n; i++) {
		json_key(w, v[i].key);
		json_uint(w, v[i].value);
	}
	json_end_object(w);
}

/* A perf map is outside input with bounds (symbols/perf_map.h): what was
 * left out is this process's loss, and said here. */
static void write_perf_map(struct json_writer *w, const struct perf_map_stats *st)
{
	if (!st) {
		json_null(w);
		return;
	}
	const struct named_uint v[] = {
		{ "entries", st->entries },
		{ "malformed_lines", st->malformed },
		{ "entries_dropped", st->entries_dropped },
		{ "bytes_skipped", st->bytes_skipped },
	};
	write_uints(w, v, sizeof(v) / sizeof(v[0]));
}

/* The helper's log, read as it grew and through its new files
 * (jvm/jvm_helper_log.h). */
static void write_helper_log(struct json_writer *w, const struct jvm_helper_log_stats *st)
{
	if (!st) {
		json_null(w);
		return;
	}
	const struct named_uint v[] = {
		{ "lines", st->lines },
		{ "malformed_lines", st->malformed },
		{ "code_blobs", st->code_blobs },
		{ "inline_ranges", st->inline_ranges },
		{ "inline_deferred", st->inline_deferred },
		{ "inline_loads", st->inline_loads },
		{ "inline_trimmed", st->inline_trimmed },
		{ "inline_unreadable", st->inline_unreadable },
		{ "inline_lost", st->inline_lost },
		{ "thread_events", st->thread_events },
		{ "thread_events_forgotten", st->thread_events_forgotten },
		{ "new_files", st->files },
		{ "restated_lines_skipped", st->restated },
	};
	write_uints(w, v, sizeof(v) / sizeof(v[0]));
}

/* A CPython process: its version, its Python frames named or not, and for
 * a PySpark worker the executor it serves and how its samples found their
 * stage. */
static void write_python(struct json_writer *w, const struct process *p)
{
	struct python_process_stats ps;

	python_process_stats(p->python, &ps);
	json_key(w, "python");
	json_begin_object(w);
	json_key(w, "version");
	json_string(w, python_process_version(p->python));
	json_key(w, "frames_named");
	json_uint(w, ps.frames_named);
	json_key(w, "frames_unnamed");
	json_uint(w, ps.frames_unnamed);
	json_key(w, "code_objects_read");
	json_uint(w, ps.code_objects);
	if (p->served) {
		json_key(w, "serves_executor_pid");
		json_int(w, p->served);
		json_key(w, "root_frame");
		json_string(w, p->label);
		json_key(w, "samples_by_attribution");
		json_begin_object(w);
		json_key(w, attribution_method_name(ATTRIBUTED_SOLE_TASK));
		json_uint(w, p->python_by[0]);
		json_key(w, attribution_method_name(ATTRIBUTED_WORKER_EPOCH));
		json_uint(w, p->python_by[1]);
		json_end_object(w);
	}
	json_end_object(w);
}

/* Seconds from the start of the recording: the index's timeline. A
 * moment before it (a thread blocked since before it, or sampled while
 * it began) counts from 0. */
static double seconds_after(uint64_t start_ns, uint64_t t)
{
	return t > start_ns ? (double)(t - start_ns) / 1e9 : 0.0;
}

/* What the "processes" and "executors" entries are written with. */
struct summary_ctx {
	struct json_writer *w;
	const struct views *views;
	uint64_t start_ns;
};

/* When the walker got the JVM's layout: interpreted frames sampled before
 * are not named. */
static void write_java_walked(const struct summary_ctx *sc, const struct process *p)
{
	json_key(sc->w, "java_walked_s");
	if (p->java_walked_ns)
		json_double(sc->w, seconds_after(sc->start_ns, p->java_walked_ns));
	else
		json_null(sc->w);
}

static int write_process(struct process *p, void *ctx)
{
	struct summary_ctx *sc = ctx;
	struct json_writer *w = sc->w;

	json_begin_object(w);
	json_key(w, "pid");
	json_int(w, p->pid);
	json_key(w, "comm");
	json_string(w, p->comm);
	json_key(w, "samples");
	json_uint(w, p->cpu_samples);
	if (p->off_cpu_ns) {
		json_key(w, "off_cpu_ms");
		json_double(w, (double)p->off_cpu_ns / 1e6);
	}
	json_key(w, "unknown_user_frames");
	json_uint(w, p->unknown_user_frames);
	json_key(w, "exited");
	json_bool(w, p->exited);
	json_key(w, "jvm");
	json_bool(w, p->java != NULL);
	if (p->java) {
		json_key(w, "helper");
		json_bool(w, java_process_has_helper(p->java));
		json_key(w, "perf_map");
		write_perf_map(w, java_process_perf_map_stats(p->java));
		json_key(w, "helper_log");
		write_helper_log(w, java_process_helper_log_stats(p->java));
		size_t names, jit = java_process_jit_memory(p->java, &names);
		json_key(w, "jit_bytes");
		json_uint(w, jit);
		json_key(w, "jit_name_bytes");
		json_uint(w, names);
		json_key(w, "thread_bytes");
		json_uint(w, java_process_thread_memory(p->java));
		write_java_walked(sc, p);
	}
	if (p->python)
		write_python(w, p);
	if (p->executor) {
		json_key(w, "spark_executor");
		json_string(w, executor_identity(p->executor)->executor_id);
		json_key(w, "spark_app");
		json_string(w, executor_identity(p->executor)->app_id);
		json_key(w, "selected");
		json_bool(w, executor_selected(p->executor));
	}
	json_end_object(w);
	return 0;
}

static void write_stage(struct json_writer *w, const struct view_result *r, uint64_t total,
			uint64_t start_ns)
{
	const struct view *v = r->view;

	json_begin_object(w);
	json_key(w, "stage");
	if (v->stage < 0) {
		json_null(w);
	} else {
		json_int(w, v->stage);
		json_key(w, "attempt");
		json_int(w, v->attempt);
	}
	json_key(w, "output");
	json_string(w, strrchr(v->name, '/') ? strrchr(v->name, '/') + 1 : v->name);
	json_key(w, "samples");
	json_uint(w, r->cpu_samples);
	json_key(w, "share");
	json_double(w, total ? (double)r->cpu_samples / (double)total : 0.0);
	json_key(w, "tasks_seen");
	json_uint(w, r->tasks);
	if (r->off_cpu_ns) {
		json_key(w, "off_cpu_ms");
		json_double(w, (double)r->off_cpu_ns / 1e6);
	}
	if (r->first_ns && r->last_ns >= r->first_ns) {
		json_key(w, "first_s");
		json_double(w, seconds_after(start_ns, r->first_ns));
		json_key(w, "last_s");
		json_double(w, seconds_after(start_ns, r->last_ns));
	}
	json_key(w, "samples_by_attribution");
	json_begin_object(w);
	for (int m = 0; m < ATTRIBUTION_METHOD_MAX; m++) {
		json_key(w, attribution_method_name(m));
		json_uint(w, r->samples_by[m]);
	}
	json_end_object(w);
	json_end_object(w);
}

static bool of_executor(const struct view_result *r, const struct spark_executor *id,
			enum view_kind kind)
{
	return r->view->kind == kind && !strcmp(r->view->app_id, id->app_id) &&
	       !strcmp(r->view->executor_id, id->executor_id);
}

static void write_stages(struct summary_ctx *sc, const struct spark_executor *id)
{
	uint64_t total = 0;

	for (size_t i = 0; sc->views && i < views_count(sc->views); i++)
		if (of_executor(views_result(sc->views, i), id, VIEW_STAGE))
			total += views_result(sc->views, i)->cpu_samples;
	json_key(sc->w, "stages");
	json_begin_array(sc->w);
	for (size_t i = 0; sc->views && i < views_count(sc->views); i++)
		if (of_executor(views_result(sc->views, i), id, VIEW_STAGE))
			write_stage(sc->w, views_result(sc->views, i), total, sc->start_ns);
	json_end_array(sc->w);
}

static int write_executor(struct process *p, void *ctx)
{
	struct summary_ctx *sc = ctx;
	struct json_writer *w = sc->w;
	bool helper = p->java && java_process_has_helper(p->java);

	if (!p->executor || !executor_selected(p->executor))
		return 0;
	json_begin_object(w);
	json_key(w, "pid");
	json_int(w, p->pid);
	spark_executor_write_json(executor_identity(p->executor), w);
	json_key(w, "helper");
	json_bool(w, helper);
	json_key(w, "attribution");
	json_string(w, !helper ? "none: the sparkprof helper is not loaded, every sample is in no-stage"
			       : attribution_mode_name(executor_attribution_mode(p->executor)));
	json_key(w, "samples");
	json_uint(w, p->cpu_samples);
	write_java_walked(sc, p);
	json_key(w, "tid_only_tasks");
	json_uint(w, executor_tid_only_tasks(p->executor));
	json_key(w, "late_thread_events");
	json_uint(w, executor_late_thread_events(p->executor));
	write_stages(sc, executor_identity(p->executor));
	json_end_object(w);
	return 0;
}

static bool view_written(const struct view_result *r)
{
	for (int f = 0; f < VIEW_FILES; f++)
		if (r->errors[f])
			return false;
	return true;
}

static void write_outputs(struct json_writer *w, const struct views *views)
{
	json_key(w, "outputs");
	json_begin_array(w);
	for (size_t i = 0; views && i < views_count(views); i++) {
		const struct view_result *r = views_result(views, i);

		json_begin_object(w);
		json_key(w, "name");
		json_string(w, r->view->name);
		json_key(w, "written");
		json_bool(w, view_written(r));
		json_key(w, "samples");
		json_uint(w, r->cpu_samples);
		if (r->off_cpu_events) {
			json_key(w, "off_cpu_events");
			json_uint(w, r->off_cpu_events);
			json_key(w, "off_cpu_ms");
			json_double(w, (double)r->off_cpu_ns / 1e6);
		}
		json_end_object(w);
	}
	json_end_array(w);
}

static void write_failure(struct json_writer *w, const char *file, int err)
{
	json_begin_object(w);
	json_key(w, "file");
	json_string(w, file);
	json_key(w, "error");
	json_string(w, strerror(-err));
	json_end_object(w);
}

static void write_failures(struct json_writer *w, const struct record_summary_input *in)
{
	char name[VIEW_NAME_MAX + 32];

	json_key(w, "failed_outputs");
	json_begin_array(w);
	for (size_t i = 0; in->views && i < views_count(in->views); i++) {
		const struct view_result *r = views_result(in->views, i);

		for (int f = 0; f < VIEW_FILES; f++) {
			if (!r->errors[f])
				continue;
			view_file_name(r->view, f, in->opts->compress, name, sizeof(name));
			write_failure(w, name, r->errors[f]);
		}
	}
	if (in->store_error)
		write_failure(w, "samples.store", in->store_error);
	if (in->index_error)
		write_failure(w, "index.html", in->index_error);
	json_end_array(w);
}

static void write_memory(struct json_writer *w, const struct record_memory *m)
{
	if (!m)
		return;

	/* Heap bytes by owner, then the store's and the stage writer's counts. */
	const struct { const char *key; uint64_t value; } fields[] = {
		{ "sample_store", m->store.memory }, { "stage_files", m->stage_files.memory },
		{ "jit", m->jit },
		{ "thread_histories", m->threads },  { "stage_attribution", m->stages },
		{ "python", m->python },
		{ "address_names", m->address_names }, { "elf_symbols", m->elf_symbols },
		{ "kernel_symbols", m->kernel_symbols }, { "queued_records", m->queued },
		{ "store_segments", m->store.segments }, { "store_file_bytes", m->store.file_bytes },
		{ "store_samples_lost", m->store.samples_lost },
		{ "segment_close_ms", m->store.close_ns / 1000000 },
		{ "longest_segment_close_ms", m->store.close_longest_ns / 1000000 },
		{ "stages_written_while_recording", m->stage_files.written },
		{ "stages_rewritten_after_late_samples", m->stage_files.rewritten },
		{ "stages_left_to_the_stop_by_a_failure", m->stage_files.left_to_stop },
		{ "stage_files_write_ms", m->stage_files.write_ns / 1000000 },
		{ "node_and_executor_jfr_write_ms", m->live_jfr_ns / 1000000 },
		{ "symbol_files", m->symbol_files }, { "symbol_files_dropped", m->symbol_files_dropped },
	};

	json_key(w, "memory");
	json_begin_object(w);
	json_key(w, "rss_kib");
	json_uint(w, m->rss_kib);
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		json_key(w, fields[i].key);
		json_uint(w, fields[i].value);
	}
	json_end_object(w);
}

/* What was recorded, where and how. */
static void write_run(struct json_writer *w, const struct record_summary_input *in)
{
	const struct record_options *o = in->opts;
	char host[256] = "unknown";

	gethostname(host, sizeof(host) - 1);
	json_key(w, "sparkprof_version");
	json_string(w, SPARKPROF_VERSION);
	json_key(w, "host");
	json_string(w, host);
	json_key(w, "start_time");
	write_time(w, in->start_realtime_ns);
	json_key(w, "duration_s");
	json_double(w, (double)(in->end_monotonic_ns - in->start_monotonic_ns) / 1e9);
	json_key(w, "startup_s");
	json_double(w, in->launch_monotonic_ns && in->start_monotonic_ns > in->launch_monotonic_ns
			       ? (double)(in->start_monotonic_ns - in->launch_monotonic_ns) / 1e9
			       : 0.0);
	json_key(w, "kernel");
	if (in->kernel)
		kernel_features_write_json(in->kernel, w);
	else
		json_null(w);
	json_key(w, "frequency_hz");
	json_uint(w, o->frequency_hz);
	json_key(w, "event");
	json_string(w, "cpu-clock");
	json_key(w, "target");
	if (o->npids) {
		json_begin_array(w);
		for (int i = 0; i < o->npids; i++)
			json_int(w, o->pids[i]);
		json_end_array(w);
	} else {
		json_string(w, o->command ? "command" : "all");
	}
}

/* Samples taken, lost, and stacks that are not whole. */
static void write_counts(struct json_writer *w, const struct record_summary_input *in)
{
	const uint64_t *c = in->counters;

	json_key(w, "samples");
	json_uint(w, c[SP_CNT_SAMPLES]);
	json_key(w, "idle_samples");
	json_uint(w, c[SP_CNT_IDLE]);
	json_key(w, "lost");
	json_begin_object(w);
	json_key(w, "ring_buffer_full");
	json_uint(w, c[SP_CNT_LOST_RINGBUF]);
	json_key(w, "undecodable_records");
	json_uint(w, in->bad_records);
	json_key(w, "naming_queue_full");
	json_uint(w, in->queue_full);
	json_key(w, "off_cpu_ring_buffer_full");
	json_uint(w, c[SP_CNT_OFFCPU_LOST]);
	json_end_object(w);
	if (in->ring) {
		json_key(w, "ring_buffer");
		json_begin_object(w);
		json_key(w, "bytes");
		json_uint(w, in->ring->bytes);
		if (in->ring->peak_known) {
			json_key(w, "peak_fill_bytes");
			json_uint(w, in->ring->peak_fill);
		}
		json_end_object(w);
	}
	json_key(w, "partial_stacks");
	json_begin_object(w);
	json_key(w, "kernel_stack_unreadable");
	json_uint(w, c[SP_CNT_LOST_KSTACK]);
	json_key(w, "user_stack_unreadable");
	json_uint(w, c[SP_CNT_LOST_USTACK]);
	json_key(w, "user_stack_truncated");
	json_uint(w, c[SP_CNT_USTACK_TRUNCATED]);
	json_end_object(w);
	json_key(w, "java_stacks_continued_from_last_java_frame");
	json_uint(w, c[SP_CNT_ANCHOR_USED]);
}

static void write_frames(struct json_writer *w, const struct stack_resolver_stats *rs)
{
	json_key(w, "frames");
	json_begin_object(w);
	json_key(w, "kernel");
	json_uint(w, rs->kernel_frames);
	json_key(w, "kernel_unknown");
	json_uint(w, rs->kernel_unknown);
	json_key(w, "native");
	json_uint(w, rs->user_frames);
	json_key(w, "native_unknown");
	json_uint(w, rs->user_unknown);
	json_key(w, "jit");
	json_uint(w, rs->jit_frames);
	json_key(w, "jit_unknown");
	json_uint(w, rs->jit_unknown);
	json_key(w, "interpreted");
	json_uint(w, rs->interpreted_frames);
	json_key(w, "interpreted_unknown");
	json_uint(w, rs->interpreted_unknown);
	json_end_object(w);
}

static void write_off_cpu(struct json_writer *w, const struct record_options *o,
			  const uint64_t *c)
{
	if (!o->wall && !o->off_cpu)
		return;
	json_key(w, "off_cpu");
	json_begin_object(w);
	json_key(w, "events");
	json_uint(w, c[SP_CNT_OFFCPU_EVENTS]);
	json_key(w, "shorter_than_minimum");
	json_uint(w, c[SP_CNT_OFFCPU_SHORT]);
	json_key(w, "min_off_cpu_ns");
	json_uint(w, o->min_off_cpu_ns);
	if (o->wall) {
		json_key(w, "wall_interval_ns");
		json_uint(w, o->wall_interval_ns);
	}
	json_end_object(w);
}

int record_summary_write(const struct record_summary_input *in)
{
	struct json_writer w;
	struct atomic_file af;
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/summary.json", in->output_dir);
	f = atomic_file_open(&af, path);
	if (!f)
		return -errno;
	json_init(&w, f);
	json_begin_object(&w);
	write_run(&w, in);
	write_counts(&w, in);
	write_frames(&w, in->resolver_stats);
	write_off_cpu(&w, in->opts, in->counters);
	write_memory(&w, in->memory);
	json_key(&w, "processes");
	json_begin_array(&w);
	process_table_foreach(in->processes, write_process,
			      &(struct summary_ctx){ &w, in->views, in->start_monotonic_ns });
	json_end_array(&w);
	json_key(&w, "executors");
	json_begin_array(&w);
	process_table_foreach(in->processes, write_executor,
			      &(struct summary_ctx){ &w, in->views, in->start_monotonic_ns });
	json_end_array(&w);
	/* Files that could not be written, and why (a full disk, say): the
	 * run is then incomplete, and says so here and in its exit status. */
	write_outputs(&w, in->views);
	write_failures(&w, in);
	if (in->otlp) {
		json_key(&w, "otlp");
		record_otlp_json(in->otlp, &w);
	}
	json_end_object(&w);
	return atomic_file_commit(&af, 0);
}

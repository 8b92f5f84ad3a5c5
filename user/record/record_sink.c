/* record_sink.c - see record_sink.h. */
#include <stdio.h>
#include <stdlib.h>

#include "base/log.h"
#include "record/record_sink.h"
#include "record/rotation.h"

struct record_sink {
	const struct record_options *opts;
	const char *dir;
	struct recorder *rec;      /* one folder */
	struct rotation *rot;      /* or a folder per interval */
};

/* How long an ended interval takes late records: the resolve delay and a
 * half second. */
#define CLOSE_DELAY_EXTRA_NS 500000000ULL

struct record_sink *record_sink_new(const struct recorder_config *config,
				    int (*read_counters)(void *ctx, uint64_t c[SP_CNT_MAX]),
				    void *counters_ctx)
{
	struct record_sink *s = calloc(1, sizeof(*s));

	if (!s) {
		sp_err("out of memory setting up the recording");
		return NULL;
	}
	s->opts = config->opts;
	s->dir = config->output_dir;
	if (config->opts->rotate_ns) {
		struct rotation_config rc = {
			.recorder = *config,
			.interval_ns = config->opts->rotate_ns,
			.keep = config->opts->keep,
			.close_delay_ns = config->resolve_delay_ns + CLOSE_DELAY_EXTRA_NS,
			.read_counters = read_counters,
			.counters_ctx = counters_ctx,
		};

		s->rot = rotation_new(&rc);
	} else {
		s->rec = recorder_new(config);
	}
	if (!s->rec && !s->rot) {
		free(s);
		return NULL;
	}
	return s;
}

void record_sink_free(struct record_sink *s)
{
	if (!s)
		return;
	recorder_free(s->rec);
	rotation_free(s->rot);
	free(s);
}

void record_sink_set_callback_ctx(struct record_sink *s, void *ctx)
{
	if (s->rot)
		rotation_set_callback_ctx(s->rot, ctx);
	else
		recorder_set_new_process_ctx(s->rec, ctx);
}

int record_sink_start(struct record_sink *s, uint64_t start_ns)
{
	if (s->rot)
		return rotation_start(s->rot, start_ns);
	recorder_sampling_started(s->rec, start_ns);
	return 0;
}

int record_sink_on_record(void *sink, const void *data, size_t size)
{
	struct record_sink *s = sink;

	return s->rot ? rotation_on_record(s->rot, data, size)
		      : recorder_on_record(s->rec, data, size);
}

int record_sink_tick(struct record_sink *s, uint64_t now_ns)
{
	if (s->rot)
		return rotation_tick(s->rot, now_ns);
	recorder_drain(s->rec, now_ns, false);
	return 0;
}

uint64_t record_sink_processes(const struct record_sink *s)
{
	struct recorder_totals rt;
	struct rotation_totals t;

	if (s->rot) {
		rotation_get_totals(s->rot, &t);
		return t.processes;
	}
	recorder_get_totals(s->rec, &rt);
	return rt.processes;
}

static void say_written(const struct record_sink *s, const uint64_t *c, double seconds)
{
	struct recorder_totals t;

	recorder_get_totals(s->rec, &t);
	fprintf(stderr, "sparkprof: %.1f s, %llu samples from %llu processes, lost %llu "
		"(ring buffer full)", seconds, (unsigned long long)c[SP_CNT_SAMPLES],
		(unsigned long long)t.processes, (unsigned long long)c[SP_CNT_LOST_RINGBUF]);
	if (s->opts->wall || s->opts->off_cpu)
		fprintf(stderr, ", %llu off-CPU intervals (lost %llu)",
			(unsigned long long)c[SP_CNT_OFFCPU_EVENTS],
			(unsigned long long)c[SP_CNT_OFFCPU_LOST]);
	fprintf(stderr, "\nsparkprof: wrote %s/all.folded and %s/summary.json\n", s->dir, s->dir);
	if (s->opts->html)
		fprintf(stderr, "sparkprof: flame graphs: open %s/index.html\n", s->dir);
}

int record_sink_finish(struct record_sink *s, const uint64_t counters[SP_CNT_MAX],
		       uint64_t start_ns, uint64_t end_ns)
{
	double seconds = (double)(end_ns - start_ns) / 1e9;
	struct rotation_totals t;
	int err;

	if (s->rot) {
		err = rotation_finish(s->rot, counters, end_ns);
		rotation_get_totals(s->rot, &t);
		fprintf(stderr, "sparkprof: %.1f s, %llu intervals written into %s, %llu records "
			"too late for their interval\n", seconds,
			(unsigned long long)t.intervals_written, s->dir,
			(unsigned long long)t.records_too_late);
		return err;
	}
	err = recorder_finish(s->rec, counters, end_ns);
	if (!err)
		say_written(s, counters, seconds);
	return err;
}

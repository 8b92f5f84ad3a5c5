/* rotation.c - see rotation.h. */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/json_writer.h"
#include "base/log.h"
#include "base/path_util.h"
#include "base/spill_file.h"
#include "record/rotation.h"
#include "symbols/kallsyms.h"

struct interval {
	struct recorder *rec;
	char dir[PATH_MAX];
	char name[48];
	uint64_t index;
	uint64_t start_ns, end_ns;     /* [start, end) in CLOCK_MONOTONIC */
	uint64_t counters_at_start[SP_CNT_MAX], counters_at_end[SP_CNT_MAX];
	uint64_t records, first_record_ns, last_record_ns;
	uint64_t records_too_late;     /* older than this interval, none open for them */
};

/* Without records (an idle node), intervals end and are written by the
 * clock this much later than records would have made them. */
#define IDLE_MARGIN_NS (5ULL * 1000000000ULL)

struct rotation {
	struct rotation_config cfg;
	uint64_t newest_record_ns;     /* the time of the newest record filed */
	struct interval *current;
	struct interval *ended;        /* taking late records until its close delay is over */
	struct kallsyms *kernel_symbols; /* read once, shared by every interval */
	struct spill_file *kernel_names; /* where its names went, beside the intervals */
	uint64_t next_index;
	int close_error;               /* the first failure to write an interval */
	struct rotation_totals totals;
};

static uint64_t realtime_of(const struct rotation *rot, uint64_t monotonic_ns)
{
	return rot->cfg.recorder.start_realtime_ns +
	       (monotonic_ns - rot->cfg.recorder.start_monotonic_ns);
}

static void utc_text(uint64_t realtime_ns, const char *format, char *buf, size_t size)
{
	time_t secs = (time_t)(realtime_ns / 1000000000ULL);
	struct tm tm;

	gmtime_r(&secs, &tm);
	strftime(buf, size, format, &tm);
}

int rotation_is_interval_name(const char *name)
{
	static const char shape[] = "ddddddddTddddddZ";
	size_t i;

	for (i = 0; shape[i]; i++) {
		if (shape[i] == 'd' ? (name[i] < '0' || name[i] > '9') : name[i] != shape[i])
			return 0;
	}
	if (!name[i])
		return 1;
	if (name[i] != '-' || !name[i + 1])
		return 0;
	for (i++; name[i]; i++)
		if (name[i] < '0' || name[i] > '9')
			return 0;
	return 1;
}

/* Creates the interval's folder: its UTC start, with -N when a folder of
 * that name exists (a restart within the same second). */
static int make_interval_dir(const struct rotation *rot, struct interval *iv)
{
	char stamp[32];
	int err = make_dirs(rot->cfg.recorder.output_dir);

	if (err) {
		sp_err("create output folder %s: %s", rot->cfg.recorder.output_dir, strerror(-err));
		return err;
	}
	utc_text(realtime_of(rot, iv->start_ns), "%Y%m%dT%H%M%SZ", stamp, sizeof(stamp));
	for (int n = 1; n < 1000; n++) {
		if (n == 1)
			snprintf(iv->name, sizeof(iv->name), "%s", stamp);
		else
			snprintf(iv->name, sizeof(iv->name), "%s-%d", stamp, n);
		if ((size_t)snprintf(iv->dir, sizeof(iv->dir), "%s/%s", rot->cfg.recorder.output_dir,
				     iv->name) >= sizeof(iv->dir)) {
			sp_err("output folder %s: name too long", rot->cfg.recorder.output_dir);
			return -ENAMETOOLONG;
		}
		if (!mkdir(iv->dir, 0755))
			return 0;
		if (errno != EEXIST) {
			err = -errno;
			sp_err("create interval folder %s: %s", iv->dir, strerror(errno));
			return err;
		}
	}
	sp_err("create interval folder %s: too many folders of that name", iv->dir);
	return -EEXIST;
}

static struct interval *interval_open(struct rotation *rot, uint64_t start_ns,
				      const uint64_t counters[SP_CNT_MAX])
{
	struct interval *iv = calloc(1, sizeof(*iv));
	struct recorder_config rc = rot->cfg.recorder;

	if (!iv) {
		sp_err("out of memory opening a recording interval");
		return NULL;
	}
	iv->index = rot->next_index;
	iv->start_ns = start_ns;
	iv->end_ns = rot->cfg.recorder.start_monotonic_ns + (iv->index + 1) * rot->cfg.interval_ns;
	memcpy(iv->counters_at_start, counters, sizeof(iv->counters_at_start));
	if (make_interval_dir(rot, iv)) {
		free(iv);
		return NULL;
	}
	rc.output_dir = iv->dir;
	rc.start_monotonic_ns = start_ns;
	rc.start_realtime_ns = realtime_of(rot, start_ns);
	iv->rec = recorder_new(&rc);
	if (!iv->rec) {
		free(iv);
		return NULL;
	}
	rot->next_index++;
	return iv;
}

static void write_time(struct json_writer *w, uint64_t realtime_ns)
{
	char text[48], ms[8];

	utc_text(realtime_ns, "%Y-%m-%dT%H:%M:%S", text, sizeof(text));
	snprintf(ms, sizeof(ms), ".%03uZ", (unsigned)(realtime_ns % 1000000000ULL / 1000000));
	strncat(text, ms, sizeof(text) - strlen(text) - 1);
	json_string(w, text);
}

/* DIR/interval.json: where this interval sits in the continuous recording. */
static int write_interval_json(const struct rotation *rot, const struct interval *iv)
{
	struct json_writer w;
	struct atomic_file af;
	char path[PATH_MAX + 16];
	FILE *f;

	snprintf(path, sizeof(path), "%s/interval.json", iv->dir);
	f = atomic_file_open(&af, path);
	if (!f)
		return -errno;
	json_init(&w, f);
	json_begin_object(&w);
	json_key(&w, "index");
	json_uint(&w, iv->index);
	json_key(&w, "interval_s");
	json_double(&w, (double)rot->cfg.interval_ns / 1e9);
	json_key(&w, "start_time");
	write_time(&w, realtime_of(rot, iv->start_ns));
	json_key(&w, "end_time");
	write_time(&w, realtime_of(rot, iv->end_ns));
	/* Samples of this interval have BPF times in [start, end). */
	json_key(&w, "start_monotonic_ns");
	json_uint(&w, iv->start_ns);
	json_key(&w, "end_monotonic_ns");
	json_uint(&w, iv->end_ns);
	json_key(&w, "records");
	json_uint(&w, iv->records);
	json_key(&w, "first_record_monotonic_ns");
	if (iv->records)
		json_uint(&w, iv->first_record_ns);
	else
		json_null(&w);
	json_key(&w, "last_record_monotonic_ns");
	if (iv->records)
		json_uint(&w, iv->last_record_ns);
	else
		json_null(&w);
	json_key(&w, "records_too_late");
	json_uint(&w, iv->records_too_late);
	json_end_object(&w);
	return atomic_file_commit(&af, 0);
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if ((type == FTW_DP ? rmdir(path) : unlink(path)) && errno != ENOENT)
		sp_warn("prune %s: %s", path, strerror(errno));
	return 0;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Removes the oldest written interval folders beyond keep. Names sort by
 * time; the open intervals are never removed. */
static void prune(struct rotation *rot)
{
	const char *base = rot->cfg.recorder.output_dir;
	DIR *d = opendir(base);
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;

	if (!d) {
		sp_warn("prune %s: %s", base, strerror(errno));
		return;
	}
	while ((e = readdir(d))) {
		if (!rotation_is_interval_name(e->d_name) ||
		    (rot->current && !strcmp(e->d_name, rot->current->name)) ||
		    (rot->ended && !strcmp(e->d_name, rot->ended->name)))
			continue;
		if (n == cap) {
			char **grown = realloc(names, (cap = cap ? cap * 2 : 32) * sizeof(*names));

			if (!grown)
				break;
			names = grown;
		}
		if (!(names[n] = strdup(e->d_name)))
			break;
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), compare_names);
	for (size_t i = 0; i < n; i++) {
		if (i + rot->cfg.keep < n) {
			char path[PATH_MAX];

			snprintf(path, sizeof(path), "%s/%s", base, names[i]);
			sp_debug("prune %s", path);
			nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
		}
		free(names[i]);
	}
	free(names);
}

/* Writes an interval that has ended and frees it. */
static int interval_close(struct rotation *rot, struct interval *iv)
{
	uint64_t counters[SP_CNT_MAX];
	int err, err2;

	/* Records still in flight when the recording stopped may be a little
	 * past the end that was measured before the stop. */
	if (iv->records && iv->last_record_ns >= iv->end_ns)
		iv->end_ns = iv->last_record_ns + 1;
	err = write_interval_json(rot, iv);

	for (int i = 0; i < SP_CNT_MAX; i++)
		counters[i] = iv->counters_at_end[i] - iv->counters_at_start[i];
	err2 = recorder_finish(iv->rec, counters, iv->end_ns);
	if (!err2) {
		struct recorder_totals t;

		recorder_get_totals(iv->rec, &t);
		sp_info("interval %s: %llu samples from %llu processes", iv->dir,
			(unsigned long long)t.cpu_samples, (unsigned long long)t.processes);
	}
	recorder_free(iv->rec);
	free(iv);
	/* The interval's tables back to the system: freed memory otherwise
	 * stays in the heap, so RSS kept the largest interval's size. */
	malloc_trim(0);
	rot->totals.intervals_written++;
	if (!rot->close_error)
		rot->close_error = err ? err : err2;
	return err ? err : err2;
}

struct rotation *rotation_new(const struct rotation_config *config)
{
	struct rotation *rot = calloc(1, sizeof(*rot));

	if (!rot) {
		sp_err("out of memory setting up the recording");
		return NULL;
	}
	rot->cfg = *config;
	rot->kernel_symbols = kallsyms_load("/proc/kallsyms"); /* says why when it fails */
	if (!rot->kernel_symbols) {
		free(rot);
		return NULL;
	}
	rot->cfg.recorder.kernel_symbols = rot->kernel_symbols;
	return rot;
}

int rotation_start(struct rotation *rot, uint64_t start_ns)
{
	static const uint64_t zero[SP_CNT_MAX];

	/* Interval boundaries count from here; the realtime anchor stays. */
	rot->cfg.recorder.start_realtime_ns += start_ns - rot->cfg.recorder.start_monotonic_ns;
	rot->cfg.recorder.start_monotonic_ns = start_ns;
	rot->current = interval_open(rot, start_ns, zero);
	if (!rot->current)
		return -EIO;
	/* The output folder exists now.  Failing, the names stay in memory. */
	if ((rot->kernel_names = spill_file_new(rot->cfg.recorder.output_dir, "kernel symbol names")))
		kallsyms_move_names(rot->kernel_symbols, rot->kernel_names);
	return 0;
}

void rotation_free(struct rotation *rot)
{
	if (!rot)
		return;
	if (rot->current) {
		recorder_free(rot->current->rec);
		free(rot->current);
	}
	if (rot->ended) {
		recorder_free(rot->ended->rec);
		free(rot->ended);
	}
	kallsyms_free(rot->kernel_symbols);
	spill_file_free(rot->kernel_names);
	free(rot);
}

void rotation_set_callback_ctx(struct rotation *rot, void *ctx)
{
	rot->cfg.recorder.ctx = ctx;
	if (rot->current)
		recorder_set_new_process_ctx(rot->current->rec, ctx);
	if (rot->ended)
		recorder_set_new_process_ctx(rot->ended->rec, ctx);
}

/* Ends the current interval at its planned end and opens the next one
 * there; an interval still taking late records is written first. 0, or
 * -EIO when the next interval could not be opened. */
static int advance(struct rotation *rot)
{
	uint64_t counters[SP_CNT_MAX] = { 0 };
	struct interval *next;

	if (rot->ended) {
		interval_close(rot, rot->ended);
		rot->ended = NULL;
	}
	if (rot->cfg.read_counters)
		rot->cfg.read_counters(rot->cfg.counters_ctx, counters);
	next = interval_open(rot, rot->current->end_ns, counters);
	if (!next)
		return -EIO;
	memcpy(rot->current->counters_at_end, counters, sizeof(counters));
	rot->ended = rot->current;
	rot->current = next;
	prune(rot);
	return 0;
}

/* The time a record is filed by: a sample's own time; for an off-CPU
 * interval its end, when it was sent (it starts when the thread left the
 * CPU, possibly long before). */
static uint64_t filing_time(const void *data, size_t size)
{
	const struct sp_event_header *hdr = data;

	if (hdr->kind == SP_EVENT_OFF_CPU && size >= sizeof(struct sp_off_cpu_event))
		return hdr->timestamp_ns + ((const struct sp_off_cpu_event *)data)->off_cpu_ns;
	return hdr->timestamp_ns;
}

static int file_into(struct rotation *rot, const void *data, size_t size)
{
	const struct sp_event_header *hdr = data;
	struct interval *iv;
	uint64_t t;

	if (size < sizeof(*hdr))
		return recorder_on_record(rot->current->rec, data, size);
	if (hdr->kind == SP_EVENT_EXEC) {
		/* Both open intervals must stop trusting that pid's tables. */
		if (rot->ended)
			recorder_on_record(rot->ended->rec, data, size);
		return recorder_on_record(rot->current->rec, data, size);
	}
	t = filing_time(data, size);
	/* A record past the current interval opens the next; if that fails the
	 * record stays in the current one (the recording is being stopped). */
	while (t >= rot->current->end_ns && !advance(rot))
		;
	if (t > rot->newest_record_ns)
		rot->newest_record_ns = t;
	if (t >= rot->current->start_ns) {
		iv = rot->current;
	} else if (rot->ended && t >= rot->ended->start_ns) {
		iv = rot->ended;
	} else if (rot->current->index == 0) {
		iv = rot->current; /* from before the first interval's start: none */
	} else {
		rot->current->records_too_late++;
		rot->totals.records_too_late++;
		return 0;
	}
	if (!iv->records || t < iv->first_record_ns)
		iv->first_record_ns = t;
	if (!iv->records || t > iv->last_record_ns)
		iv->last_record_ns = t;
	iv->records++;
	return recorder_on_record(iv->rec, data, size);
}

int rotation_on_record(void *ctx, const void *data, size_t size)
{
	struct rotation *rot = ctx;

	file_into(rot, data, size);
	return 0;
}

int rotation_tick(struct rotation *rot, uint64_t now_ns)
{
	uint64_t delay = rot->cfg.close_delay_ns;

	/* Records end intervals (rotation_on_record); the clock only when
	 * none came, with a margin: records queued in the ring buffer on a
	 * busy node are older than the clock says. */
	while (now_ns >= rot->current->end_ns + delay + IDLE_MARGIN_NS)
		if (advance(rot))
			return -EIO;
	if (rot->ended) {
		recorder_drain(rot->ended->rec, now_ns, false);
		if (rot->newest_record_ns >= rot->ended->end_ns + delay ||
		    now_ns >= rot->ended->end_ns + delay + IDLE_MARGIN_NS) {
			interval_close(rot, rot->ended);
			rot->ended = NULL;
		}
	}
	recorder_drain(rot->current->rec, now_ns, false);
	return rot->close_error;
}

int rotation_finish(struct rotation *rot, const uint64_t counters[SP_CNT_MAX], uint64_t end_ns)
{
	int err = 0, e;

	/* Every record is in: intervals that the clock has ended are ended now,
	 * without the idle margin (an idle node's last seconds would otherwise
	 * be in no interval). */
	while (end_ns > rot->current->end_ns)
		if (advance(rot))
			return -EIO;
	if (rot->ended) {
		err = interval_close(rot, rot->ended);
		rot->ended = NULL;
	}
	/* The last interval ends now, not at its planned end. */
	if (end_ns < rot->current->end_ns)
		rot->current->end_ns = end_ns;
	memcpy(rot->current->counters_at_end, counters, sizeof(rot->current->counters_at_end));
	e = interval_close(rot, rot->current);
	rot->current = NULL;
	prune(rot);
	return err ? err : e;
}

void rotation_get_totals(const struct rotation *rot, struct rotation_totals *out)
{
	*out = rot->totals;
	out->processes = 0;
	if (rot->current) {
		struct recorder_totals t;

		recorder_get_totals(rot->current->rec, &t);
		out->processes = t.processes;
	}
}

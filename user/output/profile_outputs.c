/* profile_outputs.c - see profile_outputs.h. */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/path_util.h"
#include "base/grow_array.h"
#include "base/stack_table.h"
#include "base/strmap.h"
#include "base/spill_file.h"
#include "output/flame_page.h"
#include "output/flame_tree.h"
#include "output/folded.h"
#include "output/jfr/jfr_writer.h"
#include "output/profile_outputs.h"
#include "output/retired_index.h"
#include "sparkprof_events.h"

/* An output's profiles, by kind. */
enum profile_kind { PROFILE_CPU, PROFILE_WALL, PROFILE_OFF_CPU, PROFILE_WALL_STATES,
		    PROFILE_KINDS };

/* An output in memory: running, or parked and not yet retired (a parked
 * output leaves memory at the next sweep, see retire()). */
struct profile_output {
	const char *name;               /* in the labels' block */
	/* One block: the labels, then the texts, each NUL-terminated: the
	 * name, then each label's key and value (as a retired record holds
	 * them). */
	struct output_label *labels;
	int nlabels;
	size_t text_bytes;
	uint32_t seq;                   /* creation order */
	bool indexed;                   /* in the retired index: it was retired once */
	/* cpu; wall and off_cpu in nanoseconds; wall_states: the wall profile
	 * with a leaf frame per thread state ("[sleeping]"), for the wall
	 * flame graph only (html): the .wall.folded file keeps the format
	 * readers know.  NULL until a sample comes after the output was
	 * made, parked or saved at an epoch. */
	struct folded_profile *profiles[PROFILE_KINDS];
	/* Trees of its counts saved in the spill file, by kind (bytes 0:
	 * none): what it counted before its last parking or epoch, merged
	 * into one tree a kind, and (layers) what later epochs saved, not yet
	 * merged into it.  NULL until an epoch saves while it runs; parking
	 * merges them all into saved. */
	struct spill_ref saved[PROFILE_KINDS];
	struct saved_layers *layers;
	uint64_t cpu_period_ns;         /* what one on-CPU sample weighs in .wall */
	struct jfr_writer *jfr;         /* opened at the first sample */
	bool jfr_failed;                /* reported once; the folded files go on */
	bool jfr_on_disk;               /* a parked output's JFR file: append to it */
	bool parked;                    /* files written, counts in the spill file */
	struct spill_ref jfr_keys;   /* its JFR writer's key state */
	int errors[OUTPUT_FILE_KINDS];  /* -errno of each file that failed */
	uint64_t wall_carry_ns;         /* time not yet written as a JFR wall sample */
	uint64_t last_sample_ns;        /* newest sample time */
	bool jfr_idle;                  /* its JFR chunk written and its buffers freed */
	struct output_stats stats;
};

/* An epoch saves the counts of a running output as a new layer, a tree
 * of that epoch's counts only, and merges the newest layer into the one
 * below it (the oldest below them all being saved[]) while it is at least
 * that one's size, as a binary counter carries.  An epoch then costs what
 * the epoch counted, plus merges that come to a few times that over the
 * run: merging every epoch into one tree cost what the whole recording
 * had counted, so the node's output made each epoch slower than the last
 * (2.2 s at 12 minutes).  Sizes grow downwards, so a few layers suffice;
 * a full set merges the newest anyway. */
#define SAVED_LAYERS 8

struct saved_layers {
	struct spill_ref ref[PROFILE_KINDS][SAVED_LAYERS];
	int n[PROFILE_KINDS];
};

/* Where each output created so far lies, by creation order (the retired
 * index's places): in memory (PLACE_LIVE), or its retired record in the
 * spill file (offset << 16 | bytes).  The index also finds retired outputs
 * by a 32-bit tag of their name's hash; a tag that matches is checked
 * against the record's name. */
#define PLACE_LIVE UINT64_MAX
#define RECORD_MAX_BYTES 0xffffu
#define PLACE_OFFSET_MAX (1ULL << 48)

struct profile_outputs {
	struct output_settings settings;
	char *dir;
	struct strmap *by_name;         /* outputs in memory */
	struct frame *scratch;  /* a sample's frames under its state frame */
	size_t scratch_cap;
	struct stack_table *stacks;     /* every output's stacks, each once */
	size_t nplaces;                 /* outputs made: the next seq */
	size_t nretired;                /* places not PLACE_LIVE */
	struct retired_index *retired;
	uint64_t generation;            /* bumped when outputs leave memory */
	bool retire_off;                /* a record could not be written: park in memory */
	size_t retired_failed;          /* retired outputs with a file not written */
	bool told_unreadable;           /* a record did not read back: said once */
	bool told_places;               /* a place could not be read or set: said once */
	uint64_t newest_sample_ns, last_sweep_ns;
	struct spill_file *spill;      /* saved trees of counts, JFR key states */
	bool parking_off;               /* a write or the spill failed: keep all in memory */
	uint64_t epochs;                /* times the stack table was started afresh */
	uint64_t epoch_ns, epoch_longest_ns; /* time they took, all and the longest */
	uint64_t epoch_bytes;           /* trees they wrote to the spill file */
	struct jfr_stack_source jfr_stacks;  /* JFR chunks read their stacks from the table */
	bool freed;                     /* parked, idled or began an epoch since the last trim */
	uint64_t last_trim_ns;
};

/* An output without samples for OUTPUT_IDLE_NS (a finished stage) writes
 * what its JFR writer holds and frees the writer's buffers; after
 * OUTPUT_PARK_NS it writes all its files and parks its counts in the spill
 * file: memory does not grow with the number of stages a long recording
 * sees, and stopping writes only what is still running.  A late sample (an
 * off-CPU interval reported when the thread wakes) makes it run again,
 * and the files are written again, the JFR file appended to.  Looked for
 * every SWEEP_NS of sample time.
 *
 * OUTPUT_IDLE_NS is short because a Spark application can start a dozen
 * stages a second, each output holding a JFR chunk (about 400 KiB) until
 * it idles; a straggler only costs another chunk.  OUTPUT_PARK_NS is
 * longer, as reopening rewrites every file of the output, but short
 * enough that a stop finds few stages still open: with 30 s, a stop
 * beside a Spark application wrote about 230 stage outputs (3.2 s); with
 * 5 s about 60 (1.6 s), and no output was reopened in either run. */
#define SWEEP_NS (1ULL * 1000000000ULL)

/* Memory freed by parking, idle JFR writers and epochs is handed back to
 * the system at most this often: glibc keeps freed chunks in the heap, so
 * without it RSS stays near the largest the outputs ever were.  A trim
 * walks the whole heap, and the pages it returns are faulted in again by
 * the next outputs, so once a second would cost more for little. */
#define TRIM_NS (10ULL * 1000000000ULL)

static void free_profiles(struct profile_output *o)
{
	for (int k = 0; k < PROFILE_KINDS; k++) {
		folded_profile_free(o->profiles[k]);
		o->profiles[k] = NULL;
	}
}

static void output_free(void *value)
{
	struct profile_output *o = value;

	if (!o)
		return;
	if (o->jfr)
		jfr_writer_close(o->jfr); /* only on error paths: write() closes them */
	free_profiles(o);
	free(o->layers);
	free(o->labels);
	free(o);
}

/* A JFR stack key (a stack id + 1) back to its frames, leaf first.  A
 * chunk holding ids is always written before the table they name goes
 * (start_epoch ends every chunk first), and while the files are written
 * at the end nothing adds to the table. */
static int table_frames(void *ctx, uint64_t key, struct frame *out, int max)
{
	const struct profile_outputs *outs = ctx;
	uint32_t node;
	int n = 0;

	if (!key || key > stack_table_count(outs->stacks))
		return -1;
	for (node = stack_table_leaf(outs->stacks, (uint32_t)(key - 1)); node;) {
		struct stack_node sn = stack_table_node(outs->stacks, node);

		if (sn.kind != STACK_NODE_FRAME)
			break;
		if (n < max)
			out[n] = sn.frame;
		n++;
		node = sn.parent;
	}
	return n;
}

struct profile_outputs *profile_outputs_new(const struct output_settings *settings)
{
	struct profile_outputs *outs = calloc(1, sizeof(*outs));

	if (!outs)
		return NULL;
	outs->settings = *settings;
	outs->dir = strdup(settings->dir);
	outs->settings.dir = outs->dir;
	outs->by_name = strmap_new();
	outs->stacks = stack_table_new();
	outs->spill = spill_file_new(settings->dir, "counts");
	outs->retired = outs->spill ? retired_index_new(outs->spill) : NULL;
	outs->jfr_stacks = (struct jfr_stack_source){ table_frames, outs };
	if (!outs->dir || !outs->by_name || !outs->stacks || !outs->spill || !outs->retired) {
		profile_outputs_free(outs);
		return NULL;
	}
	return outs;
}

void profile_outputs_free(struct profile_outputs *outs)
{
	if (!outs)
		return;
	if (outs->by_name)
		strmap_free(outs->by_name, output_free);
	stack_table_free(outs->stacks);
	retired_index_free(outs->retired);
	spill_file_free(outs->spill);
	free(outs->dir);
	free(outs->scratch);
	free(outs);
}

static bool wanted(const struct output_settings *s, int kind)
{
	return kind == PROFILE_CPU || (kind == PROFILE_WALL && s->wall) ||
	       (kind == PROFILE_OFF_CPU && s->off_cpu) ||
	       (kind == PROFILE_WALL_STATES && s->wall && s->html);
}

/* The profiles the settings ask for, empty.  0 or -ENOMEM (none made). */
static int new_profiles(const struct output_settings *s, struct stack_table *stacks,
			struct profile_output *o)
{
	for (int k = 0; k < PROFILE_KINDS; k++)
		if (wanted(s, k) && !(o->profiles[k] = folded_profile_new(stacks))) {
			free_profiles(o);
			return -ENOMEM;
		}
	return 0;
}

/* Points o's labels into the texts after them (text_bytes, as
 * output_texts lays them out): 0, or -EINVAL when they are not the name
 * and nlabels pairs. */
static int point_labels(struct profile_output *o, int nlabels, size_t text_bytes)
{
	const char *t = (const char *)(o->labels + nlabels), *end = t + text_bytes;
	const char **next[1 + 2 * OUTPUT_MAX_LABELS];
	int n = 0;

	if (nlabels < 0 || nlabels > OUTPUT_MAX_LABELS || !text_bytes || end[-1])
		return -EINVAL;
	next[n++] = &o->name;
	for (int i = 0; i < nlabels; i++) {
		next[n++] = &o->labels[i].key;
		next[n++] = &o->labels[i].value;
	}
	for (int i = 0; i < n; i++) {
		if (t >= end)
			return -EINVAL;
		*next[i] = t;
		t += strlen(t) + 1;
	}
	if (t != end)
		return -EINVAL;
	o->nlabels = nlabels;
	o->text_bytes = text_bytes;
	return 0;
}

/* An output without samples, its texts copied from name and labels. */
static struct profile_output *output_new(const struct profile_outputs *outs, const char *name,
					 const struct output_label *labels, int nlabels)
{
	struct profile_output *o = calloc(1, sizeof(*o));
	size_t text_bytes = strlen(name) + 1;
	char *t;

	if (nlabels > OUTPUT_MAX_LABELS)
		nlabels = OUTPUT_MAX_LABELS;
	if (nlabels < 0)
		nlabels = 0;
	for (int i = 0; i < nlabels; i++)
		text_bytes += strlen(labels[i].key) + 1 +
			      strlen(labels[i].value ? labels[i].value : "") + 1;
	if (!o || !(o->labels = malloc(nlabels * sizeof(*o->labels) + text_bytes))) {
		free(o);
		return NULL;
	}
	t = (char *)(o->labels + nlabels);
	t = stpcpy(t, name) + 1;
	for (int i = 0; i < nlabels; i++) {
		t = stpcpy(t, labels[i].key) + 1;
		t = stpcpy(t, labels[i].value ? labels[i].value : "") + 1;
	}
	point_labels(o, nlabels, text_bytes);
	o->cpu_period_ns = outs->settings.cpu_period_ns;
	return o;
}

/* ---- retired outputs: out of memory, a record in the spill file ---- */

static bool output_failed(const struct profile_output *o)
{
	for (int i = 0; i < OUTPUT_FILE_KINDS; i++)
		if (o->errors[i])
			return true;
	return false;
}

/* A retired output's record: this head, then its texts as in memory. */
struct retired_head {
	uint32_t seq, nlabels;
	uint64_t text_bytes;
	uint8_t jfr_failed, jfr_on_disk;
	uint64_t cpu_period_ns, wall_carry_ns, last_sample_ns;
	struct spill_ref saved[PROFILE_KINDS], jfr_keys;
	int32_t errors[OUTPUT_FILE_KINDS];
	struct output_stats stats;
};

/* The output a record describes, parked (seq checked against want_seq).
 * NULL with *err: -ENOMEM, or -EIO for a record that does not read back. */
static struct profile_output *output_from_record(const void *data, size_t len,
						 uint32_t want_seq, int *err)
{
	struct retired_head h;
	struct profile_output *o;

	*err = -EIO;
	if (len < sizeof(h))
		return NULL;
	memcpy(&h, data, sizeof(h));
	if (h.seq != want_seq || h.text_bytes != len - sizeof(h) || h.nlabels > OUTPUT_MAX_LABELS)
		return NULL;
	*err = -ENOMEM;
	o = calloc(1, sizeof(*o));
	if (!o || !(o->labels = malloc(h.nlabels * sizeof(*o->labels) + h.text_bytes))) {
		free(o);
		return NULL;
	}
	memcpy(o->labels + h.nlabels, (const char *)data + sizeof(h), h.text_bytes);
	if (point_labels(o, (int)h.nlabels, h.text_bytes)) {
		free(o->labels);
		free(o);
		*err = -EIO;
		return NULL;
	}
	o->seq = h.seq;
	o->indexed = true;
	o->parked = true;
	o->jfr_failed = h.jfr_failed;
	o->jfr_on_disk = h.jfr_on_disk;
	o->cpu_period_ns = h.cpu_period_ns;
	o->wall_carry_ns = h.wall_carry_ns;
	o->last_sample_ns = h.last_sample_ns;
	memcpy(o->saved, h.saved, sizeof(o->saved));
	o->jfr_keys = h.jfr_keys;
	for (int i = 0; i < OUTPUT_FILE_KINDS; i++)
		o->errors[i] = h.errors[i];
	o->stats = h.stats;
	*err = 0;
	return o;
}

/* Output seq read back from its record (parked), or NULL with *err.  A
 * record that does not read back is reported once: each sample of its
 * output would ask again. */
static struct profile_output *read_retired(struct profile_outputs *outs, uint32_t seq,
					   uint64_t place, int *err)
{
	struct spill_ref ref = { place >> 16, place & RECORD_MAX_BYTES };
	struct profile_output *o;
	void *data;

	if ((*err = spill_file_get(outs->spill, &ref, &data)))
		return NULL;
	o = output_from_record(data, ref.bytes, seq, err);
	free(data);
	if (*err == -EIO && !outs->told_unreadable) {
		sp_err("%s: the record of output %u does not read back from the spill file; "
		       "its later samples are left out", outs->dir, seq);
		outs->told_unreadable = true;
	}
	return o;
}

static uint32_t name_tag(uint64_t hash)
{
	return (uint32_t)(hash >> 32);
}

/* Says once that the places of retired outputs could not be read or
 * set: err. */
static void places_unreadable(struct profile_outputs *outs, int err)
{
	if (!outs->told_places) {
		sp_err("%s: the places of retired outputs in the spill file: %s; the outputs "
		       "that need them are left out", outs->dir, strerror(-err));
		outs->told_places = true;
	}
}

struct name_search {
	struct profile_outputs *outs;
	const char *name;
	struct profile_output *found;
	int err;
};

/* A retired output whose name has the tag: read back, and kept if it is
 * the one (1 stops the search). */
static int check_retired(uint32_t seq, void *ctx)
{
	struct name_search *ns = ctx;
	struct profile_output *o;
	uint64_t place;

	if ((ns->err = retired_index_place(ns->outs->retired, seq, &place))) {
		places_unreadable(ns->outs, ns->err);
		return 1;
	}
	if (!place || place == PLACE_LIVE)
		return 0;
	if (!(o = read_retired(ns->outs, seq, place, &ns->err)))
		return 1;
	if (!strcmp(o->name, ns->name)) {
		ns->found = o;
		return 1;
	}
	output_free(o);
	return 0;
}

/* The retired output called name, read back (parked), or NULL: none such
 * (*err 0) or it does not read back (*err). */
static struct profile_output *find_retired(struct profile_outputs *outs, const char *name,
					   uint64_t hash, int *err)
{
	struct name_search ns = { .outs = outs, .name = name };
	int ret;

	*err = 0;
	if (!outs->nretired)
		return NULL;
	ret = retired_index_find(outs->retired, name_tag(hash), check_retired, &ns);
	*err = ret < 0 ? ret : ns.err;
	return *err ? NULL : ns.found;
}

/* Takes a parked output out of memory: what it is (texts, stats, errors,
 * where its saved trees and JFR keys lie) goes to the spill file as one
 * record, and its place by creation order says where.  A Spark
 * application starts stages by the thousand an hour: each kept about
 * 500 bytes of heap for the whole run, then 36 (a place and an index
 * slot); now the index is in the spill file too.  0, or -errno with o
 * still in memory. */
static int retire(struct profile_outputs *outs, struct profile_output *o)
{
	struct retired_head h = {
		.seq = o->seq, .nlabels = (uint32_t)o->nlabels, .text_bytes = o->text_bytes,
		.jfr_failed = o->jfr_failed, .jfr_on_disk = o->jfr_on_disk,
		.cpu_period_ns = o->cpu_period_ns, .wall_carry_ns = o->wall_carry_ns,
		.last_sample_ns = o->last_sample_ns, .jfr_keys = o->jfr_keys, .stats = o->stats,
	};
	size_t len = sizeof(h) + o->text_bytes;
	struct spill_ref ref;
	char *rec;
	int err;

	if (len > RECORD_MAX_BYTES)
		return -E2BIG;
	memcpy(h.saved, o->saved, sizeof(h.saved));
	for (int i = 0; i < OUTPUT_FILE_KINDS; i++)
		h.errors[i] = o->errors[i];
	if (!(rec = malloc(len)))
		return -ENOMEM;
	memcpy(rec, &h, sizeof(h));
	memcpy(rec + sizeof(h), o->labels + o->nlabels, o->text_bytes);
	err = spill_file_put(outs->spill, rec, len, &ref);
	free(rec);
	if (err)
		return err;
	if (ref.offset >= PLACE_OFFSET_MAX)
		return -EFBIG;
	if (!o->indexed &&
	    (err = retired_index_add_name(outs->retired,
					  name_tag(strmap_hash(o->name, strlen(o->name))), o->seq)))
		return err;
	o->indexed = true;
	if ((err = retired_index_set_place(outs->retired, o->seq, ref.offset << 16 | ref.bytes)))
		return err;
	outs->nretired++;
	outs->retired_failed += output_failed(o);
	strmap_remove(outs->by_name, o->name, strlen(o->name));
	output_free(o);
	return 0;
}

struct profile_output *profile_outputs_get(struct profile_outputs *outs, const char *name,
					   const struct output_label *labels, int nlabels)
{
	size_t len = strlen(name);
	struct profile_output *o;
	int inserted, err;
	void **slot;

	if (!is_safe_relative_name(name))
		return NULL;
	if ((o = strmap_get(outs->by_name, name, len)))
		return o;
	o = find_retired(outs, name, strmap_hash(name, len), &err);
	if (err)
		return NULL;
	if (!o) {
		if (outs->nplaces >= UINT32_MAX || !(o = output_new(outs, name, labels, nlabels)))
			return NULL;
		o->seq = (uint32_t)outs->nplaces;
	}
	slot = strmap_slot(outs->by_name, name, len, &inserted);
	if (!slot || (err = retired_index_set_place(outs->retired, o->seq, PLACE_LIVE))) {
		/* A read-back output stays retired: its place is unchanged. */
		if (slot) {
			strmap_remove(outs->by_name, name, len);
			places_unreadable(outs, err);
		}
		output_free(o);
		return NULL;
	}
	if (o->indexed) {
		outs->nretired--;
		outs->retired_failed -= output_failed(o);
	} else {
		outs->nplaces++;
	}
	*slot = o;
	return o;
}

uint64_t profile_outputs_generation(const struct profile_outputs *outs)
{
	return outs->generation;
}

static int open_jfr(const struct profile_outputs *outs, struct profile_output *o)
{
	const struct output_settings *st = &outs->settings;
	struct jfr_label labels[OUTPUT_MAX_LABELS];
	struct jfr_recording_info info = {
		.start_monotonic_ns = st->start_monotonic_ns,
		.start_realtime_ns = st->start_realtime_ns,
		.cpu_interval_ns = st->cpu_period_ns,
		.wall_interval_ns = st->wall || st->off_cpu ? st->wall_interval_ns : 0,
		.labels = labels,
		.nlabels = (size_t)o->nlabels,
	};
	/* Many stage files may be open at once: small chunks keep each
	 * writer's memory low (it is bounded by one chunk). */
	struct jfr_writer_options jopts = { .gzip = st->compress, .chunk_bytes = 2u << 20,
					    .append = o->jfr_on_disk, .stacks = &outs->jfr_stacks };
	void *keys = NULL;
	char path[PATH_MAX];
	int err;

	for (int i = 0; i < o->nlabels; i++) {
		labels[i].key = o->labels[i].key;
		labels[i].value = o->labels[i].value;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s.jfr%s", outs->dir, o->name,
			     st->compress ? ".gz" : "") >= sizeof(path)) {
		sp_err("output path for %s.jfr is too long", o->name);
		return -ENAMETOOLONG;
	}
	err = make_parent_dirs(path);
	if (err) {
		sp_err("create the folder for %s: %s", path, strerror(-err));
		return err;
	}
	/* Appending: keys go on from those the file holds. */
	if (o->jfr_on_disk && (err = spill_file_get(outs->spill, &o->jfr_keys, &keys)))
		return err;
	jopts.keys = keys;
	jopts.keys_len = o->jfr_keys.bytes;
	o->jfr = jfr_writer_open(path, &info, &jopts);
	err = o->jfr ? 0 : -errno;
	free(keys);
	return err;
}

/* JFR wall samples have whole weights in units of the wall interval; the
 * remainder is carried to the next sample of this output, so the total
 * stays exact and each stack gets its share on average. */
static uint64_t wall_weight(const struct profile_outputs *outs, struct profile_output *o,
			    uint64_t ns)
{
	uint64_t interval = outs->settings.wall_interval_ns, weight;

	o->wall_carry_ns += ns;
	weight = o->wall_carry_ns / interval;
	o->wall_carry_ns -= weight * interval;
	return weight;
}

static void add_jfr(const struct profile_outputs *outs, struct profile_output *o,
		    const struct resolved_sample *s, uint64_t stack_key)
{
	struct jfr_sample js = {
		.timestamp_ns = s->timestamp_ns,
		.os_tid = (uint32_t)s->tid,
		.thread_name = s->thread_name,
		.pid = (uint32_t)s->pid,
		.kind = JFR_SAMPLE_CPU,
		.thread_state = (int)s->thread_state,
		.weight = 1,
		.frames = s->frames,
		.nframes = (int)s->nframes,
		.stack_key = stack_key,
	};
	const struct output_settings *st = &outs->settings;
	int err = 0;

	if (o->jfr_failed)
		return;
	if (!o->jfr && (err = open_jfr(outs, o))) {
		o->jfr_failed = true;
		o->errors[OUTPUT_JFR] = err;
		return;
	}
	if (s->kind == SAMPLE_CPU)
		err = jfr_writer_add_sample(o->jfr, &js);
	if (!err && (s->kind == SAMPLE_OFF_CPU || st->wall)) {
		js.kind = JFR_SAMPLE_WALL;
		js.weight = wall_weight(outs, o, s->kind == SAMPLE_CPU ? o->cpu_period_ns
								       : s->off_cpu_ns);
		if (js.weight)
			err = jfr_writer_add_sample(o->jfr, &js);
	}
	if (err && err != -EINVAL) {
		sp_err("write %s/%s.jfr: %s; its folded profiles are still written", outs->dir,
		       o->name, strerror(-err));
		o->jfr_failed = true;
		o->errors[OUTPUT_JFR] = err;
	}
}

/* Names of the state frames, as flame.js knows them. */
static const char *const state_frames[] = {
	[SP_STATE_RUNNING] = "[on CPU]", [SP_STATE_PREEMPTED] = "[preempted]",
	[SP_STATE_SLEEPING] = "[sleeping]", [SP_STATE_UNINTERRUPTIBLE] = "[uninterruptible]",
	[SP_STATE_OTHER] = "[other state]",
};

static int add_with_state(struct profile_outputs *outs, struct profile_output *o,
			  const struct resolved_sample *s, const char *thread, uint64_t ns)
{
	uint32_t state = s->kind == SAMPLE_CPU ? SP_STATE_RUNNING : s->thread_state;

	if (s->nframes + 1 > outs->scratch_cap) {
		size_t cap = s->nframes + 64;
		struct frame *f = realloc(outs->scratch, cap * sizeof(*f));

		if (!f)
			return -ENOMEM;
		outs->scratch = f;
		outs->scratch_cap = cap;
	}
	outs->scratch[0] = (struct frame){
		state < sizeof(state_frames) / sizeof(state_frames[0]) ? state_frames[state]
								       : state_frames[SP_STATE_OTHER],
		FRAME_NATIVE };
	memcpy(outs->scratch + 1, s->frames, s->nframes * sizeof(*s->frames));
	return folded_profile_add(o->profiles[PROFILE_WALL_STATES], s->root_label, thread,
				  outs->scratch, s->nframes + 1, ns);
}

static int write_files(struct profile_outputs *outs, struct profile_output *o, bool parking);

/* Writes o's files, saves its counts and frees its profiles and JFR
 * buffers.  When a file cannot be written or the counts cannot be saved,
 * every output stays in memory from then on (written at the end, as
 * without parking): nothing recorded is lost. */
static void park(struct profile_outputs *outs, struct profile_output *o)
{
	if (write_files(outs, o, true)) {
		sp_err("%s/%s could not be written while recording; outputs stay in memory "
		       "until the end", outs->dir, o->name);
		outs->parking_off = true;
		return;
	}
	free_profiles(o);
	o->parked = true;
	outs->freed = true;
}

/* Ends o's JFR chunk (one is ended anyway when the output goes idle). */
static void end_jfr_chunk(struct profile_outputs *outs, struct profile_output *o)
{
	int err;

	if (!o->jfr || o->jfr_idle)
		return;
	o->jfr_idle = true;
	outs->freed = true;
	err = jfr_writer_idle(o->jfr);
	if (err) {
		sp_err("write %s/%s.jfr: %s; its folded profiles are still written", outs->dir,
		       o->name, strerror(-err));
		o->jfr_failed = true;
		o->errors[OUTPUT_JFR] = err;
	}
}

struct idle_pass {
	struct profile_outputs *outs;
	const struct profile_output *keep;  /* the output being added to */
	struct profile_output **parked;     /* to retire once the walk is done */
	size_t nparked, capparked;
};

static int idle_one(const char *name, void *value, void *ctx)
{
	struct idle_pass *ip = ctx;
	struct profile_outputs *outs = ip->outs;
	struct profile_output *o = value;

	(void)name;
	if (!o->parked && o->last_sample_ns + OUTPUT_IDLE_NS <= outs->newest_sample_ns) {
		if (o->last_sample_ns + OUTPUT_PARK_NS <= outs->newest_sample_ns &&
		    !outs->parking_off)
			park(outs, o);
		else
			end_jfr_chunk(outs, o);
	}
	if (o->parked && o != ip->keep && !outs->retire_off &&
	    !grow_array((void **)&ip->parked, &ip->capparked, ip->nparked + 1,
			sizeof(*ip->parked)))
		ip->parked[ip->nparked++] = o;
	return 0;
}

/* Writes what idle outputs hold and parks those idle for longer; parked
 * outputs but keep then leave memory (retire). */
static void sweep(struct profile_outputs *outs, const struct profile_output *keep)
{
	struct idle_pass ip = { .outs = outs, .keep = keep };
	int err;

	strmap_foreach(outs->by_name, idle_one, &ip);
	for (size_t i = 0; i < ip.nparked && !outs->retire_off; i++) {
		if ((err = retire(outs, ip.parked[i]))) {
			sp_err("%s: parked outputs stay in memory: %s", outs->dir, strerror(-err));
			outs->retire_off = true;
		}
	}
	if (ip.nparked) {
		outs->generation++;
		outs->freed = true;
	}
	free(ip.parked);
}

/* Says that o's saved counts did not read back (err -EINVAL from a saved
 * tree's reader), once per failure; err, as -EIO for that case. */
static int unreadable_saved(const struct profile_outputs *outs, const struct profile_output *o,
			    int err)
{
	if (err != -EINVAL)
		return err;
	sp_err("%s/%s: its saved counts do not read back from the spill file", outs->dir,
	       o->name);
	return -EIO;
}

/* Adds the tree saved at ref (if any) to t. */
static int add_saved(const struct profile_outputs *outs, const struct profile_output *o,
		     struct folded_tree *t, const struct spill_ref *ref)
{
	return unreadable_saved(outs, o, ref->bytes ? folded_tree_add_spilled(t, outs->spill, ref)
						    : 0);
}

/* The tree of o's counts of one kind: the trees it saved and what it
 * holds.  NULL with *err, after an sp_err line. */
static struct folded_tree *kind_tree(const struct profile_outputs *outs,
				     const struct profile_output *o, int kind, int *err)
{
	struct folded_tree *t = folded_tree_new();

	*err = t ? add_saved(outs, o, t, &o->saved[kind]) : -ENOMEM;
	for (int i = 0; o->layers && i < o->layers->n[kind] && !*err; i++)
		*err = add_saved(outs, o, t, &o->layers->ref[kind][i]);
	if (!*err && o->profiles[kind])
		*err = folded_tree_add_profile(t, o->profiles[kind]);
	if (*err) {
		if (*err == -ENOMEM)
			sp_err("%s/%s: %s", outs->dir, o->name, strerror(ENOMEM));
		folded_tree_free(t);
		return NULL;
	}
	folded_tree_built(t);
	return t;
}

/* Saves tree in the spill file: 0 or -errno, after an sp_err line. */
static int save_tree(const struct profile_outputs *outs, const struct folded_tree *tree,
		     struct spill_ref *ref)
{
	int err = folded_tree_save_spill(tree, outs->spill, ref);

	if (err == -ENOMEM)
		sp_err("saving counts in %s: %s", outs->dir, strerror(ENOMEM));
	return err;
}

/* The tree under layer top of kind: the layer before it, or saved[]. */
static struct spill_ref *layer_below(struct profile_output *o, int kind, int top)
{
	return top ? &o->layers->ref[kind][top - 1] : &o->saved[kind];
}

/* Blobs of the spill file an epoch's save of one output made, and those
 * it left unnamed (merged away).  Once it has succeeded the unnamed go;
 * when it fails the output goes back to what it named before, and what
 * the save made goes instead. */
struct epoch_blobs {
	struct spill_ref made[PROFILE_KINDS * (SAVED_LAYERS + 1)];
	struct spill_ref dead[PROFILE_KINDS * SAVED_LAYERS * 2];
	int nmade, ndead;
};

/* Merges o's newest layer of kind into the one below it, as the two
 * trees are read: the merge of a large tree holds little memory.  0 or
 * -errno. */
static int merge_layer(struct profile_outputs *outs, struct profile_output *o, int kind,
		       struct epoch_blobs *blobs)
{
	struct saved_layers *l = o->layers;
	int top = --l->n[kind];
	struct spill_ref *below = layer_below(o, kind, top);
	struct spill_ref merged;
	int err;

	if (!below->bytes) {    /* nothing below: the layer moves down */
		*below = l->ref[kind][top];
		return 0;
	}
	err = unreadable_saved(outs, o,
			       folded_saved_merge(outs->spill, below, &l->ref[kind][top], &merged));
	if (err == -ENOMEM)
		sp_err("%s/%s: %s", outs->dir, o->name, strerror(ENOMEM));
	if (err) {
		l->n[kind]++;
		return err;
	}
	outs->epoch_bytes += merged.bytes;
	blobs->made[blobs->nmade++] = merged;
	blobs->dead[blobs->ndead++] = *below;
	blobs->dead[blobs->ndead++] = l->ref[kind][top];
	*below = merged;
	return 0;
}

static bool merge_due(struct profile_output *o, int kind)
{
	const struct saved_layers *l = o->layers;
	int top = l->n[kind] - 1;

	return top >= 0 && (l->n[kind] == SAVED_LAYERS ||
			    l->ref[kind][top].bytes >= layer_below(o, kind, top)->bytes);
}

/* o's counts are saved as a new layer of each kind and its profiles freed
 * (made again by its next sample); the layers are merged while due, or,
 * to_bottom, all into saved[].  On failure o is as before, and the layers
 * saved meanwhile are given back. */
static int save_counts(struct profile_outputs *outs, struct profile_output *o, bool to_bottom)
{
	struct spill_ref base[PROFILE_KINDS];
	struct saved_layers kept;
	struct epoch_blobs blobs = { .nmade = 0, .ndead = 0 };
	int err = 0;

	if (!o->profiles[PROFILE_CPU] && (!to_bottom || !o->layers))
		return 0;
	if (!o->layers && !(o->layers = calloc(1, sizeof(*o->layers))))
		return -ENOMEM;
	kept = *o->layers;
	memcpy(base, o->saved, sizeof(base));
	for (int k = 0; k < PROFILE_KINDS && !err; k++) {
		struct folded_profile *p = o->profiles[k];
		struct folded_tree *t;

		if (p && folded_profile_total(p)) {
			t = folded_tree_build(p); /* built: its index goes before the save's buffer comes */
			err = t ? 0 : -ENOMEM;
			if (!err && !(err = save_tree(outs, t, &o->layers->ref[k][o->layers->n[k]]))) {
				blobs.made[blobs.nmade++] = o->layers->ref[k][o->layers->n[k]];
				outs->epoch_bytes += o->layers->ref[k][o->layers->n[k]++].bytes;
			}
			folded_tree_free(t);
		}
		while (!err && (to_bottom ? o->layers->n[k] > 0 : merge_due(o, k)))
			err = merge_layer(outs, o, k, &blobs);
	}
	if (err) {
		*o->layers = kept;
		memcpy(o->saved, base, sizeof(base));
		for (int i = 0; i < blobs.nmade; i++)
			spill_file_discard(outs->spill, &blobs.made[i]);
		return err;
	}
	for (int i = 0; i < blobs.ndead; i++)
		spill_file_discard(outs->spill, &blobs.dead[i]);
	free_profiles(o);
	return 0;
}

/* An epoch ends: o's counts are saved (save_counts) and its JFR chunk,
 * which names stacks by id, is ended. */
static int save_running(const char *name, void *value, void *ctx)
{
	struct profile_outputs *outs = ctx;
	struct profile_output *o = value;

	(void)name;
	if (!o || o->parked)
		return 0;
	end_jfr_chunk(outs, o);
	return save_counts(outs, o, false);
}

/* Past the budget, the stacks of every output still running go to the
 * spill file as text trees and the stack table starts afresh: memory
 * stays flat however many distinct stacks a long recording sees, and the
 * files written at the end merge the trees (folded_tree_add_spilled).  When
 * saving fails, the outputs saved so far keep their trees and the rest
 * keep the table, which then stays: nothing is lost. */
static void start_epoch(struct profile_outputs *outs)
{
	struct stack_table *fresh = stack_table_new();
	uint64_t began = monotonic_ns(), took;

	if (!fresh || strmap_foreach(outs->by_name, save_running, outs)) {
		sp_err("%s: stacks could not be saved while recording; they stay in memory "
		       "until the end", outs->dir);
		outs->parking_off = true;
		stack_table_free(fresh);
		return;
	}
	stack_table_free(outs->stacks);
	outs->stacks = fresh;
	outs->epochs++;
	outs->freed = true;
	took = monotonic_ns() - began;
	outs->epoch_ns += took;
	if (took > outs->epoch_longest_ns)
		outs->epoch_longest_ns = took;
}

/* The budget covers what grows with the distinct stacks of an epoch: the
 * table, the counts, and the JFR chunks (their method, symbol and stack
 * pools; an epoch ends every chunk).  A chunk also holds its events, which
 * no epoch keeps down for long (a busy writer fills its events again within
 * seconds), so while the table itself is under a quarter of the budget an
 * epoch would cost a save of every running output for little: none starts. */
static void check_budget(struct profile_outputs *outs)
{
	size_t budget = outs->settings.stack_budget;
	struct output_memory m;

	if (!budget || outs->parking_off)
		return;
	profile_outputs_memory(outs, &m);
	if (m.stacks + m.counts + m.jfr > budget && m.stacks + m.counts > budget / 4)
		start_epoch(outs);
}

/* The sweep may retire outputs, but never o. */
static void note_time(struct profile_outputs *outs, struct profile_output *o, uint64_t ts)
{
	o->jfr_idle = false;
	if (ts > o->last_sample_ns)
		o->last_sample_ns = ts;
	if (ts <= outs->newest_sample_ns)
		return;
	outs->newest_sample_ns = ts;
	if (!outs->last_sweep_ns)
		outs->last_sweep_ns = ts;
	if (ts - outs->last_sweep_ns >= SWEEP_NS) {
		outs->last_sweep_ns = ts;
		sweep(outs, o);
		check_budget(outs);
		if (outs->freed && ts - outs->last_trim_ns >= TRIM_NS) {
			malloc_trim(0);
			outs->freed = false;
			outs->last_trim_ns = ts;
		}
	}
}

int profile_output_add(struct profile_outputs *outs, struct profile_output *o,
		       const struct resolved_sample *s)
{
	const char *thread = outs->settings.per_thread ? s->thread_name : NULL;
	struct folded_profile *const *p = o->profiles;
	int64_t id;
	int err = 0;

	/* The sweep may park outputs or end an epoch: o's profiles after it. */
	note_time(outs, o, s->timestamp_ns);
	if (o->parked) {
		o->parked = false;
		o->stats.unparked++;
	}
	if (!p[PROFILE_CPU] && (err = new_profiles(&outs->settings, outs->stacks, o)))
		return err;
	/* One lookup serves the output's folded profiles and its JFR chunk:
	 * the stack is stored once, and a stack seen before costs no
	 * allocation. */
	id = stack_table_intern(outs->stacks, s->root_label, thread, s->frames, s->nframes);
	if (outs->settings.jfr)
		add_jfr(outs, o, s, id < 0 ? 0 : (uint64_t)id + 1);
	if (id < 0)
		return (int)id;
	if (s->kind == SAMPLE_CPU) {
		o->stats.cpu_samples++;
		err = folded_profile_add_id(p[PROFILE_CPU], (uint32_t)id, 1);
		if (!err && p[PROFILE_WALL])
			err = folded_profile_add_id(p[PROFILE_WALL], (uint32_t)id, o->cpu_period_ns);
		if (!err && p[PROFILE_WALL_STATES])
			err = add_with_state(outs, o, s, thread, o->cpu_period_ns);
		return err;
	}
	o->stats.off_cpu_events++;
	o->stats.off_cpu_ns += s->off_cpu_ns;
	if (p[PROFILE_WALL])
		err = folded_profile_add_id(p[PROFILE_WALL], (uint32_t)id, s->off_cpu_ns);
	if (!err && p[PROFILE_WALL_STATES])
		err = add_with_state(outs, o, s, thread, s->off_cpu_ns);
	if (!err && p[PROFILE_OFF_CPU])
		err = folded_profile_add_id(p[PROFILE_OFF_CPU], (uint32_t)id, s->off_cpu_ns);
	return err;
}

const struct output_stats *profile_output_stats(const struct profile_output *o)
{
	return &o->stats;
}

const struct output_label *profile_output_labels(const struct profile_output *o, int *n)
{
	*n = o->nlabels;
	return o->labels;
}

bool profile_output_parked(const struct profile_output *o)
{
	return o->parked;
}

/* What a page leaves out: one width for pages built whole and from streams. */
#define PAGE_MIN_WIDTH_PCT FLAME_MIN_WIDTH_DEFAULT

/* Whether o's counts of kind are all in its saved tree (save_for_stop):
 * then its files are written from it as a stream. */
static bool all_saved(const struct profile_output *o, int kind)
{
	return o->saved[kind].bytes && !o->profiles[kind] && !(o->layers && o->layers->n[kind]);
}

/* PATH.folded -> PATH.html */
static int write_html(const struct profile_outputs *outs, const struct profile_output *o,
		      const struct flame_tree *flame, bool states, const char *folded_path)
{
	struct flame_page_options po = { .min_width_pct = PAGE_MIN_WIDTH_PCT };
	char html[PATH_MAX], title[512];
	size_t n = strlen(folded_path) - strlen(".folded");

	snprintf(html, sizeof(html), "%.*s.html", (int)n, folded_path);
	flame_page_mode_for(folded_path, outs->settings.wall_interval_ns, &po.mode, &po.unit_ns);
	flame_page_title(o->name, po.mode, title, sizeof(title));
	po.title = title;
	po.thread_states = states;
	return flame_page_write(flame, &po, html);
}

/* Writes one folded file (counts of kind) and its page (from page_kind,
 * which may be another kind: the wall page splits thread states);
 * *folded_err and *html_err get their -errno (0 when written or not asked
 * for).  saves: where the trees written from are saved (parking), else
 * NULL.  Each text tree is freed as soon as what it feeds is built, so
 * that writing holds as little memory as it can. */
static void write_profile(const struct profile_outputs *outs, struct profile_output *o,
			  int kind, int page_kind, const char *suffix, uint64_t unit,
			  int *folded_err, int *html_err, struct spill_ref *saves)
{
	struct flame_tree *flame = NULL;
	struct folded_tree *tree = NULL;
	char path[PATH_MAX];
	int err;

	*folded_err = *html_err = 0;
	if (!wanted(&outs->settings, kind))
		return;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s%s", outs->dir, o->name, suffix) >=
	    sizeof(path)) {
		sp_err("output path for %s%s is too long", o->name, suffix);
		*folded_err = -ENAMETOOLONG;
		return;
	}
	err = make_parent_dirs(path);
	if (err) {
		sp_err("create the folder for %s: %s", path, strerror(-err));
		*folded_err = err;
		return;
	}
	if (!saves && all_saved(o, kind)) {
		*folded_err = unreadable_saved(outs, o, folded_saved_write(outs->spill,
									    &o->saved[kind], path, unit));
		o->stats.streamed++;
	} else {
		tree = kind_tree(outs, o, kind, folded_err);
		if (tree)
			*folded_err = folded_tree_write(tree, path, unit);
		if (tree && saves && !*folded_err)
			*folded_err = save_tree(outs, tree, &saves[kind]);
	}
	if (outs->settings.html) {
		err = tree || (!saves && all_saved(o, kind)) ? 0 : *folded_err;
		if (!saves && all_saved(o, page_kind)) {
			folded_tree_free(tree);
			tree = NULL;
			flame = folded_saved_flame(outs->spill, &o->saved[page_kind], unit,
						   PAGE_MIN_WIDTH_PCT, &err);
			err = unreadable_saved(outs, o, err);
			o->stats.streamed++;
		} else {
			if (page_kind != kind) {
				folded_tree_free(tree);
				tree = kind_tree(outs, o, page_kind, &err);
				if (tree && saves && (err = save_tree(outs, tree, &saves[page_kind])))
					*folded_err = err;
			}
			flame = tree ? folded_tree_flame(tree, unit, &err) : NULL;
		}
		folded_tree_free(tree);
		tree = NULL;
		if (!flame)
			sp_err("flame graph of %s: %s", path, strerror(-err));
		*html_err = flame ? write_html(outs, o, flame, page_kind == PROFILE_WALL_STATES,
					       path)
				  : err;
		flame_tree_free(flame);
	}
	folded_tree_free(tree);
}

/* Writes all of o's files (each file's error is in o->errors); returns the
 * first error of a folded file or page (a JFR error was reported and does
 * not stop the others).  parking: the trees written from are saved as
 * o's saved trees (they hold the earlier ones), and the JFR writer's key
 * state goes to the spill file, for appending. */
static int write_files(struct profile_outputs *outs, struct profile_output *o, bool parking)
{
	const struct output_settings *s = &outs->settings;
	struct spill_ref saves[PROFILE_KINDS] = { { 0, 0 } }, *sv = parking ? saves : NULL;
	int *errs = o->errors, err;

	write_profile(outs, o, PROFILE_CPU, PROFILE_CPU, ".folded", 1, &errs[OUTPUT_FOLDED],
		      &errs[OUTPUT_FOLDED_HTML], sv);
	write_profile(outs, o, PROFILE_WALL,
		      wanted(s, PROFILE_WALL_STATES) ? PROFILE_WALL_STATES : PROFILE_WALL,
		      ".wall.folded", s->wall_interval_ns, &errs[OUTPUT_WALL_FOLDED],
		      &errs[OUTPUT_WALL_HTML], sv);
	write_profile(outs, o, PROFILE_OFF_CPU, PROFILE_OFF_CPU, ".offcpu.folded", 1000000,
		      &errs[OUTPUT_OFF_CPU_FOLDED], &errs[OUTPUT_OFF_CPU_HTML], sv);
	/* An output without samples still gets its (empty) JFR twin. */
	if (s->jfr && !o->jfr && !o->jfr_failed && !o->jfr_on_disk && (err = open_jfr(outs, o))) {
		o->jfr_failed = true;
		errs[OUTPUT_JFR] = err;
	}
	if (o->jfr) {
		void *keys = NULL;
		size_t keys_len = 0;

		/* A JFR that failed while recording is removed: its error stays.
		 * Parking keeps the writer's key state for appending. */
		err = parking ? jfr_writer_close_keys(o->jfr, NULL, &keys, &keys_len)
			      : jfr_writer_close(o->jfr);
		if (!errs[OUTPUT_JFR])
			errs[OUTPUT_JFR] = err;
		o->jfr = NULL;
		o->jfr_on_disk = !errs[OUTPUT_JFR];
		if (o->jfr_on_disk && parking) {
			struct spill_ref old_keys = o->jfr_keys;

			if ((err = spill_file_put(outs->spill, keys, keys_len, &o->jfr_keys))) {
				/* Without its keys the file takes no more chunks. */
				o->jfr_failed = true;
				errs[OUTPUT_JFR] = err;
			} else {
				spill_file_discard(outs->spill, &old_keys);
			}
		}
		free(keys);
	}
	for (int i = 0; i < OUTPUT_FILE_KINDS; i++) {
		if (errs[i] && i != OUTPUT_JFR) {
			for (int k = 0; k < PROFILE_KINDS && parking; k++)
				spill_file_discard(outs->spill, &saves[k]);
			return errs[i];
		}
	}
	if (parking) {
		/* the trees written from hold the ones saved before */
		for (int k = 0; k < PROFILE_KINDS; k++) {
			spill_file_discard(outs->spill, &o->saved[k]);
			for (int i = 0; o->layers && i < o->layers->n[k]; i++)
				spill_file_discard(outs->spill, &o->layers->ref[k][i]);
		}
		memcpy(o->saved, saves, sizeof(o->saved));
		free(o->layers);
		o->layers = NULL;
	}
	return 0;
}

/* Writing what still runs is most of a stop, and outputs share nothing
 * that writing changes (the stack table, the spill file and the frame
 * names are only read), so up to WRITE_THREADS threads, one per online
 * CPU, each take the next output not yet taken: the node's first. */
#define WRITE_THREADS 4

struct write_queue {
	struct profile_outputs *outs;
	struct profile_output **todo;
	size_t n;
	atomic_size_t next;
};

static int queue_open(const char *name, void *value, void *ctx)
{
	struct write_queue *q = ctx;
	struct profile_output *o = value;

	(void)name;
	if (o && !o->parked) /* a parked output's files are written */
		q->todo[q->n++] = o;
	return 0;
}

static void *write_queued(void *arg)
{
	struct write_queue *q = arg;
	size_t i;

	while ((i = atomic_fetch_add(&q->next, 1)) < q->n)
		write_files(q->outs, q->todo[i], false);
	return NULL;
}

static int first_error(const char *name, struct profile_output *o, void *ctx)
{
	int *first = ctx;

	(void)name;
	for (int i = 0; i < OUTPUT_FILE_KINDS && !*first; i++)
		*first = o->errors[i];
	return *first;
}

static int live_first_error(const char *name, void *value, void *ctx)
{
	return first_error(name, value, ctx);
}

/* An output that saved counts during the recording has all of them saved
 * before the stop writes it, so that its files are written from one saved
 * tree as it streams (write_profile), whatever the recording's length:
 * built in memory, the trees of every stack it saw took a 10-minute
 * soak's stop to 99 MiB of RSS (56 MiB streamed).  Here, not
 * in the writing threads: the spill file takes one writer.  When this
 * fails the output is as before, and its files are built in memory. */
static int save_for_stop(const char *name, void *value, void *ctx)
{
	struct profile_output *o = value;
	bool saved = false;

	(void)name;
	for (int k = 0; o && !o->parked && k < PROFILE_KINDS; k++)
		saved |= o->saved[k].bytes || (o->layers && o->layers->n[k]);
	if (saved)
		save_counts(ctx, o, true);
	return 0;
}

int profile_outputs_write(struct profile_outputs *outs)
{
	struct write_queue q = { .outs = outs, .todo = calloc(strmap_count(outs->by_name) + 1,
							      sizeof(*q.todo)) };
	pthread_t threads[WRITE_THREADS - 1];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int nthreads = 0, err = 0;

	if (!q.todo) {
		sp_err("writing %s: %s", outs->dir, strerror(ENOMEM));
		return -ENOMEM;
	}
	atomic_init(&q.next, 0);
	strmap_foreach(outs->by_name, save_for_stop, outs);
	strmap_foreach(outs->by_name, queue_open, &q);
	while (nthreads < WRITE_THREADS - 1 && nthreads + 1 < cpus && (size_t)nthreads + 1 < q.n &&
	       !pthread_create(&threads[nthreads], NULL, write_queued, &q))
		pthread_setname_np(threads[nthreads++], "sparkprof-write");
	write_queued(&q);
	while (nthreads--)
		pthread_join(threads[nthreads], NULL);
	free(q.todo);
	/* Retired outputs are read back only when one of them failed. */
	if (outs->retired_failed)
		profile_outputs_foreach(outs, first_error, &err);
	else
		strmap_foreach(outs->by_name, live_first_error, &err);
	return err;
}

static int add_memory(const char *name, void *value, void *ctx)
{
	const struct profile_output *o = value;
	struct output_memory *m = ctx;

	(void)name;
	m->parked += o->parked;
	for (int k = 0; k < PROFILE_KINDS; k++)
		m->counts += o->profiles[k] ? folded_profile_memory(o->profiles[k]) : 0;
	if (o->jfr) {
		size_t jfr = jfr_writer_memory(o->jfr);

		m->jfr += jfr;
		m->jfr_writers++;
		if (jfr > m->jfr_largest)
			m->jfr_largest = jfr;
	}
	return 0;
}

void profile_outputs_memory(const struct profile_outputs *outs, struct output_memory *out)
{
	*out = (struct output_memory){ .stacks = stack_table_memory(outs->stacks),
				       .epochs = outs->epochs, .epoch_ns = outs->epoch_ns,
				       .epoch_longest_ns = outs->epoch_longest_ns,
				       .epoch_bytes = outs->epoch_bytes,
				       .spill_bytes = spill_file_bytes(outs->spill),
				       .spill_disk_bytes = spill_file_disk_bytes(outs->spill),
				       .outputs = outs->nplaces,
				       .parked = outs->nretired,
				       .retired_index = retired_index_memory(outs->retired) };
	strmap_foreach(outs->by_name, add_memory, out);
}

struct live_list {
	struct profile_output **o;
	size_t n;
};

static int collect_live(const char *name, void *value, void *ctx)
{
	struct live_list *l = ctx;

	(void)name;
	l->o[l->n++] = value;
	return 0;
}

static int by_seq(const void *a, const void *b)
{
	uint32_t x = (*(struct profile_output *const *)a)->seq;
	uint32_t y = (*(struct profile_output *const *)b)->seq;

	return x < y ? -1 : x > y;
}

static const char *const file_suffixes[OUTPUT_FILE_KINDS] = {
	[OUTPUT_FOLDED] = ".folded",
	[OUTPUT_WALL_FOLDED] = ".wall.folded",
	[OUTPUT_OFF_CPU_FOLDED] = ".offcpu.folded",
	[OUTPUT_JFR] = ".jfr",
	[OUTPUT_FOLDED_HTML] = ".html",
	[OUTPUT_WALL_HTML] = ".wall.html",
	[OUTPUT_OFF_CPU_HTML] = ".offcpu.html",
};

int profile_output_failures(const struct profile_outputs *outs, const struct profile_output *o,
			    int (*fn)(const char *file, int err, void *ctx), void *ctx)
{
	char file[PATH_MAX];

	for (int i = 0; i < OUTPUT_FILE_KINDS; i++) {
		if (!o->errors[i])
			continue;
		snprintf(file, sizeof(file), "%s%s%s", o->name, file_suffixes[i],
			 i == OUTPUT_JFR && outs->settings.compress ? ".gz" : "");
		int r = fn(file, o->errors[i], ctx);
		if (r)
			return r;
	}
	return 0;
}

int profile_outputs_foreach(struct profile_outputs *outs,
			    int (*fn)(const char *name, struct profile_output *out, void *ctx),
			    void *ctx)
{
	struct live_list live = { calloc(strmap_count(outs->by_name) + 1, sizeof(*live.o)), 0 };
	int ret = 0, err;

	if (!live.o)
		return -ENOMEM;
	strmap_foreach(outs->by_name, collect_live, &live);
	qsort(live.o, live.n, sizeof(*live.o), by_seq);
	for (size_t seq = 0, k = 0; seq < outs->nplaces && !ret; seq++) {
		struct profile_output *o;
		uint64_t place;

		/* The live ones are all in memory: by seq, as the places say. */
		if (k < live.n && live.o[k]->seq == seq) {
			ret = fn(live.o[k]->name, live.o[k], ctx);
			k++;
			continue;
		}
		/* A record (or a place) that does not read back is reported:
		 * the others are still visited. */
		if ((err = retired_index_place(outs->retired, (uint32_t)seq, &place))) {
			places_unreadable(outs, err);
			continue;
		}
		if (!place || place == PLACE_LIVE)
			continue;
		if ((o = read_retired(outs, (uint32_t)seq, place, &err))) {
			ret = fn(o->name, o, ctx);
			output_free(o);
		}
	}
	free(live.o);
	return ret;
}

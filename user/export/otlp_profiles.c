/* otlp_profiles.c - see otlp_profiles.h. Adding samples fills the
 * dictionary tables and per-process aggregates; encoding builds the
 * protobuf-c messages over them and packs them once. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow_array.h"
#include "base/log.h"
#include "base/string_pool.h"
#include "base/strmap.h"
#include "base/version.h"
#include "export/otlp_profiles.h"
#include "output/row_walk.h"

#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"

/* A dictionary table: its entries' keys (bytes) -> index + 1. Entry 0 is
 * the zero value. */
struct otlp_dict {
	struct strmap *map;
	int32_t n;
};

/* An attribute_table entry: a string (str into the string table) or an
 * integer. Compared as bytes: no padding left unset. */
struct otlp_attr {
	int32_t key, str;
	int64_t num;
	int64_t is_num;
};

/* A function_table entry; location i is one line of function i. */
struct otlp_func {
	int32_t name, file;
	int32_t type;        /* enum frame_type */
};

/* thread.name, thread.id, stage, attempt, task, thread.state */
#define OTLP_SAMPLE_ATTRS 6

/* A sample's identity: its stack and attributes (unused ones 0). */
struct otlp_sample_key {
	int32_t stack;
	int32_t attrs[OTLP_SAMPLE_ATTRS];
	int32_t nattrs;
};

struct otlp_sample {
	struct otlp_sample_key key;
	int64_t value;
};

struct otlp_profile {
	struct strmap *index;       /* key bytes -> sample index + 1 */
	struct otlp_sample *s;
	size_t n, cap;
	uint64_t first_ns, last_ns; /* monotonic */
};

struct otlp_process {
	int pid;
	const char *exe, *app, *executor;     /* in the batch's pool; NULL: none */
	struct otlp_resource_extra extra;
	struct otlp_profile prof[OTLP_KINDS];
};

/* A segment's label, resolved the first time a sample uses it. */
struct seg_label {
	struct otlp_process *proc;
	int32_t attrs[OTLP_SAMPLE_ATTRS];
	uint8_t nattrs;
};

enum otlp_key {
	OTLP_KEY_THREAD_NAME, OTLP_KEY_THREAD_ID, OTLP_KEY_STAGE, OTLP_KEY_ATTEMPT,
	OTLP_KEY_TASK, OTLP_KEY_STATE, OTLP_KEY_FRAME_TYPE, OTLP_KEYS,
};

struct otlp_batch {
	struct otlp_batch_settings set;
	struct string_pool *pool;
	struct otlp_dict strings, funcs, attrs, stacks;
	const char **str;                 /* the string table */
	size_t str_cap;
	struct otlp_func *fn;
	size_t fn_cap;
	struct otlp_attr *at;
	size_t at_cap;
	int32_t *stack_locs;              /* stack i: [stack_off[i], stack_off[i + 1]) */
	size_t nlocs, locs_cap;
	size_t *stack_off;
	size_t stack_cap;
	struct strmap *proc_index;        /* pid and name -> struct otlp_process * */
	struct otlp_process **procs;
	size_t nprocs, procs_cap;
	int32_t keys[OTLP_KEYS];          /* string indices */
	int32_t type_file[FRAME_TYPE_MAX], type_attr[FRAME_TYPE_MAX];
	int32_t state_attr[ROW_STATES];
	/* One segment's scratch: its frames, a stack's locations, each label's
	 * attributes and each leaf's stack (-1: not yet). */
	struct frame *frames;
	int32_t *locs;
	struct seg_label *seg_labels;
	size_t seg_labels_cap;
	int32_t *leaf_stack;
	size_t leaf_cap;
	struct otlp_totals totals;
	int failed;
};

static const char *const type_value[FRAME_TYPE_MAX] = {
	[FRAME_NATIVE] = "native", [FRAME_CPP] = "native", [FRAME_KERNEL] = "kernel",
	[FRAME_JIT] = "jvm", [FRAME_INLINED] = "jvm", [FRAME_INTERPRETED] = "jvm",
	[FRAME_PYTHON] = "cpython",
};
static const char *const type_file[FRAME_TYPE_MAX] = {
	[FRAME_NATIVE] = "[native]", [FRAME_CPP] = "[c++]", [FRAME_KERNEL] = "[kernel]",
	[FRAME_JIT] = "[jit]", [FRAME_INLINED] = "[inlined]",
	[FRAME_INTERPRETED] = "[interpreted]", [FRAME_PYTHON] = "[python]",
};
static const char *const state_value[ROW_STATES] = {
	"running", "preempted", "sleeping", "uninterruptible", "other",
};

/* Index of key in d, adding it (*added) when new. 0 or -ENOMEM/-E2BIG. */
static int dict_index(struct otlp_dict *d, const void *key, size_t len, int32_t *idx, bool *added)
{
	int inserted = 0;
	void **slot = strmap_slot(d->map, key, len, &inserted);

	if (!slot)
		return -ENOMEM;
	*added = inserted;
	if (!inserted) {
		*idx = (int32_t)((uintptr_t)*slot - 1);
		return 0;
	}
	if (d->n == INT32_MAX) {
		strmap_remove(d->map, key, len);
		return -E2BIG;
	}
	*idx = d->n++;
	*slot = (void *)(uintptr_t)(*idx + 1);
	return 0;
}

/* s's index in the string table, added if new. 0, -ENOMEM or -E2BIG. */
static int otlp_string(struct otlp_batch *b, const char *s, int32_t *idx)
{
	size_t len = strlen(s);
	bool added;
	int err = dict_index(&b->strings, s, len, idx, &added);

	if (err || !added)
		return err;
	if (grow_array((void **)&b->str, &b->str_cap, (size_t)*idx + 1, sizeof(*b->str)) ||
	    !(b->str[*idx] = string_pool_intern(b->pool, s, len)))
		return -ENOMEM;
	return 0;
}

/* An attribute of the table: a string value (str >= 0) or a number. */
static int attribute(struct otlp_batch *b, int32_t key, const char *str, int64_t num,
		     int32_t *idx)
{
	struct otlp_attr a = { .key = key, .num = num, .is_num = !str };
	bool added;
	int err = str ? otlp_string(b, str, &a.str) : 0;

	if (!err)
		err = dict_index(&b->attrs, &a, sizeof(a), idx, &added);
	if (!err && added) {
		if (grow_array((void **)&b->at, &b->at_cap, (size_t)*idx + 1, sizeof(*b->at)))
			return -ENOMEM;
		b->at[*idx] = a;
	}
	return err;
}

/* The location (and function: one each per name and type) of a frame. */
static int location_of(struct otlp_batch *b, const struct frame *f, int32_t *idx)
{
	char key[1 + STORE_TEXT_MAX];
	size_t len = strnlen(f->name, STORE_TEXT_MAX);
	struct otlp_func fn = { .type = f->type < FRAME_TYPE_MAX ? f->type : FRAME_NATIVE };
	bool added;
	int err;

	key[0] = (char)fn.type;
	memcpy(key + 1, f->name, len);
	if ((err = dict_index(&b->funcs, key, len + 1, idx, &added)) || !added)
		return err;
	if (grow_array((void **)&b->fn, &b->fn_cap, (size_t)*idx + 1, sizeof(*b->fn)))
		return -ENOMEM;
	fn.file = b->type_file[fn.type];
	b->fn[*idx] = fn;
	/* A name longer than the store's bound was cut by the reader already. */
	return otlp_string(b, f->name, &b->fn[*idx].name);
}

/* The stack table's index of the frames of leaf. */
static int stack_of(struct otlp_batch *b, const struct store_samples *ss, uint32_t leaf,
		    int32_t *idx)
{
	size_t n = store_sample_frames(ss, leaf, b->frames, STORE_DEPTH_MAX);
	bool added;
	int err = 0;

	if (n > STORE_DEPTH_MAX)
		n = STORE_DEPTH_MAX;
	for (size_t i = 0; i < n && !err; i++)
		err = location_of(b, &b->frames[i], &b->locs[i]);
	if (!err)
		err = dict_index(&b->stacks, b->locs, n * sizeof(*b->locs), idx, &added);
	if (err || !added)
		return err;
	if (grow_array((void **)&b->stack_off, &b->stack_cap, (size_t)*idx + 2,
		       sizeof(*b->stack_off)) ||
	    grow_array((void **)&b->stack_locs, &b->locs_cap, b->nlocs + n, sizeof(*b->stack_locs)))
		return -ENOMEM;
	memcpy(b->stack_locs + b->nlocs, b->locs, n * sizeof(*b->locs));
	b->nlocs += n;
	b->stack_off[*idx + 1] = b->nlocs;
	return 0;
}

/* "comm-pid" -> "comm". */
static void executable_name(const struct sample_labels *l, char *out, size_t size)
{
	const char *dash = strrchr(l->process, '-');
	char num[16];
	size_t len = strlen(l->process);

	snprintf(num, sizeof(num), "%d", (int)l->pid);
	if (dash && !strcmp(dash + 1, num))
		len = (size_t)(dash - l->process);
	snprintf(out, size, "%.*s", (int)len, l->process);
}

static int new_process(struct otlp_batch *b, const struct sample_labels *l,
		       struct otlp_process **out)
{
	struct otlp_process *p = calloc(1, sizeof(*p));
	char exe[256];

	if (!p || grow_array((void **)&b->procs, &b->procs_cap, b->nprocs + 1, sizeof(*b->procs))) {
		free(p);
		return -ENOMEM;
	}
	b->procs[b->nprocs++] = p;
	p->pid = l->pid;
	executable_name(l, exe, sizeof(exe));
	if (!(p->exe = string_pool_intern(b->pool, exe, strlen(exe))))
		return -ENOMEM;
	if (b->set.resource_of)
		b->set.resource_of(b->set.ctx, l->pid, &p->extra);
	for (int k = 0; k < OTLP_KINDS; k++)
		if (!(p->prof[k].index = strmap_new()))
			return -ENOMEM;
	*out = p;
	return 0;
}

/* The process of l, and its Spark ids from the first label that has them.
 * A process is its pid and its name: one that runs another program after
 * an exec (sparkprof's child before it becomes the JVM) is another resource. */
static int process_of(struct otlp_batch *b, const struct sample_labels *l,
		      struct otlp_process **out)
{
	char key[sizeof(l->pid) + STORE_TEXT_MAX];
	size_t len = strnlen(l->process, STORE_TEXT_MAX);
	int inserted = 0, err;
	void **slot;

	memcpy(key, &l->pid, sizeof(l->pid));
	memcpy(key + sizeof(l->pid), l->process, len);
	if (!(slot = strmap_slot(b->proc_index, key, sizeof(l->pid) + len, &inserted)))
		return -ENOMEM;
	if (inserted) {
		*slot = NULL;
		if ((err = new_process(b, l, out)))
			return err;
		*slot = *out;
	}
	*out = *slot;
	if (!(*out)->app && *l->app_id &&
	    !((*out)->app = string_pool_intern(b->pool, l->app_id, strlen(l->app_id))))
		return -ENOMEM;
	if (!(*out)->executor && *l->executor_id &&
	    !((*out)->executor = string_pool_intern(b->pool, l->executor_id,
						    strlen(l->executor_id))))
		return -ENOMEM;
	return 0;
}

/* Label i's process and sample attributes (but thread.state). */
static int resolve_label(struct otlp_batch *b, const struct sample_labels *l,
			 struct seg_label *out)
{
	int err = process_of(b, l, &out->proc);
	int32_t *a = out->attrs;

	out->nattrs = 0;
	if (!err)
		err = attribute(b, b->keys[OTLP_KEY_THREAD_NAME], l->thread, 0, &a[out->nattrs++]);
	if (!err)
		err = attribute(b, b->keys[OTLP_KEY_THREAD_ID], NULL, l->tid, &a[out->nattrs++]);
	if (!err && l->stage >= 0) {
		err = attribute(b, b->keys[OTLP_KEY_STAGE], NULL, l->stage, &a[out->nattrs++]);
		if (!err)
			err = attribute(b, b->keys[OTLP_KEY_ATTEMPT], NULL, l->attempt,
					&a[out->nattrs++]);
	}
	if (!err && l->task >= 0)
		err = attribute(b, b->keys[OTLP_KEY_TASK], NULL, l->task, &a[out->nattrs++]);
	return err;
}

/* Adds value to the sample (stack, attributes) of p's profile k. */
static int aggregate(struct otlp_profile *p, const struct otlp_sample_key *key, int64_t value,
		     uint64_t first_ns, uint64_t last_ns)
{
	int inserted = 0;
	void **slot = strmap_slot(p->index, (const char *)key, sizeof(*key), &inserted);
	size_t i;

	if (!slot)
		return -ENOMEM;
	if (inserted) {
		if (grow_array((void **)&p->s, &p->cap, p->n + 1, sizeof(*p->s))) {
			strmap_remove(p->index, (const char *)key, sizeof(*key));
			return -ENOMEM;
		}
		p->s[p->n] = (struct otlp_sample){ .key = *key };
		*slot = (void *)(uintptr_t)++p->n;
	}
	i = (uintptr_t)*slot - 1;
	p->s[i].value += value;
	if (!p->first_ns || first_ns < p->first_ns)
		p->first_ns = first_ns;
	if (last_ns > p->last_ns)
		p->last_ns = last_ns;
	return 0;
}

/* The sample's values into each profile the recording has. */
static int add_values(struct otlp_batch *b, const struct store_sample *s,
		      const struct seg_label *sl, int32_t stack, uint64_t first_ns, uint64_t last_ns)
{
	const struct store_info *info = b->set.info;
	struct otlp_sample_key key = { .stack = stack, .nattrs = sl->nattrs };
	bool cpu = s->kind == SAMPLE_CPU;
	int err = 0;

	memcpy(key.attrs, sl->attrs, sizeof(key.attrs));
	if (cpu)
		err = aggregate(&sl->proc->prof[OTLP_CPU], &key, (int64_t)s->weight, first_ns, last_ns);
	key.attrs[key.nattrs++] = b->state_attr[cpu ? SP_STATE_RUNNING :
						s->state < ROW_STATES ? s->state : SP_STATE_OTHER];
	if (!err && (info->flags & STORE_WALL))
		err = aggregate(&sl->proc->prof[OTLP_WALL], &key,
				(int64_t)(cpu ? s->weight * info->cpu_period_ns : s->weight),
				first_ns, last_ns);
	if (!err && !cpu && (info->flags & STORE_OFF_CPU))
		err = aggregate(&sl->proc->prof[OTLP_OFF_CPU], &key, (int64_t)s->weight,
				first_ns, last_ns);
	return err;
}

static void count(struct otlp_batch *b, const struct store_sample *s)
{
	const struct store_info *info = b->set.info;
	bool cpu = s->kind == SAMPLE_CPU;

	b->totals.samples++;
	b->totals.cpu_samples += cpu ? s->weight : 0;
	b->totals.values[OTLP_CPU] += cpu ? s->weight : 0;
	if (info->flags & STORE_WALL)
		b->totals.values[OTLP_WALL] += cpu ? s->weight * info->cpu_period_ns : s->weight;
	if (!cpu && (info->flags & STORE_OFF_CPU))
		b->totals.values[OTLP_OFF_CPU] += s->weight;
}

/* Room for a segment's per-label and per-leaf caches, emptied. */
static int segment_scratch(struct otlp_batch *b, size_t nlabels, size_t nnodes)
{
	if (grow_array((void **)&b->seg_labels, &b->seg_labels_cap, nlabels + 1,
		       sizeof(struct seg_label)) ||
	    grow_array((void **)&b->leaf_stack, &b->leaf_cap, nnodes + 1, sizeof(*b->leaf_stack)))
		return -ENOMEM;
	memset(b->seg_labels, 0, (nlabels + 1) * sizeof(struct seg_label));
	memset(b->leaf_stack, 0xff, (nnodes + 1) * sizeof(*b->leaf_stack));
	return 0;
}

static int add_sample(struct otlp_batch *b, const struct store_labels *labels,
		      const struct store_samples *ss, size_t k, uint64_t first_ns,
		      uint64_t last_ns)
{
	const struct store_sample *s = &ss->samples[k];
	struct seg_label *sl = &b->seg_labels[s->labels];
	int32_t *stack = &b->leaf_stack[s->leaf];
	int err = 0;

	if (s->kind == SAMPLE_TASK || s->labels >= labels->n || s->leaf > ss->nnodes)
		return 0;
	if (!sl->proc)
		err = resolve_label(b, &labels->labels[s->labels], sl);
	if (!err && *stack < 0)
		err = s->leaf ? stack_of(b, ss, s->leaf, stack) : (*stack = 0, 0);
	if (!err)
		err = add_values(b, s, sl, *stack, first_ns, last_ns);
	if (!err)
		count(b, s);
	return err;
}

int otlp_batch_add(struct otlp_batch *b, const struct store_labels *labels,
		   const struct store_samples *samples, uint64_t first_ns, uint64_t last_ns)
{
	int err = b->failed;

	if (!err)
		err = segment_scratch(b, labels->n, samples->nnodes);
	for (size_t k = 0; k < samples->n && !err; k++)
		err = add_sample(b, labels, samples, k, first_ns, last_ns);
	if (err)
		b->failed = err;
	else
		b->totals.segments++;
	return err;
}

int otlp_batch_add_segment(struct otlp_batch *b, struct store_reader *r, size_t i)
{
	const struct store_segment_head *h = store_reader_head(r, i);
	struct store_labels labels;
	struct store_samples ss;
	int err = store_labels_read(r, i, &labels);

	if (err)
		return err;
	if (!(err = store_samples_read(r, i, labels.n, &ss))) {
		err = otlp_batch_add(b, &labels, &ss, h->first_ns, h->last_ns);
		if (err)
			sp_err("OTLP profiles of %s: %s", store_reader_path(r), strerror(-err));
		store_samples_free(&ss);
	}
	store_labels_free(&labels);
	return err;
}

void otlp_batch_totals(const struct otlp_batch *b, struct otlp_totals *out)
{
	*out = b->totals;
}

/* The strings, attributes and zero entries every request has. */
static int batch_fixed(struct otlp_batch *b)
{
	static const char *const keys[OTLP_KEYS] = {
		[OTLP_KEY_THREAD_NAME] = "thread.name", [OTLP_KEY_THREAD_ID] = "thread.id",
		[OTLP_KEY_STAGE] = "spark.stage.id", [OTLP_KEY_ATTEMPT] = "spark.stage.attempt",
		[OTLP_KEY_TASK] = "spark.task.id", [OTLP_KEY_STATE] = "thread.state",
		[OTLP_KEY_FRAME_TYPE] = "profile.frame.type",
	};
	int32_t zero;
	bool added;
	int err = otlp_string(b, "", &zero);
	struct otlp_attr none = { 0 };

	/* Entry 0 of each table is its zero value. */
	if (!err && !(err = dict_index(&b->attrs, &none, sizeof(none), &zero, &added)))
		err = grow_array((void **)&b->at, &b->at_cap, 1, sizeof(*b->at));
	if (!err) {
		b->at[0] = none;
		err = dict_index(&b->funcs, "", 0, &zero, &added);
	}
	if (!err && !(err = grow_array((void **)&b->fn, &b->fn_cap, 1, sizeof(*b->fn))))
		b->fn[0] = (struct otlp_func){ 0 };
	if (!err && !(err = dict_index(&b->stacks, "", 0, &zero, &added)))
		err = grow_array((void **)&b->stack_off, &b->stack_cap, 2, sizeof(*b->stack_off));
	if (!err)
		b->stack_off[0] = b->stack_off[1] = 0;
	static const char *const units[] = { "samples", "count", "wall", "off_cpu", "cpu",
					     "nanoseconds" };
	int32_t unused;

	for (int k = 0; k < OTLP_KEYS && !err; k++)
		err = otlp_string(b, keys[k], &b->keys[k]);
	/* The profiles' types: encoding then only looks them up. */
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]) && !err; i++)
		err = otlp_string(b, units[i], &unused);
	for (int t = 0; t < FRAME_TYPE_MAX && !err; t++)
		if (!(err = otlp_string(b, type_file[t], &b->type_file[t])))
			err = attribute(b, b->keys[OTLP_KEY_FRAME_TYPE], type_value[t], 0,
					&b->type_attr[t]);
	for (int s = 0; s < ROW_STATES && !err; s++)
		err = attribute(b, b->keys[OTLP_KEY_STATE], state_value[s], 0, &b->state_attr[s]);
	return err;
}

struct otlp_batch *otlp_batch_new(const struct otlp_batch_settings *settings)
{
	struct otlp_batch *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->set = *settings;
	b->pool = string_pool_new();
	b->strings.map = strmap_new();
	b->funcs.map = strmap_new();
	b->attrs.map = strmap_new();
	b->stacks.map = strmap_new();
	b->proc_index = strmap_new();
	b->frames = calloc(STORE_DEPTH_MAX, sizeof(*b->frames));
	b->locs = calloc(STORE_DEPTH_MAX, sizeof(*b->locs));
	if (!b->pool || !b->strings.map || !b->funcs.map || !b->attrs.map || !b->stacks.map ||
	    !b->proc_index || !b->frames || !b->locs || batch_fixed(b)) {
		otlp_batch_free(b);
		errno = ENOMEM;
		return NULL;
	}
	return b;
}

void otlp_batch_free(struct otlp_batch *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nprocs; i++) {
		for (int k = 0; k < OTLP_KINDS; k++) {
			strmap_free(b->procs[i]->prof[k].index, NULL);
			free(b->procs[i]->prof[k].s);
		}
		free(b->procs[i]);
	}
	free(b->procs);
	strmap_free(b->proc_index, NULL);
	strmap_free(b->strings.map, NULL);
	strmap_free(b->funcs.map, NULL);
	strmap_free(b->attrs.map, NULL);
	strmap_free(b->stacks.map, NULL);
	string_pool_free(b->pool);
	free(b->str);
	free(b->fn);
	free(b->at);
	free(b->stack_locs);
	free(b->stack_off);
	free(b->frames);
	free(b->locs);
	free(b->seg_labels);
	free(b->leaf_stack);
	free(b);
}

/* Encoding: the messages point into the batch; what they need of their
 * own comes from one scratch list, freed after packing. */

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
	Request;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary Dictionary;
typedef Opentelemetry__Proto__Profiles__V1development__ResourceProfiles ResourceProfiles;
typedef Opentelemetry__Proto__Profiles__V1development__ScopeProfiles ScopeProfiles;
typedef Opentelemetry__Proto__Profiles__V1development__Profile Profile;
typedef Opentelemetry__Proto__Profiles__V1development__ValueType ValueType;
typedef Opentelemetry__Proto__Profiles__V1development__Sample Sample;
typedef Opentelemetry__Proto__Profiles__V1development__Mapping Mapping;
typedef Opentelemetry__Proto__Profiles__V1development__Link Link;
typedef Opentelemetry__Proto__Profiles__V1development__Stack Stack;
typedef Opentelemetry__Proto__Profiles__V1development__Location Location;
typedef Opentelemetry__Proto__Profiles__V1development__Line Line;
typedef Opentelemetry__Proto__Profiles__V1development__Function Function;
typedef Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit KeyValueAndUnit;
typedef Opentelemetry__Proto__Common__V1__AnyValue AnyValue;
typedef Opentelemetry__Proto__Common__V1__KeyValue KeyValue;
typedef Opentelemetry__Proto__Common__V1__InstrumentationScope Scope;
typedef Opentelemetry__Proto__Resource__V1__Resource Resource;

/* Allocations that live until the request is packed. */
struct scratch {
	void **blocks;
	size_t n, cap;
	bool failed;
};

/* n zeroed elements of size bytes; NULL (and failed) when out of memory. */
static void *take(struct scratch *s, size_t n, size_t size)
{
	void *p;

	if (s->failed)
		return NULL;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		void **blocks = realloc(s->blocks, cap * sizeof(*blocks));

		if (!blocks) {
			s->failed = true;
			return NULL;
		}
		s->blocks = blocks;
		s->cap = cap;
	}
	if (!(p = calloc(n ? n : 1, size))) {
		s->failed = true;
		return NULL;
	}
	s->blocks[s->n++] = p;
	return p;
}

static void scratch_free(struct scratch *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->blocks[i]);
	free(s->blocks);
}

/* Pointers to each of n messages of size bytes at first. */
static void **pointers(struct scratch *s, void *first, size_t n, size_t size)
{
	void **p = take(s, n, sizeof(*p));

	for (size_t i = 0; p && i < n; i++)
		p[i] = (char *)first + i * size;
	return p;
}

static void locations(const struct otlp_batch *b, struct scratch *s, Dictionary *d)
{
	size_t n = (size_t)b->funcs.n;
	Location *loc = take(s, n, sizeof(*loc));
	Line *line = take(s, n, sizeof(*line));
	Function *fn = take(s, n, sizeof(*fn));

	if (!loc || !line || !fn)
		return;
	for (size_t i = 0; i < n; i++) {
		opentelemetry__proto__profiles__v1development__location__init(&loc[i]);
		opentelemetry__proto__profiles__v1development__line__init(&line[i]);
		opentelemetry__proto__profiles__v1development__function__init(&fn[i]);
		if (!i)
			continue;   /* the zero values */
		fn[i].name_strindex = b->fn[i].name;
		fn[i].filename_strindex = b->fn[i].file;
		line[i].function_index = (int32_t)i;
		loc[i].n_lines = 1;
		loc[i].lines = (Line **)pointers(s, &line[i], 1, sizeof(*line));
		loc[i].n_attribute_indices = 1;
		loc[i].attribute_indices = (int32_t *)&b->type_attr[b->fn[i].type];
	}
	d->n_location_table = d->n_function_table = n;
	d->location_table = (Location **)pointers(s, loc, n, sizeof(*loc));
	d->function_table = (Function **)pointers(s, fn, n, sizeof(*fn));
}

static void attributes(const struct otlp_batch *b, struct scratch *s, Dictionary *d)
{
	size_t n = (size_t)b->attrs.n;
	KeyValueAndUnit *kv = take(s, n, sizeof(*kv));
	AnyValue *v = take(s, n, sizeof(*v));

	if (!kv || !v)
		return;
	for (size_t i = 0; i < n; i++) {
		opentelemetry__proto__profiles__v1development__key_value_and_unit__init(&kv[i]);
		opentelemetry__proto__common__v1__any_value__init(&v[i]);
		if (!i)
			continue;
		kv[i].key_strindex = b->at[i].key;
		kv[i].value = &v[i];
		if (b->at[i].is_num) {
			v[i].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
			v[i].int_value = b->at[i].num;
		} else {
			v[i].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
			v[i].string_value = (char *)b->str[b->at[i].str];
		}
	}
	d->n_attribute_table = n;
	d->attribute_table = (KeyValueAndUnit **)pointers(s, kv, n, sizeof(*kv));
}

static void stacks(const struct otlp_batch *b, struct scratch *s, Dictionary *d)
{
	size_t n = (size_t)b->stacks.n;
	Stack *st = take(s, n, sizeof(*st));

	if (!st)
		return;
	for (size_t i = 0; i < n; i++) {
		opentelemetry__proto__profiles__v1development__stack__init(&st[i]);
		st[i].n_location_indices = b->stack_off[i + 1] - b->stack_off[i];
		st[i].location_indices = b->stack_locs + b->stack_off[i];
	}
	d->n_stack_table = n;
	d->stack_table = (Stack **)pointers(s, st, n, sizeof(*st));
}

/* The tables' zero entries that sparkprof never references. */
static void unused_tables(struct scratch *s, Dictionary *d)
{
	static uint8_t zeros[16];
	Mapping *m = take(s, 1, sizeof(*m));
	Link *l = take(s, 1, sizeof(*l));

	if (!m || !l)
		return;
	opentelemetry__proto__profiles__v1development__mapping__init(m);
	opentelemetry__proto__profiles__v1development__link__init(l);
	/* Zero ids of their full length, as the proto advises for codecs that
	 * check lengths. */
	l->trace_id = (ProtobufCBinaryData){ 16, zeros };
	l->span_id = (ProtobufCBinaryData){ 8, zeros };
	d->n_mapping_table = d->n_link_table = 1;
	d->mapping_table = (Mapping **)pointers(s, m, 1, sizeof(*m));
	d->link_table = (Link **)pointers(s, l, 1, sizeof(*l));
}

static Dictionary *dictionary(const struct otlp_batch *b, struct scratch *s)
{
	Dictionary *d = take(s, 1, sizeof(*d));

	if (!d)
		return NULL;
	opentelemetry__proto__profiles__v1development__profiles_dictionary__init(d);
	d->n_string_table = (size_t)b->strings.n;
	d->string_table = (char **)b->str;
	locations(b, s, d);
	attributes(b, s, d);
	stacks(b, s, d);
	unused_tables(s, d);
	return d;
}

/* Resource attributes: the KeyValues of keys[i] = values[i]; a value
 * starting with '#' is the integer after it. */
static void resource_attrs(struct scratch *s, Resource *r, const char *const *keys,
			   const char *const *values, size_t n)
{
	KeyValue *kv = take(s, n, sizeof(*kv));
	AnyValue *v = take(s, n, sizeof(*v));
	size_t used = 0;

	if (!kv || !v)
		return;
	for (size_t i = 0; i < n; i++) {
		if (!values[i] || !*values[i])
			continue;
		opentelemetry__proto__common__v1__key_value__init(&kv[used]);
		opentelemetry__proto__common__v1__any_value__init(&v[used]);
		kv[used].key = (char *)keys[i];
		kv[used].value = &v[used];
		if (values[i][0] == '#') {
			v[used].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
			v[used].int_value = strtoll(values[i] + 1, NULL, 10);
		} else {
			v[used].value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
			v[used].string_value = (char *)values[i];
		}
		used++;
	}
	r->n_attributes = used;
	r->attributes = (KeyValue **)pointers(s, kv, used, sizeof(*kv));
}

static Resource *resource(const struct otlp_batch *b, const struct otlp_process *p,
			  struct scratch *s)
{
	static const char *const keys[] = {
		"host.name", "process.pid", "process.executable.name", "spark.app.id",
		"spark.executor.id", "container.id", "k8s.pod.name", "k8s.pod.uid",
		"k8s.namespace.name", "k8s.node.name",
	};
	Resource *r = take(s, 1, sizeof(*r));
	char *pid = take(s, 16, 1);
	const char *values[] = {
		b->set.info->host, pid, p->exe, p->app, p->executor, p->extra.container_id,
		p->extra.k8s_pod_name, p->extra.k8s_pod_uid, p->extra.k8s_namespace_name,
		p->extra.k8s_node_name,
	};

	if (!r || !pid)
		return NULL;
	opentelemetry__proto__resource__v1__resource__init(r);
	snprintf(pid, 16, "#%d", p->pid);
	resource_attrs(s, r, keys, values, sizeof(keys) / sizeof(keys[0]));
	return r;
}

static ValueType *value_type(struct otlp_batch *b, struct scratch *s, const char *type,
			     const char *unit)
{
	ValueType *vt = take(s, 1, sizeof(*vt));

	if (!vt)
		return NULL;
	opentelemetry__proto__profiles__v1development__value_type__init(vt);
	/* Added by otlp_batch_new: found, never added here. */
	if (otlp_string(b, type, &vt->type_strindex) || otlp_string(b, unit, &vt->unit_strindex))
		s->failed = true;
	return vt;
}

static uint64_t unix_ns(const struct store_info *info, uint64_t mono_ns)
{
	return info->start_realtime_ns + (mono_ns - info->start_monotonic_ns);
}

static Profile *profile(struct otlp_batch *b, const struct otlp_profile *p, int kind,
			struct scratch *s)
{
	static const char *const types[OTLP_KINDS][2] = {
		{ "samples", "count" }, { "wall", "nanoseconds" }, { "off_cpu", "nanoseconds" },
	};
	Profile *pr = take(s, 1, sizeof(*pr));
	Sample *sm = take(s, p->n, sizeof(*sm));

	if (!pr || !sm)
		return NULL;
	opentelemetry__proto__profiles__v1development__profile__init(pr);
	pr->sample_type = value_type(b, s, types[kind][0], types[kind][1]);
	for (size_t i = 0; i < p->n; i++) {
		opentelemetry__proto__profiles__v1development__sample__init(&sm[i]);
		sm[i].stack_index = p->s[i].key.stack;
		sm[i].n_attribute_indices = (size_t)p->s[i].key.nattrs;
		sm[i].attribute_indices = (int32_t *)p->s[i].key.attrs;
		sm[i].n_values = 1;
		sm[i].values = (int64_t *)&p->s[i].value;
	}
	pr->n_samples = p->n;
	pr->samples = (Sample **)pointers(s, sm, p->n, sizeof(*sm));
	pr->time_unix_nano = unix_ns(b->set.info, p->first_ns);
	pr->duration_nano = p->last_ns - p->first_ns;
	if (kind == OTLP_CPU) {
		pr->period_type = value_type(b, s, "cpu", "nanoseconds");
		pr->period = (int64_t)b->set.info->cpu_period_ns;
	}
	return pr;
}

static ResourceProfiles *resource_profiles(struct otlp_batch *b, const struct otlp_process *p,
					   struct scratch *s)
{
	ResourceProfiles *rp = take(s, 1, sizeof(*rp));
	ScopeProfiles *sp = take(s, 1, sizeof(*sp));
	Scope *scope = take(s, 1, sizeof(*scope));
	Profile **prof = take(s, OTLP_KINDS, sizeof(*prof));

	if (!rp || !sp || !scope || !prof)
		return NULL;
	opentelemetry__proto__profiles__v1development__resource_profiles__init(rp);
	opentelemetry__proto__profiles__v1development__scope_profiles__init(sp);
	opentelemetry__proto__common__v1__instrumentation_scope__init(scope);
	scope->name = "sparkprof";
	scope->version = SPARKPROF_VERSION;
	sp->scope = scope;
	for (int k = 0; k < OTLP_KINDS; k++)
		if (p->prof[k].n)
			prof[sp->n_profiles++] = profile(b, &p->prof[k], k, s);
	sp->profiles = prof;
	rp->resource = resource(b, p, s);
	rp->n_scope_profiles = 1;
	rp->scope_profiles = (ScopeProfiles **)pointers(s, sp, 1, sizeof(*sp));
	return rp;
}

static int pack(const Request *req, uint8_t **out, size_t *len)
{
	*len = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__get_packed_size(req);
	if (!(*out = malloc(*len ? *len : 1)))
		return -ENOMEM;
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__pack(req, *out);
	return 0;
}

int otlp_batch_encode(const struct otlp_batch *cb, uint8_t **out, size_t *len)
{
	/* Lookups of strings added at creation only: the batch is unchanged. */
	struct otlp_batch *b = (struct otlp_batch *)cb;
	struct scratch s = { 0 };
	Request req;
	ResourceProfiles **rps = take(&s, b->nprocs, sizeof(*rps));
	int err;

	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__init(&req);
	for (size_t i = 0; rps && i < b->nprocs; i++)
		rps[req.n_resource_profiles++] = resource_profiles(b, b->procs[i], &s);
	req.resource_profiles = rps;
	req.dictionary = dictionary(b, &s);
	err = s.failed || b->failed ? -ENOMEM : pack(&req, out, len);
	scratch_free(&s);
	return err;
}

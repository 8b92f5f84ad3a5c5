/* jfr_chunk.c - see jfr_chunk.h.  Layouts: docs/jfr.md. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/jfr/jfr_buf.h"
#include "output/jfr/jfr_chunk.h"
#include "output/jfr/jfr_map.h"
#include "output/jfr/jfr_metadata.h"
#include "output/jfr/jfr_names.h"
#include "output/jfr/jfr_pool.h"
#include "output/jfr/jfr_types.h"
#include "sparkprof_events.h"

/* Pools in the order they go into the constant-pool event. */
enum { POOL_THREAD, POOL_STACK, POOL_METHOD, POOL_CLASS, POOL_SYMBOL, NPOOLS };
static const uint64_t pool_types[NPOOLS] = {
	JFR_TYPE_THREAD, JFR_TYPE_STACK_TRACE, JFR_TYPE_METHOD, JFR_TYPE_CLASS,
	JFR_TYPE_SYMBOL,
};

/* Thread pool keys are OS tids (the converter shows them as tid=); tid 0
 * (the idle task) cannot use key 0, which means null. */
#define TID0_KEY 0x3fffffffu

#define ACC_PUBLIC 0x1
#define ACC_NATIVE 0x100

static const char *const frame_type_names[JFR_FRAME_TYPE_COUNT] = {
	[JFR_FRAME_INTERPRETED] = "Interpreted",
	[JFR_FRAME_JIT] = "JIT compiled",
	[JFR_FRAME_INLINED] = "Inlined",
	[JFR_FRAME_NATIVE] = "Native",
	[JFR_FRAME_CPP] = "C++",
	[JFR_FRAME_KERNEL] = "Kernel",
	[JFR_FRAME_PYTHON] = "Python",
};

static const char *const thread_state_names[JFR_STATE_COUNT] = {
	[JFR_STATE_DEFAULT] = "STATE_DEFAULT",
	[JFR_STATE_RUNNABLE] = "STATE_RUNNABLE",
	[JFR_STATE_PREEMPTED] = "STATE_PREEMPTED",
	[JFR_STATE_SLEEPING] = "STATE_SLEEPING",
	[JFR_STATE_UNINTERRUPTIBLE] = "STATE_UNINTERRUPTIBLE",
	[JFR_STATE_OTHER] = "STATE_OTHER",
};

static const uint8_t frame_type_key[FRAME_TYPE_MAX] = {
	[FRAME_NATIVE] = JFR_FRAME_NATIVE,
	[FRAME_CPP] = JFR_FRAME_CPP,
	[FRAME_KERNEL] = JFR_FRAME_KERNEL,
	[FRAME_JIT] = JFR_FRAME_JIT,
	[FRAME_INLINED] = JFR_FRAME_INLINED,
	[FRAME_INTERPRETED] = JFR_FRAME_INTERPRETED,
	[FRAME_PYTHON] = JFR_FRAME_PYTHON,
};

struct jfr_chunk {
	struct jfr_pool *pools[NPOOLS];
	struct jfr_map frame_methods;  /* (name pointer, type) -> method key */
	struct jfr_buf events;
	struct jfr_buf scratch;        /* a pool value being built */
	struct jfr_buf text;           /* a sanitized name */
	struct jfr_buf stack;          /* the stack value being built */
	struct jfr_buf tail;           /* constant-pool + metadata events */
	struct jfr_buf header, meta;   /* kept: writing a chunk allocates nothing */
	uint64_t start_ticks, end_ticks;
	uint64_t nevents, ntruncated;
};

struct jfr_chunk *jfr_chunk_new(void)
{
	struct jfr_chunk *c = calloc(1, sizeof(*c));

	if (!c)
		goto fail;
	for (int i = 0; i < NPOOLS; i++)
		if (!(c->pools[i] = jfr_pool_new(pool_types[i])))
			goto fail;
	jfr_map_init(&c->frame_methods);
	jfr_buf_init(&c->events);
	jfr_buf_init(&c->scratch);
	jfr_buf_init(&c->text);
	jfr_buf_init(&c->stack);
	jfr_buf_init(&c->tail);
	jfr_buf_init(&c->header);
	jfr_buf_init(&c->meta);
	return c;
fail:
	jfr_chunk_free(c);
	errno = ENOMEM;
	return NULL;
}

void jfr_chunk_free(struct jfr_chunk *c)
{
	if (!c)
		return;
	for (int i = 0; i < NPOOLS; i++)
		jfr_pool_free(c->pools[i]);
	jfr_map_free(&c->frame_methods);
	jfr_buf_free(&c->events);
	jfr_buf_free(&c->scratch);
	jfr_buf_free(&c->text);
	jfr_buf_free(&c->stack);
	jfr_buf_free(&c->tail);
	jfr_buf_free(&c->header);
	jfr_buf_free(&c->meta);
	free(c);
}

void jfr_chunk_begin(struct jfr_chunk *c, uint64_t start_ticks)
{
	for (int i = 0; i < NPOOLS; i++)
		jfr_pool_reset(c->pools[i]);
	jfr_map_clear(&c->frame_methods);
	jfr_buf_clear(&c->events);
	c->events.failed = false;
	c->scratch.failed = c->text.failed = c->stack.failed = c->tail.failed = false;
	c->start_ticks = c->end_ticks = start_ticks;
	c->nevents = 0;
	c->ntruncated = 0;
}

/* What an empty chunk keeps for reuse: freed, or (keep) left allocated
 * with its pages handed back. */
static void drop_memory(struct jfr_chunk *c, bool keep)
{
	struct jfr_buf *bufs[] = { &c->events, &c->scratch, &c->text, &c->stack,
				   &c->tail,   &c->header,  &c->meta };

	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++) {
		if (keep)
			jfr_buf_release(bufs[i]);
		else
			jfr_buf_free(bufs[i]);
	}
	if (keep)
		jfr_map_release(&c->frame_methods);
	else
		jfr_map_free(&c->frame_methods);
	for (int i = 0; i < NPOOLS; i++) {
		if (keep)
			jfr_pool_release(c->pools[i]);
		else
			jfr_pool_trim(c->pools[i]);
	}
}

void jfr_chunk_trim(struct jfr_chunk *c)
{
	drop_memory(c, false);
}

void jfr_chunk_release(struct jfr_chunk *c)
{
	drop_memory(c, true);
}

int jfr_chunk_check_sample(const struct jfr_sample *s)
{
	if (s->weight == 0 || s->nframes < 0 || (s->nframes && !s->frames))
		return -EINVAL;
	if (s->kind == JFR_SAMPLE_CPU) {
		if (s->weight > JFR_MAX_CPU_WEIGHT)
			return -EINVAL;
	} else if (s->kind == JFR_SAMPLE_WALL) {
		/* samples is a Java int in every reader. */
		if (s->weight > INT32_MAX ||
		    s->thread_state < SP_STATE_RUNNING || s->thread_state > SP_STATE_OTHER)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	for (int i = 0; i < s->nframes && i < JFR_MAX_FRAMES; i++)
		if ((unsigned)s->frames[i].type >= FRAME_TYPE_MAX)
			return -EINVAL;
	return 0;
}

static uint64_t wall_state_key(int state)
{
	switch (state) {
	case SP_STATE_RUNNING:
		return JFR_STATE_RUNNABLE;
	case SP_STATE_PREEMPTED:
		return JFR_STATE_PREEMPTED;
	case SP_STATE_SLEEPING:
		return JFR_STATE_SLEEPING;
	case SP_STATE_UNINTERRUPTIBLE:
		return JFR_STATE_UNINTERRUPTIBLE;
	default:
		return JFR_STATE_OTHER;
	}
}

/* Interns a symbol: UTF-8 (encoding 3, which the converter requires),
 * never empty (the JDK misreads an empty UTF-8 string). */
static uint64_t intern_symbol(struct jfr_chunk *c, const char *s, size_t len)
{
	struct jfr_buf *v = &c->scratch;

	jfr_buf_clear(&c->text);
	jfr_utf8_append(&c->text, s, len);
	if (!c->text.len)
		jfr_buf_put(&c->text, "[unknown]", 9);
	jfr_buf_clear(v);
	jfr_buf_u8(v, JFR_STR_UTF8);
	jfr_buf_varint(v, c->text.len);
	jfr_buf_put(v, c->text.data, c->text.len);
	if (v->failed || c->text.failed)
		return 0;
	return jfr_pool_intern(c->pools[POOL_SYMBOL], v->data, v->len, 0);
}

static uint64_t intern_class(struct jfr_chunk *c, const char *name, size_t len,
			     int modifiers)
{
	uint64_t sym = intern_symbol(c, name, len);
	struct jfr_buf *v = &c->scratch;

	if (!sym)
		return 0;
	jfr_buf_clear(v);
	jfr_buf_varint(v, 0);            /* class loader: none */
	jfr_buf_varint(v, sym);
	jfr_buf_varint(v, 0);            /* package: derived by readers */
	jfr_buf_varint32(v, modifiers);
	if (v->failed)
		return 0;
	return jfr_pool_intern(c->pools[POOL_CLASS], v->data, v->len, 0);
}

/* The method of a frame: Java names split into class and method, Python
 * names into file (the class) and function; native, C++ and kernel frames
 * get a pseudo-class (never empty, see docs/jfr.md), which the converter
 * leaves out of its frame names. */
static uint64_t intern_method(struct jfr_chunk *c, const struct frame *f)
{
	const char *name = f->name ? f->name : "";
	size_t len = strlen(name);
	uint64_t cls, sym, desc;
	const char *method = name, *descriptor = "()L;";
	size_t method_len = len;
	int modifiers = ACC_NATIVE;
	struct jfr_buf *v = &c->scratch;
	struct jfr_python_name pn;

	if (frame_type_is_java(f->type)) {
		struct jfr_java_name jn;

		jfr_split_java_name(name, len, &jn);
		if (jn.has_class)
			cls = intern_class(c, jn.cls, jn.cls_len, ACC_PUBLIC);
		else
			cls = intern_class(c, "unknown", 7, ACC_PUBLIC);
		method = jn.method;
		method_len = jn.method_len;
		modifiers = ACC_PUBLIC;
	} else if (f->type == FRAME_PYTHON && jfr_split_python_name(name, len, &pn)) {
		cls = intern_class(c, pn.file, pn.file_len, ACC_PUBLIC);
		method = pn.function;
		method_len = pn.function_len;
		modifiers = ACC_PUBLIC;
	} else if (f->type == FRAME_KERNEL) {
		cls = intern_class(c, "kernel", 6, 0);
		descriptor = "(Lk;)L;";   /* async-profiler's kernel marker */
	} else if (f->type == FRAME_CPP) {
		cls = intern_class(c, "libjvm.so", 9, 0);
	} else {
		cls = intern_class(c, "native", 6, 0);
	}
	sym = cls ? intern_symbol(c, method, method_len) : 0;
	desc = sym ? intern_symbol(c, descriptor, strlen(descriptor)) : 0;
	if (!desc)
		return 0;
	jfr_buf_clear(v);
	jfr_buf_varint(v, cls);
	jfr_buf_varint(v, sym);
	jfr_buf_varint(v, desc);
	jfr_buf_varint32(v, modifiers);
	jfr_buf_u8(v, 0);                /* hidden */
	if (v->failed)
		return 0;
	return jfr_pool_intern(c->pools[POOL_METHOD], v->data, v->len, 0);
}

static uint64_t frame_method(struct jfr_chunk *c, const struct frame *f)
{
	/* User-space pointers fit in 60 bits on every 64-bit Linux. */
	uint64_t key = ((uint64_t)(uintptr_t)f->name << 4 | (unsigned)f->type) + 1;
	uint64_t method = jfr_map_get(&c->frame_methods, key);

	if (method)
		return method;
	method = intern_method(c, f);
	if (method && jfr_map_put(&c->frame_methods, key, method))
		return 0;
	return method;
}

/* A Python frame's line; 0 (unknown) for every other frame. */
static uint32_t frame_line(const struct frame *f)
{
	struct jfr_python_name pn;

	if (f->type != FRAME_PYTHON || !f->name ||
	    !jfr_split_python_name(f->name, strlen(f->name), &pn))
		return 0;
	return pn.line;
}

/* A stack's value into c->stack: the leaf-most JFR_MAX_FRAMES of its
 * nframes frames.  false when out of memory. */
static bool encode_frames(struct jfr_chunk *c, const struct frame *frames, int nframes)
{
	int n = nframes > JFR_MAX_FRAMES ? JFR_MAX_FRAMES : nframes;
	struct jfr_buf *v = &c->stack;

	jfr_buf_clear(v);
	jfr_buf_u8(v, nframes > n);      /* truncated */
	jfr_buf_varint(v, n);
	for (int i = 0; i < n; i++) {
		uint64_t method = frame_method(c, &frames[i]);

		if (!method)
			return false;
		jfr_buf_varint(v, method);
		jfr_buf_varint(v, frame_line(&frames[i]));
		jfr_buf_varint(v, 0);    /* bytecode index: unknown */
		jfr_buf_varint(v, frame_type_key[frames[i].type]);
	}
	return !v->failed;
}

static uint64_t intern_stack(struct jfr_chunk *c, const struct jfr_sample *s)
{
	if (s->nframes > JFR_MAX_FRAMES)
		c->ntruncated++;
	if (!encode_frames(c, s->frames, s->nframes))
		return 0;
	return jfr_pool_intern(c->pools[POOL_STACK], c->stack.data, c->stack.len, 0);
}

static uint64_t intern_thread(struct jfr_chunk *c, const struct jfr_sample *s)
{
	const char *name = s->thread_name ? s->thread_name : "";
	size_t len = strlen(name);
	struct jfr_buf *v = &c->scratch;

	jfr_buf_clear(&c->text);
	jfr_utf8_append(&c->text, name, len);
	jfr_buf_clear(v);
	jfr_buf_string(v, c->text.len ? (const char *)c->text.data : "",
		       c->text.len);     /* osName */
	jfr_buf_varint(v, s->os_tid);
	/* No Java thread id is known: javaName null and javaThreadId 0 make
	 * every reader show osName. */
	jfr_buf_u8(v, JFR_STR_NULL);
	jfr_buf_varint(v, 0);
	if (v->failed || c->text.failed)
		return 0;
	return jfr_pool_intern(c->pools[POOL_THREAD], v->data, v->len,
			       s->os_tid ? s->os_tid : TID0_KEY);
}

int jfr_chunk_add_sample(struct jfr_chunk *c, const struct jfr_sample *s)
{
	uint8_t ev[8 * JFR_VARINT_MAX], *p;
	uint64_t thread, stack, ticks = s->timestamp_ns;
	size_t payload;

	thread = intern_thread(c, s);
	stack = thread ? intern_stack(c, s) : 0;
	if (!stack)
		return -ENOMEM;

	p = ev + JFR_VARINT_MAX;         /* room for the size in front */
	if (s->kind == JFR_SAMPLE_CPU) {
		p += jfr_varint_encode(p, JFR_EVENT_EXECUTION_SAMPLE);
		p += jfr_varint_encode(p, ticks);
		p += jfr_varint_encode(p, thread);
		p += jfr_varint_encode(p, stack);
		p += jfr_varint_encode(p, JFR_STATE_DEFAULT);
	} else {
		p += jfr_varint_encode(p, JFR_EVENT_WALL_CLOCK_SAMPLE);
		p += jfr_varint_encode(p, ticks);
		p += jfr_varint_encode(p, thread);
		p += jfr_varint_encode(p, stack);
		p += jfr_varint_encode(p, wall_state_key(s->thread_state));
		p += jfr_varint_encode(p, (uint32_t)s->weight);
	}
	payload = p - (ev + JFR_VARINT_MAX);
	{
		uint8_t size[JFR_VARINT_MAX];
		size_t nsize = jfr_varint_encode(size, jfr_event_size(payload));
		uint8_t *start = ev + JFR_VARINT_MAX - nsize;
		uint64_t copies = s->kind == JFR_SAMPLE_CPU ? s->weight : 1;

		memcpy(start, size, nsize);
		for (uint64_t i = 0; i < copies; i++)
			jfr_buf_put(&c->events, start, p - start);
		if (c->events.failed)
			return -ENOMEM;
		c->nevents += copies;
	}
	if (ticks < c->start_ticks)
		c->start_ticks = ticks;
	if (ticks > c->end_ticks)
		c->end_ticks = ticks;
	return 0;
}

size_t jfr_chunk_bytes(const struct jfr_chunk *c)
{
	size_t n = JFR_HEADER_BYTES + c->events.len;

	for (int i = 0; i < NPOOLS; i++)
		n += jfr_pool_entries(c->pools[i])->len;
	return n;
}

size_t jfr_chunk_memory(const struct jfr_chunk *c)
{
	size_t n = sizeof(*c) + c->events.cap + c->scratch.cap + c->text.cap +
		   c->stack.cap + c->tail.cap + c->header.cap + c->meta.cap +
		   jfr_map_memory(&c->frame_methods);

	for (int i = 0; i < NPOOLS; i++)
		n += jfr_pool_memory(c->pools[i]);
	return n;
}

uint64_t jfr_chunk_events(const struct jfr_chunk *c)
{
	return c->nevents;
}

uint64_t jfr_chunk_truncated(const struct jfr_chunk *c)
{
	return c->ntruncated;
}

/* An inline string that came from outside: written as valid UTF-8. */
static void put_text(struct jfr_chunk *c, struct jfr_buf *b, const char *s)
{
	if (!s) {
		jfr_buf_u8(b, JFR_STR_NULL);
		return;
	}
	jfr_buf_clear(&c->text);
	jfr_utf8_append(&c->text, s, strlen(s));
	jfr_buf_string(b, c->text.len ? (const char *)c->text.data : "", c->text.len);
}

/* Appends an event whose payload (type id first) is in c->scratch. */
static void put_event(struct jfr_buf *b, const struct jfr_buf *payload)
{
	jfr_buf_varint(b, jfr_event_size(payload->len));
	jfr_buf_put(b, payload->data, payload->len);
}

static uint64_t realtime_of(const struct jfr_chunk_context *ctx, uint64_t ticks)
{
	/* Ticks are monotonic ns: one linear clock for every chunk. */
	return ctx->start_realtime_ns + (ticks - ctx->start_monotonic_ns);
}

static void put_setting(struct jfr_chunk *c, uint64_t duration, uint64_t event_id,
			const char *name, const char *value)
{
	struct jfr_buf *v = &c->scratch;

	jfr_buf_clear(v);
	jfr_buf_varint(v, JFR_EVENT_ACTIVE_SETTING);
	jfr_buf_varint(v, c->start_ticks);
	jfr_buf_varint(v, duration);
	/* JMC requires the id of an event type declared in the chunk. */
	jfr_buf_varint(v, event_id);
	put_text(c, v, name);
	put_text(c, v, value);
	put_event(&c->events, v);
}

/* The events every chunk carries: what the file is and how it was made. */
static void put_chunk_events(struct jfr_chunk *c, const struct jfr_chunk_context *ctx)
{
	uint64_t duration = c->end_ticks - c->start_ticks;
	uint64_t rec_start_ms = ctx->start_realtime_ns / 1000000;
	uint64_t rec_ms = c->end_ticks > ctx->start_monotonic_ns ?
			  (c->end_ticks - ctx->start_monotonic_ns) / 1000000 : 0;
	struct jfr_buf *v = &c->scratch;
	char num[32];

	for (size_t i = 0; i < ctx->nlabels; i++) {
		jfr_buf_clear(v);
		jfr_buf_varint(v, JFR_EVENT_PROFILE_LABEL);
		jfr_buf_varint(v, c->start_ticks);
		jfr_buf_varint(v, duration);
		put_text(c, v, ctx->labels[i].key);
		put_text(c, v, ctx->labels[i].value);
		put_event(&c->events, v);
	}

	jfr_buf_clear(v);
	jfr_buf_varint(v, JFR_EVENT_ACTIVE_RECORDING);
	jfr_buf_varint(v, c->start_ticks);
	jfr_buf_varint(v, duration);
	jfr_buf_varint(v, 1);                 /* id */
	put_text(c, v, "sparkprof");
	put_text(c, v, ctx->destination);
	jfr_buf_varint(v, 0);                 /* maxAge: none */
	jfr_buf_varint(v, 0);                 /* maxSize: none */
	jfr_buf_varint(v, rec_start_ms);
	jfr_buf_varint(v, rec_ms);
	put_event(&c->events, v);

	/* async-profiler's converter reads "interval" and "wall" (ns). */
	snprintf(num, sizeof(num), "%llu", (unsigned long long)ctx->cpu_interval_ns);
	put_setting(c, duration, JFR_EVENT_EXECUTION_SAMPLE, "interval", num);
	if (ctx->wall_interval_ns) {
		snprintf(num, sizeof(num), "%llu", (unsigned long long)ctx->wall_interval_ns);
		put_setting(c, duration, JFR_EVENT_WALL_CLOCK_SAMPLE, "wall", num);
	}
	for (size_t i = 0; i < ctx->nlabels; i++)
		put_setting(c, duration, JFR_EVENT_PROFILE_LABEL, ctx->labels[i].key,
			    ctx->labels[i].value);
}

/* The constant-pool event: one event (delta 0 ends the chain) with every
 * non-empty pool (the JDK rejects empty ones).  Its head, with the two fixed
 * enum pools, is built into c->tail; the pools' entries are written straight
 * from the pools.  Returns the event's total length. */
static size_t build_cp_head(struct jfr_chunk *c)
{
	struct jfr_buf *head = &c->tail, *v = &c->scratch;
	size_t body, npools = 2;

	/* FrameType and ThreadState are always present (the converter needs
	 * FrameType key 5 to treat key 3 as a C frame). */
	jfr_buf_clear(v);
	jfr_buf_varint(v, JFR_TYPE_FRAME_TYPE);
	jfr_buf_varint(v, JFR_FRAME_TYPE_COUNT);
	for (int k = 0; k < JFR_FRAME_TYPE_COUNT; k++) {
		jfr_buf_varint(v, k);
		jfr_buf_cstring(v, frame_type_names[k]);
	}
	jfr_buf_varint(v, JFR_TYPE_THREAD_STATE);
	jfr_buf_varint(v, JFR_STATE_COUNT);
	for (int k = 0; k < JFR_STATE_COUNT; k++) {
		jfr_buf_varint(v, k);
		jfr_buf_cstring(v, thread_state_names[k]);
	}
	body = v->len;
	for (int i = 0; i < NPOOLS; i++) {
		size_t n = jfr_pool_count(c->pools[i]);

		if (!n)
			continue;
		npools++;
		body += jfr_varint_len(pool_types[i]) + jfr_varint_len(n) +
			jfr_pool_entries(c->pools[i])->len;
	}
	body += jfr_varint_len(JFR_TYPE_CONSTANT_POOL) + jfr_varint_len(c->start_ticks) +
		jfr_varint_len(0) + jfr_varint_len(0) + 1 + jfr_varint_len(npools);

	jfr_buf_clear(head);
	jfr_buf_varint(head, jfr_event_size(body));
	jfr_buf_varint(head, JFR_TYPE_CONSTANT_POOL);
	jfr_buf_varint(head, c->start_ticks);
	jfr_buf_varint(head, 0);          /* duration */
	jfr_buf_varint(head, 0);          /* delta to the next CP event: none */
	jfr_buf_u8(head, 0);              /* flags */
	jfr_buf_varint(head, npools);
	jfr_buf_put(head, v->data, v->len);
	return jfr_event_size(body);
}

static int write_cp_pools(struct jfr_chunk *c, struct jfr_out *out)
{
	int ret;

	for (int i = 0; i < NPOOLS; i++) {
		const struct jfr_buf *e = jfr_pool_entries(c->pools[i]);
		size_t n = jfr_pool_count(c->pools[i]);
		uint8_t head[2 * JFR_VARINT_MAX];
		size_t len;

		if (!n)
			continue;
		len = jfr_varint_encode(head, pool_types[i]);
		len += jfr_varint_encode(head + len, n);
		if ((ret = jfr_out_write(out, head, len)) ||
		    (ret = jfr_out_write(out, e->data, e->len)))
			return ret;
	}
	return 0;
}

long long jfr_chunk_write(struct jfr_chunk *c, struct jfr_out *out,
			  const struct jfr_chunk_context *ctx, bool final)
{
	struct jfr_buf *header = &c->header, *meta = &c->meta;
	uint64_t cp_offset, meta_offset, size;
	size_t cp_len;
	int ret;

	put_chunk_events(c, ctx);
	cp_len = build_cp_head(c);
	jfr_buf_clear(meta);
	meta->failed = header->failed = false;
	jfr_metadata_event(meta, ctx->metadata_body, c->start_ticks);
	if (c->events.failed || c->scratch.failed || c->text.failed || c->tail.failed ||
	    meta->failed) {
		ret = -ENOMEM;
		goto out;
	}

	/* Events first, then the constant pools, then the metadata: a reader
	 * finds both through the header. */
	cp_offset = JFR_HEADER_BYTES + c->events.len;
	meta_offset = cp_offset + cp_len;
	size = meta_offset + meta->len;

	jfr_buf_clear(header);
	jfr_buf_put(header, "FLR", 4);               /* magic, with its NUL */
	jfr_buf_be16(header, 2);                     /* major */
	jfr_buf_be16(header, 1);                     /* minor */
	jfr_buf_be64(header, size);
	jfr_buf_be64(header, cp_offset);
	jfr_buf_be64(header, meta_offset);
	jfr_buf_be64(header, realtime_of(ctx, c->start_ticks));
	jfr_buf_be64(header, c->end_ticks - c->start_ticks);
	jfr_buf_be64(header, c->start_ticks);
	jfr_buf_be64(header, 1000000000);            /* ticks per second */
	jfr_buf_u8(header, 0);                       /* file state: finished */
	jfr_buf_u8(header, 0);
	/* bit 0: compressed integers (JMC reads fixed-width ints without it);
	 * bit 1: final chunk. */
	jfr_buf_be16(header, final ? 3 : 1);
	if (header->failed) {
		ret = -ENOMEM;
		goto out;
	}
	ret = jfr_out_write(out, header->data, header->len);
	if (ret || (ret = jfr_out_write(out, c->events.data, c->events.len)) ||
	    (ret = jfr_out_write(out, c->tail.data, c->tail.len)) ||
	    (ret = write_cp_pools(c, out)) ||
	    (ret = jfr_out_write(out, meta->data, meta->len)))
		goto out;
out:
	/* Chunk start times stay distinct, even after an empty chunk: JMC
	 * keeps one chunk per start time. */
	jfr_chunk_begin(c, c->end_ticks + 1);
	return ret ? ret : (long long)size;
}

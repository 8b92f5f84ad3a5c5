/* stack_resolver.c - see stack_resolver.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/spill_file.h"
#include "sparkprof_events.h"
#include "symbols/addr_cache.h"
#include "symbols/binary_cache.h"
#include "symbols/kallsyms.h"
#include "symbols/proc_symbolizer.h"
#include "symbols/stack_resolver.h"

/* What naming one user frame found, counted in the stats: a memoized
 * frame counts again without copying the stats around it. */
enum frame_outcome {
	USER_NAMED,
	USER_UNKNOWN,
	JIT_NAMED,
	JIT_UNKNOWN,
	METHOD_NAMED,
	METHOD_UNKNOWN,
	PYTHON_NAMED,
	PYTHON_UNKNOWN,
};

/* User frames already named in the stack being resolved: a recursion
 * repeats its frames, and a deep stack is mostly recursion. */
#define FRAME_MEMO_SLOTS 64
struct frame_memo {
	uint64_t addr;          /* the walked value: an address or a tagged Method* */
	uint32_t stack;         /* which resolve call filled it */
	uint32_t start;         /* its frames in that call's output */
	uint16_t count;
	uint8_t outcome;        /* enum frame_outcome */
};

struct stack_resolver {
	struct kallsyms_loader *loading;   /* our own table, until the first kernel frame */
	const struct kallsyms *kallsyms;
	struct kallsyms *own_kallsyms;     /* NULL when shared */
	struct spill_file *names_file;     /* NULL: symbol names stay in memory */
	struct binary_cache *binaries;
	struct addr_cache kernel_names; /* each kernel address looked up once */
	struct stack_resolver_stats stats;
	struct frame_memo memo[FRAME_MEMO_SLOTS];
	uint32_t stacks;                   /* resolve calls, for memo entries */
};

/* Most kernel addresses remembered (24 bytes each). */
#define KERNEL_NAMES_MAX 65536

struct stack_resolver *stack_resolver_new_sharing(const struct kallsyms *kernel)
{
	struct stack_resolver *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->kallsyms = kernel;
	addr_cache_init(&r->kernel_names, KERNEL_NAMES_MAX);
	r->binaries = binary_cache_new();
	if (!r->binaries) {
		free(r);
		return NULL;
	}
	return r;
}

struct stack_resolver *stack_resolver_new(void)
{
	struct kallsyms_loader *loading = kallsyms_load_start("/proc/kallsyms"); /* says why */
	struct stack_resolver *r;

	if (!loading)
		return NULL;
	r = stack_resolver_new_sharing(NULL);
	if (!r) {
		kallsyms_free(kallsyms_load_wait(loading));
		return NULL;
	}
	r->loading = loading;
	return r;
}

void stack_resolver_free(struct stack_resolver *r)
{
	if (!r)
		return;
	if (r->loading)
		r->own_kallsyms = kallsyms_load_wait(r->loading);
	kallsyms_free(r->own_kallsyms);
	binary_cache_free(r->binaries);
	spill_file_free(r->names_file);
	addr_cache_release(&r->kernel_names);
	free(r);
}

bool stack_resolver_kernel_ready(const struct stack_resolver *r)
{
	return kallsyms_load_done(r->loading);
}

/* Our own kernel table's names go to the names file once it is loaded. */
static void take_own_kallsyms(struct stack_resolver *r)
{
	r->kallsyms = r->own_kallsyms = kallsyms_load_wait(r->loading);
	r->loading = NULL;
	if (r->own_kallsyms && r->names_file)
		kallsyms_move_names(r->own_kallsyms, r->names_file);
}

int stack_resolver_keep_names_in(struct stack_resolver *r, const char *dir)
{
	if (r->names_file)
		return 0;
	if (!(r->names_file = spill_file_new(dir, "symbol names")))
		return -ENOMEM;
	binary_cache_keep_names_in(r->binaries, r->names_file);
	if (r->own_kallsyms)
		kallsyms_move_names(r->own_kallsyms, r->names_file);
	return 0;
}

struct binary_cache *stack_resolver_binaries(struct stack_resolver *r)
{
	return r->binaries;
}

struct proc_symbolizer *stack_resolver_inspect(struct stack_resolver *r, pid_t pid)
{
	return proc_symbolizer_new_maps(r->binaries, pid);
}

const struct stack_resolver_stats *stack_resolver_get_stats(const struct stack_resolver *r)
{
	return &r->stats;
}

static const struct frame unknown_frame = { "[unknown]", FRAME_NATIVE };

static void count_outcome(struct stack_resolver_stats *s, enum frame_outcome o)
{
	switch (o) {
	case USER_UNKNOWN:
		s->user_unknown++;
		/* fall through */
	case USER_NAMED:
		s->user_frames++;
		break;
	case JIT_UNKNOWN:
		s->jit_unknown++;
		/* fall through */
	case JIT_NAMED:
		s->jit_frames++;
		break;
	case METHOD_UNKNOWN:
		s->interpreted_unknown++;
		/* fall through */
	case METHOD_NAMED:
		s->interpreted_frames++;
		break;
	case PYTHON_UNKNOWN:
		s->python_unknown++;
		/* fall through */
	case PYTHON_NAMED:
		s->python_frames++;
		break;
	}
}

/* Anonymous executable memory: JIT code, named by the runtime. */
static size_t resolve_jit(const struct user_names *names, uint64_t addr, uint64_t ts,
			  struct frame *out, size_t max, enum frame_outcome *outcome)
{
	int n = 0;

	if (names->name_jit)
		n = names->name_jit(names->jit_ctx, addr, ts, out, (int)max);
	*outcome = n > 0 ? JIT_NAMED : JIT_UNKNOWN;
	if (n <= 0) {
		out[0] = unknown_frame;
		n = 1;
	}
	return (size_t)n;
}

static const struct frame interpreter_frame = { "Interpreter", FRAME_INTERPRETED };

/* An interpreted frame: its method, or the interpreter when the method
 * cannot be read (the JVM is gone, or the frame was just being built). */
static struct frame resolve_method(const struct user_names *names, uint64_t method,
				   enum frame_outcome *outcome)
{
	struct frame f;

	*outcome = METHOD_NAMED;
	if (names->name_method && names->name_method(names->jit_ctx, method, &f) == 1)
		return f;
	*outcome = METHOD_UNKNOWN;
	return interpreter_frame;
}

static const struct frame python_frame = { "[python]", FRAME_PYTHON };

/* A Python frame the walker recorded: its function, or "[python]" when its
 * code object cannot be read. */
static struct frame resolve_python(const struct user_names *names, uint64_t frame, uint64_t ts,
				   enum frame_outcome *outcome)
{
	struct frame f;

	*outcome = PYTHON_NAMED;
	if (names->name_python && names->name_python(names->python_ctx, frame, ts, &f) == 1)
		return f;
	*outcome = PYTHON_UNKNOWN;
	return python_frame;
}

/* ELF code is looked up by the call instruction (return address - 1), JIT
 * code by the return address itself: the JVM's debug records for a call
 * site are keyed by it. */
static size_t resolve_user(const struct user_names *names, uint64_t addr, int is_return_address,
			   uint64_t ts, struct frame *out, size_t max, enum frame_outcome *outcome)
{
	enum proc_sym_result result = PROC_SYM_UNMAPPED;
	uint64_t lookup = is_return_address ? addr - 1 : addr;

	/* New code mapped since the maps were read: read them again. */
	if (names->symbolizer)
		result = proc_symbolizer_resolve_fresh(names->symbolizer, lookup, out);
	switch (result) {
	case PROC_SYM_OK:
		*outcome = USER_NAMED;
		return 1;
	case PROC_SYM_ANON_EXEC:
		return resolve_jit(names, addr, ts, out, max, outcome);
	default:
		*outcome = USER_UNKNOWN;
		out[0] = unknown_frame;
		return 1;
	}
}

/* The memo entry for addr in the current stack, or the slot to fill: a
 * short linear probe, so that a few frames that hash alike (a recursion
 * through several functions) do not evict each other. */
#define FRAME_MEMO_PROBES 8
static struct frame_memo *memo_slot(struct stack_resolver *r, uint64_t addr)
{
	size_t home = (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 58) % FRAME_MEMO_SLOTS;

	for (size_t k = 0; k < FRAME_MEMO_PROBES; k++) {
		struct frame_memo *m = &r->memo[(home + k) % FRAME_MEMO_SLOTS];

		if (m->stack != r->stacks || m->addr == addr)
			return m;
	}
	return &r->memo[home];
}

size_t stack_resolver_resolve(struct stack_resolver *r, const struct user_names *names,
			      uint64_t ts, const uint64_t *kernel, size_t nkernel,
			      const uint64_t *user, size_t nuser, struct frame *out, size_t max)
{
	bool last_unknown = false, past_interpreter = false;
	size_t n = 0;

	if (nkernel && r->loading)
		take_own_kallsyms(r);   /* one that cannot be read leaves them unnamed */
	for (size_t i = 0; i < nkernel && n < max; i++) {
		/* A return address points after the call: look up the call. */
		uint64_t addr = i ? kernel[i] - 1 : kernel[i];
		const struct addr_cache_entry *e = addr_cache_find(&r->kernel_names, addr);
		const char *name;

		if (e) {
			name = e->name;
		} else {
			name = kallsyms_lookup(r->kallsyms, addr);
			addr_cache_put(&r->kernel_names, addr, name, FRAME_KERNEL, 0);
		}

		r->stats.kernel_frames++;
		if (!name)
			r->stats.kernel_unknown++;
		out[n].name = name ? name : "[unknown]";
		out[n].type = FRAME_KERNEL;
		n++;
	}
	if (++r->stacks == 0) { /* wrapped: no entry may look current */
		memset(r->memo, 0, sizeof(r->memo));
		r->stacks = 1;
	}
	for (size_t i = 0; i < nuser && n < max; i++) {
		struct frame_memo *m = memo_slot(r, user[i]);
		enum frame_outcome outcome;
		size_t start = n;

		/* A tag is only a walker's frame where that walker ran (the
		 * names say so); in a frame-pointer walk the bit is data. */
		bool method = (user[i] & SP_USTACK_METHOD_TAG) && names->name_method;
		bool python = (user[i] & SP_USTACK_PYTHON_TAG) && names->name_python;

		if (past_interpreter && !python)
			continue;
		/* The innermost frame is looked up differently (not a return
		 * address): it is never memoized. */
		if (i > 0 && m->stack == r->stacks && m->addr == user[i] && m->count <= max - n) {
			memcpy(out + n, out + m->start, m->count * sizeof(*out));
			n += m->count;
			count_outcome(&r->stats, m->outcome);
			last_unknown = false; /* unnamed native frames are not memoized */
			continue;
		}
		if (method) {
			out[n++] = resolve_method(names, user[i] & ~SP_USTACK_METHOD_TAG, &outcome);
		} else if (python) {
			out[n++] = resolve_python(names, user[i], ts, &outcome);
			past_interpreter = false;
		} else {
			n += resolve_user(names, user[i], i > 0, ts, out + n, max - n, &outcome);
			/* CPython has no frame pointers: what follows its
			 * first frame up to the Python frames is noise. */
			past_interpreter = names->in_interpreter &&
					   names->in_interpreter(names->python_ctx, user[i]);
		}
		/* Native frames that cannot be named one after another are a
		 * walk through data (code without frame pointers): one
		 * [unknown], not a column of them. */
		if (outcome == USER_UNKNOWN && last_unknown) {
			n = start;
			continue;
		}
		last_unknown = outcome == USER_UNKNOWN;
		count_outcome(&r->stats, outcome);
		if (i > 0 && outcome != USER_UNKNOWN && n - start <= UINT16_MAX)
			*m = (struct frame_memo){ user[i], r->stacks, (uint32_t)start,
						  (uint16_t)(n - start), (uint8_t)outcome };
	}
	return n;
}

size_t stack_resolver_memory(const struct stack_resolver *r, size_t *kernel)
{
	struct binary_cache_stats bs;

	binary_cache_get_stats(r->binaries, &bs);
	*kernel = (r->kallsyms ? kallsyms_memory(r->kallsyms) : 0) +
		  addr_cache_memory(&r->kernel_names);
	return bs.memory;
}

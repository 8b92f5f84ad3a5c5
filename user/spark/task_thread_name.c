/* task_thread_name.c - see task_thread_name.h. */
#include <string.h>

#include "spark/task_thread_name.h"

#define LAUNCH_PREFIX "Executor task launch worker"
#define IDLE_PREFIX "Executor task idle worker#"

/* A cursor over an untrusted, not NUL-terminated name. */
struct cursor {
	const char *p, *end;
};

static int eat(struct cursor *c, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, lit, n) != 0)
		return 0;
	c->p += n;
	return 1;
}

/* A decimal number without sign or leading '+', at most 18 digits so that
 * it fits in int64_t; Spark prints ints and longs this way. */
static int eat_number(struct cursor *c, int64_t *out)
{
	int64_t v = 0;
	int digits = 0;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		if (++digits > 18)
			return 0;
		v = v * 10 + (*c->p - '0');
		c->p++;
	}
	*out = v;
	return digits > 0;
}

static int at_end(const struct cursor *c)
{
	return c->p == c->end;
}

/* "task I.A in stage S.SA (TID T)" after LAUNCH_PREFIX " for " */
static int parse_full(struct cursor c, struct task_thread_name *out)
{
	struct task_thread_name t = { .kind = TASK_THREAD_TASK };

	if (!eat(&c, "task ") || !eat_number(&c, &t.task_index) || !eat(&c, ".") ||
	    !eat_number(&c, &t.task_attempt) || !eat(&c, " in stage ") ||
	    !eat_number(&c, &t.stage) || !eat(&c, ".") ||
	    !eat_number(&c, &t.stage_attempt) || !eat(&c, " (TID ") ||
	    !eat_number(&c, &t.tid) || !eat(&c, ")") || !at_end(&c))
		return 0;
	*out = t;
	return 1;
}

/* "task T" after LAUNCH_PREFIX " for " (Spark 2.2-3.0) */
static int parse_tid_only(struct cursor c, struct task_thread_name *out)
{
	int64_t tid;

	if (!eat(&c, "task ") || !eat_number(&c, &tid) || !at_end(&c))
		return 0;
	*out = (struct task_thread_name){ .kind = TASK_THREAD_TASK_TID, .tid = tid };
	return 1;
}

enum task_thread_kind task_thread_name_parse(const char *name, size_t len,
					     struct task_thread_name *out)
{
	struct cursor c = { name, name + len };
	int64_t n;

	*out = (struct task_thread_name){ .kind = TASK_THREAD_NONE };
	if (!name)
		return out->kind;
	if (eat(&c, LAUNCH_PREFIX)) {
		struct cursor rest = c;

		if (eat(&rest, " for ")) {
			if (!parse_full(rest, out))
				parse_tid_only(rest, out);
		} else if (eat(&rest, "-") && eat_number(&rest, &n) && at_end(&rest)) {
			*out = (struct task_thread_name){ .kind = TASK_THREAD_POOL,
							  .worker = n };
		}
	} else if (eat(&c, IDLE_PREFIX) && eat_number(&c, &n) && at_end(&c)) {
		*out = (struct task_thread_name){ .kind = TASK_THREAD_IDLE, .worker = n };
	}
	return out->kind;
}

static int has_prefix(const char *name, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && memcmp(name, prefix, n) == 0;
}

/* Prefixes are at most 15 characters where the thread is also known by its
 * comm alone, so that a comm (the kernel's 15-byte copy) classifies the same
 * way as the full name. */
static const struct {
	const char *prefix;
	enum executor_thread_class cls;
} prefixes[] = {
	{ "Executor task l", THREAD_CLASS_TASK },
	{ "Executor task i", THREAD_CLASS_TASK },
	{ "GC Thread#", THREAD_CLASS_GC },
	{ "GC task thread#", THREAD_CLASS_GC },   /* JDK 8 ParallelGC */
	{ "Gang worker#", THREAD_CLASS_GC },      /* JDK 8 CMS/G1 */
	{ "G1 ", THREAD_CLASS_GC },
	{ "ZWorker", THREAD_CLASS_GC },
	{ "ZDriver", THREAD_CLASS_GC },
	{ "ZDirector", THREAD_CLASS_GC },
	{ "Shenandoah", THREAD_CLASS_GC },
	{ "Parallel GC", THREAD_CLASS_GC },
	{ "C1 CompilerThre", THREAD_CLASS_JIT },
	{ "C2 CompilerThre", THREAD_CLASS_JIT },
	{ "Sweeper thread", THREAD_CLASS_JIT },
	{ "VM Thread", THREAD_CLASS_JVM },
	{ "VM Periodic Tas", THREAD_CLASS_JVM },
	{ "Reference Handl", THREAD_CLASS_JVM },
	{ "Finalizer", THREAD_CLASS_JVM },
	{ "Signal Dispatch", THREAD_CLASS_JVM },
	{ "Service Thread", THREAD_CLASS_JVM },
	{ "Monitor Deflati", THREAD_CLASS_JVM },
	{ "Notification Th", THREAD_CLASS_JVM },
	{ "Common-Cleaner", THREAD_CLASS_JVM },
	{ "Attach Listener", THREAD_CLASS_JVM },
	{ "dispatcher-", THREAD_CLASS_RPC },
	{ "netty-rpc-", THREAD_CLASS_RPC },
	{ "rpc-client-", THREAD_CLASS_RPC },
	{ "rpc-server-", THREAD_CLASS_RPC },
	{ "shuffle-client-", THREAD_CLASS_SHUFFLE },
	{ "shuffle-server-", THREAD_CLASS_SHUFFLE },
	{ "shuffle-chunk-f", THREAD_CLASS_SHUFFLE },
	{ "executor-heartb", THREAD_CLASS_HEARTBEAT },
	{ "driver-heartbea", THREAD_CLASS_HEARTBEAT },
	{ "block-manager-", THREAD_CLASS_BLOCK_MANAGER },
	{ "stdout writer f", THREAD_CLASS_PYTHON },
	{ "Worker Monitor ", THREAD_CLASS_PYTHON },
	{ "Idle Worker Mon", THREAD_CLASS_PYTHON },
	{ "stdout reader f", THREAD_CLASS_PYTHON },
	{ "stderr reader f", THREAD_CLASS_PYTHON },
};

enum executor_thread_class executor_thread_classify(const char *name, size_t len)
{
	if (!name)
		return THREAD_CLASS_OTHER;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (has_prefix(name, len, prefixes[i].prefix))
			return prefixes[i].cls;
	return THREAD_CLASS_OTHER;
}

const char *executor_thread_class_name(enum executor_thread_class c)
{
	static const char *const names[THREAD_CLASS_MAX] = {
		[THREAD_CLASS_OTHER] = "other",
		[THREAD_CLASS_TASK] = "task",
		[THREAD_CLASS_GC] = "gc",
		[THREAD_CLASS_JIT] = "jit",
		[THREAD_CLASS_JVM] = "jvm",
		[THREAD_CLASS_RPC] = "rpc",
		[THREAD_CLASS_SHUFFLE] = "shuffle",
		[THREAD_CLASS_HEARTBEAT] = "heartbeat",
		[THREAD_CLASS_BLOCK_MANAGER] = "block-manager",
		[THREAD_CLASS_PYTHON] = "python",
	};

	return (unsigned)c < THREAD_CLASS_MAX ? names[c] : "other";
}

/* java_process.c - see java_process.h. */
#include <errno.h>
#include <stdlib.h>

#include "jvm/hotspot.h"
#include "jvm/java_process.h"
#include "proc/ns_tids.h"
#include "symbols/perf_map.h"

#define RETRY_YOUNG_NS (100ULL * 1000 * 1000)
#define YOUNG_NS (10000ULL * 1000 * 1000)
#define RETRY_NS (2000ULL * 1000 * 1000)
#define HOTSPOT_RETRY_NS (250ULL * 1000 * 1000)

struct java_process {
	pid_t pid;
	struct jvm_helper_log *helper; /* the helper's symbols and thread names */
	struct perf_map *perf_map;     /* a plain /tmp/perf-PID.map, when no helper */
	struct ns_tids *ns_tids;       /* host -> JVM tids; NULL in our namespace */
	struct hotspot *hotspot;       /* its vmStructs; NULL when unreadable */
	int hotspot_err;               /* errno of the last hotspot_open */
	uint64_t last_hotspot_try_ns;
	uint64_t first_seen_ns;
	uint64_t last_helper_check_ns;
	uint64_t last_perf_map_try_ns;  /* 0: never tried */
	jvm_helper_thread_listener listener;
	void *listener_ctx;
};

bool java_look_again(uint64_t first_seen_ns, uint64_t last_look_ns, uint64_t now_ns)
{
	uint64_t every = now_ns - first_seen_ns < YOUNG_NS ? RETRY_YOUNG_NS : RETRY_NS;

	return now_ns - last_look_ns >= every;
}

static void find_jit_symbols(struct java_process *jp, uint64_t now_ns)
{
	jp->last_helper_check_ns = now_ns;
	jp->helper = jvm_helper_log_open(jp->pid);
	if (jp->helper) {
		/* Before the first poll: stage tracking needs every thread
		 * record from the start of the log. */
		jvm_helper_log_set_thread_listener(jp->helper, jp->listener, jp->listener_ctx);
		jvm_helper_log_poll(jp->helper);
		perf_map_free(jp->perf_map);
		jp->perf_map = NULL;
		return;
	}
	/* A perf map is read whole: only the helper's log is looked for at the
	 * young JVM's fast pace, a map that failed (too big) is not re-read
	 * every 100 ms. */
	if (!jp->perf_map && (!jp->last_perf_map_try_ns ||
			      now_ns - jp->last_perf_map_try_ns >= RETRY_NS)) {
		jp->last_perf_map_try_ns = now_ns;
		jp->perf_map = perf_map_open(jp->pid);
	}
}

struct java_process *java_process_new(pid_t pid, uint64_t now_ns,
				      jvm_helper_thread_listener fn, void *ctx)
{
	struct java_process *jp = calloc(1, sizeof(*jp));

	if (!jp)
		return NULL;
	jp->pid = pid;
	jp->first_seen_ns = now_ns;
	jp->listener = fn;
	jp->listener_ctx = ctx;
	/* The helper speaks of threads by the ids the JVM sees. */
	jp->ns_tids = ns_tids_new(pid);
	jp->hotspot = hotspot_open(pid);
	jp->hotspot_err = jp->hotspot ? 0 : errno;
	jp->last_hotspot_try_ns = now_ns;
	find_jit_symbols(jp, now_ns);
	return jp;
}

void java_process_free(struct java_process *jp)
{
	if (!jp)
		return;
	jvm_helper_log_free(jp->helper);
	perf_map_free(jp->perf_map);
	ns_tids_free(jp->ns_tids);
	hotspot_free(jp->hotspot);
	free(jp);
}

void java_process_release(struct java_process *jp)
{
	if (jp->helper)
		jvm_helper_log_poll(jp->helper);   /* its last records, for the stats */
	jvm_helper_log_release(jp->helper);
	hotspot_release(jp->hotspot);
	ns_tids_free(jp->ns_tids);
	jp->ns_tids = NULL;
}

bool java_process_poll(struct java_process *jp, uint64_t now_ns, bool retired)
{
	bool walkable = false;

	/* A starting JVM fills in its vmStructs, its interpreter and its
	 * thread list a moment after it maps libjvm.so: while young, look
	 * again (not at a JVM that is no HotSpot, or gone). */
	if (!retired && now_ns - jp->first_seen_ns < YOUNG_NS &&
	    now_ns - jp->last_hotspot_try_ns >= HOTSPOT_RETRY_NS) {
		jp->last_hotspot_try_ns = now_ns;
		if (!jp->hotspot && jp->hotspot_err != ENOENT && jp->hotspot_err != ESRCH) {
			jp->hotspot = hotspot_open(jp->pid);
			jp->hotspot_err = jp->hotspot ? 0 : errno;
			walkable = jp->hotspot != NULL;
		} else if (jp->hotspot) {
			walkable = hotspot_find_tls(jp->hotspot);
		}
	}
	if (jp->helper)
		jvm_helper_log_poll(jp->helper);
	else if (!retired && java_look_again(jp->first_seen_ns, jp->last_helper_check_ns, now_ns))
		find_jit_symbols(jp, now_ns);
	return walkable;
}

/* The helper knows what was at an address at a given time; a plain perf
 * map only what is there now. */
int java_process_name_jit(void *ctx, uint64_t addr, uint64_t ts, struct frame *out, int max)
{
	struct java_process *jp = ctx;
	int n = 0;

	if (jp->helper)
		n = jvm_helper_log_resolve(jp->helper, addr, ts, out, max);
	if (n <= 0 && jp->perf_map && perf_map_lookup(jp->perf_map, addr, out) > 0)
		n = 1;
	return n > 0 ? n : 0;
}

pid_t java_process_ns_tid(struct java_process *jp, pid_t host_tid)
{
	return jp->ns_tids ? ns_tids_lookup(jp->ns_tids, host_tid) : host_tid;
}

const char *java_process_thread_name(struct java_process *jp, pid_t ns_tid, uint64_t ts)
{
	return jp->helper && ns_tid > 0 ? jvm_helper_log_thread_name(jp->helper, ns_tid, ts) : NULL;
}

int java_process_thread_idle(struct java_process *jp, pid_t ns_tid, uint64_t ts)
{
	return jp->helper ? jvm_helper_log_thread_idle(jp->helper, ns_tid, ts) : -1;
}

bool java_process_has_helper(const struct java_process *jp)
{
	return jp->helper != NULL;
}

const struct jvm_helper_log_stats *java_process_helper_log_stats(const struct java_process *jp)
{
	return jp->helper ? jvm_helper_log_get_stats(jp->helper) : NULL;
}

const struct perf_map_stats *java_process_perf_map_stats(const struct java_process *jp)
{
	return jp->perf_map ? perf_map_get_stats(jp->perf_map) : NULL;
}

bool java_process_walker_info(const struct java_process *jp, struct sp_hotspot_info *out)
{
	if (!jp->hotspot)
		return false;
	hotspot_walker_info(jp->hotspot, out);
	return true;
}

void java_process_read_methods(struct java_process *jp, const uint64_t *user, size_t n)
{
	if (jp->hotspot)
		hotspot_read_methods(jp->hotspot, user, n);
}

int java_process_name_method(void *ctx, uint64_t method, struct frame *out)
{
	struct java_process *jp = ctx;
	const char *name = jp->hotspot ? hotspot_method_name(jp->hotspot, method, false) : NULL;

	if (!name)
		return 0;
	out->name = name;
	out->type = FRAME_INTERPRETED;
	return 1;
}

size_t java_process_thread_memory(const struct java_process *jp)
{
	return jp->helper ? jvm_helper_log_thread_memory(jp->helper) : 0;
}

void java_process_debug_memory(const struct java_process *jp)
{
	if (jp->helper)
		jvm_helper_log_debug_memory(jp->helper);
}

size_t java_process_jit_memory(const struct java_process *jp, size_t *names)
{
	if (names)
		*names = 0;
	return jp->helper ? jvm_helper_log_jit_memory(jp->helper, names) : 0;
}

/* diag.c - stderr messages, the clock and cost accounting (see diag.h). */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "diag.h"

void agent_say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "sparkprof-agent: %s\n", buf);
}

uint64_t agent_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPU time of the calling thread: wall time would count the time the
 * thread waited for a CPU. */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t agent_cost_start(const struct agent_costs *c)
{
	return c->on ? thread_cpu_ns() : 0;
}

void agent_cost(struct agent_costs *c, enum agent_cost what, uint64_t since_ns)
{
	if (!c->on)
		return;
	__atomic_add_fetch(&c->ns[what], thread_cpu_ns() - since_ns, __ATOMIC_RELAXED);
	__atomic_add_fetch(&c->count[what], 1, __ATOMIC_RELAXED);
}

void agent_costs_print(const struct agent_costs *c)
{
	static const char *what[COST_MAX] = { "code load/stub events", "unload events",
					      "thread start/end/rename", "worker rounds" };
	for (int i = 0; i < COST_MAX; i++)
		agent_say("stats: %s: %llu, %.3f ms CPU in total, %.1f us each", what[i],
			  (unsigned long long)c->count[i], c->ns[i] / 1e6,
			  c->count[i] ? c->ns[i] / 1e3 / c->count[i] : 0.0);
}

/* diag.h - the helper's diagnostics: stderr messages, the clock, and the
 * CPU time it spends in its own code (stats=1).
 */
#ifndef SPARKPROF_AGENT_DIAG_H
#define SPARKPROF_AGENT_DIAG_H

#include <stdint.h>

/* One line on the JVM's stderr, prefixed "sparkprof-agent: ". */
void agent_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* CLOCK_MONOTONIC, the time base of the log. */
uint64_t agent_now_ns(void);

enum agent_cost { COST_CODE, COST_UNLOAD, COST_THREADS, COST_WORKER, COST_MAX };

struct agent_costs {
	int on;                         /* stats=1 */
	uint64_t ns[COST_MAX];          /* updated atomically */
	uint64_t count[COST_MAX];
};

/* t0 = agent_cost_start(c); ...; agent_cost(c, COST_X, t0).  No-ops when
 * c->on is 0. */
uint64_t agent_cost_start(const struct agent_costs *c);
void agent_cost(struct agent_costs *c, enum agent_cost what, uint64_t since_ns);

/* One stderr line per kind of cost. */
void agent_costs_print(const struct agent_costs *c);

#endif

/* agent.h - the helper's state, shared by its modules.
 *
 * JVMTI callbacks carry no context pointer, so the helper keeps exactly one
 * struct agent (defined in agent.c) reachable through agent_get().  It is
 * never freed: callbacks may still run on other threads while the VM shuts
 * down, and the process is about to exit anyway.
 */
#ifndef SPARKPROF_AGENT_H
#define SPARKPROF_AGENT_H

#include <jvmti.h>
#include <jvmticmlr.h>
#include <pthread.h>
#include <stdint.h>

#include "code_table.h"
#include "options.h"
#include "publish.h"
#include "thread_names.h"

/* Time spent in the helper's own code, for stats=1. */
enum agent_cost { COST_CODE, COST_UNLOAD, COST_THREADS, COST_WORKER, COST_MAX };

struct agent {
	jvmtiEnv *jvmti;
	JavaVM *vm;
	struct agent_options opt;
	int attached;              /* loaded by Agent_OnAttach */
	struct publisher pub;      /* the log */
	struct code_table code;    /* live code, for the perf map and unloads */
	struct thread_names names; /* tid -> last published name */
	volatile int vm_dead;
	pthread_mutex_t wake_lock; /* the worker sleeps on wake */
	pthread_cond_t wake;
	uint64_t cost_ns[COST_MAX];     /* updated atomically */
	uint64_t cost_count[COST_MAX];
};

/* With stats=1: t0 = agent_cost_start(); ...; agent_cost(COST_X, t0). */
uint64_t agent_cost_start(void);
void agent_cost(enum agent_cost what, uint64_t since_ns);

struct agent *agent_get(void);

/* One line on the JVM's stderr, prefixed "sparkprof-agent: ". */
void agent_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

uint64_t agent_now_ns(void);

#endif

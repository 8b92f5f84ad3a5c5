/* java_process.h - what the recording knows of one JVM: names for its JIT
 * code and for its threads.
 *
 * JIT code is named from the sparkprof helper's log when the JVM runs the
 * helper (as of each sample's time, inlined frames expanded), else from a
 * plain perf map (perf-map-agent, jcmd Compiler.perfmap: a snapshot).
 * Thread names and idle marks come from the helper's log, under the thread
 * ids the JVM sees: host ids of a JVM in another pid namespace are
 * translated. The log is looked for again every 100 ms in a JVM's first
 * 10 s (a short JVM must be caught alive), then every 2 s (the helper may
 * be attached late).
 */
#ifndef SPARKPROF_JAVA_PROCESS_H
#define SPARKPROF_JAVA_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/frame.h"
#include "jvm/jvm_helper_log.h"
#include "symbols/perf_map.h"
#include "sparkprof_events.h"

struct java_process;

/* Whether to look at a process again for what a starting JVM publishes late
 * (libjvm.so, the helper's log): every 100 ms in its first 10 s after
 * first_seen_ns (a short JVM must be caught alive), then every 2 s (the
 * helper may be attached late). */
bool java_look_again(uint64_t first_seen_ns, uint64_t last_look_ns, uint64_t now_ns);

/* Looks for pid's helper log (or perf map) now. Every thread record read
 * from the log is passed to fn, in log order, from the first on. NULL when
 * out of memory. */
struct java_process *java_process_new(pid_t pid, uint64_t now_ns,
				      jvm_helper_thread_listener fn, void *ctx);
void java_process_free(struct java_process *jp);

/* The JVM is gone and every sample of it named: reads what its helper
 * wrote last, then frees what names its addresses (the helper's code
 * store, the method index).  Names already handed out stay valid, and so
 * do its summary figures; later lookups answer unknown. */
void java_process_release(struct java_process *jp);

/* Reads what the helper wrote since the last call; without a helper yet,
 * looks for it again when its time has come (above). A process that ran
 * exec passes retired: its pid now runs another program. Returns true when
 * what the walker knows has just grown (java_process_walker_info): a JVM
 * that was starting when first seen. */
bool java_process_poll(struct java_process *jp, uint64_t now_ns, bool retired);

/* Names JIT code at addr as of ts (struct user_names.name_jit). */
int java_process_name_jit(void *jp, uint64_t addr, uint64_t ts, struct frame *out, int max);

/* The id host thread host_tid has inside the JVM's pid namespace; -1 when
 * it cannot be read. */
pid_t java_process_ns_tid(struct java_process *jp, pid_t host_tid);

/* The full Java name of thread ns_tid at ts; NULL when not known. */
const char *java_process_thread_name(struct java_process *jp, pid_t ns_tid, uint64_t ts);

/* Task-thread state of ns_tid at ts: 1 idle, 0 busy, -1 unknown. */
int java_process_thread_idle(struct java_process *jp, pid_t ns_tid, uint64_t ts);

/* Heap bytes of what names its JIT code (0 without the helper); *names
 * (if not NULL): of its method names alone. */
size_t java_process_jit_memory(const struct java_process *jp, size_t *names);
/* Heap bytes of its threads' names and marks (0 without the helper). */
size_t java_process_thread_memory(const struct java_process *jp);
/* With -v: where its helper data's memory goes (nothing without it). */
void java_process_debug_memory(const struct java_process *jp);

/* What the BPF walker needs to walk this JVM's stacks (docs/stack-walker.md);
 * false when its vmStructs could not be read (plain frame-pointer walks). */
bool java_process_walker_info(const struct java_process *jp, struct sp_hotspot_info *out);

/* Reads the names of the methods of interpreted frames in a walked stack
 * (SP_USTACK_METHOD_TAG) while the JVM lives: called as the stack arrives,
 * so that a method freed later (class unloading) was named as it was. */
void java_process_read_methods(struct java_process *jp, const uint64_t *user, size_t n);

/* Names an interpreted frame's method (struct user_names.name_method). */
int java_process_name_method(void *jp, uint64_t method, struct frame *out);

bool java_process_has_helper(const struct java_process *jp);
/* What reading its perf map kept and left out; NULL without one. */
const struct perf_map_stats *java_process_perf_map_stats(const struct java_process *jp);

/* What was read from its helper log; NULL without one. */
const struct jvm_helper_log_stats *java_process_helper_log_stats(const struct java_process *jp);

#endif

/* code_events.h - publishes the JVM's code: compiled methods (L, with their
 * inlined frames as J records and the names those number as N records),
 * their unloads (U) and stubs (D).
 *
 * Records are written and the code table updated under the publisher lock,
 * so ids and timestamps appear in order and the perf map renders a table
 * that matches the log.
 */
#ifndef SPARKPROF_AGENT_CODE_EVENTS_H
#define SPARKPROF_AGENT_CODE_EVENTS_H

#include <jvmti.h>

struct agent_costs;
struct code_table;
struct method_ids;
struct publisher;

struct code_events {
	JavaVM *vm;
	struct publisher *pub;      /* its lock also guards code */
	struct code_table *code;
	struct method_ids *names;   /* guarded by the publisher lock too */
	struct agent_costs *costs;
	int inline_frames;          /* publish J records */
};

/* The bodies of CompiledMethodLoad, CompiledMethodUnload and
 * DynamicCodeGenerated. */
void code_events_method_load(struct code_events *ce, jvmtiEnv *jvmti, jmethodID method,
			     jint code_size, const void *code_addr, const void *compile_info);
void code_events_method_unload(struct code_events *ce, jmethodID method, const void *code_addr);
void code_events_dynamic_code(struct code_events *ce, const char *name, const void *address,
			      jint length);

#endif

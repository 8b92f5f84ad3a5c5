/* agent.c - the sparkprof JVMTI helper: entry points, event wiring, worker.
 *
 * See docs/helper.md for what it publishes and why, and
 * include/sparkprof_helper_log.h for the log format.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jvmti.h>

#include "code_events.h"
#include "code_table.h"
#include "diag.h"
#include "log_rotation.h"
#include "method_ids.h"
#include "options.h"
#include "perf_map_writer.h"
#include "publish.h"
#include "sparkprof_helper_log.h"
#include "thread_names.h"

#define EXPORT __attribute__((visibility("default")))

/* The one helper instance: JVMTI callbacks and JNI natives carry no context
 * pointer.  Never freed: callbacks may still run on other threads while the
 * VM shuts down, and the process is about to exit anyway. */
static struct agent {
	jvmtiEnv *jvmti;
	JavaVM *vm;
	struct agent_options opt;
	int attached;              /* loaded by Agent_OnAttach */
	struct publisher pub;      /* the log */
	struct code_table code;    /* live code, for the perf map and unloads */
	struct method_ids method_names;  /* numbers of inlined methods' names */
	struct log_rotation rotation;    /* guarded by the publisher lock */
	struct code_events events;
	struct thread_names names; /* tid -> last published name */
	volatile int vm_dead;
	pthread_mutex_t wake_lock; /* the worker sleeps on wake */
	pthread_cond_t wake;
	struct agent_costs costs;
} the_agent = {
	.pub = { .fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER },
	.wake_lock = PTHREAD_MUTEX_INITIALIZER,
	.wake = PTHREAD_COND_INITIALIZER,
};
static int started;  /* guarded by start_lock */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;

static void JNICALL on_compiled_method_load(jvmtiEnv *jvmti, jmethodID method, jint code_size,
					    const void *code_addr, jint map_length,
					    const jvmtiAddrLocationMap *map, const void *compile_info)
{
	(void)map_length;
	(void)map;
	code_events_method_load(&the_agent.events, jvmti, method, code_size, code_addr,
				compile_info);
}

static void JNICALL on_compiled_method_unload(jvmtiEnv *jvmti, jmethodID method,
					      const void *code_addr)
{
	(void)jvmti;
	code_events_method_unload(&the_agent.events, method, code_addr);
}

static void JNICALL on_dynamic_code(jvmtiEnv *jvmti, const char *name, const void *address,
				    jint length)
{
	(void)jvmti;
	code_events_dynamic_code(&the_agent.events, name, address, length);
}

static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	(void)jvmti;
	uint64_t t0 = agent_cost_start(&the_agent.costs);
	if (the_agent.opt.names)
		thread_names_on_start(&the_agent.names, jni, thread);
	agent_cost(&the_agent.costs, COST_THREADS, t0);
}

static void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	(void)jvmti;
	uint64_t t0 = agent_cost_start(&the_agent.costs);
	if (the_agent.opt.names)
		thread_names_on_end(&the_agent.names, jni, thread);
	agent_cost(&the_agent.costs, COST_THREADS, t0);
}

static void JNICALL on_native_bind(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID method,
				   void *address, void **new_address)
{
	(void)jni;
	(void)thread;
	(void)method;
	thread_names_on_bind(&the_agent.names, address, new_address);
	if (the_agent.names.hooked)
		(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE,
						   JVMTI_EVENT_NATIVE_METHOD_BIND, NULL);
}

/* Thread.setNativeName while the helper runs (see thread_names.h). */
static void JNICALL on_set_native_name(JNIEnv *jni, jobject thread, jstring name)
{
	thread_names_set_native_name(&the_agent.names, jni, thread, name);
}

/* "R ts what" after a replay; "K ts" (heartbeat: the log is current up to
 * ts) when what is NULL. */
static void write_replay_mark(const char *what)
{
	char line[64];
	pthread_mutex_lock(&the_agent.pub.lock);
	int n = what ? snprintf(line, sizeof(line), "R %" PRIu64 " %s\n", agent_now_ns(), what)
		     : snprintf(line, sizeof(line), "K %" PRIu64 "\n", agent_now_ns());
	publisher_write(&the_agent.pub, line, n);
	pthread_mutex_unlock(&the_agent.pub.lock);
}

static void JNICALL worker(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
	(void)jvmti;
	(void)arg;
	struct agent *a = &the_agent;
	uint64_t map_generation = UINT64_MAX;
	while (!a->vm_dead) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += a->opt.interval_ms / 1000;
		until.tv_nsec += (a->opt.interval_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&a->wake_lock);
		if (!a->vm_dead)
			pthread_cond_timedwait(&a->wake, &a->wake_lock, &until);
		pthread_mutex_unlock(&a->wake_lock);
		if (a->vm_dead)
			break;
		uint64_t t0 = agent_cost_start(&a->costs);
		if (a->opt.map)
			perf_map_write(&a->pub, &a->code, &map_generation);
		write_replay_mark(NULL);
		if (a->opt.names)
			thread_names_poll(&a->names, jni, a->opt.idle);
		pthread_mutex_lock(&a->pub.lock);
		log_rotation_check(&a->rotation, &a->pub, &a->code, &a->method_names, a->names.v,
				   a->names.n);
		pthread_mutex_unlock(&a->pub.lock);
		agent_cost(&a->costs, COST_WORKER, t0);
	}
}

static void start_worker(jvmtiEnv *jvmti, JNIEnv *jni)
{
	jclass cls = (*jni)->FindClass(jni, "java/lang/Thread");
	jmethodID init = cls ? (*jni)->GetMethodID(jni, cls, "<init>", "(Ljava/lang/String;)V") : NULL;
	jstring name = (*jni)->NewStringUTF(jni, "sparkprof-helper");
	jthread t = init && name ? (*jni)->NewObject(jni, cls, init, name) : NULL;
	if (!t || (*jvmti)->RunAgentThread(jvmti, t, worker, NULL, JVMTI_THREAD_MIN_PRIORITY) !=
	    JVMTI_ERROR_NONE) {
		(*jni)->ExceptionClear(jni);
		agent_say("cannot start the helper thread; the perf map is written at exit only");
	}
}

/* Everything that needs the live phase: thread names, replays, worker. */
static void go_live(jvmtiEnv *jvmti, JNIEnv *jni)
{
	if (the_agent.opt.names) {
		thread_names_init(&the_agent.names, jni);
		thread_names_poll(&the_agent.names, jni, 0);
		write_replay_mark("threads");
	}
	if (the_agent.attached) {
		(*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED);
		(*jvmti)->GenerateEvents(jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD);
		write_replay_mark("code");
	}
	start_worker(jvmti, jni);
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	(void)thread;
	go_live(jvmti, jni);
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
	(void)jvmti;
	(void)jni;
	struct agent *a = &the_agent;
	pthread_mutex_lock(&a->wake_lock);
	a->vm_dead = 1;
	pthread_cond_broadcast(&a->wake);
	pthread_mutex_unlock(&a->wake_lock);
	if (a->opt.map) {
		uint64_t force = UINT64_MAX;
		perf_map_write(&a->pub, &a->code, &force);
	}
	if (a->opt.stats) {
		agent_costs_print(&a->costs);
		agent_say("log: %" PRIu64 " new files, the longest start of one %.1f ms",
			  a->rotation.rotations, a->rotation.longest_ns / 1e6);
	}
	if (!a->opt.keep_log) {
		/* Executors come and go by the thousand on a shared /tmp. */
		pthread_mutex_lock(&a->pub.lock);
		publisher_unlink(&a->pub);
		pthread_mutex_unlock(&a->pub.lock);
	}
}

static int setup(JavaVM *vm, const char *options, int attached)
{
	struct agent *a = &the_agent;
	char err[256];
	struct agent_options opt;
	if (agent_options_parse(options, &opt, err, sizeof(err)) < 0) {
		agent_say("%s; helper disabled", err);
		return -1;
	}
	pthread_mutex_lock(&start_lock);
	int again = started;
	started = 1;
	pthread_mutex_unlock(&start_lock);
	if (again) {
		agent_say("already loaded in this JVM; nothing to do");
		return 0;
	}
	jvmtiEnv *jvmti;
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
		agent_say("no JVMTI 1.2 environment; helper disabled");
		return -1;
	}
	a->vm = vm;
	a->jvmti = jvmti;
	a->opt = opt;
	a->rotation.limit = (uint64_t)opt.log_max_mb << 20;
	a->attached = attached;
	a->costs.on = opt.stats;
	a->events = (struct code_events){ .vm = vm, .pub = &a->pub, .code = &a->code,
					  .names = &a->method_names, .costs = &a->costs,
					  .inline_frames = opt.inline_frames };
	thread_names_setup(&a->names, jvmti, &a->pub, &a->costs, &a->vm_dead, on_set_native_name);

	jvmtiCapabilities caps;
	memset(&caps, 0, sizeof(caps));
	caps.can_generate_compiled_method_load_events = 1;
	/* At start, Thread's own registration of setNativeName is the quiet
	 * moment to swap in the rename wrapper. */
	caps.can_generate_native_method_bind_events = !attached && opt.names;
	if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
		agent_say("the JVM refuses compiled-method events; helper disabled");
		return -1;
	}
	if (!attached && opt.names)
		thread_names_prepare_bind(&a->names);
	publisher_open(&a->pub, getpid());
	char *version = NULL;
	(*jvmti)->GetSystemProperty(jvmti, "java.vm.version", &version);
	char line[256];
	escape_name(a->pub.jvm, sizeof(a->pub.jvm), version ? version : "unknown");
	pthread_mutex_lock(&a->pub.lock);
	publisher_write(&a->pub, line,
			publisher_header(&a->pub, attached ? "attach" : "start", line, sizeof(line)));
	pthread_mutex_unlock(&a->pub.lock);
	if (version)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)version);

	jvmtiEventCallbacks cb;
	memset(&cb, 0, sizeof(cb));
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	cb.CompiledMethodLoad = on_compiled_method_load;
	cb.CompiledMethodUnload = on_compiled_method_unload;
	cb.DynamicCodeGenerated = on_dynamic_code;
	cb.ThreadStart = on_thread_start;
	cb.ThreadEnd = on_thread_end;
	cb.NativeMethodBind = on_native_bind;
	if ((*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof(cb)) != JVMTI_ERROR_NONE) {
		agent_say("cannot set JVMTI callbacks; helper disabled");
		return -1;
	}
	static const jvmtiEvent events[] = {
		JVMTI_EVENT_VM_INIT, JVMTI_EVENT_VM_DEATH, JVMTI_EVENT_COMPILED_METHOD_LOAD,
		JVMTI_EVENT_COMPILED_METHOD_UNLOAD, JVMTI_EVENT_DYNAMIC_CODE_GENERATED,
		JVMTI_EVENT_THREAD_START, JVMTI_EVENT_THREAD_END, JVMTI_EVENT_NATIVE_METHOD_BIND,
	};
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		if ((events[i] == JVMTI_EVENT_THREAD_START || events[i] == JVMTI_EVENT_THREAD_END) &&
		    !opt.names)
			continue;
		if (events[i] == JVMTI_EVENT_NATIVE_METHOD_BIND && (attached || !opt.names))
			continue;
		jvmtiError e = (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, events[i], NULL);
		if (e != JVMTI_ERROR_NONE)
			agent_say("cannot enable JVMTI event %d (error %d)", (int)events[i], (int)e);
	}
	return 0;
}

EXPORT JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	/* A failing Agent_OnLoad would abort the JVM's start: stay inert. */
	setup(vm, options, 0);
	return JNI_OK;
}

EXPORT JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	int was_started;
	pthread_mutex_lock(&start_lock);
	was_started = started;
	pthread_mutex_unlock(&start_lock);
	/* A failed attach is reported to the attaching tool; the JVM runs on. */
	if (setup(vm, options, 1) < 0)
		return JNI_ERR;
	if (was_started)
		return JNI_OK;
	JNIEnv *jni;
	if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK) {
		agent_say("no JNI environment on attach; names and code replay skipped");
		return JNI_OK;
	}
	go_live(the_agent.jvmti, jni);
	return JNI_OK;
}

/* Runs when the helper loads itself with System.load on attach (see
 * thread_names.c); a plain System.load by anyone else does nothing. */
EXPORT JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved)
{
	(void)reserved;
	JNIEnv *jni;
	if (the_agent.jvmti && the_agent.opt.names &&
	    (*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) == JNI_OK)
		thread_names_on_jni_load(&the_agent.names, jni);
	return JNI_VERSION_1_6;
}

EXPORT JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	(void)vm;
	/* Nothing to free: callbacks may still run on other threads, and the
	 * files stay for the profiler to read after the JVM is gone. */
}

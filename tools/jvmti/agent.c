/* agent.c - the sparkprof JVMTI helper: entry points, JVMTI events, worker.
 *
 * See docs/helper.md for what it publishes and why, and
 * include/sparkprof_helper_log.h for the log format.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "perf_map_writer.h"
#include "sparkprof_helper_log.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_NAME 2048

/* The one helper instance (JVMTI callbacks have no context argument). */
static struct agent the_agent = {
	.pub = { .fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER },
	.wake_lock = PTHREAD_MUTEX_INITIALIZER,
	.wake = PTHREAD_COND_INITIALIZER,
};
static int started;  /* guarded by start_lock */
static pthread_mutex_t start_lock = PTHREAD_MUTEX_INITIALIZER;

struct agent *agent_get(void)
{
	return &the_agent;
}

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

uint64_t agent_cost_start(void)
{
	return the_agent.opt.stats ? thread_cpu_ns() : 0;
}

void agent_cost(enum agent_cost what, uint64_t since_ns)
{
	if (!the_agent.opt.stats)
		return;
	__atomic_add_fetch(&the_agent.cost_ns[what], thread_cpu_ns() - since_ns, __ATOMIC_RELAXED);
	__atomic_add_fetch(&the_agent.cost_count[what], 1, __ATOMIC_RELAXED);
}

static void print_costs(void)
{
	static const char *what[COST_MAX] = { "code load/stub events", "unload events",
					      "thread start/end/rename", "worker rounds" };
	for (int i = 0; i < COST_MAX; i++)
		agent_say("stats: %s: %llu, %.3f ms CPU in total, %.1f us each", what[i],
			  (unsigned long long)the_agent.cost_count[i], the_agent.cost_ns[i] / 1e6,
			  the_agent.cost_count[i] ? the_agent.cost_ns[i] / 1e3 / the_agent.cost_count[i] : 0.0);
}

/* "pkg/Cls.method" as async-profiler names it; NULL when the JVM cannot
 * tell (e.g. the class is being unloaded).  Caller frees. */
static char *method_name(jvmtiEnv *jvmti, jmethodID method)
{
	jclass cls = NULL;
	char *sig = NULL, *name = NULL, *out = NULL;
	if ((*jvmti)->GetMethodDeclaringClass(jvmti, method, &cls) != JVMTI_ERROR_NONE)
		return NULL;
	if ((*jvmti)->GetClassSignature(jvmti, cls, &sig, NULL) == JVMTI_ERROR_NONE &&
	    (*jvmti)->GetMethodName(jvmti, method, &name, NULL, NULL) == JVMTI_ERROR_NONE) {
		const char *c = sig;
		size_t clen = strlen(sig);
		if (clen >= 2 && c[0] == 'L' && c[clen - 1] == ';') {
			c++;
			clen -= 2;
		}
		char raw[MAX_NAME];
		snprintf(raw, sizeof(raw), "%.*s.%s", (int)clen, c, name);
		out = malloc(MAX_NAME);
		if (out)
			escape_name(out, MAX_NAME, raw);
	}
	if (sig)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	if (name)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	/* Local refs of a JVMTI callback are freed when it returns, but the
	 * ServiceThread runs many callbacks in one JNI frame. */
	JNIEnv *jni;
	if ((*the_agent.vm)->GetEnv(the_agent.vm, (void **)&jni, JNI_VERSION_1_6) == JNI_OK)
		(*jni)->DeleteLocalRef(jni, cls);
	return out;
}

/* Names of the methods of one compiled method's inline records, looked up
 * once per event. */
struct name_cache {
	jmethodID id[256];
	char *name[256];
	int n;
};

static const char *cached_name(jvmtiEnv *jvmti, struct name_cache *c, jmethodID m)
{
	for (int i = 0; i < c->n; i++)
		if (c->id[i] == m)
			return c->name[i];
	char *name = method_name(jvmti, m);
	if (c->n < 256) {
		c->id[c->n] = m;
		c->name[c->n++] = name;
		return name;
	}
	/* Rare: too many distinct methods; keep the last one around. */
	free(c->name[255]);
	c->id[255] = m;
	c->name[255] = name;
	return name;
}

struct line_buf {
	char buf[4 * SPARKPROF_HELPER_MAX_LINE];
	size_t len;
};

static void flush_lines(struct line_buf *b)
{
	publisher_write(&the_agent.pub, b->buf, b->len);
	b->len = 0;
}

/* One I record: range and chain methods[0..depth-2] (the last is the
 * compiled method itself).  Dropped when a name is unknown or too long. */
static void add_inline_record(jvmtiEnv *jvmti, struct line_buf *b, struct name_cache *c,
			      uint64_t id, uint64_t start, uint64_t end, const PCStackInfo *pc)
{
	char line[SPARKPROF_HELPER_MAX_LINE];
	int n = snprintf(line, sizeof(line), "I %" PRIu64 " %" PRIx64 " %" PRIx64 " ", id, start, end);
	for (jint i = 0; i + 1 < pc->numstackframes; i++) {
		const char *name = cached_name(jvmti, c, pc->methods[i]);
		if (!name)
			return;
		int m = snprintf(line + n, sizeof(line) - n, "%s%s", i ? "\t" : "", name);
		if (m < 0 || (size_t)m >= sizeof(line) - n - 1)
			return;
		n += m;
	}
	line[n++] = '\n';
	if (b->len + n > sizeof(b->buf))
		flush_lines(b);
	memcpy(b->buf + b->len, line, n);
	b->len += n;
}

static int same_chain(const PCStackInfo *a, const PCStackInfo *b)
{
	return a->numstackframes == b->numstackframes &&
	       !memcmp(a->methods, b->methods, a->numstackframes * sizeof(jmethodID));
}

/* PcDescs are looked up "approximately": a PC belongs to the first
 * descriptor at or after it, so descriptor i covers (pc[i-1], pc[i]].  Runs
 * of equal chains are merged; chains without inlining are not written. */
static void publish_inline(jvmtiEnv *jvmti, uint64_t id, uint64_t code, uint64_t size,
			   const void *compile_info)
{
	const jvmtiCompiledMethodLoadRecordHeader *h = compile_info;
	while (h && h->kind != JVMTI_CMLR_INLINE_INFO)
		h = h->next;
	if (!h)
		return;
	const jvmtiCompiledMethodLoadInlineRecord *r = (const void *)h;
	struct name_cache *cache = calloc(1, sizeof(*cache));
	struct line_buf *b = malloc(sizeof(*b));
	if (!cache || !b)
		goto out;
	b->len = 0;
	uint64_t run_start = code, prev_end = code;
	const PCStackInfo *run = NULL;
	for (jint i = 0; i < r->numpcs; i++) {
		const PCStackInfo *p = &r->pcinfo[i];
		uint64_t end = (uint64_t)(uintptr_t)p->pc + 1;
		if (end <= prev_end || end > code + size || p->numstackframes <= 0)
			continue;
		if (run && !same_chain(run, p)) {
			if (run->numstackframes > 1)
				add_inline_record(jvmti, b, cache, id, run_start, prev_end, run);
			run_start = prev_end;
		}
		if (!run || !same_chain(run, p))
			run = p;
		prev_end = end;
	}
	if (run && run->numstackframes > 1)
		add_inline_record(jvmti, b, cache, id, run_start, prev_end, run);
	flush_lines(b);
out:
	if (cache)
		for (int i = 0; i < cache->n; i++)
			free(cache->name[i]);
	free(cache);
	free(b);
}

static void publish_code(char kind, uint64_t start, uint64_t size, const void *method,
			 char *name, jvmtiEnv *jvmti, const void *compile_info)
{
	struct agent *a = &the_agent;
	char line[SPARKPROF_HELPER_MAX_LINE];
	pthread_mutex_lock(&a->pub.lock);
	if (kind == 'D' && code_table_has(&a->code, start, size, name)) {
		/* Replays repeat blobs we already published. */
		pthread_mutex_unlock(&a->pub.lock);
		free(name);
		return;
	}
	uint64_t id = a->pub.next_code_id++;
	int n = snprintf(line, sizeof(line), "%c %" PRIu64 " %" PRIu64 " %" PRIx64 " %" PRIx64 " %s\n",
			 kind, agent_now_ns(), id, start, size, name);
	if (n > 0 && (size_t)n < sizeof(line))
		publisher_write(&a->pub, line, n);
	if (a->opt.inline_frames && compile_info)
		publish_inline(jvmti, id, start, size, compile_info);
	code_table_add(&a->code, start, size, id, method, name);
	pthread_mutex_unlock(&a->pub.lock);
}

static void JNICALL on_compiled_method_load(jvmtiEnv *jvmti, jmethodID method, jint code_size,
					    const void *code_addr, jint map_length,
					    const jvmtiAddrLocationMap *map, const void *compile_info)
{
	(void)map_length;
	(void)map;
	if (code_size <= 0 || !code_addr)
		return;
	uint64_t t0 = agent_cost_start();
	char *name = method_name(jvmti, method);
	if (!name)
		return;
	publish_code('L', (uintptr_t)code_addr, (uint64_t)code_size, method, name, jvmti,
		     compile_info);
	agent_cost(COST_CODE, t0);
}

static void JNICALL on_compiled_method_unload(jvmtiEnv *jvmti, jmethodID method,
					      const void *code_addr)
{
	(void)jvmti;
	struct agent *a = &the_agent;
	char line[96];
	uint64_t t0 = agent_cost_start();
	pthread_mutex_lock(&a->pub.lock);
	uint64_t id = code_table_remove(&a->code, (uintptr_t)code_addr, method);
	if (id) {
		int n = snprintf(line, sizeof(line), "U %" PRIu64 " %" PRIu64 "\n", agent_now_ns(), id);
		publisher_write(&a->pub, line, n);
	}
	pthread_mutex_unlock(&a->pub.lock);
	agent_cost(COST_UNLOAD, t0);
}

static void JNICALL on_dynamic_code(jvmtiEnv *jvmti, const char *name, const void *address,
				    jint length)
{
	(void)jvmti;
	if (length <= 0 || !address)
		return;
	uint64_t t0 = agent_cost_start();
	char *esc = malloc(MAX_NAME);
	if (!esc)
		return;
	escape_name(esc, MAX_NAME, name ? name : "[stub]");
	publish_code('D', (uintptr_t)address, (uint64_t)length, NULL, esc, NULL, NULL);
	agent_cost(COST_CODE, t0);
}

static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	(void)jvmti;
	uint64_t t0 = agent_cost_start();
	if (the_agent.opt.names)
		thread_names_on_start(&the_agent, jni, thread);
	agent_cost(COST_THREADS, t0);
}

static void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	(void)jvmti;
	uint64_t t0 = agent_cost_start();
	if (the_agent.opt.names)
		thread_names_on_end(&the_agent, jni, thread);
	agent_cost(COST_THREADS, t0);
}

static void JNICALL on_native_bind(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID method,
				   void *address, void **new_address)
{
	(void)jni;
	(void)thread;
	(void)method;
	thread_names_on_bind(&the_agent, address, new_address);
	if (the_agent.names.hooked)
		(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE,
						   JVMTI_EVENT_NATIVE_METHOD_BIND, NULL);
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
		uint64_t t0 = agent_cost_start();
		if (a->opt.map)
			perf_map_write(a, &map_generation);
		write_replay_mark(NULL);
		if (a->opt.names)
			thread_names_poll(a, jni, a->opt.idle);
		agent_cost(COST_WORKER, t0);
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
		thread_names_init(&the_agent, jni);
		thread_names_poll(&the_agent, jni, 0);
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
		perf_map_write(a, &force);
	}
	if (a->opt.stats)
		print_costs();
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
	a->attached = attached;

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
		thread_names_prepare_bind(a);
	publisher_open(&a->pub, getpid());
	char *version = NULL;
	(*jvmti)->GetSystemProperty(jvmti, "java.vm.version", &version);
	char line[256], esc[128];
	escape_name(esc, sizeof(esc), version ? version : "unknown");
	int n = snprintf(line, sizeof(line), "H %d %d %" PRIu64 " %s %s\n",
			 SPARKPROF_HELPER_LOG_VERSION, (int)getpid(), agent_now_ns(),
			 attached ? "attach" : "start", esc);
	pthread_mutex_lock(&a->pub.lock);
	publisher_write(&a->pub, line, n);
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
		thread_names_on_jni_load(&the_agent, jni);
	return JNI_VERSION_1_6;
}

EXPORT JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	(void)vm;
	/* Nothing to free: callbacks may still run on other threads, and the
	 * files stay for the profiler to read after the JVM is gone. */
}

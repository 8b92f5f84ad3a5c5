/* thread_names.c - thread names and idle marks (see thread_names.h). */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "diag.h"
#include "publish.h"
#include "sparkprof_helper_log.h"
#include "thread_names.h"

#define TASK_THREAD_PREFIX "Executor task launch worker"
#define IDLE_STACK_DEPTH 16

static pid_t my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Callers hold the publisher lock. */
static struct thread_name_entry *lookup(struct thread_names *t, pid_t tid, int create)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].tid == tid)
			return &t->v[i];
	if (!create)
		return NULL;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct thread_name_entry *v = realloc(t->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n] = (struct thread_name_entry){ .tid = tid, .idle = -1 };
	return &t->v[t->n++];
}

/* Publishes "T ts tid name" unless tid already carries that name, or,
 * given renames_before, tid was renamed since its name was read (the
 * newer name is out already). */
static void publish_name(struct thread_names *t, pid_t tid, const char *name,
			 const unsigned *renames_before)
{
	if (tid <= 0 || !name)
		return;
	char line[SPARKPROF_HELPER_MAX_LINE], esc[SPARKPROF_HELPER_MAX_LINE - 64];
	escape_name(esc, sizeof(esc), name);
	pthread_mutex_lock(&t->pub->lock);
	struct thread_name_entry *e = lookup(t, tid, 1);
	if (e && renames_before && e->renames != *renames_before)
		e = NULL;
	if (e && (!e->name || strcmp(e->name, name))) {
		char *copy = strdup(name);
		if (copy) {
			free(e->name);
			e->name = copy;
			e->renames++;
			/* Readers take a rename as the start of a task (busy);
			 * the next poll that finds the thread idle says so. */
			e->idle = 0;
			int n = snprintf(line, sizeof(line), "T %" PRIu64 " %d %s\n", agent_now_ns(),
					 (int)tid, esc);
			publisher_write(t->pub, line, (size_t)n < sizeof(line) ? (size_t)n : 0);
		}
	}
	pthread_mutex_unlock(&t->pub->lock);
}

/* How many times tid was renamed so far (0 when unknown). */
static unsigned renames_of(struct thread_names *t, pid_t tid)
{
	pthread_mutex_lock(&t->pub->lock);
	struct thread_name_entry *e = lookup(t, tid, 0);
	unsigned renames = e ? e->renames : 0;
	pthread_mutex_unlock(&t->pub->lock);
	return renames;
}

/* Publishes an idle/busy mark found by a stack check that started when
 * tid had been renamed renames_before times. If the thread was renamed
 * since (it took a task while we looked), the check is stale: the rename,
 * published with its own time, already says busy. */
static void publish_idle(struct thread_names *t, pid_t tid, int idle, unsigned renames_before)
{
	char line[128];
	pthread_mutex_lock(&t->pub->lock);
	struct thread_name_entry *e = lookup(t, tid, 0);
	if (e && e->idle != idle && e->renames == renames_before) {
		e->idle = idle;
		int n = snprintf(line, sizeof(line), "S %" PRIu64 " %d %s\n", agent_now_ns(),
				 (int)tid, idle ? "idle" : "busy");
		publisher_write(t->pub, line, n);
	}
	pthread_mutex_unlock(&t->pub->lock);
}

/* The tid ThreadStart or an earlier lookup stored; 0 if none. */
static pid_t stored_tid(struct thread_names *t, jthread thread)
{
	void *stored = NULL;
	if ((*t->jvmti)->GetThreadLocalStorage(t->jvmti, thread, &stored) != JVMTI_ERROR_NONE)
		return 0;
	return (pid_t)(intptr_t)stored;
}

static pid_t tid_of(struct thread_names *t, JNIEnv *jni, jthread thread, const char *name)
{
	pid_t tid = stored_tid(t, thread);
	if (tid > 0)
		return tid;
	tid = os_tid_find(&t->finder, jni, thread, name);
	if (tid > 0)
		(*t->jvmti)->SetThreadLocalStorage(t->jvmti, thread, (void *)(intptr_t)tid);
	return tid;
}

void thread_names_setup(struct thread_names *t, jvmtiEnv *jvmti, struct publisher *pub,
			struct agent_costs *costs, const volatile int *vm_dead,
			set_native_name_fn wrapper)
{
	t->jvmti = jvmti;
	t->pub = pub;
	t->costs = costs;
	t->vm_dead = vm_dead;
	t->wrapper = wrapper;
}

void thread_names_set_native_name(struct thread_names *t, JNIEnv *jni, jobject thread,
				  jstring name)
{
	if (!*t->vm_dead && name) {
		uint64_t t0 = agent_cost_start(t->costs);
		const char *utf = (*jni)->GetStringUTFChars(jni, name, NULL);
		if (utf) {
			publish_name(t, tid_of(t, jni, thread, NULL), utf, NULL);
			(*jni)->ReleaseStringUTFChars(jni, name, utf);
		}
		agent_cost(t->costs, COST_THREADS, t0);
	}
	if (t->original)
		t->original(jni, thread, name);
}

void thread_names_prepare_bind(struct thread_names *t)
{
	void *lib = libjvm_handle(t->jvmti);
	if (lib) {
		t->jvm_set_name = dlsym(lib, "JVM_SetNativeThreadName");
		dlclose(lib);
	}
}

/* Called in the primordial phase too, where JVMTI cannot name the method:
 * JVM_SetNativeThreadName is bound to Thread.setNativeName alone. */
void thread_names_on_bind(struct thread_names *t, void *address, void **new_address)
{
	if (t->hooked || !address || address != t->jvm_set_name)
		return;
	t->original = (set_native_name_fn)address;
	*new_address = (void *)t->wrapper;
	t->hooked = 1;
}

/* Rebinds setNativeName with RegisterNatives.  Called from the helper's
 * JNI_OnLoad when possible (see hook_set_native_name). */
static int register_wrapper(struct thread_names *t, JNIEnv *jni)
{
	jclass cls = (*jni)->FindClass(jni, "java/lang/Thread");
	if (!cls) {
		(*jni)->ExceptionClear(jni);
		return -1;
	}
	JNINativeMethod m = { "setNativeName", "(Ljava/lang/String;)V", (void *)t->wrapper };
	int rc = (*jni)->RegisterNatives(jni, cls, &m, 1);
	if (rc == 0)
		t->hooked = 1;
	else
		(*jni)->ExceptionClear(jni);
	(*jni)->DeleteLocalRef(jni, cls);
	return rc;
}

void thread_names_on_jni_load(struct thread_names *t, JNIEnv *jni)
{
	if (t->original && !t->hooked)
		register_wrapper(t, jni);
}

/* The JDK's feature version (17, 25...), 0 if unknown. */
static int jdk_feature(struct thread_names *t)
{
	char *v = NULL;
	if ((*t->jvmti)->GetSystemProperty(t->jvmti, "java.vm.specification.version", &v) !=
	    JVMTI_ERROR_NONE || !v)
		return 0;
	int feature = atoi(v);
	(*t->jvmti)->Deallocate(t->jvmti, (unsigned char *)v);
	return feature;
}

/* A late attach misses Thread's own registration.  RegisterNatives called
 * straight from the helper makes HotSpot log a warning (jni+resolve) on the
 * JVM's stdout, because no caller class of the platform loader is on the
 * stack.  Up to JDK 23 the helper therefore loads itself with System.load:
 * its JNI_OnLoad then runs under java.base's NativeLibraries frames and
 * rebinds quietly.  From JDK 24 on System.load from JNI prints four lines
 * about restricted methods (JEP 472), so there the one-line warning is the
 * lesser evil. */
static void hook_set_native_name(struct thread_names *t, JNIEnv *jni)
{
	if (t->hooked)
		return;
	void *lib = libjvm_handle(t->jvmti);
	if (lib) {
		t->original = (set_native_name_fn)dlsym(lib, "JVM_SetNativeThreadName");
		dlclose(lib);
	}
	if (!t->original) {
		agent_say("JVM_SetNativeThreadName not found in libjvm; renames are seen by polling only");
		return;
	}
	Dl_info self;
	int feature = jdk_feature(t);
	jclass sys = feature && feature < 24 ? (*jni)->FindClass(jni, "java/lang/System") : NULL;
	jmethodID load = sys ? (*jni)->GetStaticMethodID(jni, sys, "load", "(Ljava/lang/String;)V") : NULL;
	if (load && dladdr((void *)hook_set_native_name, &self) && self.dli_fname &&
	    self.dli_fname[0] == '/') {
		jstring path = (*jni)->NewStringUTF(jni, self.dli_fname);
		if (path)
			(*jni)->CallStaticVoidMethod(jni, sys, load, path);
	}
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	if (sys)
		(*jni)->DeleteLocalRef(jni, sys);
	if (!t->hooked && register_wrapper(t, jni) != 0)
		agent_say("cannot rebind Thread.setNativeName; renames are seen by polling only");
}

void thread_names_init(struct thread_names *t, JNIEnv *jni)
{
	os_tid_finder_init(&t->finder, t->jvmti, jni);
	hook_set_native_name(t, jni);
}

static char *thread_name(struct thread_names *t, JNIEnv *jni, jthread thread)
{
	jvmtiThreadInfo info;
	memset(&info, 0, sizeof(info));
	if ((*t->jvmti)->GetThreadInfo(t->jvmti, thread, &info) != JVMTI_ERROR_NONE)
		return NULL;
	if (info.thread_group)
		(*jni)->DeleteLocalRef(jni, info.thread_group);
	if (info.context_class_loader)
		(*jni)->DeleteLocalRef(jni, info.context_class_loader);
	return info.name;   /* Deallocate() it */
}

void thread_names_on_start(struct thread_names *t, JNIEnv *jni, jthread thread)
{
	pid_t tid = my_tid();
	(*t->jvmti)->SetThreadLocalStorage(t->jvmti, thread, (void *)(intptr_t)tid);
	char *name = thread_name(t, jni, thread);
	if (name) {
		publish_name(t, tid, name, NULL);
		(*t->jvmti)->Deallocate(t->jvmti, (unsigned char *)name);
	}
}

void thread_names_on_end(struct thread_names *t, JNIEnv *jni, jthread thread)
{
	(void)jni;
	(void)thread;
	pid_t tid = my_tid();
	char line[96];
	pthread_mutex_lock(&t->pub->lock);
	struct thread_name_entry *e = lookup(t, tid, 0);
	if (e) {
		free(e->name);
		*e = t->v[--t->n];
	}
	int n = snprintf(line, sizeof(line), "X %" PRIu64 " %d\n", agent_now_ns(), (int)tid);
	publisher_write(t->pub, line, n);
	pthread_mutex_unlock(&t->pub->lock);
}

/* Idle = parked in ThreadPoolExecutor.getTask: a running task never has
 * getTask on its stack, and an idle pool thread always has it near the top. */
static int is_idle(struct thread_names *t, JNIEnv *jni, jthread thread)
{
	if (!t->get_task_looked_up) {
		t->get_task_looked_up = 1;
		jclass cls = (*jni)->FindClass(jni, "java/util/concurrent/ThreadPoolExecutor");
		if (cls)
			t->get_task = (*jni)->GetMethodID(jni, cls, "getTask",
							  "()Ljava/lang/Runnable;");
		if ((*jni)->ExceptionCheck(jni))
			(*jni)->ExceptionClear(jni);
	}
	if (!t->get_task)
		return -1;
	jvmtiFrameInfo frames[IDLE_STACK_DEPTH];
	jint count = 0;
	if ((*t->jvmti)->GetStackTrace(t->jvmti, thread, 0, IDLE_STACK_DEPTH, frames, &count) !=
	    JVMTI_ERROR_NONE)
		return -1;
	for (jint i = 0; i < count; i++)
		if (frames[i].method == t->get_task)
			return 1;
	return 0;
}

void thread_names_poll(struct thread_names *t, JNIEnv *jni, int with_idle)
{
	jint n = 0;
	jthread *threads = NULL;
	if ((*t->jvmti)->GetAllThreads(t->jvmti, &n, &threads) != JVMTI_ERROR_NONE)
		return;
	for (jint i = 0; i < n && !*t->vm_dead; i++) {
		if ((*jni)->PushLocalFrame(jni, 16) < 0) {
			(*jni)->ExceptionClear(jni);
			break;
		}
		/* The rename count before the name is read: a rename in
		 * between is newer than what the poll read. (A thread whose
		 * tid is first found here has no count yet.) */
		pid_t tid = stored_tid(t, threads[i]);
		unsigned renames = tid > 0 ? renames_of(t, tid) : 0;
		char *name = thread_name(t, jni, threads[i]);
		if (name) {
			if (tid <= 0) {
				tid = tid_of(t, jni, threads[i], name);
				renames = renames_of(t, tid);
			}
			publish_name(t, tid, name, &renames);
			if (with_idle && tid > 0 &&
			    !strncmp(name, TASK_THREAD_PREFIX, strlen(TASK_THREAD_PREFIX))) {
				unsigned checked_at = renames_of(t, tid);
				int idle = is_idle(t, jni, threads[i]);
				if (idle >= 0)
					publish_idle(t, tid, idle, checked_at);
			}
			(*t->jvmti)->Deallocate(t->jvmti, (unsigned char *)name);
		}
		(*jni)->PopLocalFrame(jni, NULL);
		(*jni)->DeleteLocalRef(jni, threads[i]);
	}
	(*t->jvmti)->Deallocate(t->jvmti, (unsigned char *)threads);
}

/* thread_names.h - publishes each Java thread's OS tid and full name.
 *
 * - ThreadStart runs on the new thread: gettid() and its name are exact.
 * - Renames: java.lang.Thread.setNativeName is rebound (JNI RegisterNatives)
 *   to a wrapper that publishes the name and then calls the JVM's own
 *   JVM_SetNativeThreadName.  Java calls it when a thread renames itself
 *   (all JDKs) and, up to JDK 18, when any started thread is renamed.
 * - The worker polls all threads every interval and publishes names that
 *   changed without passing through the wrapper (JDK 19+ renames of another
 *   thread), and idle/busy marks of Spark task threads.
 * - On attach (and at VMInit), threads that already exist are published
 *   with their OS tid found by os_tid.h.
 * The tid of each thread is kept in JVMTI thread-local storage.
 */
#ifndef SPARKPROF_AGENT_THREAD_NAMES_H
#define SPARKPROF_AGENT_THREAD_NAMES_H

#include <jni.h>
#include <jvmti.h>
#include <sys/types.h>

#include "os_tid.h"

struct thread_name_entry {
	pid_t tid;
	char *name;     /* as published (unescaped) */
	int idle;       /* -1 unknown, 0 busy, 1 idle */
	unsigned renames; /* counts renames: an idle check that a rename
			   * overtook is stale and dropped */
};

struct agent_costs;
struct publisher;

/* The native signature of java.lang.Thread.setNativeName. */
typedef void (*set_native_name_fn)(JNIEnv *, jobject, jstring);

struct thread_names {
	/* Context, from thread_names_setup. */
	jvmtiEnv *jvmti;
	struct publisher *pub;      /* its lock also guards v */
	struct agent_costs *costs;
	const volatile int *vm_dead;
	set_native_name_fn wrapper; /* the helper's binding of setNativeName */

	struct thread_name_entry *v;
	size_t n, cap;
	struct os_tid_finder finder;
	jmethodID get_task;      /* ThreadPoolExecutor.getTask, once seen */
	int get_task_looked_up;
	set_native_name_fn original;
	int hooked;
	void *jvm_set_name;      /* JVM_SetNativeThreadName, for the bind event */
};

/* A JNI native has no context argument, so the wrapper lives beside the
 * helper's one global and calls thread_names_set_native_name. */
void thread_names_setup(struct thread_names *t, jvmtiEnv *jvmti, struct publisher *pub,
			struct agent_costs *costs, const volatile int *vm_dead,
			set_native_name_fn wrapper);

/* Finds the tid helpers and rebinds Thread.setNativeName.  Live phase. */
void thread_names_init(struct thread_names *t, JNIEnv *jni);

/* NativeMethodBind (helper loaded at start): swaps in the wrapper when
 * java.lang.Thread registers setNativeName. */
void thread_names_prepare_bind(struct thread_names *t);
void thread_names_on_bind(struct thread_names *t, void *address, void **new_address);

/* From the helper's JNI_OnLoad (System.load during attach). */
void thread_names_on_jni_load(struct thread_names *t, JNIEnv *jni);

/* The body of the wrapper: publishes the name, then renames as the JVM
 * would. */
void thread_names_set_native_name(struct thread_names *t, JNIEnv *jni, jobject thread,
				  jstring name);

void thread_names_on_start(struct thread_names *t, JNIEnv *jni, jthread thread);
void thread_names_on_end(struct thread_names *t, JNIEnv *jni, jthread thread);

/* Publishes every live thread's name (and, if replay, marks the end with an
 * R record); worker's poll and attach replay.  with_idle adds idle marks. */
void thread_names_poll(struct thread_names *t, JNIEnv *jni, int with_idle);

#endif

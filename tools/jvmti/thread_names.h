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

struct thread_names {
	struct thread_name_entry *v;
	size_t n, cap;
	struct os_tid_finder finder;
	jmethodID get_task;      /* ThreadPoolExecutor.getTask, once seen */
	int get_task_looked_up;
	void (*original)(JNIEnv *, jobject, jstring);
	int hooked;
	void *jvm_set_name;      /* JVM_SetNativeThreadName, for the bind event */
};

struct agent;

/* Finds the tid helpers and rebinds Thread.setNativeName.  Live phase. */
void thread_names_init(struct agent *a, JNIEnv *jni);

/* NativeMethodBind (helper loaded at start): swaps in the wrapper when
 * java.lang.Thread registers setNativeName. */
void thread_names_prepare_bind(struct agent *a);
void thread_names_on_bind(struct agent *a, void *address, void **new_address);

/* From the helper's JNI_OnLoad (System.load during attach). */
void thread_names_on_jni_load(struct agent *a, JNIEnv *jni);

void thread_names_on_start(struct agent *a, JNIEnv *jni, jthread thread);
void thread_names_on_end(struct agent *a, JNIEnv *jni, jthread thread);

/* Publishes every live thread's name (and, if replay, marks the end with an
 * R record); worker's poll and attach replay.  with_idle adds idle marks. */
void thread_names_poll(struct agent *a, JNIEnv *jni, int with_idle);

#endif

/* os_tid.h - the OS thread id of a java.lang.Thread that is not the caller.
 *
 * JVMTI does not expose it.  HotSpot keeps the JavaThread* in the Thread
 * object's `eetop` field, and its exported serviceability tables
 * (gHotSpotVMStructs) give the offsets of Thread::_osthread and
 * OSThread::_thread_id.  Memory is read with process_vm_readv on ourselves,
 * so a thread that exits meanwhile gives an error, never a crash.  When
 * that fails, a thread whose 15-character comm matches its name uniquely
 * in /proc/self/task is taken.
 */
#ifndef SPARKPROF_AGENT_OS_TID_H
#define SPARKPROF_AGENT_OS_TID_H

#include <jni.h>
#include <jvmti.h>
#include <sys/types.h>

struct os_tid_finder {
	int ready;               /* offsets found */
	long off_osthread;       /* Thread::_osthread */
	long off_thread_id;      /* OSThread::_thread_id */
	jfieldID eetop;
};

/* Looks up libjvm's tables; a finder that is not ready still matches comm. */
void os_tid_finder_init(struct os_tid_finder *f, jvmtiEnv *jvmti, JNIEnv *jni);

/* tid of thread (named name, may be NULL), or 0 if it cannot be told. */
pid_t os_tid_find(struct os_tid_finder *f, JNIEnv *jni, jthread thread, const char *name);

/* The loaded libjvm (RTLD_NOLOAD handle), found from a JVMTI function's
 * address; NULL if it cannot be found. */
void *libjvm_handle(jvmtiEnv *jvmti);

#endif

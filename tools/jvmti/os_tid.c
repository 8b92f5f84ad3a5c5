/* os_tid.c - OS thread id of another Java thread (see os_tid.h). */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "os_tid.h"

void *libjvm_handle(jvmtiEnv *jvmti)
{
	Dl_info info;
	/* Any JVMTI entry point lives in libjvm. */
	if (!dladdr((void *)(*jvmti)->GetVersionNumber, &info) || !info.dli_fname)
		return NULL;
	return dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
}

static int read_self(uint64_t addr, void *out, size_t len)
{
	struct iovec local = { out, len }, remote = { (void *)(uintptr_t)addr, len };
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

static uint64_t sym_u64(void *lib, const char *name, int *ok)
{
	uint64_t *p = dlsym(lib, name);
	if (!p) {
		*ok = 0;
		return 0;
	}
	return *p;
}

void os_tid_finder_init(struct os_tid_finder *f, jvmtiEnv *jvmti, JNIEnv *jni)
{
	*f = (struct os_tid_finder){ .off_osthread = -1, .off_thread_id = -1 };
	jclass cls = (*jni)->FindClass(jni, "java/lang/Thread");
	if (cls) {
		f->eetop = (*jni)->GetFieldID(jni, cls, "eetop", "J");
		(*jni)->DeleteLocalRef(jni, cls);
	}
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	void *lib = libjvm_handle(jvmti);
	if (!lib || !f->eetop)
		return;
	int ok = 1;
	char **structs = dlsym(lib, "gHotSpotVMStructs");
	uint64_t stride = sym_u64(lib, "gHotSpotVMStructEntryArrayStride", &ok);
	uint64_t o_type = sym_u64(lib, "gHotSpotVMStructEntryTypeNameOffset", &ok);
	uint64_t o_field = sym_u64(lib, "gHotSpotVMStructEntryFieldNameOffset", &ok);
	uint64_t o_off = sym_u64(lib, "gHotSpotVMStructEntryOffsetOffset", &ok);
	if (!ok || !structs || !*structs || stride == 0 || stride > 4096)
		goto out;
	for (char *e = *structs;; e += stride) {
		const char *type = *(const char **)(e + o_type);
		const char *field = *(const char **)(e + o_field);
		if (!type)
			break;
		if (!field)
			continue;
		/* JDK 17 lists the field under JavaThread, JDK 25 under Thread. */
		if ((!strcmp(type, "Thread") || !strcmp(type, "JavaThread")) &&
		    !strcmp(field, "_osthread"))
			f->off_osthread = (long)*(uint64_t *)(e + o_off);
		else if (!strcmp(type, "OSThread") && !strcmp(field, "_thread_id"))
			f->off_thread_id = (long)*(uint64_t *)(e + o_off);
	}
	f->ready = f->off_osthread >= 0 && f->off_thread_id >= 0;
out:
	dlclose(lib);
}

static int task_exists(pid_t tid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/task/%d", (int)tid);
	return access(path, F_OK) == 0;
}

static pid_t tid_by_comm(const char *name)
{
	if (!name || !*name)
		return 0;
	char want[16];
	snprintf(want, sizeof(want), "%s", name);
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return 0;
	pid_t found = 0;
	int matches = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		int tid = atoi(de->d_name);
		if (tid <= 0)
			continue;
		char path[64], comm[32];
		snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		if (n <= 0)
			continue;
		comm[n] = 0;
		comm[strcspn(comm, "\n")] = 0;
		if (!strcmp(comm, want)) {
			found = tid;
			matches++;
		}
	}
	closedir(d);
	return matches == 1 ? found : 0;
}

pid_t os_tid_find(struct os_tid_finder *f, JNIEnv *jni, jthread thread, const char *name)
{
	if (f->ready) {
		uint64_t javathread = (uint64_t)(*jni)->GetLongField(jni, thread, f->eetop);
		uint64_t osthread = 0;
		int32_t tid = 0;
		if (javathread &&
		    !read_self(javathread + f->off_osthread, &osthread, sizeof(osthread)) && osthread &&
		    !read_self(osthread + f->off_thread_id, &tid, sizeof(tid)) && tid > 0 &&
		    task_exists(tid))
			return tid;
	}
	return tid_by_comm(name);
}

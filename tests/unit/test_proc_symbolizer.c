/* test_proc_symbolizer.c - naming native addresses of real processes: this
 * test itself (its code, libc, the vDSO, libjvm, a library loaded later,
 * anonymous executable memory) and children running symbols_target (PIE,
 * non-PIE, deleted executable), including after they exited. */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shell_tools.h"
#include "symbols/binary_cache.h"
#include "symbols/proc_symbolizer.h"
#include "sparkprof_events.h"
#include "tap.h"

#define TARGET "build/progs/symbols_target"
#define JVM_LIB "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"

static char tmpdir[] = "/tmp/sparkprof-psym-XXXXXX";

struct child {
	pid_t pid;
	FILE *out;    /* its stdout */
	int in_fd;    /* its stdin: closing it ends the child */
	uint64_t alpha, beta, gamma, sized_short, target_run, vdso_base, vdso_gettime;
};

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Symbol values from nm; plain nm (the symbol table) for every file. */
static uint64_t nm_value(const char *file, const char *name)
{
	return nm_symbol_value(file, name, false);
}

static int start_child_argv(char *const argv[], struct child *c);

static int start_child(const char *path, struct child *c)
{
	char *const argv[] = { (char *)path, NULL };
	return start_child_argv(argv, c);
}

static int start_child_argv(char *const argv[], struct child *c)
{
	int in[2], out[2];
	char line[256], name[64];
	unsigned long long addr;

	memset(c, 0, sizeof(*c));
	if (pipe(in) || pipe(out))
		return -1;
	c->pid = fork();
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in_fd = in[1];
	c->out = fdopen(out[0], "r");
	while (c->out && fgets(line, sizeof(line), c->out)) {
		if (strncmp(line, "ready", 5) == 0)
			return 0;
		if (sscanf(line, "%63s %llx", name, &addr) != 2)
			continue;
		if (!strcmp(name, "symtarget_leaf_alpha")) c->alpha = addr;
		else if (!strcmp(name, "symtarget_middle_beta")) c->beta = addr;
		else if (!strcmp(name, "symtarget_outer_gamma")) c->gamma = addr;
		else if (!strcmp(name, "sized_short")) c->sized_short = addr;
		else if (!strcmp(name, "target_run")) c->target_run = addr;
		else if (!strcmp(name, "vdso_base")) c->vdso_base = addr;
		else if (!strcmp(name, "vdso_clock_gettime")) c->vdso_gettime = addr;
	}
	return -1;
}

static void stop_child(struct child *c)
{
	int status;

	if (c->pid <= 0)
		return;
	close(c->in_fd);
	waitpid(c->pid, &status, 0);
	if (c->out)
		fclose(c->out);
	c->pid = 0;
}

static const char *resolve_name(struct proc_symbolizer *ps, uint64_t addr, enum frame_type *type)
{
	struct frame f = { 0 };

	if (proc_symbolizer_resolve(ps, addr, &f) != PROC_SYM_OK)
		return NULL;
	if (type)
		*type = f.type;
	return f.name;
}

/* Every known function of a symbols_target child is named right. */
static void check_child_names(struct proc_symbolizer *ps, const struct child *c,
			      const char *binary, const char *what)
{
	enum frame_type type = FRAME_TYPE_MAX;
	const char *name;
	char want[128];

	CHECK_STR(resolve_name(ps, c->alpha, &type), "symtarget_leaf_alpha", "%s: alpha", what);
	CHECK(type == FRAME_NATIVE, "%s: native frame", what);
	CHECK_STR(resolve_name(ps, c->beta + 3, NULL), "symtarget_middle_beta", "%s: beta+3", what);
	CHECK_STR(resolve_name(ps, c->gamma + 1, NULL), "symtarget_outer_gamma", "%s: gamma+1", what);
	CHECK_STR(resolve_name(ps, c->target_run + 4, NULL), "sparkprof::Target::run",
		  "%s: C++ name demangled", what);
	CHECK_STR(resolve_name(ps, c->sized_short + 1, NULL), "sized_short", "%s: inside sized_short", what);
	/* Past the 2-byte symbol: the file's name and the ELF address, never
	 * "sized_short". */
	snprintf(want, sizeof(want), "%s+0x%" PRIx64, strrchr(binary, '/') + 1,
		 nm_value(binary, "sized_short") + 4);
	CHECK_STR(resolve_name(ps, c->sized_short + 4, NULL), want, "%s: past a symbol's end", what);
	name = c->vdso_gettime ? resolve_name(ps, c->vdso_gettime + 2, NULL) : NULL;
	CHECK(name && strstr(name, "clock_gettime"), "%s: vDSO clock_gettime (%s)", what,
	      name ? name : "null");
}

static void test_child(struct binary_cache *bc, const char *binary, const char *what)
{
	struct child c;
	struct proc_symbolizer *ps;
	struct frame f;
	pid_t pid;

	if (start_child(binary, &c) != 0 || !c.alpha) {
		CHECK(0, "%s: start %s", what, binary);
		stop_child(&c);
		return;
	}
	pid = c.pid;
	ps = proc_symbolizer_new(bc, pid);
	CHECK(ps != NULL, "%s: symbolizer for pid %d", what, (int)pid);
	if (!ps) {
		stop_child(&c);
		return;
	}
	check_child_names(ps, &c, binary, what);
	CHECK(proc_symbolizer_resolve(ps, 0x1000, &f) == PROC_SYM_UNMAPPED, "%s: page 1 unmapped", what);

	stop_child(&c);
	check_child_names(ps, &c, binary, "after the child exited");
	sleep_ms(110);
	CHECK(proc_symbolizer_refresh(ps) == -ESRCH, "%s: refresh of an exited process: -ESRCH", what);
	check_child_names(ps, &c, binary, "after a refresh of the exited child");
	CHECK(proc_symbolizer_new(bc, pid) == NULL && errno == ESRCH,
	      "%s: new symbolizer for the exited pid: ESRCH", what);
	proc_symbolizer_free(ps);
}

static __attribute__((noinline)) int local_marker_function(int x)
{
	return x * 7 + 1;
}

/* A named PLT stub of libc, as objdump shows it (libc may come with a
 * separate debug file, whose PLT is empty: the stubs must survive). */
static void check_libc_plt(struct proc_symbolizer *ps, void *libc_function)
{
	char cmd[600], line[512], label[256], want[256] = "";
	unsigned long long addr, want_addr = 0;
	Dl_info info;
	FILE *p;

	if (!libc_function || !dladdr(libc_function, &info)) {
		CHECK(0, "dladdr on a libc function");
		return;
	}
	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt %s", info.dli_fname);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p))
		if (!want[0] && sscanf(line, "%llx <%255[^>]>:", &addr, label) == 2 &&
		    label[0] != '*' && strlen(label) > 4 && !strcmp(label + strlen(label) - 4, "@plt")) {
			strcpy(want, label);
			want_addr = addr;
		}
	if (p)
		pclose(p);
	CHECK(want[0] != '\0', "objdump shows a named PLT stub in %s", info.dli_fname);
	if (want[0])
		CHECK_STR(resolve_name(ps, (uint64_t)(uintptr_t)info.dli_fbase + want_addr + 2, NULL),
			  want, "libc PLT stub named");
}

/* libc calls its own memcpy, strlen... through IRELATIVE stubs, which
 * objdump labels "*ABS*+0xADDR@plt": each is named after the IFUNC symbol
 * at ADDR, its global name where it also has weak aliases (memcmp, not
 * bcmp). */
static void check_libc_irelative(struct proc_symbolizer *ps, void *libc_function)
{
	struct ifunc { unsigned long long addr; char name[128]; bool global; } ifuncs[512];
	char cmd[600], line[512];
	size_t nifuncs = 0, stubs = 0, named = 0;
	unsigned long long addr, target;
	Dl_info info;
	FILE *p;

	if (!libc_function || !dladdr(libc_function, &info))
		return;
	snprintf(cmd, sizeof(cmd), "readelf -W --dyn-syms %s", info.dli_fname);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p) && nifuncs < 512) {
		char type[16], bind[16], name[128];
		struct ifunc *f = &ifuncs[nifuncs];

		if (sscanf(line, "%*s %llx %*s %15s %15s %*s %*s %127s", &f->addr, type, bind,
			   name) == 4 && !strcmp(type, "IFUNC")) {
			name[strcspn(name, "@")] = '\0';
			strcpy(f->name, name);
			f->global = !strcmp(bind, "GLOBAL");
			nifuncs++;
		}
	}
	if (p)
		pclose(p);
	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt %s", info.dli_fname);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		const char *got;
		bool any_global = false, right = false;
		int end = 0;

		/* Not the header, "<*ABS*+0x...@plt-0x10>:". */
		if (sscanf(line, "%llx <*ABS*+0x%llx@plt>:%n", &addr, &target, &end) != 2 || !end)
			continue;
		stubs++;
		got = resolve_name(ps, (uint64_t)(uintptr_t)info.dli_fbase + addr + 2, NULL);
		for (size_t i = 0; i < nifuncs; i++)
			any_global |= ifuncs[i].addr == target && ifuncs[i].global;
		for (size_t i = 0; got && i < nifuncs; i++) {
			size_t len = strlen(ifuncs[i].name);

			if (ifuncs[i].addr == target && (ifuncs[i].global || !any_global) &&
			    !strncmp(got, ifuncs[i].name, len) && !strcmp(got + len, "@plt"))
				right = true;
		}
		named += right;
		if (!right)
			CHECK(0, "IRELATIVE stub at 0x%llx to 0x%llx: %s", addr, target,
			      got ? got : "unnamed");
	}
	if (p)
		pclose(p);
	CHECK(stubs > 0 && named == stubs, "libc's %zu IRELATIVE stubs named after their IFUNC "
	      "(%zu right)", stubs, named);
}

static void test_self(struct binary_cache *bc)
{
	struct proc_symbolizer *ps = proc_symbolizer_new(bc, getpid());
	void *vdso = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
	void *gettime = vdso ? dlsym(vdso, "__vdso_clock_gettime") : NULL;
	/* libc's own qsort (a sanitizer would interpose its own). */
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	void *qs = libc ? dlsym(libc, "qsort") : NULL;
	enum frame_type type;
	const char *name;
	struct frame f;

	CHECK(ps != NULL, "symbolizer for ourselves");
	if (!ps)
		return;
	CHECK_STR(resolve_name(ps, (uint64_t)(uintptr_t)&local_marker_function + 2, &type),
		  "local_marker_function", "a static function of this test");
	CHECK_STR(resolve_name(ps, (uint64_t)(uintptr_t)qs + 1, &type), "qsort", "qsort in libc");
	CHECK(type == FRAME_NATIVE, "libc frame is FRAME_NATIVE");
	check_libc_plt(ps, qs);
	check_libc_irelative(ps, qs);
	name = gettime ? resolve_name(ps, (uint64_t)(uintptr_t)gettime, NULL) : NULL;
	CHECK(name && strstr(name, "clock_gettime"), "our vDSO's clock_gettime (%s)", name ? name : "null");

	/* Code made after the symbolizer: unknown until a refresh, then JIT-like. */
	void *jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(jit != MAP_FAILED, "anonymous executable page");
	sleep_ms(110);
	CHECK(proc_symbolizer_refresh(ps) == 1, "refresh after 110 ms works");
	CHECK(proc_symbolizer_refresh(ps) == -EAGAIN, "immediate second refresh: -EAGAIN");
	CHECK(proc_symbolizer_resolve(ps, (uint64_t)(uintptr_t)jit + 16, &f) == PROC_SYM_ANON_EXEC,
	      "address in anonymous executable memory: ANON_EXEC");

	/* A library loaded after the symbolizer was made. */
	char src[300], lib[300], cmd[1024];
	snprintf(src, sizeof(src), "%s/late.c", tmpdir);
	snprintf(lib, sizeof(lib), "%s/liblate.so", tmpdir);
	FILE *fs = fopen(src, "w");
	if (fs) {
		fputs("int late_loaded_function(int x) { return x * 5 + 3; }\n", fs);
		fclose(fs);
	}
	snprintf(cmd, sizeof(cmd), "cc -O1 -shared -fPIC -o %s %s", lib, src);
	void *h = fs && run(cmd) == 0 ? dlopen(lib, RTLD_NOW) : NULL;
	void *late = h ? dlsym(h, "late_loaded_function") : NULL;
	CHECK(late != NULL, "late library loaded");
	if (late) {
		uint64_t stack[] = { (uint64_t)(uintptr_t)qs, SP_USTACK_METHOD_TAG | 0x10,
				     (uint64_t)(uintptr_t)late };

		CHECK(proc_symbolizer_maps_hold(ps, stack, 2) && !proc_symbolizer_maps_hold(ps, stack, 3),
		      "the maps hold qsort (a tagged method entry is not looked at), not the late "
		      "library");
		CHECK(proc_symbolizer_resolve(ps, (uint64_t)(uintptr_t)late, &f) == PROC_SYM_UNMAPPED,
		      "late library: unmapped before a refresh");
		sleep_ms(110);
		CHECK(proc_symbolizer_refresh(ps) == 1, "refresh");
		CHECK(proc_symbolizer_maps_hold(ps, stack, 3), "the maps hold it after a refresh");
		CHECK_STR(resolve_name(ps, (uint64_t)(uintptr_t)late + 1, NULL), "late_loaded_function",
			  "late library named after a refresh");

		/* Maps read while ld.so maps a library show its code before it
		 * turns executable: a function there is still named. */
		void *code = (void *)((uintptr_t)late & ~(uintptr_t)4095);

		CHECK(mprotect(code, 4096, PROT_READ) == 0, "the late library's code made read-only");
		sleep_ms(110);
		CHECK(proc_symbolizer_refresh(ps) == 1, "refresh");
		CHECK_STR(resolve_name(ps, (uint64_t)(uintptr_t)late + 1, NULL), "late_loaded_function",
			  "a function in a mapping not executable (yet) is named");
		CHECK(mprotect(code, 4096, PROT_READ | PROT_EXEC) == 0, "and executable again");
	}

	/* libjvm.so: its frames are C++ frames, its names demangled. */
	void *jvm = dlopen(JVM_LIB, RTLD_LAZY | RTLD_LOCAL);
	void *create = jvm ? dlsym(jvm, "JNI_CreateJavaVM") : NULL;
	Dl_info info;
	CHECK(create != NULL, "libjvm.so loads into the test (%s)", jvm ? "ok" : dlerror());
	if (create && dladdr(create, &info)) {
		uint64_t inner = nm_value(JVM_LIB, "_ZN10JavaThread17thread_main_innerEv");
		sleep_ms(110);
		CHECK(proc_symbolizer_refresh(ps) == 1, "refresh after loading libjvm");
		type = FRAME_TYPE_MAX;
		CHECK_STR(resolve_name(ps, (uint64_t)(uintptr_t)create, &type), "JNI_CreateJavaVM",
			  "exported libjvm function");
		CHECK(type == FRAME_CPP, "libjvm frame is FRAME_CPP");
		CHECK(inner != 0, "nm finds JavaThread::thread_main_inner in libjvm");
		type = FRAME_TYPE_MAX;
		CHECK_STR(resolve_name(ps, (uint64_t)(uintptr_t)info.dli_fbase + inner + 8, &type),
			  "JavaThread::thread_main_inner", "libjvm C++ name from .symtab, demangled");
		CHECK(type == FRAME_CPP, "and a C++ frame");
	}
	CHECK(proc_symbolizer_resolve(ps, 0x10, &f) == PROC_SYM_UNMAPPED, "address 0x10: unmapped");
	proc_symbolizer_free(ps);
}

/* A program whose file was deleted while it runs is still named. */
static void test_deleted_executable(struct binary_cache *bc)
{
	char copy[300], cmd[700];
	struct child c;
	struct proc_symbolizer *ps;

	snprintf(copy, sizeof(copy), "%s/deleted_target", tmpdir);
	snprintf(cmd, sizeof(cmd), "cp " TARGET " %s", copy);
	if (run(cmd) != 0 || start_child(copy, &c) != 0) {
		CHECK(0, "start a copy of the test program");
		return;
	}
	uint64_t want_off = nm_value(copy, "sized_short") + 4;
	struct binary_cache_stats before, after;
	unlink(copy);
	binary_cache_get_stats(bc, &before);
	ps = proc_symbolizer_new(bc, c.pid);
	binary_cache_get_stats(bc, &after);
	CHECK(after.build_id_hits == before.build_id_hits + 1 && after.loads == before.loads,
	      "a copy of a known file is recognised by build-id, not parsed again");
	CHECK(ps != NULL, "symbolizer for a process whose executable is deleted");
	if (ps) {
		char want[128];
		CHECK_STR(resolve_name(ps, c.alpha, NULL), "symtarget_leaf_alpha",
			  "deleted executable: named through map_files");
		snprintf(want, sizeof(want), "deleted_target+0x%" PRIx64, want_off);
		CHECK_STR(resolve_name(ps, c.sized_short + 4, NULL), want, "deleted executable: unnamed code");
		proc_symbolizer_free(ps);
	}
	stop_child(&c);
}

/* A process in its own mount namespace runs a file the host cannot see
 * (as in a container): it is still named. */
static void test_private_mount(struct binary_cache *bc)
{
	char dir[300], script[1400];
	struct child c;
	struct proc_symbolizer *ps;

	snprintf(dir, sizeof(dir), "%s/private", tmpdir);
	if (mkdir(dir, 0755) != 0) {
		CHECK(0, "mkdir %s", dir);
		return;
	}
	/* Built in place (another path, so another build-id): not cached yet. */
	snprintf(script, sizeof(script),
		 "mount -t tmpfs none %s && cc -O1 -g -o %s/hidden_target -Wl,--build-id=sha1 "
		 "tests/progs/symbols_target.c && exec %s/hidden_target",
		 dir, dir, dir);
	char *const argv[] = { "/usr/bin/unshare", "-m", "--propagation", "private", "/bin/sh",
			       "-c", script, NULL };
	if (start_child_argv(argv, &c) != 0 || !c.alpha) {
		CHECK(0, "start a program in a private mount namespace");
		stop_child(&c);
		return;
	}
	char hidden[400];
	snprintf(hidden, sizeof(hidden), "%s/hidden_target", dir);
	CHECK(access(hidden, F_OK) != 0, "the host does not see the namespace's file");
	ps = proc_symbolizer_new(bc, c.pid);
	CHECK(ps != NULL, "symbolizer for the namespaced process");
	if (ps) {
		CHECK_STR(resolve_name(ps, c.alpha, NULL), "symtarget_leaf_alpha",
			  "a file visible only in the process's mount namespace is named");
		proc_symbolizer_free(ps);
	}
	stop_child(&c);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Milliseconds until resolve_fresh finds code at page (looked up every
 * 5 ms), 0 if not within 5 s. */
static uint64_t ms_until_found(struct proc_symbolizer *ps, void *page)
{
	uint64_t t0 = mono_ms();
	struct frame f;

	while (mono_ms() - t0 < 5000) {
		if (proc_symbolizer_resolve_fresh(ps, (uint64_t)(uintptr_t)page + 8, &f) ==
		    PROC_SYM_ANON_EXEC) {
			uint64_t ms = mono_ms() - t0;

			return ms ? ms : 1;
		}
		sleep_ms(5);
	}
	return 0;
}

/* An address no mapping holds, looked up again and again (a walk through
 * code without frame pointers), reads the maps less and less often; code
 * mapped meanwhile is still found, and then the next is found at once. */
static void test_unmapped_backs_off(struct binary_cache *bc)
{
	struct proc_symbolizer *ps = proc_symbolizer_new(bc, getpid());
	struct frame f;
	uint64_t t0 = mono_ms(), found_ms = 0;
	size_t reads;
	int loops = 0;

	CHECK(ps != NULL, "symbolizer of this process");
	if (!ps)
		return;
	while (mono_ms() - t0 < 1600) {
		proc_symbolizer_resolve_fresh(ps, 0x10, &f);
		loops++;
		sleep_ms(2);
	}
	reads = proc_symbolizer_maps_reads(ps);
	/* waits 100, 200, 400, 800 ms: four reads after the first */
	CHECK(reads >= 3 && reads <= 6, "1.6 s of unmapped lookups (%d) read the maps %zu times "
	      "(every 100 ms: 16)", loops, reads);
	void *page = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	found_ms = page != MAP_FAILED ? ms_until_found(ps, page) : 0;
	CHECK(found_ms > 0, "code mapped meanwhile is found (after %llu ms; the wait was at most "
	      "3.2 s)", (unsigned long long)found_ms);
	void *next = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	found_ms = next != MAP_FAILED ? ms_until_found(ps, next) : 0;
	CHECK(found_ms > 0 && found_ms < 1000, "after a read that found code the wait is 100 ms "
	      "again: the next is found in %llu ms", (unsigned long long)found_ms);
	if (page != MAP_FAILED)
		munmap(page, 4096);
	if (next != MAP_FAILED)
		munmap(next, 4096);
	proc_symbolizer_free(ps);
}

/* The start of libc's mapping with permissions perms ("rw-p"), 0 when none. */
static uint64_t libc_mapping(const char *perms)
{
	char line[512], path[400], p[8];
	unsigned long long start, end;
	uint64_t found = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && !found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %399s", &start, &end, p, path) == 4 &&
		    !strcmp(p, perms) && strstr(path, "/libc.so.6"))
			found = start;
	if (f)
		fclose(f);
	return found;
}

/* A "return address" in data (a walk through code without frame pointers
 * read a data word) is no code of the file that holds it: not libc's, not
 * any.  It backs off like an unmapped address, and a page made executable
 * since the maps were read (a JIT that flips W^X) is found. */
static void test_not_code(struct binary_cache *bc)
{
	struct proc_symbolizer *ps;
	uint64_t libc_data = libc_mapping("rw-p"), libc_header = libc_mapping("r--p"), t0;
	void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct frame f;
	size_t reads;
	int loops = 0;

	CHECK(libc_data && libc_header && page != MAP_FAILED, "libc's data and header, a data page");
	ps = proc_symbolizer_new(bc, getpid());
	if (!ps || !libc_data || !libc_header || page == MAP_FAILED)
		return;
	CHECK(proc_symbolizer_resolve(ps, libc_data + 24, &f) == PROC_SYM_NOT_CODE,
	      "libc's data: not code");
	CHECK(proc_symbolizer_resolve(ps, libc_header + 0x40, &f) == PROC_SYM_NOT_CODE,
	      "libc's ELF header: not code");
	CHECK(proc_symbolizer_resolve(ps, (uint64_t)(uintptr_t)page + 8, &f) == PROC_SYM_NOT_CODE,
	      "an anonymous data page: not code");
	t0 = mono_ms();
	while (mono_ms() - t0 < 1600) {
		proc_symbolizer_resolve_fresh(ps, libc_data + 24, &f);
		loops++;
		sleep_ms(2);
	}
	reads = proc_symbolizer_maps_reads(ps);
	CHECK(reads >= 3 && reads <= 6, "1.6 s of lookups in data (%d) read the maps %zu times "
	      "(every 100 ms: 16)", loops, reads);
	CHECK(mprotect(page, 4096, PROT_READ | PROT_EXEC) == 0, "the data page made executable");
	t0 = ms_until_found(ps, page);
	CHECK(t0 > 0, "and then found as code (after %llu ms)", (unsigned long long)t0);
	munmap(page, 4096);
	proc_symbolizer_free(ps);
}

/* With no budget for unused binaries: a refresh keeps the binaries of the
 * mappings still there (none let go, none parsed again), freeing the
 * symbolizer lets all go, and the names it gave stay readable. */
static void test_binaries_let_go(struct binary_cache *bc)
{
	struct binary_cache_stats before, after;
	struct proc_symbolizer *ps;
	const char *name;

	binary_cache_keep_unused(bc, 0, 0);
	ps = proc_symbolizer_new(bc, getpid());
	CHECK(ps != NULL, "symbolizer of this process");
	if (!ps)
		return;
	binary_cache_get_stats(bc, &before);
	sleep_ms(110);
	CHECK(proc_symbolizer_refresh(ps) == 1, "maps read again");
	binary_cache_get_stats(bc, &after);
	CHECK(after.loads == before.loads && after.dropped == before.dropped,
	      "a refresh keeps its binaries: %zu loaded, %zu dropped", after.loads - before.loads,
	      after.dropped - before.dropped);
	name = resolve_name(ps, (uint64_t)(uintptr_t)&local_marker_function + 2, NULL);
	proc_symbolizer_free(ps);
	binary_cache_get_stats(bc, &after);
	CHECK(after.held == 1 && after.dropped > before.dropped,
	      "freed: its %zu binaries dropped, the vDSO's alone held", after.dropped - before.dropped);
	CHECK_STR(name, "local_marker_function", "a name it gave is still readable");
	binary_cache_keep_unused(bc, 8u << 20, 512);
}

int main(void)
{
	struct binary_cache *bc = binary_cache_new();
	struct binary_cache_stats before, after;
	char nopie[300], cmd[700];

	if (!bc || !mkdtemp(tmpdir)) {
		CHECK(0, "setup");
		TAP_DONE();
	}
	test_self(bc);
	test_unmapped_backs_off(bc);
	test_not_code(bc);
	test_binaries_let_go(bc);
	test_child(bc, TARGET, "PIE child");

	/* A second process of the same program: parsed files come from the cache. */
	binary_cache_get_stats(bc, &before);
	test_child(bc, TARGET, "second PIE child");
	binary_cache_get_stats(bc, &after);
	CHECK(after.loads == before.loads, "second child: no ELF file parsed again (%zu -> %zu)",
	      before.loads, after.loads);

	snprintf(nopie, sizeof(nopie), "%s/symbols_target_nopie", tmpdir);
	snprintf(cmd, sizeof(cmd), "cc -O1 -g -fno-omit-frame-pointer -fno-inline -no-pie -fno-pie "
		 "-o %s tests/progs/symbols_target.c", nopie);
	if (run(cmd) == 0)
		test_child(bc, nopie, "non-PIE child");
	else
		CHECK(0, "build the non-PIE test program");
	test_deleted_executable(bc);
	test_private_mount(bc);

	binary_cache_free(bc);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	run(cmd);
	TAP_DONE();
}

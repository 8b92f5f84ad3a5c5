/* test_proc_maps.c - /proc/PID/maps parsing: synthetic lines and our own maps. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "proc/proc_maps.h"
#include "tap.h"

static void test_synthetic(void)
{
	const char *text =
		"00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon\n"
		"00651000-00652000 r--p 00051000 08:02 173521      /usr/bin/dbus-daemon\n"
		"00e03000-00e24000 rw-p 00000000 00:00 0           [heap]\n"
		"7f0000000000-7f0000100000 rwxp 00000000 00:00 0 \n"
		"7f0000100000-7f0000200000 r-xp 00001000 fd:01 42   /opt/my app/lib two.so (deleted)\n"
		"7f0000200000-7f0000201000 r-xp 00000000 00:00 0   [anon:jit code]\n"
		"7f0000300000-7f0000301000 r--p 00000000 00:01 77  /memfd:buffer (deleted)\n"
		"this is not a maps line\n"
		"7f0000400000-7f0000300000 r-xp 00000000 00:00 0   [inverted]\n"
		"7f0000500000-7f0000600000 r-zp 00000000 00:00 0   [bad perms]\n"
		"7f0000100000-7f0000180000 r-xp 00000000 00:00 0   [overlaps]\n"
		"7ffc0c1e0000-7ffc0c201000 rw-p 00000000 00:00 0   [stack]\n"
		"7ffc0c3f2000-7ffc0c3f6000 r--p 00000000 00:00 0   [vvar]\n"
		"7ffc0c3f6000-7ffc0c3f8000 r-xp 00000000 00:00 0   [vdso]\n"
		"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0  [vsyscall]";
	struct proc_maps *pm = proc_maps_parse(text, strlen(text));
	const struct proc_map *m;

	CHECK(pm != NULL, "synthetic maps parse");
	if (!pm)
		return;
	CHECK(pm->count == 11, "11 good lines (got %zu)", pm->count);
	CHECK(pm->bad_lines == 4, "4 bad lines counted (got %zu)", pm->bad_lines);

	m = &pm->maps[0];
	CHECK(m->start == 0x400000 && m->end == 0x452000 && m->offset == 0, "first range");
	CHECK(m->dev_major == 8 && m->dev_minor == 2 && m->inode == 173521, "dev and inode");
	CHECK_STR(m->perms, "r-xp", "perms");
	CHECK(m->kind == PROC_MAP_FILE && proc_map_is_exec(m) && !m->deleted, "executable file");
	CHECK_STR(m->path, "/usr/bin/dbus-daemon", "path");
	CHECK(pm->maps[1].offset == 0x51000, "offset is hex");
	CHECK(pm->maps[2].kind == PROC_MAP_ANON, "[heap] counts as anonymous");
	CHECK(pm->maps[3].kind == PROC_MAP_ANON && proc_map_is_exec(&pm->maps[3]) &&
	      pm->maps[3].path[0] == '\0', "path-less rwx mapping is anonymous");
	m = &pm->maps[4];
	CHECK_STR(m->path, "/opt/my app/lib two.so", "spaces kept, (deleted) stripped");
	CHECK(m->deleted && m->kind == PROC_MAP_FILE && m->dev_major == 0xfd, "deleted file");
	CHECK(pm->maps[5].kind == PROC_MAP_ANON, "[anon:NAME] is anonymous");
	CHECK_STR(pm->maps[5].path, "[anon:jit code]", "[anon:] name kept");
	CHECK(pm->maps[6].kind == PROC_MAP_FILE && pm->maps[6].deleted, "memfd is file-backed");
	CHECK(pm->maps[7].kind == PROC_MAP_ANON, "[stack] is anonymous");
	CHECK(pm->maps[8].kind == PROC_MAP_SPECIAL, "[vvar] is special");
	CHECK(pm->maps[9].kind == PROC_MAP_VDSO, "[vdso]");
	CHECK(pm->maps[10].kind == PROC_MAP_SPECIAL && pm->maps[10].end == 0xffffffffff601000,
	      "[vsyscall], 64-bit addresses");

	CHECK(proc_maps_find(pm, 0x400000) == &pm->maps[0], "find: first byte");
	CHECK(proc_maps_find(pm, 0x451fff) == &pm->maps[0], "find: last byte");
	CHECK(proc_maps_find(pm, 0x452000) == NULL, "find: end is exclusive");
	CHECK(proc_maps_find(pm, 0x3fffff) == NULL, "find: before everything");
	CHECK(proc_maps_find(pm, 0x7f0000150000) == &pm->maps[4], "find: middle");
	CHECK(proc_maps_find(pm, 0xffffffffff600800) == &pm->maps[10], "find: last mapping");
	proc_maps_free(pm);

	pm = proc_maps_parse(NULL, 0);
	CHECK(pm && pm->count == 0, "empty input gives no mappings");
	proc_maps_free(pm);
	static const char with_nul[] = "00400000-00452000 r-xp 00000000 08:02 1 /a\0b\n";
	pm = proc_maps_parse(with_nul, sizeof(with_nul) - 1);
	CHECK(pm && pm->count == 0 && pm->bad_lines == 1, "NUL inside a path is rejected");
	proc_maps_free(pm);
	static const char too_wide[] = "10000000000000000-1 r-xp 0 0:0 0\n";
	pm = proc_maps_parse(too_wide, sizeof(too_wide) - 1);
	CHECK(pm && pm->count == 0, "address wider than 64 bits is rejected");
	proc_maps_free(pm);
}

static void test_self(void)
{
	struct proc_maps *pm = proc_maps_read(getpid());
	const struct proc_map *m;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	CHECK(pm != NULL && pm->count > 5, "our own maps read");
	if (!pm || n <= 0)
		return;
	exe[n] = '\0';
	CHECK(pm->bad_lines == 0, "no bad line in a real maps file");
	m = proc_maps_find(pm, (uint64_t)(uintptr_t)&test_self);
	CHECK(m && m->kind == PROC_MAP_FILE && proc_map_is_exec(m), "our code is in an r-x file mapping");
	CHECK(m && strcmp(m->path, exe) == 0, "and the file is our executable");
	m = proc_maps_find(pm, getauxval(AT_SYSINFO_EHDR));
	CHECK(m && m->kind == PROC_MAP_VDSO, "the vDSO is found");
	m = proc_maps_find(pm, (uint64_t)(uintptr_t)&m);
	CHECK(m && m->kind == PROC_MAP_ANON && strcmp(m->path, "[stack]") == 0, "a local is on the stack");
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	void *fn = libc ? dlsym(libc, "printf") : NULL;
	m = proc_maps_find(pm, (uint64_t)(uintptr_t)fn);
	CHECK(m && strstr(m->path, "/libc.so") != NULL && proc_map_is_exec(m), "printf is in libc");
	proc_maps_free(pm);

	pm = proc_maps_read(999999999);
	CHECK(pm == NULL && errno == ESRCH, "missing process: ESRCH");
}

int main(void)
{
	test_synthetic();
	test_self();
	TAP_DONE();
}

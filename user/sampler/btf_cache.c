/* btf_cache.c - see btf_cache.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "base/log.h"
#include "offcpu.skel.h"
#include "profile.skel.h"
#include "sampler/btf_cache.h"

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"

extern char **environ;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ull;
	return h;
}

int btf_cache_path(const char *dir, char *path, size_t cap)
{
	struct utsname u;
	struct stat st;
	uint64_t h = 0xcbf29ce484222325ull;
	const void *elf;
	size_t n;

	if (uname(&u) < 0 || stat(VMLINUX_BTF, &st) < 0)
		return -errno;
	h = fnv(h, u.release, strlen(u.release) + 1);
	h = fnv(h, u.version, strlen(u.version) + 1);
	h = fnv(h, &st.st_size, sizeof(st.st_size));
	elf = profile_bpf__elf_bytes(&n);
	h = fnv(h, elf, n);
	elf = offcpu_bpf__elf_bytes(&n);
	h = fnv(h, elf, n);
	if ((size_t)snprintf(path, cap, "%s/%s-%016llx.btf", dir ? dir : BTF_CACHE_DIR, u.release,
			     (unsigned long long)h) >= cap)
		return -ENAMETOOLONG;
	return 0;
}

/* Root's, and writable by nobody else. */
static bool root_only(const struct stat *st)
{
	return st->st_uid == 0 && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

bool btf_cache_usable(const char *path)
{
	char dir[PATH_MAX];
	struct stat st;
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return false;
	*slash = 0;
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || !root_only(&st))
		return false;
	return !lstat(path, &st) && S_ISREG(st.st_mode) && root_only(&st) && st.st_size > 0 &&
	       st.st_size < (1 << 20);
}

static const char *find_bpftool(void)
{
	static const char *const where[] = { "/usr/sbin/bpftool", "/usr/bin/bpftool",
					     "/usr/local/sbin/bpftool", "/sbin/bpftool" };

	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++)
		if (!access(where[i], X_OK))
			return where[i];
	return NULL;
}

/* A program's bytes in a new file; 0 or -errno. */
static int write_object(const char *path, const void *bytes, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ssize_t w;

	if (fd < 0)
		return -errno;
	w = write(fd, bytes, n);
	close(fd);
	return w == (ssize_t)n ? 0 : -EIO;
}

pid_t btf_cache_make(const char *path)
{
	const char *bpftool = find_bpftool();
	char dir[PATH_MAX], tmp[PATH_MAX], obj1[PATH_MAX], obj2[PATH_MAX], *slash;
	const void *elf1, *elf2;
	struct stat st;
	size_t n1, n2;
	pid_t pid;
	int err;

	if (!bpftool)
		return 0;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return -EINVAL;
	*slash = 0;
	/* /var/cache/sparkprof, then its btf folder, root's only. */
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = 0;
		mkdir(dir, 0755);
		*slash = '/';
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	/* Written as root: only into a folder nobody else can change. */
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || !root_only(&st))
		return -EPERM;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid()) >= sizeof(tmp) ||
	    (size_t)snprintf(obj1, sizeof(obj1), "%s.%d.profile.o", path, (int)getpid()) >=
		    sizeof(obj1) ||
	    (size_t)snprintf(obj2, sizeof(obj2), "%s.%d.offcpu.o", path, (int)getpid()) >=
		    sizeof(obj2))
		return -ENAMETOOLONG;
	elf1 = profile_bpf__elf_bytes(&n1);
	elf2 = offcpu_bpf__elf_bytes(&n2);
	if ((err = write_object(obj1, elf1, n1)) || (err = write_object(obj2, elf2, n2))) {
		unlink(obj1);
		return err;
	}
	/* The shell renames the result into place and removes the inputs,
	 * so nothing waits for it here. */
	char *argv[] = {
		"/bin/sh", "-c",
		"\"$1\" gen min_core_btf " VMLINUX_BTF " \"$2\" \"$3\" \"$4\" >/dev/null 2>&1 && "
		"mv -f \"$2\" \"$5\"; rm -f \"$2\" \"$3\" \"$4\"",
		"sh", (char *)bpftool, tmp, obj1, obj2, (char *)path, NULL,
	};
	err = posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ);
	if (err) {
		unlink(obj1);
		unlink(obj2);
		return -err;
	}
	return pid;
}

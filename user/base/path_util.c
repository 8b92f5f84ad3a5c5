/* path_util.c - see path_util.h. */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "base/path_util.h"

int make_dirs(const char *dir)
{
	char path[PATH_MAX];
	size_t len = strlen(dir);

	if (!len || len >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, len + 1);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

int make_parent_dirs(const char *path)
{
	char dir[PATH_MAX];
	char *slash;

	if (strlen(path) >= sizeof(dir))
		return -ENAMETOOLONG;
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	return make_dirs(dir);
}

void sanitize_name_component(char *name)
{
	for (char *p = name; *p; p++)
		if (*p == '/' || (unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '_';
	if (name[0] == '.')
		name[0] = '_';
	if (!name[0])
		strcpy(name, "_");
}

/* A walk's state: the path being visited grows and shrinks in place, and
 * each folder on the way down holds one directory stream (32 KiB), so
 * memory does not follow what a folder holds, as fts_read's did. */
struct walk {
	char path[PATH_MAX];
	const char *root;           /* as the caller named it */
	size_t rel;                 /* where the name relative to the root starts */
	long entries, max_entries;
	int (*fn)(const char *path, const char *rel, void *ctx);
	void *ctx;
	bool full;                  /* max_entries reached: stop, said so */
	bool too_deep_said;
};

#define WALK_MAX_DEPTH 32

/* Walks the folder open as fd, named by w->path[0..len); closes fd.
 * Returns what fn returned when not 0; a folder that cannot be read is
 * reported and left out. */
static int walk_dir(struct walk *w, int fd, size_t len, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *e;
	int err = 0;

	if (!d) {
		sp_err("read the folder %s: %s", len ? w->path : "/", strerror(errno));
		close(fd);
		return 0;
	}
	while (!err && !w->full && (errno = 0, e = readdir(d))) {
		size_t nlen = strlen(e->d_name);
		unsigned char type = e->d_type;
		struct stat st;
		int sub;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		w->path[len] = '\0';
		if (++w->entries > w->max_entries) {
			sp_err("%s holds more than %ld files and folders; the rest are left out",
			       w->root, w->max_entries);
			w->full = true;
			break;
		}
		if (len + 1 + nlen >= sizeof(w->path)) {
			sp_err("%s/%s: %s", w->path, e->d_name, strerror(ENAMETOOLONG));
			continue;
		}
		w->path[len] = '/';
		memcpy(w->path + len + 1, e->d_name, nlen + 1);
		if (type == DT_UNKNOWN) { /* a file system without d_type */
			if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
				sp_err("read %s: %s", w->path, strerror(errno));
				continue;
			}
			type = S_ISREG(st.st_mode) ? DT_REG : S_ISDIR(st.st_mode) ? DT_DIR : DT_UNKNOWN;
		}
		if (type == DT_REG) {
			err = w->fn(w->path, w->path + w->rel, w->ctx);
		} else if (type == DT_DIR && depth >= WALK_MAX_DEPTH) {
			if (!w->too_deep_said)
				sp_err("%s: more than %d folders deep; what lies below is left out",
				       w->path, WALK_MAX_DEPTH);
			w->too_deep_said = true;
		} else if (type == DT_DIR) {
			sub = openat(dirfd(d), e->d_name,
				     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0)
				sp_err("read the folder %s: %s", w->path, strerror(errno));
			else
				err = walk_dir(w, sub, len + 1 + nlen, depth + 1);
		}
	}
	if (!err && !w->full && errno) {
		w->path[len] = '\0';
		sp_err("read the folder %s: %s", len ? w->path : "/", strerror(errno));
	}
	w->path[len] = '\0';
	closedir(d);
	return err;
}

int walk_files(const char *dir, long max_entries,
	       int (*fn)(const char *path, const char *rel, void *ctx), void *ctx)
{
	struct walk *w = calloc(1, sizeof(*w));
	size_t len = strlen(dir);
	int fd, err;

	if (!w) {
		sp_err("read the folder %s: %s", dir, strerror(ENOMEM));
		return -ENOMEM;
	}
	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (len >= sizeof(w->path)) {
		free(w);
		sp_err("read the folder %s: %s", dir, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	memcpy(w->path, dir, len);
	w->root = dir;
	w->rel = len == 1 && dir[0] == '/' ? 1 : len + 1;
	w->max_entries = max_entries;
	w->fn = fn;
	w->ctx = ctx;
	fd = open(w->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		sp_err("read the folder %s: %s", w->path, strerror(errno));
		free(w);
		return err;
	}
	err = walk_dir(w, fd, len == 1 && dir[0] == '/' ? 0 : len, 0);
	free(w);
	return err;
}

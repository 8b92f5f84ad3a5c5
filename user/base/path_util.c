/* path_util.c - see path_util.h. */
#include <errno.h>
#include <fts.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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

bool is_safe_relative_name(const char *name)
{
	const char *component = name;

	if (!*name || *name == '/')
		return false;
	for (const char *p = name;; p++) {
		if (*p == '/' || *p == '\0') {
			size_t len = (size_t)(p - component);

			if (len == 0 || (len == 1 && component[0] == '.') ||
			    (len == 2 && component[0] == '.' && component[1] == '.'))
				return false;
			if (!*p)
				return true;
			component = p + 1;
		} else if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			return false;
		}
	}
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

int walk_files(const char *dir, int max_files,
	       int (*fn)(const char *path, const char *rel, void *ctx), void *ctx)
{
	char *roots[] = { (char *)dir, NULL };
	size_t prefix = strlen(dir);
	FTS *fts = fts_open(roots, FTS_PHYSICAL | FTS_NOCHDIR, NULL);
	const char *rel;
	FTSENT *e;
	int err = 0, n = 0;

	if (!fts) {
		err = -errno;
		sp_err("read the folder %s: %s", dir, strerror(errno));
		return err;
	}
	while (!err && (e = fts_read(fts))) {
		if (e->fts_info == FTS_DNR || e->fts_info == FTS_ERR || e->fts_info == FTS_NS) {
			sp_err("read %s: %s", e->fts_path, strerror(e->fts_errno));
			continue;
		}
		if (e->fts_info != FTS_F)
			continue;
		if (++n > max_files) {
			sp_err("%s holds more than %d files; the rest are left out", dir, max_files);
			break;
		}
		if (e->fts_level == 0) /* dir is itself a file */
			continue;
		rel = e->fts_path + prefix;
		while (*rel == '/')
			rel++;
		err = fn(e->fts_path, rel, ctx);
	}
	fts_close(fts);
	return err;
}

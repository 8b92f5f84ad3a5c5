/* path_util.c - see path_util.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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

/* path_util.h - creating the output tree. */
#ifndef SPARKPROF_PATH_UTIL_H
#define SPARKPROF_PATH_UTIL_H

#include <stdbool.h>

/* mkdir -p: creates dir and its missing parents (mode 0755). 0 or -errno. */
int make_dirs(const char *dir);

/* Creates the folders above path (not path itself). 0 or -errno. */
int make_parent_dirs(const char *path);

/* A relative name we may place under the output folder: not empty, not
 * absolute, no "." or ".." component, no empty component, no control
 * characters. Application and executor ids come from other processes'
 * command lines, so this check stands between them and the file system. */
bool is_safe_relative_name(const char *name);

/* Replaces characters that do not belong in a file name component ('/',
 * control characters, leading dots) so ids from outside can be used as one. */
void sanitize_name_component(char *name);

/* Calls fn on every regular file below dir (symlinks not followed), with
 * its path and its name relative to dir, at most max_files of them. Stops
 * when fn returns non-zero and returns that; 0 or -errno (after a message). */
int walk_files(const char *dir, int max_files,
	       int (*fn)(const char *path, const char *rel, void *ctx), void *ctx);

#endif

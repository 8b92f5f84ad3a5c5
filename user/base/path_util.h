/* path_util.h - creating the output tree. */
#ifndef SPARKPROF_PATH_UTIL_H
#define SPARKPROF_PATH_UTIL_H

#include <stdbool.h>

/* mkdir -p: creates dir and its missing parents (mode 0755). 0 or -errno. */
int make_dirs(const char *dir);

/* Creates the folders above path (not path itself). 0 or -errno. */
int make_parent_dirs(const char *path);

/* Replaces characters that do not belong in a file name component ('/',
 * control characters, leading dots) so ids from outside can be used as one. */
void sanitize_name_component(char *name);

/* Calls fn on every regular file below dir (no symlink below dir is
 * followed; dir itself may be one), with its path and its name relative to
 * dir, in directory order: a file fn adds to a folder being walked may or
 * may not be seen.  Memory stays small whatever a folder holds; time is
 * bounded by max_entries (files and folders seen) and a depth of 32
 * folders: past them, one message and the rest is left out.  Stops when
 * fn returns non-zero and returns that; a folder below dir that cannot be
 * read is reported and left out; 0, or -errno when dir cannot be opened
 * (after a message). */
#define WALK_ENTRIES_MAX 1000000
int walk_files(const char *dir, long max_entries,
	       int (*fn)(const char *path, const char *rel, void *ctx), void *ctx);

#endif

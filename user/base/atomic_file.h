/* atomic_file.h - write a file so that readers see the old one or the
 * whole new one, never half: write PATH.tmp, then rename it to PATH. */
#ifndef SPARKPROF_ATOMIC_FILE_H
#define SPARKPROF_ATOMIC_FILE_H

#include <limits.h>
#include <stdio.h>

struct atomic_file {
	FILE *file;
	int fd;            /* PATH.tmp (fileno(file) is -1: file writes through us) */
	int write_errno;   /* the first failed write's errno: stdio forgets it */
	char path[PATH_MAX];
	char tmp[PATH_MAX];
};

/* Creates PATH.tmp; returns its stream, or NULL after a message naming it.
 * af must stay where it is until atomic_file_commit(). */
FILE *atomic_file_open(struct atomic_file *af, const char *path);

/* Closes the stream and renames it into place, unless err (the caller's
 * own write error, -errno) or the close failed: then the temporary file is
 * removed. Returns 0 or -errno (the real cause, e.g. ENOSPC, also when the
 * caller passed -EIO for a failed write to the stream), after a message
 * naming the file. */
int atomic_file_commit(struct atomic_file *af, int err);

/* Closes the stream and removes PATH.tmp, saying nothing: for a file given
 * up for an error the caller has already reported. */
void atomic_file_discard(struct atomic_file *af);

#endif

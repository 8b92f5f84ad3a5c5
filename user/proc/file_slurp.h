/* file_slurp.h - read a whole (proc) file into memory.
 *
 * /proc files report size 0, so the buffer grows as it reads.
 */
#ifndef SPARKPROF_FILE_SLURP_H
#define SPARKPROF_FILE_SLURP_H

#include <stddef.h>

/* Reads path into a malloc'd buffer (NUL-terminated for convenience; *len
 * excludes the NUL).  Stops with EFBIG beyond max_len bytes.  NULL and errno
 * on failure; the caller frees. */
char *file_slurp(const char *path, size_t max_len, size_t *len);

/* Reads path, cut at max bytes (a longer file yields its first max bytes:
 * enough of a command line or an environment), into a malloc'd buffer that
 * is not NUL-terminated.  Returns 0 and sets *buf and *len, or -errno. */
int file_read_prefix(const char *path, size_t max, char **buf, size_t *len);
/* The same for an open file, read from its current offset. */
int fd_read_prefix(int fd, size_t max, char **buf, size_t *len);

#endif

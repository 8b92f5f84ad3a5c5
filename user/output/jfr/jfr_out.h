/* jfr_out.h - where a JFR file's bytes go: a plain file or a gzip stream.
 *
 * The file is created as PATH.tmp and renamed to PATH on a successful
 * close, so a reader never sees half a recording under the final name and a
 * failed recording leaves nothing behind.
 */
#ifndef SPARKPROF_JFR_OUT_H
#define SPARKPROF_JFR_OUT_H

#include <stddef.h>

struct jfr_out;

/* NULL with errno set, after an sp_err line naming the path. */
struct jfr_out *jfr_out_open(const char *path, int gzip);
/* Returns 0 or -errno (reported once with the path). */
int jfr_out_write(struct jfr_out *out, const void *p, size_t n);
/* Flushes and renames into place; on failure, or when discard is set,
 * removes the temporary file.  Returns 0 or -errno; frees out. */
int jfr_out_close(struct jfr_out *out, int discard);
#endif

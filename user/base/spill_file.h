/* spill_file.h - where a recording keeps what it took out of memory: the
 * names of large symbol tables, the stages' folded lines while the views
 * are written.  A temporary file in the output folder,
 * unnamed (O_TMPFILE) or unlinked at once, so nothing is left behind and
 * nobody else can open it.  A blob is written once (in one put or in
 * pieces), read back when needed, and a large one's pages given back to
 * the file system once it is no longer needed.  One thread writes a file;
 * reads may come from several (the writing threads of a stop).
 */
#ifndef SPARKPROF_SPILL_FILE_H
#define SPARKPROF_SPILL_FILE_H

#include <stddef.h>
#include <stdint.h>

struct spill_file;

/* Where a blob lies in the file. */
struct spill_ref {
	uint64_t offset;
	uint64_t bytes;
};

/* The file is made on the first put.  what names its contents in error
 * messages ("counts"); it must outlive the file.  NULL with errno ENOMEM. */
struct spill_file *spill_file_new(const char *dir, const char *what);
void spill_file_free(struct spill_file *spill);

/* put copies len bytes to the file (*ref says where); get gives a
 * malloc'd copy (*data NULL for none).  0 or -errno (-EIO for a short
 * read), after an sp_err line naming the folder. */
int spill_file_put(struct spill_file *spill, const void *data, size_t len,
			  struct spill_ref *ref);
int spill_file_get(struct spill_file *spill, const struct spill_ref *ref,
			  void **data);

/* The blob at ref will not be read again: when it is large (256 KiB or
 * more) the file gives its whole pages back to the file system (a hole),
 * so that a long recording's file does not keep the room of what it no
 * longer needs.  Smaller blobs, and file systems without holes, keep theirs. */
void spill_file_discard(struct spill_file *spill, const struct spill_ref *ref);

/* The NUL-terminated text at offset, of at most min(left, cap) bytes with
 * its NUL, read into buf: buf, or NULL when it is longer or cannot be
 * read. */
const char *spill_file_read_text(struct spill_file *spill, uint64_t offset, uint64_t left,
				 char *buf, size_t cap);

#endif

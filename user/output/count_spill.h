/* count_spill.h - where outputs keep what they took out of memory: the
 * saved text trees of their counts (folded.h) and their JFR writers' key
 * states.  One temporary file per recording, in the output folder,
 * unnamed (O_TMPFILE) or unlinked at once, so nothing is left behind and
 * nobody else can open it.  It only grows: a blob is written once and
 * read back when its output's files are written.
 */
#ifndef SPARKPROF_COUNT_SPILL_H
#define SPARKPROF_COUNT_SPILL_H

#include <stddef.h>
#include <stdint.h>

struct count_spill;

/* Where a blob lies in the file. */
struct count_spill_ref {
	uint64_t offset;
	uint64_t bytes;
};

/* The file is made on the first put.  NULL with errno ENOMEM. */
struct count_spill *count_spill_new(const char *dir);
void count_spill_free(struct count_spill *spill);

/* put copies len bytes to the file (*ref says where); get gives a
 * malloc'd copy (*data NULL for none).  0 or -errno (-EIO for a short
 * read), after an sp_err line naming the folder. */
int count_spill_put_bytes(struct count_spill *spill, const void *data, size_t len,
			  struct count_spill_ref *ref);
int count_spill_get_bytes(struct count_spill *spill, const struct count_spill_ref *ref,
			  void **data);

/* The file's size: every blob put so far. */
uint64_t count_spill_bytes(const struct count_spill *spill);

#endif

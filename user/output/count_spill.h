/* count_spill.h - where finished outputs park their stack counts (and
 * their JFR writer's key state) until a late sample brings them back: one temporary file per recording, in the
 * output folder, unnamed (O_TMPFILE) or unlinked at once, so nothing is
 * left behind and nobody else can open it.
 *
 * A parked profile is a run of (stack id, count) records; stack ids stay
 * valid because the outputs' stack table lives as long as the recording.
 */
#ifndef SPARKPROF_COUNT_SPILL_H
#define SPARKPROF_COUNT_SPILL_H

#include <stdint.h>

#include "output/folded.h"

struct count_spill;

/* Where a parked profile (or blob) lies in the file. */
struct count_spill_ref {
	uint64_t offset;
	uint64_t bytes;
};

/* The file is made on the first put.  NULL with errno ENOMEM. */
struct count_spill *count_spill_new(const char *dir);
void count_spill_free(struct count_spill *spill);

/* Appends profile's counts; *ref says where.  0 or -errno, after an sp_err
 * line naming the folder. */
int count_spill_put(struct count_spill *spill, const struct folded_profile *profile,
		    struct count_spill_ref *ref);

/* Adds the counts at ref to profile.  0 or -errno (-EIO for a short read),
 * after an sp_err line. */
int count_spill_get(struct count_spill *spill, const struct count_spill_ref *ref,
		    struct folded_profile *profile);

/* The same for bytes: put copies len bytes; get gives a malloc'd copy
 * (*data NULL for none).  0 or -errno, after an sp_err line. */
int count_spill_put_bytes(struct count_spill *spill, const void *data, size_t len,
			  struct count_spill_ref *ref);
int count_spill_get_bytes(struct count_spill *spill, const struct count_spill_ref *ref,
			  void **data);

#endif

/* test_spill_file.c - blobs of bytes in the spill file, brought back
 * exactly and in any order: several in one file, one larger than a page,
 * none named in the folder; the file's size is theirs; a read of part of
 * one, short at the end; texts read back to their NUL. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/spill_file.h"
#include "dir_entries.h"
#include "tap.h"

int main(void)
{
	char dir[] = "/tmp/sparkprof-test-spill-XXXXXX";
	struct spill_file *spill;
	struct spill_ref rsmall, rbig, rnone;
	const char small[] = "key state \0 with a NUL";
	size_t big_len = 1 << 20;
	uint8_t *big = malloc(big_len);
	void *bytes = NULL;

	CHECK(mkdtemp(dir) != NULL && big, "a folder");
	for (size_t i = 0; i < big_len; i++)
		big[i] = (uint8_t)(i * 7 + (i >> 12));
	spill = spill_file_new(dir, "counts");
	CHECK(spill_file_put(spill, small, sizeof(small), &rsmall) == 0 &&
	      spill_file_put(spill, big, big_len, &rbig) == 0, "two blobs saved");
	CHECK(rbig.offset == sizeof(small) && rbig.bytes == big_len, "one after the other");
	CHECK(spill_file_bytes(spill) == sizeof(small) + big_len, "the file holds both: %llu bytes",
	      (unsigned long long)spill_file_bytes(spill));
	CHECK(dir_entries(dir) == 0, "nothing named in the folder (%d entries)", dir_entries(dir));
	CHECK(spill_file_get(spill, &rbig, &bytes) == 0 && bytes &&
	      !memcmp(bytes, big, big_len), "the big one back first");
	free(bytes);
	CHECK(spill_file_get(spill, &rsmall, &bytes) == 0 && bytes &&
	      !memcmp(bytes, small, sizeof(small)), "then the small one");
	free(bytes);
	rnone = (struct spill_ref){ 0, 0 };
	CHECK(spill_file_get(spill, &rnone, &bytes) == 0 && !bytes, "no bytes: NULL");
	rnone = (struct spill_ref){ rbig.offset + big_len - 10, 20 };
	CHECK(spill_file_get(spill, &rnone, &bytes) == -EIO && !bytes,
	      "a ref past the end: -EIO, no bytes");
	char part[32];
	CHECK(spill_file_read(spill, rbig.offset + 4096, part, sizeof(part)) == sizeof(part) &&
	      !memcmp(part, big + 4096, sizeof(part)), "a read from inside a blob");
	CHECK(spill_file_read(spill, rbig.offset + big_len - 5, part, sizeof(part)) == 5,
	      "a read past the end is short");
	struct spill_ref rtext;
	const char texts[] = "kernel_clone\0do_syscall_64";   /* and its own NUL */
	CHECK(spill_file_put(spill, texts, sizeof(texts), &rtext) == 0, "two texts saved");
	CHECK(spill_file_read_text(spill, rtext.offset, sizeof(texts), part, sizeof(part)) == part &&
	      !strcmp(part, "kernel_clone"), "the first text read back");
	CHECK(spill_file_read_text(spill, rtext.offset + 13, sizeof(texts) - 13, part,
				   sizeof(part)) == part && !strcmp(part, "do_syscall_64"),
	      "the second, up to the blob's end");
	CHECK(!spill_file_read_text(spill, rtext.offset, 5, part, sizeof(part)) &&
	      !spill_file_read_text(spill, rtext.offset, sizeof(texts), part, 5),
	      "a text longer than what is left, or than the buffer: NULL");
	spill_file_free(spill);
	free(big);
	CHECK(rmdir(dir) == 0, "the folder is left empty");
	TAP_DONE();
}

/* test_spill_file.c - blobs of bytes in the spill file, brought back
 * exactly and in any order: several in one file, one larger than a page,
 * none named in the folder; the file's size is theirs; a read of part of
 * one, short at the end; texts read back to their NUL; a blob written in
 * pieces; a blob given back leaves a hole on disk and its neighbours as
 * they were; a blob written over in place. */
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
	/* a blob in pieces, then given back */
	struct spill_ref rpieces = { 0, 0 }, rafter, rstale;
	uint64_t disk_before;
	CHECK(spill_file_append(spill, big, big_len / 2, &rpieces) == 0 &&
	      spill_file_append(spill, big + big_len / 2, big_len / 2, &rpieces) == 0,
	      "a blob written in two pieces");
	CHECK(rpieces.offset == rtext.offset + sizeof(texts) && rpieces.bytes == big_len,
	      "one blob at the end (%llu bytes)", (unsigned long long)rpieces.bytes);
	CHECK(spill_file_get(spill, &rpieces, &bytes) == 0 && bytes &&
	      !memcmp(bytes, big, big_len), "it reads back whole");
	free(bytes);
	CHECK(spill_file_put(spill, small, sizeof(small), &rafter) == 0, "a blob after it");
	rstale = rpieces;
	CHECK(spill_file_append(spill, small, sizeof(small), &rstale) == -EINVAL &&
	      rstale.bytes == rpieces.bytes, "a blob no longer the newest takes no more: -EINVAL");
	disk_before = spill_file_disk_bytes(spill);
	CHECK(disk_before >= 2 * big_len, "on disk: %llu bytes", (unsigned long long)disk_before);
	spill_file_discard(spill, &rpieces);
	CHECK(spill_file_disk_bytes(spill) <= disk_before - big_len + 8192,
	      "given back, the blob's pages leave the disk: %llu -> %llu bytes",
	      (unsigned long long)disk_before, (unsigned long long)spill_file_disk_bytes(spill));
	CHECK(spill_file_bytes(spill) == rafter.offset + sizeof(small), "the file keeps its size");
	CHECK(spill_file_get(spill, &rafter, &bytes) == 0 && bytes &&
	      !memcmp(bytes, small, sizeof(small)), "the blob after it is as it was");
	free(bytes);
	CHECK(spill_file_get(spill, &rtext, &bytes) == 0 && bytes &&
	      !memcmp(bytes, texts, sizeof(texts)), "and the one before it");
	free(bytes);
	{
		char other[sizeof(small)];
		uint64_t size = spill_file_bytes(spill);

		memset(other, 'x', sizeof(other));
		CHECK(spill_file_rewrite(spill, &rsmall, other, sizeof(other)) == 0 &&
		      spill_file_get(spill, &rsmall, &bytes) == 0 && bytes &&
		      !memcmp(bytes, other, sizeof(other)) && spill_file_bytes(spill) == size,
		      "a blob written over in place reads back new, the file's size unchanged");
		free(bytes);
		CHECK(spill_file_get(spill, &rafter, &bytes) == 0 && bytes &&
		      !memcmp(bytes, small, sizeof(small)), "its neighbours are as they were");
		free(bytes);
		CHECK(spill_file_rewrite(spill, &rsmall, other, sizeof(other) - 1) == -EINVAL,
		      "a rewrite of another length is refused");
	}
	spill_file_free(spill);
	free(big);
	CHECK(rmdir(dir) == 0, "the folder is left empty");
	TAP_DONE();
}

/* test_spill_file.c - blobs of bytes in the spill file, brought back
 * exactly and in any order: several in one file, one larger than a page,
 * none named in the folder; texts read back to their NUL; a blob given
 * back leaves a hole on disk and its neighbours as they were. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/spill_file.h"
#include "dir_entries.h"
#include "tap.h"

/* The disk bytes of the one open file of ours that lies in dir (the spill
 * file has no name there): 0 when there is none. */
static uint64_t disk_bytes_in(const char *dir)
{
	DIR *fds = opendir("/proc/self/fd");
	struct dirent *e;
	uint64_t bytes = 0;
	char link[300], target[4096];
	struct stat st;

	while (fds && (e = readdir(fds))) {
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (!strncmp(target, dir, strlen(dir)) && target[strlen(dir)] == '/' &&
		    !stat(link, &st))
			bytes = (uint64_t)st.st_blocks * 512;
	}
	if (fds)
		closedir(fds);
	return bytes;
}

int main(void)
{
	char dir[] = "/tmp/sparkprof-test-spill-XXXXXX";
	struct spill_file *spill;
	struct spill_ref rsmall, rbig, rnone, rtext, rafter;
	const char small[] = "some bytes \0 with a NUL";
	const char texts[] = "kernel_clone\0do_syscall_64";   /* and its own NUL */
	size_t big_len = 1 << 20;
	uint8_t *big = malloc(big_len);
	void *bytes = NULL;
	char part[32];
	uint64_t disk_before;

	CHECK(mkdtemp(dir) != NULL && big, "a folder");
	for (size_t i = 0; i < big_len; i++)
		big[i] = (uint8_t)(i * 7 + (i >> 12));
	spill = spill_file_new(dir, "counts");
	CHECK(spill_file_put(spill, small, sizeof(small), &rsmall) == 0 &&
	      spill_file_put(spill, big, big_len, &rbig) == 0, "two blobs saved");
	CHECK(rbig.offset == sizeof(small) && rbig.bytes == big_len, "one after the other");
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
	CHECK(spill_file_put(spill, texts, sizeof(texts), &rtext) == 0, "two texts saved");
	CHECK(spill_file_read_text(spill, rtext.offset, sizeof(texts), part, sizeof(part)) == part &&
	      !strcmp(part, "kernel_clone"), "the first text read back");
	CHECK(spill_file_read_text(spill, rtext.offset + 13, sizeof(texts) - 13, part,
				   sizeof(part)) == part && !strcmp(part, "do_syscall_64"),
	      "the second, up to the blob's end");
	CHECK(!spill_file_read_text(spill, rtext.offset, 5, part, sizeof(part)) &&
	      !spill_file_read_text(spill, rtext.offset, sizeof(texts), part, 5),
	      "a text longer than what is left, or than the buffer: NULL");
	CHECK(spill_file_put(spill, small, sizeof(small), &rafter) == 0, "a blob after them");
	disk_before = disk_bytes_in(dir);
	CHECK(disk_before >= big_len, "on disk: %llu bytes", (unsigned long long)disk_before);
	spill_file_discard(spill, &rbig);
	CHECK(disk_bytes_in(dir) <= disk_before - big_len + 8192,
	      "given back, the big blob's pages leave the disk: %llu -> %llu bytes",
	      (unsigned long long)disk_before, (unsigned long long)disk_bytes_in(dir));
	CHECK(spill_file_get(spill, &rsmall, &bytes) == 0 && bytes &&
	      !memcmp(bytes, small, sizeof(small)), "the blob before it is as it was");
	free(bytes);
	CHECK(spill_file_get(spill, &rtext, &bytes) == 0 && bytes &&
	      !memcmp(bytes, texts, sizeof(texts)), "and the one after it");
	free(bytes);
	spill_file_free(spill);
	free(big);
	CHECK(rmdir(dir) == 0, "the folder is left empty");
	TAP_DONE();
}

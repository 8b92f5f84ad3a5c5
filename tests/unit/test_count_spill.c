/* test_count_spill.c - parking a profile's counts and a blob of bytes in
 * the spill file and bringing them back exactly: counts over 32 bits,
 * profiles larger than one batch, several profiles in one file, no file
 * left in the folder. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/count_spill.h"
#include "id_sums.h"
#include "tap.h"

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

int main(void)
{
	char dir[] = "/tmp/sparkprof-test-spill-XXXXXX";
	struct count_spill *spill;
	struct folded_profile *a = folded_profile_new(NULL), *b = folded_profile_new(NULL);
	struct folded_profile *back_a = folded_profile_new(NULL), *back_b = folded_profile_new(NULL);
	struct count_spill_ref ra, rb, rbytes, rnone;
	struct id_sums want_a, got_a, want_b, got_b;
	const char blob[] = "key state \0 with a NUL";
	void *bytes = NULL;

	CHECK(mkdtemp(dir) != NULL, "a folder");
	spill = count_spill_new(dir);
	/* 10,000 stacks: more than one batch of records. */
	for (uint32_t id = 0; id < 10000; id++)
		folded_profile_add_id(a, id, (uint64_t)id * 3 + 1);
	folded_profile_add_id(b, 7, 5ull << 40);
	folded_profile_add_id(b, 70000, 1);
	want_a = id_sums_of(a);
	want_b = id_sums_of(b);
	CHECK(count_spill_put(spill, a, &ra) == 0 && count_spill_put(spill, b, &rb) == 0,
	      "two profiles parked");
	CHECK(count_spill_put_bytes(spill, blob, sizeof(blob), &rbytes) == 0, "bytes parked");
	CHECK(entries(dir) == 0, "nothing named in the folder (%d entries)", entries(dir));
	CHECK(count_spill_get(spill, &rb, back_b) == 0 && count_spill_get(spill, &ra, back_a) == 0,
	      "both back, in any order");
	got_a = id_sums_of(back_a);
	got_b = id_sums_of(back_b);
	CHECK(got_a.ids == 10000 && got_a.id_total == want_a.id_total && got_a.count == want_a.count &&
	      got_a.weighted == want_a.weighted, "10,000 stacks with their counts (%zu)", got_a.ids);
	CHECK(got_b.ids == 2 && got_b.count == (5ull << 40) + 1 && got_b.weighted == want_b.weighted, "a count over 32 bits kept");
	CHECK(folded_profile_total(back_a) == folded_profile_total(a), "same totals");
	CHECK(count_spill_get_bytes(spill, &rbytes, &bytes) == 0 && bytes &&
	      !memcmp(bytes, blob, sizeof(blob)), "the bytes back");
	free(bytes);
	rnone = (struct count_spill_ref){ 0, 0 };
	CHECK(count_spill_get_bytes(spill, &rnone, &bytes) == 0 && !bytes, "no bytes: NULL");
	count_spill_free(spill);
	folded_profile_free(a);
	folded_profile_free(b);
	folded_profile_free(back_a);
	folded_profile_free(back_b);
	CHECK(rmdir(dir) == 0, "the folder is left empty");
	TAP_DONE();
}

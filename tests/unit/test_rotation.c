/* test_rotation.c - the interval folder names that --rotate makes and prunes:
 * nothing else in the output folder may be taken for one. */
#include "record/rotation.h"
#include "tap.h"

int main(void)
{
	CHECK(rotation_is_interval_name("20261123T131005Z"), "UTC start");
	CHECK(rotation_is_interval_name("20261123T131005Z-2"), "with a -N suffix");
	CHECK(rotation_is_interval_name("20261123T131005Z-12"), "with a -NN suffix");
	CHECK(!rotation_is_interval_name("20261123T131005Z-"), "empty suffix refused");
	CHECK(!rotation_is_interval_name("20261123T131005Z-2a"), "suffix not a number refused");
	CHECK(!rotation_is_interval_name("20261123T131005"), "no Z refused");
	CHECK(!rotation_is_interval_name("20261123T131005Zx"), "trailing text refused");
	CHECK(!rotation_is_interval_name("2026112XT131005Z"), "a letter in the date refused");
	CHECK(!rotation_is_interval_name("20261123-131005Z"), "no T refused");
	CHECK(!rotation_is_interval_name(""), "empty name refused");
	CHECK(!rotation_is_interval_name("notes"), "a user's folder refused");
	CHECK(!rotation_is_interval_name("summary.json"), "a file name refused");
	CHECK(!rotation_is_interval_name("2026"), "a prefix refused");
	TAP_DONE();
}

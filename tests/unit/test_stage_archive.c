/* test_stage_archive.c - executors' stages filed in a temporary file and
 * read back combined with those still in memory; a folder that cannot take
 * the file leaves them in memory. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/stage_archive.h"
#include "dir_entries.h"
#include "tap.h"

static struct stage_stats stage(int s, uint64_t samples, uint64_t first, uint64_t last)
{
	return (struct stage_stats){ .stage = { s, 0 }, .samples = samples,
				     .samples_by = { samples, 0, 0 }, .tasks_seen = 1,
				     .first_ns = first, .last_ns = last, .touched_ns = last };
}

int main(void)
{
	char dir[] = "/tmp/sparkprof-test-archive-XXXXXX";
	struct stage_archive *a;
	struct stage_stats batch[300], live[2], *out = NULL;
	size_t n = 0, unreadable = 0;
	int one, two, ret;

	if (!mkdtemp(dir))
		return 1;
	a = stage_archive_new(dir);
	CHECK(a != NULL, "archive made");
	if (!a)
		TAP_DONE();

	/* Executor one files 300 stages in two batches; executor two, one. */
	for (int i = 0; i < 300; i++)
		batch[i] = stage(i, 10, 1000 + i, 2000 + i);
	ret = stage_archive_put(a, &one, batch, 200);
	ret = ret ? ret : stage_archive_put(a, &one, batch + 200, 100);
	ret = ret ? ret : stage_archive_put(a, &two, batch + 7, 1);
	CHECK(ret == 0, "three batches filed");
	CHECK(dir_entries(dir) == 0, "the file has no name in the folder");
	CHECK(stage_archive_memory(a, &n) < 2048 && n == 301,
	      "memory: %zu bytes for %zu stages in 3 batches", stage_archive_memory(a, &n), n);

	/* In memory: stage 5 seen again later, and a new stage 400. */
	live[0] = stage(5, 3, 9000, 9500);
	live[1] = stage(400, 1, 9100, 9100);
	ret = stage_archive_get(a, &one, live, 2, &out, &n, &unreadable);
	CHECK(ret == 0 && n == 301 && unreadable == 0, "301 stages of executor one (%zu)", n);
	CHECK(out && out[5].stage.stage == 5 && out[5].samples == 13 &&
	      out[5].samples_by[0] == 13 && out[5].tasks_seen == 2 && out[5].first_ns == 1005 &&
	      out[5].last_ns == 9500,
	      "stage 5 filed and seen again: one entry, counts added, first and last of both");
	CHECK(out && out[0].stage.stage == 0 && out[299].stage.stage == 299 &&
	      out[300].stage.stage == 400, "sorted by stage");
	free(out);
	ret = stage_archive_get(a, &two, NULL, 0, &out, &n, &unreadable);
	CHECK(ret == 0 && n == 1 && out && out[0].stage.stage == 7, "executor two's one stage");
	free(out);
	stage_archive_free(a);

	/* A folder that cannot take the file: the first put fails with a line,
	 * later ones at once; nothing is read back that was not filed. */
	a = stage_archive_new("/nonexistent-sparkprof-folder");
	if (!a)
		TAP_DONE();
	ret = stage_archive_put(a, &one, batch, 10);
	CHECK(ret < 0 && ret != -ENOSPC && stage_archive_put(a, &one, batch, 10) == -ENOSPC &&
	      stage_archive_get(a, &one, live, 1, &out, &n, &unreadable) == 0 && n == 1 &&
	      out[0].stage.stage == 5,
	      "unwritable folder: refused (%d), then -ENOSPC; what is in memory is listed", ret);
	free(out);
	stage_archive_free(a);
	rmdir(dir);
	TAP_DONE();
}

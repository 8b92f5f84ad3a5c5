/* test_path_util.c - walk_files visits every regular file below a folder
 * once, follows no symlink, keeps its bounds, and holds next to no memory
 * whatever a folder holds (the index of an hour's run: 216,000 files in one
 * executor's folder). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/path_util.h"
#include "dir_entries.h"
#include "tap.h"

struct seen {
	char names[64][128];
	int n, calls, stop_at;
	size_t heap_base, heap_peak;
};

static size_t heap_now(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static int remember(const char *path, const char *rel, void *ctx)
{
	struct seen *s = ctx;
	size_t h = heap_now();

	if (h > s->heap_peak)
		s->heap_peak = h;
	if (access(path, F_OK))
		return -EIO; /* the path given must name the file */
	if (s->n < 64)
		snprintf(s->names[s->n++], sizeof(s->names[0]), "%s", rel);
	return ++s->calls == s->stop_at ? 7 : 0;
}

static bool has(const struct seen *s, const char *rel)
{
	int count = 0;

	for (int i = 0; i < s->n; i++)
		count += !strcmp(s->names[i], rel);
	return count == 1;
}

static void touch(const char *dir, const char *rel)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
}

/* root/sub with n empty files 0SUFFIX, 1SUFFIX...; its path into path. */
static void fill_folder(const char *root, const char *sub, int n, const char *suffix,
			char path[PATH_MAX])
{
	snprintf(path, PATH_MAX, "%s/%s", root, sub);
	mkdir(path, 0755);
	for (int i = 0; i < n; i++) {
		char name[64];

		snprintf(name, sizeof(name), "%s/%d%s", sub, i, suffix);
		touch(root, name);
	}
}

int main(void)
{
	char root[] = "/tmp/sparkprof-walk-XXXXXX", path[PATH_MAX], with_slash[PATH_MAX + 2];
	struct seen s = { 0 };
	int err;

	if (!mkdtemp(root)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		TAP_DONE();
	}
	snprintf(path, sizeof(path), "%s/app/exec-1", root);
	CHECK(make_dirs(path) == 0, "folders made");
	touch(root, "all.folded");
	touch(root, "app/exec-1/stage-3.folded");
	touch(root, "app/exec-1/stage-3.html");
	snprintf(path, sizeof(path), "%s/to-app", root);
	CHECK(symlink("app", path) == 0, "a symlink to a folder");
	snprintf(path, sizeof(path), "%s/to-file", root);
	CHECK(symlink("all.folded", path) == 0, "a symlink to a file");
	snprintf(path, sizeof(path), "%s/fifo", root);
	CHECK(mkfifo(path, 0600) == 0, "a fifo");
	/* 40 folders deep: files 5 and 32 folders down are seen, those 33
	 * and 40 down are not */
	snprintf(path, sizeof(path), "%s", root);
	for (int d = 0; d < 40; d++) {
		strcat(path, "/d");
		mkdir(path, 0755);
		if (d == 4 || d == 31 || d == 32 || d == 39)
			touch(path, "deep.folded");
	}
	int fds = dir_entries("/proc/self/fd");

	err = walk_files(root, WALK_ENTRIES_MAX, remember, &s);
	CHECK(err == 0, "walk: %d", err);
	CHECK(s.n == 5 && has(&s, "all.folded") && has(&s, "app/exec-1/stage-3.folded") &&
		      has(&s, "app/exec-1/stage-3.html") && has(&s, "d/d/d/d/d/deep.folded") &&
		      has(&s, "d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/"
			      "deep.folded"),
	      "every regular file once, by its name below the root; no symlink, fifo or file "
	      "more than 32 folders down (%d files)", s.n);

	memset(&s, 0, sizeof(s));
	snprintf(with_slash, sizeof(with_slash), "%s//", root);
	CHECK(walk_files(with_slash, WALK_ENTRIES_MAX, remember, &s) == 0 && s.n == 5 &&
		      has(&s, "all.folded"),
	      "a root given with slashes at its end names files the same way");

	memset(&s, 0, sizeof(s));
	s.stop_at = 1;
	snprintf(path, sizeof(path), "%s/app", root);
	CHECK(walk_files(path, WALK_ENTRIES_MAX, remember, &s) == 7 && s.calls == 1,
	      "what fn returns in a folder below stops the walk and is returned");

	fill_folder(root, "flat", 10, ".jfr", path);
	memset(&s, 0, sizeof(s));
	CHECK(walk_files(path, 3, remember, &s) == 0 && s.calls == 3,
	      "max_entries bounds the walk (%d of 10 files seen, 3 allowed)", s.calls);

	snprintf(path, sizeof(path), "%s/none", root);
	CHECK(walk_files(path, WALK_ENTRIES_MAX, remember, &s) == -ENOENT,
	      "a root that does not exist: -ENOENT");
	snprintf(path, sizeof(path), "%s/all.folded", root);
	CHECK(walk_files(path, WALK_ENTRIES_MAX, remember, &s) == -ENOTDIR,
	      "a root that is a file: -ENOTDIR");

	/* a folder of 100,000 files: fts held all its entries (about 30 MB) */
	fill_folder(root, "many", 100000, ".wall.folded", path);
	memset(&s, 0, sizeof(s));
	s.heap_base = s.heap_peak = heap_now();
	err = walk_files(path, WALK_ENTRIES_MAX, remember, &s);
	CHECK(err == 0 && s.calls == 100000, "100,000 files in one folder all seen (%d)", s.calls);
	CHECK(s.heap_peak - s.heap_base < 256 * 1024,
	      "walking them held %zu KiB of heap (under 256)", (s.heap_peak - s.heap_base) >> 10);
	CHECK(dir_entries("/proc/self/fd") == fds, "no descriptor left open by the walks");

	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	CHECK(system(path) == 0, "cleaned up");
	TAP_DONE();
}

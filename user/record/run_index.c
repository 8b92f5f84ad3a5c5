/* run_index.c - see run_index.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/json_writer.h"
#include "base/log.h"
#include "base/path_util.h"
#include "output/flame_page.h"
#include "output/page_assets.h"
#include "proc/file_slurp.h"
#include "record/run_index.h"

/* summary.json is copied into the index in pieces; the bound only limits
 * the time a hostile file can cost. */
#define SUMMARY_MAX (1ull << 30)
/* What `report` and `flame` need from it (wall_interval_ns) comes before
 * its processes and executors. */
#define SUMMARY_HEAD_MAX (1u << 20)

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static bool listed(const char *rel)
{
	if (!strcmp(rel, "index.html"))
		return false;
	return ends_with(rel, ".html") || ends_with(rel, ".folded") || ends_with(rel, ".jfr") ||
	       ends_with(rel, ".jfr.gz") || ends_with(rel, ".pb.gz");
}

struct list_ctx {
	FILE *out;
	long pages, profiles;
	bool pprof;
};

/* The page links pages by name and only counts the other files: an hour
 * of stages is 200,000 files. */
static int list_file(const char *path, const char *rel, void *ctx)
{
	struct list_ctx *lc = ctx;

	(void)path;
	if (!listed(rel))
		return 0;
	if (!ends_with(rel, ".html")) {
		lc->profiles++;
		lc->pprof |= ends_with(rel, ".pb.gz");
		return 0;
	}
	fputs(lc->pages++ ? ",\n" : "\n", lc->out);
	json_write_escaped_script(lc->out, rel);
	return 0;
}

struct index_ctx {
	const char *dir;
	int summary_fd;
};

static int write_marker(FILE *out, const char *marker, void *arg)
{
	struct index_ctx *ic = arg;
	size_t len;

	if (!strcmp(marker, "TITLE")) {
		fputs("sparkprof run: ", out);
		page_write_html_text(out, ic->dir);
		return 0;
	}
	if (!strcmp(marker, "JS")) {
		const char *js = page_asset(ASSET_INDEX_JS, &len);

		return fwrite(js, 1, len, out) == len ? 0 : -EIO;
	}
	if (!strcmp(marker, "DATA")) {
		struct list_ctx lc = { .out = out };
		int err;

		/* summary.json as a string, parsed by the page: a damaged file
		 * is reported there, and cannot break out of the script. */
		fputs("{\"summary\":", out);
		err = json_write_escaped_script_fd(out, ic->summary_fd, SUMMARY_MAX);
		if (err) {
			sp_err("read %s/summary.json: %s", ic->dir,
			       err == -EFBIG ? "larger than 1 GiB" : strerror(-err));
			return err;
		}
		fputs(",\n\"files\":[", out);
		err = walk_files(ic->dir, WALK_ENTRIES_MAX, list_file, &lc);
		fprintf(out, "],\n\"profiles\":%ld,\"pprof\":%s}", lc.profiles,
			lc.pprof ? "true" : "false");
		return err;
	}
	return 1;
}

int run_index_write(const char *dir)
{
	char path[PATH_MAX];
	struct atomic_file af;
	struct index_ctx ic = { dir, -1 };
	FILE *f;
	int err;

	if ((size_t)snprintf(path, sizeof(path), "%s/summary.json", dir) >= sizeof(path))
		return -ENAMETOOLONG;
	/* a FIFO planted there reads as empty instead of waiting for a writer */
	ic.summary_fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (ic.summary_fd < 0) {
		err = -errno;
		sp_err("read %s: %s", path, strerror(errno));
		return err;
	}
	snprintf(path, sizeof(path), "%s/index.html", dir);
	f = atomic_file_open(&af, path);
	if (!f) {
		close(ic.summary_fd);
		return -errno;
	}
	err = page_write_template(f, ASSET_INDEX_HTML, write_marker, &ic);
	close(ic.summary_fd);
	return atomic_file_commit(&af, err);
}

uint64_t run_index_wall_interval(const char *summary, size_t len)
{
	static const char key[] = "\"wall_interval_ns\":";
	const char *at = memmem(summary, len, key, sizeof(key) - 1);
	uint64_t v = 0;

	if (!at)
		return 0;
	at += sizeof(key) - 1;
	while (at < summary + len && *at == ' ')
		at++;
	for (; at < summary + len && *at >= '0' && *at <= '9'; at++) {
		if (v > UINT64_MAX / 10 - 1)
			return 0;
		v = v * 10 + (uint64_t)(*at - '0');
	}
	return v;
}

struct pages_ctx {
	uint64_t wall_interval_ns;
	int pages, first_err;
};

static int write_page(const char *path, const char *rel, void *ctx)
{
	struct pages_ctx *pc = ctx;
	int err;

	if (!ends_with(rel, ".folded"))
		return 0;
	if (ends_with(rel, ".wall.folded") && !pc->wall_interval_ns) {
		sp_err("%s: no wall_interval_ns in summary.json, so its unit is unknown; skipped",
		       path);
		return 0;
	}
	err = flame_page_from_folded(path, rel, pc->wall_interval_ns);
	if (!err)
		pc->pages++;
	else if (!pc->first_err)
		pc->first_err = err;
	return 0;
}

int run_index_write_pages(const char *dir, int *pages)
{
	struct pages_ctx pc = { 0 };
	char path[PATH_MAX];
	size_t len;
	char *summary;
	int err;

	snprintf(path, sizeof(path), "%s/summary.json", dir);
	if (!file_read_prefix(path, SUMMARY_HEAD_MAX, &summary, &len)) {
		pc.wall_interval_ns = run_index_wall_interval(summary, len);
		free(summary);
	}
	err = walk_files(dir, WALK_ENTRIES_MAX, write_page, &pc);
	*pages = pc.pages;
	return err ? err : pc.first_err;
}

/* The wall unit of a recording's file: summary.json in IN's folder or up to
 * three above (IN may be APP/exec-ID/stage-S.wall.folded). */
uint64_t run_index_wall_unit_near(const char *in)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];

	snprintf(dir, sizeof(dir), "%s", in);
	for (int up = 0; up < 4; up++) {
		char *slash = strrchr(dir, '/');
		size_t len;
		char *text;
		uint64_t unit;

		if (slash)
			*slash = '\0';
		snprintf(path, sizeof(path), "%s/summary.json", slash ? dir : ".");
		if (!file_read_prefix(path, SUMMARY_HEAD_MAX, &text, &len)) {
			unit = run_index_wall_interval(text, len);
			free(text);
			return unit;
		}
		if (!slash)
			break;
	}
	return 0;
}

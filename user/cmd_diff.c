/* cmd_diff.c - 'sparkprof diff BASE NEW': differential flame graphs of two
 * folded files, or of two recordings' folders stage by stage. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/log.h"
#include "base/path_util.h"
#include "commands.h"
#include "output/flame_page.h"
#include "output/flame_tree.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sparkprof diff BASE NEW -o OUT [options]\n"
		"\n"
		"A differential flame graph: frames are as wide as their mean share of the\n"
		"two profiles, red when they grew from BASE to NEW, blue when they shrank.\n"
		"BASE and NEW are two folded files (OUT is the page), or two folders written\n"
		"by 'sparkprof record' (OUT is a folder: a page per folded file found in\n"
		"both, e.g. OUT/APP/exec-1/stage-3.html).\n"
		"\n"
		"  -o, --output OUT     the page or folder to write\n"
		"      --no-normalize   compare raw counts, not shares of each total\n"
		"      --min-width PCT  leave out frames narrower than PCT percent of both\n"
		"                       totals (default %g)\n"
		"  -h, --help           this text\n",
		FLAME_MIN_WIDTH_DEFAULT);
}

struct diff_job {
	struct flame_page_options opts;
	const char *base_dir, *new_dir, *out_dir;
	int pages, first_err;
};

static int diff_files(const char *base, const char *new, const char *out,
		      const struct flame_page_options *opts)
{
	struct flame_tree *t = flame_tree_new();
	int err;

	if (!t) {
		sp_err("diff: out of memory");
		return -ENOMEM;
	}
	err = flame_tree_read_file(t, base, 0);
	if (!err)
		err = flame_tree_read_file(t, new, 1);
	if (!err)
		err = flame_page_write(t, opts, out);
	flame_tree_free(t);
	return err;
}

static int diff_one(const char *path, const char *rel, void *ctx)
{
	struct diff_job *job = ctx;
	char new_path[PATH_MAX], out[PATH_MAX], title[PATH_MAX + 64];
	struct flame_page_options o = job->opts;
	size_t n = strlen(rel);
	struct stat st;
	int err;

	if (n <= 7 || strcmp(rel + n - 7, ".folded"))
		return 0;
	if ((size_t)snprintf(new_path, sizeof(new_path), "%s/%s", job->new_dir, rel) >=
		    sizeof(new_path) ||
	    (size_t)snprintf(out, sizeof(out), "%s/%.*s.html", job->out_dir, (int)(n - 7), rel) >=
		    sizeof(out))
		return 0;
	if (stat(new_path, &st) || !S_ISREG(st.st_mode)) {
		printf("only in %s: %s\n", job->base_dir, rel);
		return 0;
	}
	err = make_parent_dirs(out);
	if (err) {
		sp_err("diff: create the folder for %s: %s", out, strerror(-err));
		return err;
	}
	snprintf(title, sizeof(title), "Diff %.*s: %s -> %s", (int)(n - 7), rel, job->base_dir,
		 job->new_dir);
	o.title = title;
	err = diff_files(path, new_path, out, &o);
	if (err && !job->first_err)
		job->first_err = err;
	if (!err)
		job->pages++;
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "no-normalize", no_argument, NULL, 'n' },
		{ "min-width", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct diff_job job = { .opts = { .mode = FLAME_PAGE_DIFF, .normalize = true,
					  .min_width_pct = FLAME_MIN_WIDTH_DEFAULT } };
	const char *out = NULL;
	char title[2 * PATH_MAX], *end;
	struct stat sb, sn;
	int opt, err;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		case 'n': job.opts.normalize = false; break;
		case 'w':
			errno = 0;
			job.opts.min_width_pct = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(job.opts.min_width_pct >= 0) ||
			    job.opts.min_width_pct > 100) {
				sp_err("diff: --min-width '%s' is not a percentage (0 to 100)", optarg);
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind + 2 != argc || !out) {
		sp_err("diff: give BASE, NEW and -o OUT (try 'sparkprof diff --help')");
		return 2;
	}
	job.base_dir = argv[optind];
	job.new_dir = argv[optind + 1];
	if (stat(job.base_dir, &sb) || stat(job.new_dir, &sn)) {
		sp_err("diff: %s: %s", stat(job.base_dir, &sb) ? job.base_dir : job.new_dir,
		       strerror(errno));
		return 1;
	}
	if (S_ISDIR(sb.st_mode) != S_ISDIR(sn.st_mode)) {
		sp_err("diff: %s and %s must both be folded files or both folders", job.base_dir,
		       job.new_dir);
		return 2;
	}
	if (!S_ISDIR(sb.st_mode)) {
		snprintf(title, sizeof(title), "Diff: %s -> %s", job.base_dir, job.new_dir);
		job.opts.title = title;
		return diff_files(job.base_dir, job.new_dir, out, &job.opts) ? 1 : 0;
	}
	job.out_dir = out;
	err = make_dirs(out);
	if (err) {
		sp_err("diff: create %s: %s", out, strerror(-err));
		return 1;
	}
	err = walk_files(job.base_dir, WALK_ENTRIES_MAX, diff_one, &job);
	if (err || job.first_err)
		return 1;
	if (!job.pages) {
		sp_err("diff: %s and %s have no folded file in common", job.base_dir, job.new_dir);
		return 1;
	}
	printf("sparkprof: wrote %d differential flame graphs in %s\n", job.pages, out);
	return 0;
}

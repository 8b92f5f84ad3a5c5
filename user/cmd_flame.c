/* cmd_flame.c - 'sparkprof flame': an HTML flame graph of any folded file
 * (sparkprof's, perf's or async-profiler's collapsed output), or of the
 * samples of a recording's store that have the labels given. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "cmd_folded_input.h"
#include "cmd_store_input.h"
#include "commands.h"
#include "output/flame_page.h"
#include "output/flame_tree.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sparkprof flame IN.folded [-o OUT.html] [options]\n"
		"       sparkprof flame DIR [--task TID] [--stage S[.A]] [--executor ID] [--app ID]\n"
		"                           [-o OUT.html] [options]\n"
		"\n"
		"Writes a self-contained HTML flame graph of a folded file: sparkprof's,\n"
		"FlameGraph's, perf's (stackcollapse) or async-profiler's collapsed output.\n"
		"Frame types come from the _[k] _[j] _[i] _[0] suffixes, else from the names.\n"
		"Of a recording's folder DIR: the samples its store holds that have the labels\n"
		"given (one task, one stage, 'none' for no stage, one executor), by default\n"
		"into DIR/flame-WHAT.html (DIR/flame-WHAT-KIND.html with --kind).\n"
		"\n"
		"  -o, --output FILE    the page (default: IN without .folded, plus .html)\n"
		"      --title TEXT     the page's title (default: from the file name)\n"
		"      --min-width PCT  leave out frames narrower than PCT percent of the\n"
		"                       total (default %g)\n"
		"      --kind cpu|wall|offcpu  what the counts are (default: from the name:\n"
		"                       .wall.folded, .offcpu.folded in ms, else CPU samples)\n"
		"      --unit-ns N      nanoseconds per count of a wall profile (default:\n"
		"                       the wall_interval_ns of a summary.json above IN)\n"
		"  -h, --help           this text\n",
		FLAME_MIN_WIDTH_DEFAULT);
}

/* DIR/flame-WHAT-KIND.html, from the filter. */
static void default_output(const char *dir, const struct label_filter *f, const char *kind,
			   char *out, size_t size)
{
	int n = snprintf(out, size, "%s/flame", dir);

	if (f->app_id)
		n += snprintf(out + n, size - (size_t)n, "-%s", f->app_id);
	if (f->executor_id)
		n += snprintf(out + n, size - (size_t)n, "-exec-%s", f->executor_id);
	if (f->by_stage && f->stage < 0)
		n += snprintf(out + n, size - (size_t)n, "-no-stage");
	else if (f->by_stage)
		n += snprintf(out + n, size - (size_t)n, "-stage-%d.%d", f->stage, f->attempt);
	if (f->task >= 0)
		n += snprintf(out + n, size - (size_t)n, "-task-%lld", (long long)f->task);
	if ((size_t)n < size)
		snprintf(out + n, size - (size_t)n, "%s%s.html", kind ? "-" : "", kind ? kind : "");
	for (char *c = out + strlen(dir) + 1; *c; c++)
		if (*c == '/')
			*c = '_';
}

static int flame_of_store(const char *dir, const struct label_filter *f, const char *kind,
			  const char *out, const char *title, double min_width_pct)
{
	struct flame_page_options o = { .min_width_pct = min_width_pct };
	enum query_kind qk = QUERY_CPU;
	char out_buf[PATH_MAX], title_buf[512], what[256];
	struct store_reader *r;
	struct flame_tree *t;
	int err;

	if (kind && strcmp(kind, "cpu")) {
		if (strcmp(kind, "wall") && strcmp(kind, "offcpu")) {
			sp_err("flame: --kind '%s' is not cpu, wall or offcpu", kind);
			return 2;
		}
		qk = !strcmp(kind, "wall") ? QUERY_WALL : QUERY_OFF_CPU;
	}
	if (!(r = cmd_open_store(dir)))
		return 1;
	o.mode = qk == QUERY_CPU ? FLAME_PAGE_CPU : qk == QUERY_WALL ? FLAME_PAGE_WALL
								     : FLAME_PAGE_OFFCPU;
	o.unit_ns = qk == QUERY_WALL ? store_reader_info(r)->wall_interval_ns
				     : qk == QUERY_OFF_CPU ? 1000000 : 0;
	o.thread_states = qk == QUERY_WALL;
	if (!out) {
		default_output(dir, f, kind, out_buf, sizeof(out_buf));
		out = out_buf;
	}
	if (!title) {
		cmd_filter_describe(f, what, sizeof(what));
		snprintf(title_buf, sizeof(title_buf), "%s: %s", qk == QUERY_CPU ? "CPU" :
			 qk == QUERY_WALL ? "Wall clock" : "Off-CPU", *what ? what : "the recording");
		title = title_buf;
	}
	o.title = title;
	t = store_query_flame(r, f, qk, min_width_pct, &err);
	if (t)
		err = flame_page_write(t, &o, out);
	flame_tree_free(t);
	store_reader_close(r);
	if (!err)
		printf("sparkprof: wrote %s\n", out);
	return err ? 1 : 0;
}

/* A folded file's page: OUT defaults to IN with .html for .folded, the
 * title to one of IN's name and kind. 0, 1 on failure (said), 2 for a
 * usage error. */
static int flame_of_folded(const char *in, const char *kind, uint64_t unit_ns, const char *out,
			   const char *title, struct flame_page_options *o)
{
	char out_buf[PATH_MAX], title_buf[PATH_MAX + 64];
	struct flame_tree *t;
	int err;

	if (cmd_folded_input_kind("flame", in, kind, unit_ns, &o->mode, &o->unit_ns))
		return 2;
	if (!out) {
		size_t n = strlen(in);

		if (n > 7 && !strcmp(in + n - 7, ".folded"))
			n -= 7;
		snprintf(out_buf, sizeof(out_buf), "%.*s.html", (int)n, in);
		out = out_buf;
	}
	if (!title) {
		const char *base = strrchr(in, '/');

		flame_page_title(base ? base + 1 : in, o->mode, title_buf, sizeof(title_buf));
		title = title_buf;
	}
	o->title = title;
	t = flame_tree_new();
	if (!t) {
		sp_err("flame: out of memory");
		return 1;
	}
	err = flame_tree_read_file(t, in, 0);
	if (!err)
		err = flame_page_write(t, o, out);
	flame_tree_free(t);
	return err ? 1 : 0;
}

int cmd_flame(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' }, { "title", required_argument, NULL, 't' },
		{ "min-width", required_argument, NULL, 'w' }, { "kind", required_argument, NULL, 'k' },
		{ "unit-ns", required_argument, NULL, 'u' }, { "help", no_argument, NULL, 'h' },
		CMD_FILTER_OPTIONS, { NULL, 0, NULL, 0 },
	};
	struct label_filter filter = { .task = -1 };
	struct flame_page_options o = { .min_width_pct = FLAME_MIN_WIDTH_DEFAULT };
	const char *out = NULL, *title = NULL, *kind = NULL, *in;
	char *end;
	uint64_t unit_ns = 0;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		case 't': title = optarg; break;
		case 'k': kind = optarg; break;
		case 'w':
			errno = 0;
			o.min_width_pct = strtod(optarg, &end);
			if (errno || *end || end == optarg || !(o.min_width_pct >= 0) ||
			    o.min_width_pct > 100) {
				sp_err("flame: --min-width '%s' is not a percentage (0 to 100)", optarg);
				return 2;
			}
			break;
		case 'u':
			if (cmd_parse_positive("flame", "--unit-ns", optarg, &unit_ns))
				return 2;
			break;
		case 'h': usage(stdout); return 0;
		default:
			switch (cmd_filter_option("flame", opt, optarg, &filter)) {
			case 1: break;
			case 0: usage(stderr); return 2;
			default: return 2;
			}
		}
	}
	if (optind + 1 != argc) {
		sp_err("flame: give one folded file or recording folder (try 'sparkprof flame --help')");
		return 2;
	}
	in = argv[optind];
	if (cmd_is_store_input(in))
		return flame_of_store(in, &filter, kind, out, title, o.min_width_pct);
	if (filter.app_id || filter.executor_id || filter.by_stage || filter.task >= 0) {
		sp_err("flame: --task, --stage, --executor and --app pick samples of a recording's "
		       "folder, not of %s", in);
		return 2;
	}
	return flame_of_folded(in, kind, unit_ns, out, title, &o);
}

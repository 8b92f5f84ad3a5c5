/* cmd_report.c - 'sparkprof report DIR': a recording's files written again
 * from its sample store (folded, JFR, flame graphs) and its index.html; a
 * folder without a store (an older recording) gets its flame graphs from
 * its folded files. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "cmd_store_input.h"
#include "commands.h"
#include "output/views.h"
#include "record/run_index.h"

/* Every view of DIR's store, as the recording made them, and the pages. */
static int write_views(const char *dir, int *files)
{
	struct store_reader *r = cmd_open_store(dir);
	const struct store_info *info;
	struct views_settings vs;
	struct views *v;
	int err;

	if (!r)
		return -errno;
	info = store_reader_info(r);
	vs = (struct views_settings){ .dir = dir, .jfr = !(info->flags & STORE_NO_JFR),
				      .compress = info->flags & STORE_GZIP_JFR, .html = true,
				      .attribution = info->flags & STORE_EPOCH ? "epoch" : "thread" };
	v = views_write(r, &vs);
	err = v ? views_first_error(v) : -errno;
	*files = v ? (int)views_count(v) : 0;
	views_free(v);
	store_reader_close(r);
	return err;
}

int cmd_report(int argc, char **argv)
{
	char store[PATH_MAX];
	struct stat st;
	int written = 0, err;
	bool from_store;

	/* More than one folder, or an option past --help: the application report. */
	if (argc > 2 || (argc == 2 && argv[1][0] == '-' && strcmp(argv[1], "-h") &&
			 strcmp(argv[1], "--help")))
		return cmd_app_report(argc, argv);
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: sparkprof report DIR\n"
		       "       sparkprof report DIR... -o OUT [--event-log PATH | --spark-ui URL]\n\n"
		       "Writes a recording's files again from its sample store, DIR/samples.store:\n"
		       "the folded and JFR files and flame graphs of the node, each executor and\n"
		       "each stage, as the recording did, and DIR/index.html (the run at a\n"
		       "glance, from DIR/summary.json and the files there). A folder without a\n"
		       "store gets the flame graph X.html of every X.folded below it.\n\n"
		       "With -o, the application report of any number of recordings, joined\n"
		       "with Spark's event log or UI (sparkprof report DIR... -o OUT --help).\n");
		return 0;
	}
	if (argc != 2 || argv[1][0] == '-') {
		sp_err("report: give one output folder (try 'sparkprof report --help')");
		return 2;
	}
	if (stat(argv[1], &st)) {
		sp_err("report: %s: %s", argv[1], strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		sp_err("report: %s is not a folder", argv[1]);
		return 1;
	}
	snprintf(store, sizeof(store), "%s/%s", argv[1], STORE_FILE_NAME);
	from_store = access(store, F_OK) == 0;
	err = from_store ? write_views(argv[1], &written)
			 : run_index_write_pages(argv[1], &written);
	if (!err)
		err = run_index_write(argv[1]);
	if (err)
		return 1;
	if (from_store)
		printf("sparkprof: wrote the files of %d views and %s/index.html\n", written, argv[1]);
	else
		printf("sparkprof: wrote %d flame graphs and %s/index.html\n", written, argv[1]);
	return 0;
}

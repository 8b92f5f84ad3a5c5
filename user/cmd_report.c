/* cmd_report.c - 'sparkprof report DIR': the HTML of a recording's folder
 * written again (flame graphs and index.html), e.g. after --no-html. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/log.h"
#include "commands.h"
#include "record/run_index.h"

int cmd_report(int argc, char **argv)
{
	struct stat st;
	int pages = 0, err;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: sparkprof report DIR\n\n"
		       "Writes the flame graph X.html of every X.folded below DIR, a folder\n"
		       "written by 'sparkprof record', and DIR/index.html (the run at a\n"
		       "glance, from DIR/summary.json and the files there).\n");
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
	err = run_index_write_pages(argv[1], &pages);
	if (!err)
		err = run_index_write(argv[1]);
	if (err)
		return 1;
	printf("sparkprof: wrote %d flame graphs and %s/index.html\n", pages, argv[1]);
	return 0;
}

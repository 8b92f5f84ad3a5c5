/* cmd_app_report.c - 'sparkprof report DIR... -o OUT': the application
 * report (output/app_report.h) of any number of recordings, joined with an
 * event log or a live Spark UI / History Server when given. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/grow_array.h"
#include "base/log.h"
#include "commands.h"
#include "output/app_report.h"
#include "output/store_file.h"
#include "spark/event_log.h"
#include "spark/spark_app_record.h"
#include "spark/spark_rest.h"

#define MAX_STORES 100000

struct stores {
	struct store_reader **readers;
	char **names;
	size_t n, cap, names_cap;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sparkprof report DIR... -o OUT [--event-log PATH | --spark-ui URL [--app ID]]\n"
		"\n"
		"One report per Spark application from any number of recordings (folders\n"
		"of nodes, --rotate intervals, or both): OUT/index.html and OUT/report.json,\n"
		"with every stage's CPU samples summed over the recordings, its tasks and\n"
		"their spread, and stragglers with their own and differential flame graphs.\n"
		"\n"
		"  -o, --output OUT    the report's folder\n"
		"  --event-log PATH    Spark's event log: a file, or a rolling eventlog_v2_*\n"
		"                      folder; plain, zstd, lz4 or snappy: stage names,\n"
		"                      descriptions, task times and metrics\n"
		"  --spark-ui URL      the same from a live driver's UI or a History Server\n"
		"                      (http://host:4040), through its REST API\n"
		"  --app ID            with --spark-ui: which application (default: the first)\n"
		"\n"
		"Without Spark's record, task times come from what the recordings saw, and\n"
		"the page says so. 'sparkprof report DIR' alone writes one recording's\n"
		"files again (see 'sparkprof report --help').\n");
}

static int add_store(struct stores *s, const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct store_reader *r;

	snprintf(path, sizeof(path), "%s/%s", dir, STORE_FILE_NAME);
	if (access(path, F_OK))
		return -ENOENT;
	if (s->n >= MAX_STORES ||
	    grow_array((void **)&s->readers, &s->cap, s->n + 1, sizeof(*s->readers)) ||
	    grow_array((void **)&s->names, &s->names_cap, s->n + 1, sizeof(*s->names)))
		return -ENOMEM;
	r = store_reader_open(path);
	if (!r)
		return -errno;
	s->readers[s->n] = r;
	s->names[s->n++] = strdup(name);
	return 0;
}

/* DIR's store, or those of its sub-folders (--rotate intervals). */
static int add_recording(struct stores *s, const char *dir)
{
	int err = add_store(s, dir, dir), found = 0;
	struct dirent *e;
	DIR *d;

	if (err != -ENOENT)
		return err;
	d = opendir(dir);
	if (!d) {
		sp_err("report: %s: %s", dir, strerror(errno));
		return -errno;
	}
	while (!err && (e = readdir(d))) {
		char sub[PATH_MAX];

		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
		err = add_store(s, sub, sub);
		found += !err;
		if (err == -ENOENT)
			err = 0;
	}
	closedir(d);
	if (!err && !found) {
		sp_err("report: %s holds no recording (%s): %s", dir, STORE_FILE_NAME,
		       strerror(ENOENT));
		err = -ENOENT;
	}
	return err;
}

static void free_stores(struct stores *s)
{
	for (size_t i = 0; i < s->n; i++) {
		store_reader_close(s->readers[i]);
		free(s->names[i]);
	}
	free(s->readers);
	free(s->names);
}

/* Spark's record, or NULL after an error line: the report goes on without. */
static struct spark_app_record *read_spark(const char *event_log, const char *ui,
					   const char *app, bool *failed)
{
	struct spark_app_record *rec = NULL;
	int err;

	if (!event_log && !ui)
		return NULL;
	err = event_log ? spark_event_log_read(event_log, &rec) : spark_rest_read(ui, app, &rec);
	if (err) {
		sp_err("report: no stage names or task times from %s: the report is written "
		       "without them", event_log ? event_log : ui);
		*failed = true;
		return NULL;
	}
	return rec;
}

int cmd_app_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "event-log", required_argument, NULL, 'e' },
		{ "spark-ui", required_argument, NULL, 'u' },
		{ "app", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *event_log = NULL, *ui = NULL, *app = NULL;
	struct stores s = { 0 };
	struct spark_app_record *rec;
	bool spark_failed = false;
	int opt, err = 0;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		case 'e': event_log = optarg; break;
		case 'u': ui = optarg; break;
		case 'a': app = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!out || optind >= argc || (event_log && ui)) {
		sp_err("report: give recording folders, -o OUT, and at most one of --event-log "
		       "and --spark-ui (try 'sparkprof report --help')");
		return 2;
	}
	for (int i = optind; !err && i < argc; i++)
		err = add_recording(&s, argv[i]);
	rec = err ? NULL : read_spark(event_log, ui, app, &spark_failed);
	if (!err)
		err = app_report_write(&(struct app_report_input){
			.stores = s.readers, .recordings = (const char *const *)s.names,
			.nstores = s.n, .spark = rec, .spark_source = event_log ? event_log : ui,
			.out_dir = out });
	if (!err)
		printf("sparkprof: wrote %s/index.html and %s/report.json from %zu recording%s\n", out,
		       out, s.n, s.n == 1 ? "" : "s");
	spark_app_record_free(rec);
	free_stores(&s);
	return err || spark_failed ? 1 : 0;
}

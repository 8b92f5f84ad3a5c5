/* cmd_convert.c - 'sparkprof convert': a folded file, or a recording's
 * sample store with its labels, as pprof (profile.proto, gzip'd) or OTLP. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "cmd_folded_input.h"
#include "cmd_otlp.h"
#include "cmd_store_input.h"
#include "commands.h"
#include "output/flame_page.h"
#include "output/flame_tree.h"
#include "output/pprof.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sparkprof convert IN.folded -o OUT.pb.gz [options]\n"
		"       sparkprof convert DIR -o OUT.pb.gz [--task TID] [--stage S[.A]]\n"
		"                         [--executor ID] [--app ID]\n"
		"       sparkprof convert DIR --otlp URL [--otlp-header 'Name: value']...\n"
		"\n"
		"Converts a folded file, or a recording's folder DIR (its sample store: every\n"
		"sample, or those with the labels given) into one profile whose samples carry\n"
		"their labels: spark.app.id, spark.executor.id, spark.stage.id,\n"
		"spark.stage.attempt, spark.task.id, thread.name, thread.state, process.pid,\n"
		"process.name (go tool pprof -tagfocus picks them), with a value per kind\n"
		"recorded. Formats (by --format, else by OUT's name):\n"
		"  pprof   gzip'd profile.proto (*.pb.gz, *.pprof): go tool pprof, Pyroscope,\n"
		"          Parca, Grafana. CPU profiles are samples/count; wall and off-CPU\n"
		"          profiles wall/nanoseconds and offcpu/nanoseconds. Frame types are\n"
		"          kept as each function's file name ([jit], [kernel], ...).\n"
		"\n"
		"  otlp    with --otlp URL: a recording's samples sent to an OpenTelemetry\n"
		"          Collector as OTLP profiles (opentelemetry-proto 1.11: CPU samples,\n"
		"          wall and off-CPU nanoseconds; resource attributes host.name,\n"
		"          process.pid, process.executable.name, spark.app.id,\n"
		"          spark.executor.id; sample attributes thread.name, thread.id,\n"
		"          spark.stage.id, spark.stage.attempt, spark.task.id; frame types as\n"
		"          profile.frame.type). Exits 1 when samples were dropped.\n"
		"\n"
		"  -o, --output FILE    the file to write\n"
		"      --format pprof   the format\n"
		"      --kind cpu|wall|offcpu  what the counts are (default: from IN's name:\n"
		"                       .wall.folded, .offcpu.folded in ms, else CPU samples)\n"
		"      --unit-ns N      nanoseconds per count of a wall profile (default:\n"
		"                       the wall_interval_ns of a summary.json above IN)\n"
		"      --freq HZ        sampling frequency of a CPU profile: sets the\n"
		"                       profile's period (cpu/nanoseconds)\n"
		CMD_OTLP_HELP
		"  -h, --help           this text\n");
}

/* convert DIR --otlp URL */
static int convert_otlp(int argc, char **argv, struct cmd_otlp *o, bool filtered)
{
	struct store_reader *r;
	int rc;

	if (optind + 1 != argc || !cmd_is_store_input(argv[optind])) {
		sp_err("convert: --otlp sends a recording's folder: give DIR");
		return 2;
	}
	if (filtered) {
		sp_err("convert: --otlp sends every sample: --task, --stage, --executor and "
		       "--app do not apply");
		return 2;
	}
	if (!(r = cmd_open_store(argv[optind])))
		return 1;
	rc = cmd_otlp_send_store(r, o);
	store_reader_close(r);
	return rc;
}

/* A folded file as pprof: its kind (CPU, wall or off-CPU) says the sample
 * type and unit. 0, 1 on failure (said), 2 for a usage error. */
static int convert_folded(const char *in, const char *out, const char *kind, uint64_t unit_ns,
			  uint64_t freq)
{
	struct pprof_options po = { .sample_type = "samples", .unit = "count", .multiplier = 1 };
	enum flame_page_mode mode;
	struct flame_tree *t;
	int err;

	if (cmd_folded_input_kind("convert", in, kind, unit_ns, &mode, &po.multiplier))
		return 2;
	if (mode == FLAME_PAGE_CPU) {
		po.multiplier = 1;
		if (freq) {
			po.period = 1000000000ULL / freq;
			po.period_type = "cpu";
			po.period_unit = "nanoseconds";
		}
	} else {
		po.sample_type = mode == FLAME_PAGE_WALL ? "wall" : "offcpu";
		po.unit = "nanoseconds";
	}
	t = flame_tree_new();
	if (!t) {
		sp_err("convert: out of memory");
		return 1;
	}
	err = flame_tree_read_file(t, in, 0);
	if (!err)
		err = pprof_write(t, &po, out);
	flame_tree_free(t);
	return err ? 1 : 0;
}

/* A filter or --otlp* option: 1 taken, 0 not one of them, -1 bad (said). */
static int shared_option(int opt, const char *arg, struct label_filter *filter,
			 struct cmd_otlp *otlp)
{
	int taken = cmd_filter_option("convert", opt, arg, filter);

	return taken ? taken : cmd_otlp_option("convert", opt, arg, otlp);
}

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' }, { "format", required_argument, NULL, 'f' },
		{ "kind", required_argument, NULL, 'k' }, { "unit-ns", required_argument, NULL, 'u' },
		{ "freq", required_argument, NULL, 'F' }, { "help", no_argument, NULL, 'h' },
		CMD_FILTER_OPTIONS, CMD_OTLP_OPTIONS, { NULL, 0, NULL, 0 },
	};
	struct label_filter filter = { .task = -1 };
	struct cmd_otlp otlp = { 0 };
	bool filtered;
	const char *out = NULL, *format = NULL, *kind = NULL;
	uint64_t unit_ns = 0, freq = 0;
	int opt, err;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o': out = optarg; break;
		case 'f': format = optarg; break;
		case 'k': kind = optarg; break;
		case 'u':
			if (cmd_parse_positive("convert", "--unit-ns", optarg, &unit_ns))
				return 2;
			break;
		case 'F':
			if (cmd_parse_positive("convert", "--freq", optarg, &freq))
				return 2;
			break;
		case 'h': usage(stdout); return 0;
		default:
			err = shared_option(opt, optarg, &filter, &otlp);
			if (err <= 0) {
				if (!err)
					usage(stderr);
				return 2;
			}
		}
	}
	filtered = filter.app_id || filter.executor_id || filter.by_stage || filter.task >= 0;
	if (otlp_options_check("convert", &otlp.export))
		return 2;
	if (otlp.export.sender.url)
		return convert_otlp(argc, argv, &otlp, filtered);
	if (optind + 1 != argc || !out) {
		sp_err("convert: give IN.folded and -o OUT (try 'sparkprof convert --help')");
		return 2;
	}
	if (format && strcmp(format, "pprof")) {
		sp_err("convert: unknown --format '%s' (known: pprof)", format);
		return 2;
	}
	if (!format && !strstr(out, ".pb") && !strstr(out, ".pprof")) {
		sp_err("convert: cannot tell the format from '%s': give --format pprof", out);
		return 2;
	}
	if (cmd_is_store_input(argv[optind])) {
		struct store_reader *r = cmd_open_store(argv[optind]);

		err = r ? store_query_pprof(r, &filter, out) : -1;
		store_reader_close(r);
		return err ? 1 : 0;
	}
	if (filtered) {
		sp_err("convert: --task, --stage, --executor and --app pick samples of a "
		       "recording's folder, not of %s", argv[optind]);
		return 2;
	}
	return convert_folded(argv[optind], out, kind, unit_ns, freq);
}

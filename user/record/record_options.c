/* record_options.c - see record_options.h. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "record/record_options.h"
#include "spark/executor_spec.h"

#define NSEC_PER_SEC 1000000000ULL
/* An interval must be written before the next one ends (record/rotation.h). */
#define ROTATE_MIN_NS (2 * NSEC_PER_SEC)

enum {
	OPT_WALL = 256, OPT_OFF_CPU, OPT_MIN_OFF_CPU, OPT_NO_JFR, OPT_NO_JAVA_WALKER, OPT_COMPRESS, OPT_THREADS,
	OPT_EXECUTORS, OPT_APP, OPT_ATTRIBUTION, OPT_EPOCH, OPT_ATTACH, OPT_AGENT, OPT_RING_BUFFER,
	OPT_NO_HTML, OPT_ROTATE, OPT_KEEP, OPT_STACK_MEMORY,
};

static const struct option long_options[] = {
	{ "all", no_argument, NULL, 'a' },
	{ "pid", required_argument, NULL, 'p' },
	{ "freq", required_argument, NULL, 'F' },
	{ "duration", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "threads-in-stacks", no_argument, NULL, 't' },
	{ "help", no_argument, NULL, 'h' },
	{ "wall", optional_argument, NULL, OPT_WALL },
	{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
	{ "min-off-cpu", required_argument, NULL, OPT_MIN_OFF_CPU },
	{ "no-jfr", no_argument, NULL, OPT_NO_JFR },
	{ "no-html", no_argument, NULL, OPT_NO_HTML },
	{ "no-java-walker", no_argument, NULL, OPT_NO_JAVA_WALKER },
	{ "compress", no_argument, NULL, OPT_COMPRESS },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "executors", required_argument, NULL, OPT_EXECUTORS },
	{ "app", required_argument, NULL, OPT_APP },
	{ "attribution", required_argument, NULL, OPT_ATTRIBUTION },
	{ "epoch-interval", required_argument, NULL, OPT_EPOCH },
	{ "attach", no_argument, NULL, OPT_ATTACH },
	{ "agent", required_argument, NULL, OPT_AGENT },
	{ "ring-buffer", required_argument, NULL, OPT_RING_BUFFER },
	{ "rotate", required_argument, NULL, OPT_ROTATE },
	{ "keep", required_argument, NULL, OPT_KEEP },
	{ "stack-memory", required_argument, NULL, OPT_STACK_MEMORY },
	OTLP_OPTIONS,
	{ NULL, 0, NULL, 0 },
};

void record_options_usage(FILE *out)
{
	fputs("usage: sparkprof record [options] [-- command [args]]\n"
	      "\n"
	      "Samples every CPU (cpu-clock) and writes folded stacks, JFR and a summary.\n"
	      "\n"
	      "  -a, --all              profile every process (the default)\n"
	      "  -p, --pid PID[,PID]    profile only these processes, their threads and their\n"
	      "                         children (a PySpark executor's Python workers)\n"
	      "  -F, --freq HZ          samples per second per CPU (default 99)\n"
	      "  -d, --duration SECS    stop after SECS (else at Ctrl-C/SIGTERM, when the\n"
	      "                         command after -- exits, or when every -p target has)\n"
	      "  -o, --output DIR       output folder (default sparkprof-YYYYmmdd-HHMMSS)\n"
	      "  -t, --threads-in-stacks  a frame for the thread (full Java name where\n"
	      "                         known) under the process in folded stacks\n"
	      "      --wall[=INTERVAL]  also a wall-clock profile: on-CPU and off-CPU time in\n"
	      "                         units of INTERVAL (default 10ms), *.wall.folded\n"
	      "      --off-cpu          also an off-CPU profile (*.offcpu.folded, in ms)\n"
	      "      --ring-buffer MIB  BPF ring buffer size (default: about a second of\n"
	      "                         samples at -F, and of off-CPU intervals, on every\n"
	      "                         CPU, at most 512 MiB; 1 to 1024 MiB when given,\n"
	      "                         rounded up to a power of two); a bigger one rides\n"
	      "                         out longer stalls of the drain\n"
	      "      --stack-memory SIZE  memory for the open segment of the sample store:\n"
	      "                         its distinct stacks, labels and samples (MiB, or\n"
	      "                         with K/M/G; default 16; 0: no limit); past it, or\n"
	      "                         after a minute, the segment is written to\n"
	      "                         DIR/samples.store and memory starts empty, so a\n"
	      "                         long recording stays flat\n"
	      "      --min-off-cpu DUR  ignore off-CPU intervals shorter than DUR (default 1ms)\n"
	      "      --threads tasks|all  in Spark executors, keep only task threads\n"
	      "                         (default all)\n"
	      "      --no-jfr           do not write .jfr files\n"
	      "      --no-html          no flame graph (.html) beside each .folded file and no\n"
	      "                         index.html (sparkprof report DIR writes them later)\n"
	      "      --no-java-walker   walk JVM stacks by frame pointers alone (127 frames,\n"
	      "                         interpreted frames unnamed, waits without callers)\n"
	      "      --compress         gzip the .jfr files (.jfr.gz): JDK Mission Control\n"
	      "                         reads them; the JDK's `jfr` tool and async-profiler's\n"
	      "                         converter do not (gunzip first)\n"
	      "      --executors SPEC   Spark executors to split by stage: '*' (default),\n"
	      "                         or ids and ranges like 1,3,5-8\n"
	      "      --app ID           only executors of this Spark application\n"
	      "      --attribution thread|epoch\n"
	      "                         thread (default): each task-thread sample goes to the\n"
	      "                         stage in its thread's name at that time; epoch: every\n"
	      "                         sample by the stage epoch rule, like the RAPIDS plugin\n"
	      "      --epoch-interval SECS  stage epoch length (default 5)\n"
	      "      --attach           load the sparkprof helper into every profiled JVM\n"
	      "                         that does not have it\n"
	      "      --agent PATH       the helper library (default: next to sparkprof)\n"
	      "      --rotate DUR       continuous mode: a folder DIR/YYYYmmddTHHMMSSZ per\n"
	      "                         interval of DUR (e.g. 10m, at least 2s), each\n"
	      "                         complete once its summary.json is there\n"
	      "      --keep N           with --rotate: keep the N newest written interval\n"
	      "                         folders, remove older ones (default 24)\n"
	      "  -v, --verbose          more messages\n"
	      "\n"
	      "Export: each segment of the sample store (a minute at most) goes to an\n"
	      "OpenTelemetry Collector as OTLP profiles on a thread of its own; sampling\n"
	      "never waits for it. summary.json's \"otlp\" says what was sent, retried\n"
	      "and dropped.\n"
	      OTLP_HELP,
	      out);
}

int parse_duration_ns(const char *text, uint64_t default_unit_ns, uint64_t *out)
{
	static const struct { const char *suffix; uint64_t ns; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", NSEC_PER_SEC },
		{ "m", 60 * NSEC_PER_SEC }, { "h", 3600 * NSEC_PER_SEC },
	};
	char *end;
	double value;
	uint64_t unit = default_unit_ns;

	/* Plain decimals only: strtod would also take "1e9", "0x10" or "inf". */
	size_t digits = strspn(text, "0123456789"), len = digits;

	if (text[len] == '.')
		len += 1 + strspn(text + len + 1, "0123456789");
	if (!digits)
		return -EINVAL;
	errno = 0;
	value = strtod(text, &end);
	if (end != text + len || errno || !isfinite(value) || value < 0)
		return -EINVAL;
	if (*end) {
		size_t i;

		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(end, units[i].suffix))
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return -EINVAL;
		unit = units[i].ns;
	}
	if (value * (double)unit > 1e18)
		return -EINVAL;
	*out = (uint64_t)(value * (double)unit + 0.5);
	return 0;
}

static int parse_pids(struct record_options *opts, const char *text)
{
	const char *p = text;

	while (*p) {
		char *end;
		long pid;

		errno = 0;
		pid = strtol(p, &end, 10);
		if (end == p || errno || pid <= 0 || pid > 4194304 || (*end && *end != ',')) {
			sp_err("-p: '%s' is not a list of process ids", text);
			return -1;
		}
		if (opts->npids == RECORD_MAX_PIDS) {
			sp_err("-p: more than %d processes", RECORD_MAX_PIDS);
			return -1;
		}
		opts->pids[opts->npids++] = (pid_t)pid;
		p = *end ? end + 1 : end;
	}
	if (!opts->npids) {
		sp_err("-p: no process id given");
		return -1;
	}
	return 0;
}

static int parse_positive_duration(const char *option, const char *text, uint64_t unit,
				   uint64_t *out)
{
	if (parse_duration_ns(text, unit, out) || *out == 0) {
		sp_err("%s: '%s' is not a positive duration (e.g. 10ms, 2s)", option, text);
		return -1;
	}
	return 0;
}

/* A whole number in [min, max] for option opt; else -1 after a message
 * saying it should be `what`. */
static int parse_whole(const char *opt, const char *text, long min, long max, const char *what,
		       long *out)
{
	char *end;

	errno = 0;
	*out = strtol(text, &end, 10);
	if (end == text || *end || errno || *out < min || *out > max) {
		sp_err("%s: '%s' is not %s", opt, text, what);
		return -1;
	}
	return 0;
}

/* A size in MiB, or in K, M or G with that suffix, up to 64 GiB: 0 or
 * -EINVAL. */
static int parse_mib_size(const char *text, uint64_t *out)
{
	static const char suffixes[] = "KMG";
	size_t digits = strspn(text, "0123456789");
	const char *unit = text[digits] ? strchr(suffixes, text[digits]) : NULL;
	int shift = unit ? 10 * (int)(unit - suffixes + 1) : 20;
	uint64_t n = 0;

	if (!digits || digits > 12 || (text[digits] && (!unit || text[digits + 1])))
		return -EINVAL;
	for (size_t i = 0; i < digits; i++)
		n = n * 10 + (uint64_t)(text[i] - '0');
	if (n > (64ULL << 30) >> shift)
		return -EINVAL;
	*out = n << shift;
	return 0;
}

/* One option each: its argument into opts. 0, or -1 after a message. */
typedef int (*option_fn)(struct record_options *o, const char *arg);

static int opt_all(struct record_options *o, const char *arg)
{
	(void)o;
	(void)arg;
	return 0;
}

static int opt_pid(struct record_options *o, const char *arg)
{
	return parse_pids(o, arg);
}

static int opt_freq(struct record_options *o, const char *arg)
{
	long hz;

	if (parse_whole("-F", arg, 1, 10000, "a frequency between 1 and 10000 Hz", &hz))
		return -1;
	o->frequency_hz = (unsigned int)hz;
	return 0;
}

static int opt_duration(struct record_options *o, const char *arg)
{
	uint64_t ns;

	if (parse_positive_duration("-d", arg, NSEC_PER_SEC, &ns))
		return -1;
	o->duration_s = (double)ns / NSEC_PER_SEC;
	return 0;
}

static int opt_output(struct record_options *o, const char *arg)
{
	if (!*arg) {
		sp_err("-o: empty output folder name");
		return -1;
	}
	o->output_dir = arg;
	return 0;
}

static int opt_wall(struct record_options *o, const char *arg)
{
	o->wall = true;
	return arg ? parse_positive_duration("--wall", arg, 1000000ULL, &o->wall_interval_ns) : 0;
}

static int opt_ring_buffer(struct record_options *o, const char *arg)
{
	long n;

	if (parse_whole("--ring-buffer", arg, 1, 1024, "a size between 1 and 1024 MiB", &n))
		return -1;
	o->ring_buffer_mib = (unsigned int)n;
	return 0;
}

static int opt_stack_memory(struct record_options *o, const char *arg)
{
	if (!parse_mib_size(arg, &o->stack_memory_bytes))
		return 0;
	sp_err("--stack-memory: '%s' is not a size up to 64G (e.g. 16, 512K, 2G)", arg);
	return -1;
}

static int opt_min_off_cpu(struct record_options *o, const char *arg)
{
	if (!parse_duration_ns(arg, 1000000ULL, &o->min_off_cpu_ns))
		return 0;
	sp_err("--min-off-cpu: '%s' is not a duration (e.g. 1ms)", arg);
	return -1;
}

static int opt_threads(struct record_options *o, const char *arg)
{
	if (!strcmp(arg, "all") || !strcmp(arg, "tasks")) {
		o->threads = !strcmp(arg, "all") ? THREADS_ALL : THREADS_TASKS;
		return 0;
	}
	sp_err("--threads: '%s' is neither 'tasks' nor 'all'", arg);
	return -1;
}

static int opt_executors(struct record_options *o, const char *arg)
{
	struct executor_spec *spec;
	char err[256];

	if (executor_spec_parse(arg, strlen(arg), &spec, err, sizeof(err))) {
		sp_err("--executors: %s", err);
		return -1;
	}
	executor_spec_free(spec);
	o->executors = arg;
	return 0;
}

static int opt_attribution(struct record_options *o, const char *arg)
{
	if (!attribution_mode_parse(arg, &o->attribution))
		return 0;
	sp_err("--attribution: '%s' is neither 'thread' nor 'epoch'", arg);
	return -1;
}

static int opt_epoch(struct record_options *o, const char *arg)
{
	return parse_positive_duration("--epoch-interval", arg, NSEC_PER_SEC, &o->epoch_interval_ns);
}

static int opt_rotate(struct record_options *o, const char *arg)
{
	if (parse_positive_duration("--rotate", arg, NSEC_PER_SEC, &o->rotate_ns))
		return -1;
	if (o->rotate_ns >= ROTATE_MIN_NS)
		return 0;
	sp_err("--rotate: '%s' is shorter than the 2s minimum", arg);
	return -1;
}

static int opt_keep(struct record_options *o, const char *arg)
{
	long n;

	if (parse_whole("--keep", arg, 1, 1000000, "a number of folders between 1 and 1000000", &n))
		return -1;
	o->keep = (unsigned int)n;
	return 0;
}

#define FLAG(name, field, value) \
	static int name(struct record_options *o, const char *arg) \
	{ (void)arg; o->field = value; return 0; }
FLAG(opt_per_thread, per_thread, true)
FLAG(opt_verbose, verbose, o->verbose + 1)
FLAG(opt_help, help, true)
FLAG(opt_off_cpu, off_cpu, true)
FLAG(opt_no_jfr, jfr, false)
FLAG(opt_no_html, html, false)
FLAG(opt_no_java_walker, java_walker, false)
FLAG(opt_compress, compress, true)
FLAG(opt_attach, attach, true)
#undef FLAG

static int opt_app(struct record_options *o, const char *arg)
{
	o->app_id = arg;
	return 0;
}

static int opt_agent(struct record_options *o, const char *arg)
{
	o->agent_path = arg;
	return 0;
}

static const struct { int id; option_fn fn; } handlers[] = {
	{ 'a', opt_all }, { 'p', opt_pid }, { 'F', opt_freq }, { 'd', opt_duration },
	{ 'o', opt_output }, { 't', opt_per_thread }, { 'v', opt_verbose }, { 'h', opt_help },
	{ OPT_WALL, opt_wall }, { OPT_OFF_CPU, opt_off_cpu }, { OPT_RING_BUFFER, opt_ring_buffer },
	{ OPT_STACK_MEMORY, opt_stack_memory }, { OPT_MIN_OFF_CPU, opt_min_off_cpu },
	{ OPT_NO_JFR, opt_no_jfr }, { OPT_NO_HTML, opt_no_html },
	{ OPT_NO_JAVA_WALKER, opt_no_java_walker }, { OPT_COMPRESS, opt_compress },
	{ OPT_THREADS, opt_threads }, { OPT_EXECUTORS, opt_executors }, { OPT_APP, opt_app },
	{ OPT_ATTRIBUTION, opt_attribution }, { OPT_EPOCH, opt_epoch }, { OPT_ATTACH, opt_attach },
	{ OPT_AGENT, opt_agent }, { OPT_ROTATE, opt_rotate }, { OPT_KEEP, opt_keep },
};

static void defaults(struct record_options *o)
{
	memset(o, 0, sizeof(*o));
	o->keep = 24;
	o->stack_memory_bytes = 16ULL << 20;
	o->frequency_hz = 99;
	o->jfr = true;
	o->html = true;
	o->java_walker = true;
	o->wall_interval_ns = 10 * 1000000ULL;
	o->min_off_cpu_ns = 1000000ULL;
	o->epoch_interval_ns = 5 * NSEC_PER_SEC;
	o->executors = "*";
	o->threads = THREADS_ALL;
}

static void unknown_option(int argc, char **argv)
{
	(void)argc;
	if (optopt && optopt < 256 && strchr("pFdo", optopt))
		sp_err("option -%c needs a value", optopt);
	else if (optopt && optopt < 256)
		sp_err("unknown option -%c (see 'sparkprof record --help')", optopt);
	else
		sp_err("unknown or incomplete option '%s' (see 'sparkprof record --help')",
		       argv[optind - 1]);
}

/* What only the whole command line says. */
static int check_combinations(struct record_options *o, int argc, char **argv, bool keep_given)
{
	if (optind < argc) {
		/* getopt stops at "--" (consumed) or at the first non-option. */
		if (strcmp(argv[optind - 1], "--")) {
			sp_err("unexpected argument '%s' (a command goes after --)", argv[optind]);
			return -1;
		}
		o->command = &argv[optind];
	}
	if (o->command && o->npids) {
		sp_err("-p and a command after -- cannot be combined");
		return -1;
	}
	if (keep_given && !o->rotate_ns) {
		sp_err("--keep needs --rotate");
		return -1;
	}
	return otlp_options_check("record", &o->otlp);
}

int record_options_parse(struct record_options *opts, int argc, char **argv)
{
	bool keep_given = false;
	int c;

	defaults(opts);
	/* 0, not 1: glibc then forgets a previous parse whole (tests parse many). */
	optind = 0;
	opterr = 0;
	/* '+': stop at the first non-option so "-- cmd -x" keeps its options. */
	while ((c = getopt_long(argc, argv, "+ap:F:d:o:tvh", long_options, NULL)) != -1) {
		size_t i = 0;

		while (i < sizeof(handlers) / sizeof(handlers[0]) && handlers[i].id != c)
			i++;
		if (i == sizeof(handlers) / sizeof(handlers[0])) {
			int rc = otlp_option("record", c, optarg, &opts->otlp);

			if (!rc)
				unknown_option(argc, argv);
			if (rc <= 0)
				return -1;
		} else if (handlers[i].fn(opts, optarg)) {
			return -1;
		}
		keep_given = keep_given || c == OPT_KEEP;
		if (opts->help)
			return 0;
	}
	return check_combinations(opts, argc, argv, keep_given);
}

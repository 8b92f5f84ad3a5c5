/* cmd_list.c - 'sparkprof list': the JVMs on this node. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_writer.h"
#include "base/log.h"
#include "commands.h"
#include "jvm/hotspot.h"
#include "jvm/jvm_process.h"
#include "python/python_scan.h"
#include "sampler/kernel_features.h"
#include "spark/spark_executor.h"

/* MAIN is cut to this width; class names keep their end (the class). */
#define MAIN_WIDTH 60

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sparkprof list [--json]\n"
		"\n"
		"Lists the JVMs on this node (also in containers): pid, user, JDK version,\n"
		"whether the sparkprof helper is loaded, whether the JVM runs with\n"
		"-XX:+PreserveFramePointer (without it Java stacks break), and its main\n"
		"class or jar; for Spark executors, the application and executor ids\n"
		"(APP '?' when a local-mode driver's id is made inside the JVM), with the\n"
		"Python processes each JVM started (a PySpark executor's daemon and\n"
		"workers): their CPython version and whether their Python frames can be\n"
		"walked; then the other Python processes. When\n"
		"this kernel lacks part of what sparkprof uses, a line on standard error\n"
		"says what is reduced.\n"
		"\n"
		"  --json      one JSON array of objects, for scripts\n"
		"  -h, --help  this text\n");
}

static const char *main_kind_name(enum jvm_main_kind kind)
{
	switch (kind) {
	case JVM_MAIN_CLASS: return "class";
	case JVM_MAIN_JAR: return "jar";
	case JVM_MAIN_MODULE: return "module";
	case JVM_MAIN_SOURCE: return "source";
	case JVM_MAIN_ARGFILE: return "argfile";
	case JVM_MAIN_OTHER: return "launcher";
	case JVM_MAIN_NONE: break;
	}
	return "none";
}

/* The main class as shown: "-jar x.jar", "-m mod/cls", "@args", or the
 * class; "-" when there is none. */
static void main_text(const struct jvm_info *j, char *out, size_t len)
{
	const struct jvm_cmdline *c = &j->cmdline;
	const char *ellipsis = c->main_truncated ? "..." : "";

	switch (c->main_kind) {
	case JVM_MAIN_JAR:
		snprintf(out, len, "-jar %s%s", c->main, ellipsis);
		break;
	case JVM_MAIN_MODULE:
		snprintf(out, len, "-m %s%s", c->main, ellipsis);
		break;
	case JVM_MAIN_NONE:
		snprintf(out, len, "-");
		break;
	default:
		snprintf(out, len, "%s%s", c->main, ellipsis);
		break;
	}
}

/* Cuts s to width keeping its end, where a class name says the most. */
static void cut_left(char *s, size_t width)
{
	size_t len = strlen(s);

	if (len <= width)
		return;
	memmove(s + 3, s + len - (width - 3), width - 3 + 1);
	memcpy(s, "...", 3);
}

static const char *fp_text(const struct jvm_flags *f)
{
	if (f->preserve_frame_pointer == JVM_FLAG_ON)
		return "yes";
	return f->incomplete ? "no?" : "no";
}

/* What `list` says of a JVM beyond jvm_info. */
struct jvm_row {
	struct spark_executor executor; /* backend NONE: not an executor */
	const char *walk;               /* how record walks its stacks */
};

/* "full": the walker names interpreted frames, steps over compiled ones by
 * their size and continues waits; "no-waits": its thread-local JavaThread
 * was not found; "fp": frame pointers only (127 frames, interpreted frames
 * unnamed), as the kernel has no walker or the JVM's vmStructs could not
 * be read; "-": that, and no -XX:+PreserveFramePointer: Java frames are
 * lost. */
static const char *walk_level(const struct jvm_info *j, bool kernel_walks)
{
	bool fp = j->flags.preserve_frame_pointer == JVM_FLAG_ON;
	struct sp_hotspot_info info;
	struct hotspot *hs;

	hs = kernel_walks ? hotspot_open(j->pid) : NULL;
	if (!hs)
		return fp ? "fp" : "-";
	hotspot_walker_info(hs, &info);
	hotspot_free(hs);
	if (!info.n_code_heaps && !fp)
		return "-";
	return info.tls_modid ? "full" : "no-waits";
}

static struct jvm_row *describe_jvms(const struct jvm_info *jvms, size_t n, bool kernel_walks)
{
	struct jvm_row *rows = calloc(n ? n : 1, sizeof(*rows));

	for (size_t i = 0; rows && i < n; i++) {
		if (spark_executor_identify(jvms[i].pid, &rows[i].executor) != 1)
			memset(&rows[i].executor, 0, sizeof(rows[i].executor));
		rows[i].walk = walk_level(&jvms[i], kernel_walks);
	}
	return rows;
}

/* Whether Python process s serves JVM pid (pid among its ancestors). */
static bool serves(const struct python_seen *s, pid_t pid)
{
	for (int i = 0; i < PYTHON_SCAN_ANCESTORS; i++)
		if (s->ancestors[i] == pid)
			return true;
	return false;
}

static const char *python_role(const struct python_seen *s, pid_t jvm)
{
	if (s->daemon && s->ancestors[0] == jvm)
		return "pyspark daemon";
	return "python worker";
}

/* Python processes under the JVM that started them (a PySpark executor's
 * daemon and workers); jvm 0: those no listed JVM started. */
static void print_pythons(const struct python_seen *py, size_t npy, pid_t jvm,
			  const struct jvm_info *jvms, size_t n)
{
	for (size_t i = 0; i < npy; i++) {
		const struct python_seen *s = &py[i];
		bool under_any = false;

		for (size_t k = 0; !jvm && k < n; k++)
			under_any |= serves(s, jvms[k].pid);
		if (jvm ? !serves(s, jvm) : under_any)
			continue;
		printf("%s%-8d %-15s %-8s %s\n", jvm ? "  └ " : "", (int)s->pid,
		       jvm ? python_role(s, jvm) : "python", s->version[0] ? s->version : "?",
		       s->walkable ? "python frames" : "native frames only (version or build unknown)");
	}
}

static void print_table(const struct jvm_info *jvms, const struct jvm_row *rows, size_t n,
			const struct python_seen *py, size_t npy)
{
	printf("%-8s %-12s %-4s %-6s %-3s %-8s %-24s %-8s %s\n", "PID", "USER", "JDK", "HELPER",
	       "FP", "WALK", "APP", "EXECUTOR", "MAIN");
	for (size_t i = 0; i < n; i++) {
		const struct jvm_info *j = &jvms[i];
		const struct spark_executor *e = &rows[i].executor;
		bool executor = e->backend != SPARK_BACKEND_NONE;
		char main[JVM_MAIN_MAX + 16], jdk[16];

		main_text(j, main, sizeof(main));
		cut_left(main, MAIN_WIDTH);
		if (j->jdk_major)
			snprintf(jdk, sizeof(jdk), "%d", j->jdk_major);
		else
			snprintf(jdk, sizeof(jdk), "?");
		printf("%-8d %-12.12s %-4s %-6s %-3s %-8s %-24s %-8s %s\n", (int)j->pid, j->user, jdk,
		       j->helper_loaded ? "loaded" : "-", fp_text(&j->flags), rows[i].walk,
		       !executor ? "-" : e->app_id_known && e->app_id[0] ? e->app_id : "?",
		       executor && e->executor_id[0] ? e->executor_id : "-", main);
		print_pythons(py, npy, j->pid, jvms, n);
	}
	if (npy) {
		printf("\nPython processes no JVM started:\n");
		print_pythons(py, npy, 0, jvms, n);
	}
}

static void json_flag(struct json_writer *w, const char *key, enum jvm_flag f)
{
	json_key(w, key);
	if (f == JVM_FLAG_UNSET)
		json_null(w);
	else
		json_bool(w, f == JVM_FLAG_ON);
}

static void json_spark(struct json_writer *w, const struct spark_executor *e)
{
	json_key(w, "spark");
	if (e->backend == SPARK_BACKEND_NONE) {
		json_null(w);
		return;
	}
	json_begin_object(w);
	spark_executor_write_json(e, w);
	json_end_object(w);
}

static void json_pythons(struct json_writer *w, const struct python_seen *py, size_t npy,
			 pid_t jvm)
{
	json_key(w, "python");
	json_begin_array(w);
	for (size_t i = 0; i < npy; i++) {
		if (!serves(&py[i], jvm))
			continue;
		json_begin_object(w);
		json_key(w, "pid");
		json_int(w, py[i].pid);
		json_key(w, "role");
		json_string(w, python_role(&py[i], jvm));
		json_key(w, "version");
		json_string(w, py[i].version[0] ? py[i].version : NULL);
		json_key(w, "walkable");
		json_bool(w, py[i].walkable);
		json_end_object(w);
	}
	json_end_array(w);
}

static void print_json(const struct jvm_info *jvms, const struct jvm_row *rows, size_t n,
		       const struct python_seen *py, size_t npy)
{
	struct json_writer w;

	json_init(&w, stdout);
	json_begin_array(&w);
	for (size_t i = 0; i < n; i++) {
		const struct jvm_info *j = &jvms[i];

		json_begin_object(&w);
		json_key(&w, "pid");
		json_int(&w, j->pid);
		json_key(&w, "ns_pid");
		json_int(&w, j->ns_pid);
		json_key(&w, "user");
		json_string(&w, j->user);
		json_key(&w, "uid");
		json_uint(&w, j->uid);
		json_key(&w, "jdk_major");
		if (j->jdk_major)
			json_int(&w, j->jdk_major);
		else
			json_null(&w);
		json_key(&w, "jdk_version");
		json_string(&w, j->jdk_version[0] ? j->jdk_version : NULL);
		json_key(&w, "jdk_home");
		json_string(&w, j->jdk_home[0] ? j->jdk_home : NULL);
		json_key(&w, "helper_loaded");
		json_bool(&w, j->helper_loaded);
		json_key(&w, "preserve_frame_pointer");
		json_bool(&w, j->flags.preserve_frame_pointer == JVM_FLAG_ON);
		json_key(&w, "stack_walk");
		json_string(&w, rows[i].walk);
		json_flag(&w, "disable_attach_mechanism", j->flags.disable_attach);
		json_key(&w, "options_incomplete");
		json_bool(&w, j->flags.incomplete);
		json_key(&w, "main");
		json_string(&w, j->cmdline.main_kind == JVM_MAIN_NONE ? NULL : j->cmdline.main);
		json_key(&w, "main_kind");
		json_string(&w, main_kind_name(j->cmdline.main_kind));
		json_spark(&w, &rows[i].executor);
		json_pythons(&w, py, npy, j->pid);
		json_end_object(&w);
	}
	json_end_array(&w);
	fputc('\n', stdout);
}

/* One line for all JVMs whose Java stacks will be cut (walk level "-"). */
static void warn_no_frame_pointer(const struct jvm_info *jvms, const struct jvm_row *rows,
				  size_t n)
{
	char pids[512];
	size_t len = 0, count = 0;

	pids[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if (strcmp(rows[i].walk, "-"))
			continue;
		count++;
		if (len < sizeof(pids) - 16)
			len += (size_t)snprintf(pids + len, sizeof(pids) - len, "%s%d",
						len ? " " : "", (int)jvms[i].pid);
		else if (len < sizeof(pids) - 4)
			len += (size_t)snprintf(pids + len, sizeof(pids) - len, " ...");
	}
	if (count)
		sp_warn("%zu JVM%s without -XX:+PreserveFramePointer (pid %s): "
			"their Java stacks will be cut short", count, count > 1 ? "s run" : " runs",
			pids);
}

int cmd_list(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct jvm_info *jvms;
	struct jvm_row *rows;
	struct python_seen *py = NULL;
	size_t npy = 0;
	struct kernel_features kernel;
	char line[1024];
	size_t n;
	bool json = false, probed;
	int opt, rc;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		sp_err("list: unexpected argument '%s' (try 'sparkprof list --help')", argv[optind]);
		return 2;
	}
	/* Without the privileges to probe, the JVMs are still listed. */
	probed = !kernel_features_probe(&kernel);
	if (probed && kernel_features_describe(&kernel, true, line, sizeof(line)))
		sp_warn("%s", line);
	rc = jvm_process_scan(&jvms, &n);
	if (rc) {
		sp_err("list: reading /proc: %s", strerror(-rc));
		return 1;
	}
	rows = describe_jvms(jvms, n, !probed || kernel.has[KERNEL_HOTSPOT_WALK]);
	if (!rows) {
		sp_err("list: no memory for %zu JVMs", n);
		free(jvms);
		return 1;
	}
	if (python_scan(&py, &npy))
		npy = 0;
	if (json) {
		print_json(jvms, rows, n, py, npy);
	} else {
		print_table(jvms, rows, n, py, npy);
		warn_no_frame_pointer(jvms, rows, n);
	}
	free(py);
	free(rows);
	free(jvms);
	return 0;
}

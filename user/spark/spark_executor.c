/* spark_executor.c - see spark_executor.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_writer.h"
#include "base/log.h"
#include "proc/file_slurp.h"
#include "proc/proc_status.h"
#include "spark/spark_executor.h"

/* Executor command lines carry long class paths; environ and cgroup are
 * small.  Larger files are cut here (the tail is then ignored). */
#define PROC_FILE_MAX (8u << 20)

/* One NUL-separated token list, walked without copying. */
struct tokens {
	const char *p, *end;
};

/* Next token; returns 0 at the end.  A final token without a trailing NUL
 * still counts (the buffer may have been cut). */
static int next_token(struct tokens *t, const char **tok, size_t *len)
{
	const char *nul;

	if (t->p >= t->end)
		return 0;
	nul = memchr(t->p, '\0', t->end - t->p);
	*tok = t->p;
	*len = (nul ? nul : t->end) - t->p;
	t->p = nul ? nul + 1 : t->end;
	return 1;
}

static int tok_is(const char *tok, size_t len, const char *lit)
{
	return strlen(lit) == len && memcmp(tok, lit, len) == 0;
}

static int tok_prefix(const char *tok, size_t len, const char *lit)
{
	size_t n = strlen(lit);

	return len >= n && memcmp(tok, lit, n) == 0;
}

/* Ids name output directories (DIR/APP-ID/exec-ID): only [A-Za-z0-9._-],
 * not "." or "..", bounded.  Anything else is refused, never rewritten. */
static int id_ok(const char *s, size_t len, size_t max)
{
	if (len == 0 || len >= max || tok_is(s, len, ".") || tok_is(s, len, ".."))
		return 0;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

static int set_id(char *dst, size_t max, const char *s, size_t len)
{
	if (!id_ok(s, len, max))
		return 0;
	memcpy(dst, s, len);
	dst[len] = '\0';
	return 1;
}

static const struct {
	const char *main_class;
	enum spark_backend backend;
} backends[] = {
	{ "org.apache.spark.executor.CoarseGrainedExecutorBackend", SPARK_BACKEND_STANDALONE },
	{ "org.apache.spark.executor.YarnCoarseGrainedExecutorBackend", SPARK_BACKEND_YARN },
	{ "org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend",
	  SPARK_BACKEND_KUBERNETES },
	{ "org.apache.spark.deploy.SparkSubmit", SPARK_BACKEND_LOCAL },
};

/* java launcher options whose value is the next token. */
static const char *const java_value_opts[] = {
	"-cp", "-classpath", "--class-path", "-p", "--module-path",
	"--upgrade-module-path", "--add-modules", "--enable-native-access",
	"--limit-modules", "--add-reads", "--add-exports", "--add-opens",
	"--patch-module", "--source", "-d", "--describe-module",
};

static int is_java_value_opt(const char *tok, size_t len)
{
	for (size_t i = 0; i < sizeof(java_value_opts) / sizeof(java_value_opts[0]); i++)
		if (tok_is(tok, len, java_value_opts[i]))
			return 1;
	return 0;
}

static int is_java(const char *argv0, size_t len)
{
	const char *slash = argv0;

	for (size_t i = 0; i < len; i++)
		if (argv0[i] == '/')
			slash = argv0 + i + 1;
	return tok_is(slash, argv0 + len - slash, "java");
}

/* SparkSubmit options (SparkSubmitOptionParser) that take a value. */
static const char *const submit_value_opts[] = {
	"--master", "--deploy-mode", "--class", "--name", "--jars", "--packages",
	"--exclude-packages", "--repositories", "--py-files", "--files",
	"--archives", "--conf", "-c", "--properties-file", "--driver-memory",
	"--driver-java-options", "--driver-library-path", "--driver-class-path",
	"--executor-memory", "--executor-cores", "--total-executor-cores",
	"--num-executors", "--queue", "--principal", "--keytab", "--proxy-user",
	"--kill", "--status", "--driver-cores", "--remote",
};

static int is_submit_value_opt(const char *tok, size_t len)
{
	for (size_t i = 0; i < sizeof(submit_value_opts) / sizeof(submit_value_opts[0]); i++)
		if (tok_is(tok, len, submit_value_opts[i]))
			return 1;
	return 0;
}

/* What a local-mode driver's command line says about master and app id. */
struct submit_conf {
	const char *master, *app_id;
	size_t master_len, app_id_len;
};

/* "spark.master=X" or "spark.app.id=X" as a --conf value or a -D option. */
static void submit_conf_item(struct submit_conf *sc, const char *kv, size_t len)
{
	if (tok_prefix(kv, len, "spark.master=")) {
		sc->master = kv + 13;
		sc->master_len = len - 13;
	} else if (tok_prefix(kv, len, "spark.app.id=")) {
		sc->app_id = kv + 13;
		sc->app_id_len = len - 13;
	}
}

static void submit_option(struct submit_conf *sc, const char *opt, size_t olen,
			  const char *val, size_t vlen)
{
	if (tok_is(opt, olen, "--master")) {
		sc->master = val;
		sc->master_len = vlen;
	} else if (tok_is(opt, olen, "--conf") || tok_is(opt, olen, "-c")) {
		submit_conf_item(sc, val, vlen);
	}
}

/* Walks SparkSubmit's arguments up to the primary resource. */
static void parse_submit_args(struct tokens t, struct submit_conf *sc)
{
	const char *tok, *val;
	size_t len, vlen;

	while (next_token(&t, &tok, &len)) {
		const char *eq = memchr(tok, '=', len);

		if (len == 0 || tok[0] != '-')
			return; /* the primary resource: the rest is the app's */
		if (eq && tok_prefix(tok, len, "--")) {
			/* --opt=value */
			submit_option(sc, tok, eq - tok, eq + 1, len - (eq - tok) - 1);
		} else if (is_submit_value_opt(tok, len)) {
			if (!next_token(&t, &val, &vlen))
				return;
			submit_option(sc, tok, len, val, vlen);
		}
	}
}

/* local, local[N], local[*], local[N,F] run tasks in the driver JVM;
 * local-cluster[...] starts separate executor JVMs. */
static int master_is_local(const char *m, size_t len)
{
	return tok_is(m, len, "local") || tok_prefix(m, len, "local[");
}

static int parse_local_driver(struct tokens jvm_opts, struct tokens args,
			      struct spark_executor *out)
{
	struct submit_conf sc = { 0 };
	const char *tok;
	size_t len;

	/* -Dspark.master=... among the JVM options (before the main class) */
	while (next_token(&jvm_opts, &tok, &len))
		if (tok_prefix(tok, len, "-D"))
			submit_conf_item(&sc, tok + 2, len - 2);
	parse_submit_args(args, &sc);
	if (sc.master && !master_is_local(sc.master, sc.master_len))
		return 0; /* a cluster driver runs no tasks */
	/* Without a master on argv SparkSubmit defaults to local[*], unless
	 * spark-defaults.conf says otherwise, which we cannot see: say so. */
	out->master_assumed_local = !sc.master;
	out->backend = SPARK_BACKEND_LOCAL;
	strcpy(out->executor_id, "driver");
	if (sc.app_id && set_id(out->app_id, sizeof(out->app_id), sc.app_id, sc.app_id_len)) {
		out->app_id_known = true;
	} else {
		strcpy(out->app_id, "local");
		out->app_id_known = false;
	}
	return 1;
}

/* "-exec-N" at the end of a Kubernetes executor pod name gives N. */
static void exec_id_from_pod(struct spark_executor *out)
{
	const char *p = strstr(out->pod_name, "-exec-"), *last = NULL;

	while (p) {
		last = p;
		p = strstr(p + 1, "-exec-");
	}
	if (!last || !last[6])
		return;
	for (const char *d = last + 6; *d; d++)
		if (*d < '0' || *d > '9')
			return;
	set_id(out->executor_id, sizeof(out->executor_id), last + 6, strlen(last + 6));
}

static int parse_backend_args(struct tokens args, struct spark_executor *out)
{
	const char *flag, *val;
	size_t flen, vlen;
	int have_exec = 0;

	/* The backends' parsers take every option as a flag/value pair. */
	while (next_token(&args, &flag, &flen)) {
		if (!next_token(&args, &val, &vlen))
			break;
		if (tok_is(flag, flen, "--executor-id")) {
			if (!set_id(out->executor_id, sizeof(out->executor_id), val, vlen))
				return -EINVAL;
			have_exec = 1;
		} else if (tok_is(flag, flen, "--app-id")) {
			if (!set_id(out->app_id, sizeof(out->app_id), val, vlen))
				return -EINVAL;
			out->app_id_known = true;
		} else if (tok_is(flag, flen, "--podName")) {
			set_id(out->pod_name, sizeof(out->pod_name), val, vlen);
		}
	}
	if (!have_exec)
		return -EINVAL;
	if (strcmp(out->executor_id, "EXECID") == 0 && out->pod_name[0])
		exec_id_from_pod(out);
	return 1;
}

int spark_executor_parse_cmdline(const char *buf, size_t len, struct spark_executor *out)
{
	struct tokens t = { buf, buf + (buf ? len : 0) }, jvm_opts;
	const char *tok;
	size_t tlen;

	*out = (struct spark_executor){ 0 };
	if (!next_token(&t, &tok, &tlen) || !is_java(tok, tlen))
		return 0;
	jvm_opts = t;
	/* Find the main class: the first launcher argument that is not an
	 * option or an option's value. */
	for (;;) {
		if (!next_token(&t, &tok, &tlen))
			return 0; /* no main class */
		if (tlen > 0 && tok[0] == '-') {
			if (tok_is(tok, tlen, "-jar"))
				return 0;
			if (is_java_value_opt(tok, tlen) && !next_token(&t, &tok, &tlen))
				return 0;
			continue;
		}
		if (tlen > 0 && tok[0] == '@')
			continue; /* an argument file: its content is not visible */
		break;
	}
	jvm_opts.end = tok;
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		if (!tok_is(tok, tlen, backends[i].main_class))
			continue;
		if (backends[i].backend == SPARK_BACKEND_LOCAL)
			return parse_local_driver(jvm_opts, t, out);
		out->backend = backends[i].backend;
		return parse_backend_args(t, out);
	}
	return 0;
}

void spark_executor_parse_environ(const char *buf, size_t len, struct spark_executor *out)
{
	struct tokens t = { buf, buf + (buf ? len : 0) };
	const char *tok;
	size_t tlen;
	int placeholder = strcmp(out->executor_id, "EXECID") == 0;

	while (next_token(&t, &tok, &tlen)) {
		if (tok_prefix(tok, tlen, "CONTAINER_ID=") && !out->container_id[0])
			set_id(out->container_id, sizeof(out->container_id), tok + 13, tlen - 13);
		else if (tok_prefix(tok, tlen, "SPARK_EXECUTOR_POD_NAME=") && !out->pod_name[0])
			set_id(out->pod_name, sizeof(out->pod_name), tok + 24, tlen - 24);
		else if (tok_prefix(tok, tlen, "SPARK_APPLICATION_ID=") && !out->app_id[0] &&
			 out->backend != SPARK_BACKEND_LOCAL &&
			 set_id(out->app_id, sizeof(out->app_id), tok + 21, tlen - 21))
			out->app_id_known = true;
		else if (tok_prefix(tok, tlen, "SPARK_EXECUTOR_ID=") && placeholder &&
			 !tok_is(tok + 18, tlen - 18, "EXECID"))
			set_id(out->executor_id, sizeof(out->executor_id), tok + 18, tlen - 18);
	}
	/* GenerateExecID resolves the placeholder from the pod name. */
	if (strcmp(out->executor_id, "EXECID") == 0 && out->pod_name[0])
		exec_id_from_pod(out);
}

static int is_uid_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-' || c == '_';
}

static void cgroup_line(const char *s, size_t len, struct spark_executor *out)
{
	static const char yarn[] = "hadoop-yarn/container_";
	const char *end = s + len;

	for (const char *p = s; p < end; p++) {
		size_t left = end - p;

		if (!out->container_id[0] && left > sizeof(yarn) - 1 &&
		    memcmp(p, yarn, sizeof(yarn) - 1) == 0) {
			const char *id = p + sizeof(yarn) - 1 - strlen("container_"), *q = id;

			while (q < end && *q != '/' && *q != '.' && *q != '\n')
				q++;
			set_id(out->container_id, sizeof(out->container_id), id, q - id);
		}
		/* ".../kubepods/burstable/pod<uid>/..." or
		 * ".../kubepods-burstable-pod<uid_>.slice/..." */
		if (!out->pod_uid[0] && left > 3 && memcmp(p, "pod", 3) == 0 && p > s &&
		    (p[-1] == '/' || p[-1] == '-') && memmem(s, p - s, "kubepods", 8)) {
			const char *u = p + 3, *q = u;
			char uid[sizeof(out->pod_uid)];
			size_t n;

			while (q < end && is_uid_char(*q))
				q++;
			n = q - u;
			if (n >= 32 && n < sizeof(uid)) {
				for (size_t i = 0; i < n; i++)
					uid[i] = u[i] == '_' ? '-' : u[i];
				set_id(out->pod_uid, sizeof(out->pod_uid), uid, n);
			}
		}
	}
}

void spark_executor_parse_cgroup(const char *buf, size_t len, struct spark_executor *out)
{
	const char *p = buf, *end = buf + (buf ? len : 0);

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		const char *line_end = nl ? nl : end;

		cgroup_line(p, line_end - p, out);
		p = line_end + 1;
	}
}

/* A child the executor JVM forked (ProcessBuilder's jspawnhelper, a shell)
 * shows the executor's command line until it runs exec: its parent's is the
 * same, byte for byte. A real executor's parent (the YARN container script,
 * the standalone Worker, the pod's init) has another. */
static bool forked_from_same_command(const char *proc_root, pid_t pid, const char *cmdline,
				     size_t len)
{
	struct proc_status st;
	char path[512];
	char *buf;
	size_t plen;
	bool same;

	snprintf(path, sizeof(path), "%s/%d/status", proc_root, (int)pid);
	if (file_read_prefix(path, PROC_FILE_MAX, &buf, &plen))
		return false;
	proc_status_parse(buf, plen, &st);
	free(buf);
	if (!(st.present & PROC_STATUS_PPID) || st.ppid <= 0)
		return false;
	snprintf(path, sizeof(path), "%s/%d/cmdline", proc_root, (int)st.ppid);
	if (file_read_prefix(path, PROC_FILE_MAX, &buf, &plen))
		return false;
	same = plen == len && !memcmp(buf, cmdline, len);
	free(buf);
	return same;
}

int spark_executor_identify_at(const char *proc_root, pid_t pid, struct spark_executor *out)
{
	char path[512];
	char *buf;
	size_t len;
	int ret;

	snprintf(path, sizeof(path), "%s/%d/cmdline", proc_root, (int)pid);
	ret = file_read_prefix(path, PROC_FILE_MAX, &buf, &len);
	if (ret < 0) {
		*out = (struct spark_executor){ 0 };
		return ret;
	}
	ret = spark_executor_parse_cmdline(buf, len, out);
	if (ret == 1 && forked_from_same_command(proc_root, pid, buf, len)) {
		*out = (struct spark_executor){ 0 };
		ret = 0;
	}
	free(buf);
	if (ret == -EINVAL)
		sp_warn("pid %d: Spark executor command line without a usable --executor-id "
			"or --app-id; skipped", (int)pid);
	if (ret <= 0)
		return ret;
	out->pid = pid;

	/* environ is readable by the owner and root only; it is optional. */
	snprintf(path, sizeof(path), "%s/%d/environ", proc_root, (int)pid);
	if (file_read_prefix(path, PROC_FILE_MAX, &buf, &len) == 0) {
		spark_executor_parse_environ(buf, len, out);
		free(buf);
	}
	snprintf(path, sizeof(path), "%s/%d/cgroup", proc_root, (int)pid);
	if (file_read_prefix(path, PROC_FILE_MAX, &buf, &len) == 0) {
		spark_executor_parse_cgroup(buf, len, out);
		free(buf);
	}
	return 1;
}

int spark_executor_identify(pid_t pid, struct spark_executor *out)
{
	return spark_executor_identify_at("/proc", pid, out);
}

const char *spark_backend_name(enum spark_backend b)
{
	switch (b) {
	case SPARK_BACKEND_STANDALONE: return "standalone";
	case SPARK_BACKEND_YARN: return "yarn";
	case SPARK_BACKEND_KUBERNETES: return "kubernetes";
	case SPARK_BACKEND_LOCAL: return "local";
	default: return "none";
	}
}

static void json_id(struct json_writer *w, const char *key, const char *value)
{
	json_key(w, key);
	json_string(w, value[0] ? value : NULL);
}

void spark_executor_write_json(const struct spark_executor *e, struct json_writer *w)
{
	json_key(w, "backend");
	json_string(w, spark_backend_name(e->backend));
	json_id(w, "app_id", e->app_id);
	json_key(w, "app_id_known");
	json_bool(w, e->app_id_known);
	json_id(w, "executor_id", e->executor_id);
	json_id(w, "yarn_container", e->container_id);
	json_id(w, "kubernetes_pod", e->pod_name);
	json_id(w, "kubernetes_pod_uid", e->pod_uid);
}

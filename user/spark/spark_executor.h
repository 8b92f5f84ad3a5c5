/* spark_executor.h - is this process a Spark executor, and which one?
 *
 * Decides from /proc/PID/cmdline whether the JVM's main class is an executor
 * backend (standalone/YARN-before-3.0 CoarseGrainedExecutorBackend, YARN
 * YarnCoarseGrainedExecutorBackend, Kubernetes KubernetesExecutorBackend) or
 * a local-mode driver (SparkSubmit with a local[...] master, executor id
 * "driver"), and reads --app-id/--executor-id; the YARN container and the
 * Kubernetes pod come from /proc/PID/environ or /proc/PID/cgroup.
 *
 * Local mode: Spark makes the app id (`local-<millis>`) inside the JVM; it is
 * on the command line only when the user set spark.app.id.  Otherwise
 * app_id is the placeholder "local" and app_id_known is false; whoever learns
 * the real id later (e.g. from the helper) replaces it.  Nothing is guessed.
 *
 * The parsers take (buffer, length) and trust neither; identify() reads the
 * three /proc files and combines them.
 */
#ifndef SPARKPROF_SPARK_EXECUTOR_H
#define SPARKPROF_SPARK_EXECUTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum spark_backend {
	SPARK_BACKEND_NONE = 0,
	SPARK_BACKEND_STANDALONE,  /* CoarseGrainedExecutorBackend */
	SPARK_BACKEND_YARN,        /* YarnCoarseGrainedExecutorBackend */
	SPARK_BACKEND_KUBERNETES,  /* KubernetesExecutorBackend */
	SPARK_BACKEND_LOCAL,       /* SparkSubmit, local master: executor "driver" */
};

#define SPARK_ID_MAX 128

struct spark_executor {
	pid_t pid;
	enum spark_backend backend;
	char app_id[SPARK_ID_MAX];       /* "" when the command line lacks it */
	bool app_id_known;               /* false: placeholder or missing */
	char executor_id[SPARK_ID_MAX];  /* "driver" in local mode */
	char container_id[SPARK_ID_MAX]; /* YARN container_..., or "" */
	char pod_name[254];              /* Kubernetes pod name, or "" */
	char pod_uid[64];                /* Kubernetes pod uid from the cgroup, or "" */
	bool master_assumed_local;       /* SparkSubmit without a master on argv */
};

/* Parses a NUL-separated command line (len bytes, as /proc/PID/cmdline).
 * Returns 1 and fills *out (pid left 0) for an executor, 0 for anything else,
 * -EINVAL for an executor command line that lacks --executor-id. */
int spark_executor_parse_cmdline(const char *buf, size_t len, struct spark_executor *out);

/* Adds what a NUL-separated environment (as /proc/PID/environ) says:
 * CONTAINER_ID, SPARK_EXECUTOR_POD_NAME, and for Kubernetes the ids when the
 * command line held placeholders.  Never overrides a command-line value. */
void spark_executor_parse_environ(const char *buf, size_t len, struct spark_executor *out);

/* Adds the YARN container (".../hadoop-yarn/container_...") or the Kubernetes
 * pod uid ("kubepods.../pod<uid>...") from /proc/PID/cgroup text. */
void spark_executor_parse_cgroup(const char *buf, size_t len, struct spark_executor *out);

/* Reads /proc/PID/{cmdline,environ,cgroup}.  Returns 1 (executor, *out
 * filled), 0 (not an executor, a kernel thread, or a child the executor
 * forked that has not run exec yet), or -errno when cmdline
 * cannot be read (-ENOENT: the process is gone).  environ and cgroup are
 * optional: unreadable ones leave those fields empty. */
int spark_executor_identify(pid_t pid, struct spark_executor *out);

/* Same, with /proc replaced by proc_root (for tests). */
int spark_executor_identify_at(const char *proc_root, pid_t pid, struct spark_executor *out);

/* "standalone", "yarn", "kubernetes", "local", "none". */
const char *spark_backend_name(enum spark_backend b);

struct json_writer;
/* The identity's members in an open JSON object: backend, app_id,
 * app_id_known, executor_id, yarn_container, kubernetes_pod,
 * kubernetes_pod_uid (null when unknown). `list` and summary.json share it. */
void spark_executor_write_json(const struct spark_executor *e, struct json_writer *w);


#endif

/* test_spark_executor.c - executor discovery from command lines, environ,
 * cgroups and a /proc-like directory.
 *
 * Run with "--identify PID..." it instead prints what spark_executor_identify
 * says about live processes (used by tests/integration/test_spark_cluster.py
 * on real Spark executors): one line per pid,
 *   PID RET BACKEND APP_ID APP_ID_KNOWN EXECUTOR_ID
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spark/spark_executor.h"
#include "tap.h"

/* A command line as /proc shows it: tokens separated and ended by NUL. */
static size_t cmdline(char *buf, size_t cap, const char *const *argv)
{
	size_t n = 0;

	for (; *argv; argv++) {
		size_t l = strlen(*argv) + 1;

		if (n + l > cap)
			abort();
		memcpy(buf + n, *argv, l);
		n += l;
	}
	return n;
}

static int parse(const char *const *argv, struct spark_executor *e)
{
	static char buf[8192];

	return spark_executor_parse_cmdline(buf, cmdline(buf, sizeof(buf), argv), e);
}

static void write_file(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(data, 1, len, f) != len)
		abort();
	fclose(f);
}

static int identify_mode(int argc, char **argv)
{
	for (int i = 2; i < argc; i++) {
		struct spark_executor e;
		int ret = spark_executor_identify(atoi(argv[i]), &e);

		printf("%s %d %s %s %d %s\n", argv[i], ret, spark_backend_name(e.backend),
		       e.app_id[0] ? e.app_id : "-", e.app_id_known,
		       e.executor_id[0] ? e.executor_id : "-");
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct spark_executor e;

	if (argc > 1 && strcmp(argv[1], "--identify") == 0)
		return identify_mode(argc, argv);

	const char *standalone[] = {
		"/usr/lib/jvm/java-17-openjdk-amd64/bin/java", "-cp",
		"/opt/spark/conf/:/opt/spark/jars/*", "-Xmx1024M", "-Dspark.driver.port=40123",
		"-XX:+PreserveFramePointer",
		"org.apache.spark.executor.CoarseGrainedExecutorBackend", "--driver-url",
		"spark://CoarseGrainedScheduler@10.0.0.1:40123", "--executor-id", "3",
		"--hostname", "10.0.0.2", "--cores", "4", "--app-id",
		"app-20261122000000-0001", "--worker-url", "spark://Worker@10.0.0.2:7078",
		"--resourceProfileId", "0", NULL };
	CHECK(parse(standalone, &e) == 1, "standalone executor is one");
	CHECK(e.backend == SPARK_BACKEND_STANDALONE, "backend standalone");
	CHECK_STR(e.app_id, "app-20261122000000-0001", "standalone app id");
	CHECK(e.app_id_known, "app id known");
	CHECK_STR(e.executor_id, "3", "standalone executor id");

	const char *yarn[] = {
		"/usr/java/bin/java", "-server", "-Xmx4096m",
		"-Dspark.yarn.app.container.log.dir=/var/log/yarn/x",
		"-XX:OnOutOfMemoryError=kill %p",
		"org.apache.spark.executor.YarnCoarseGrainedExecutorBackend", "--driver-url",
		"spark://CoarseGrainedScheduler@h:1", "--executor-id", "12", "--hostname", "h",
		"--cores", "2", "--app-id", "application_1700000000000_0042",
		"--resourceProfileId", "0", NULL };
	CHECK(parse(yarn, &e) == 1 && e.backend == SPARK_BACKEND_YARN, "YARN executor");
	CHECK_STR(e.app_id, "application_1700000000000_0042", "YARN app id");
	CHECK_STR(e.executor_id, "12", "YARN executor id");
	const char env_yarn[] = "HOME=/home/yarn\0CONTAINER_ID=container_e07_1700000000000_0042_01_000013\0X=1";
	spark_executor_parse_environ(env_yarn, sizeof(env_yarn) - 1, &e);
	CHECK_STR(e.container_id, "container_e07_1700000000000_0042_01_000013",
		  "container from CONTAINER_ID");
	struct spark_executor y2 = e;
	y2.container_id[0] = 0;
	const char cg_yarn[] = "12:cpu,cpuacct:/hadoop-yarn/container_1700000000000_0042_01_000013\n"
			       "0::/system.slice/hadoop-yarn/container_1700000000000_0042_01_000013/x\n";
	spark_executor_parse_cgroup(cg_yarn, sizeof(cg_yarn) - 1, &y2);
	CHECK_STR(y2.container_id, "container_1700000000000_0042_01_000013",
		  "container from the cgroup path");

	const char *k8s[] = {
		"/opt/java/openjdk/bin/java", "-Dspark.driver.port=7078", "-Xms1g", "-cp",
		"/opt/spark/conf::/opt/spark/jars/*:",
		"org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend",
		"--driver-url", "spark://CoarseGrainedScheduler@drv-svc.ns.svc:7078",
		"--executor-id", "EXECID", "--cores", "1", "--app-id",
		"spark-0123456789abcdef0123456789abcdef", "--hostname", "10.1.2.3",
		"--resourceProfileId", "0", "--podName", "myjob-7d1e-exec-5", NULL };
	CHECK(parse(k8s, &e) == 1 && e.backend == SPARK_BACKEND_KUBERNETES, "Kubernetes executor");
	CHECK_STR(e.app_id, "spark-0123456789abcdef0123456789abcdef", "k8s app id");
	CHECK_STR(e.pod_name, "myjob-7d1e-exec-5", "pod name from --podName");
	CHECK_STR(e.executor_id, "5", "EXECID placeholder resolved from the pod name");
	const char cg_k8s[] = "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
			      "0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0.slice/cri-containerd-abc.scope\n";
	spark_executor_parse_cgroup(cg_k8s, sizeof(cg_k8s) - 1, &e);
	CHECK_STR(e.pod_uid, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "pod uid (systemd driver)");
	const char cg_k8s2[] = "4:memory:/kubepods/burstable/pod0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0/abcdef\n";
	e.pod_uid[0] = 0;
	spark_executor_parse_cgroup(cg_k8s2, sizeof(cg_k8s2) - 1, &e);
	CHECK_STR(e.pod_uid, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "pod uid (cgroupfs driver)");
	const char *k8s_env_only[] = {
		"java", "org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend",
		"--executor-id", "EXECID", "--app-id", "spark-ab", NULL };
	CHECK(parse(k8s_env_only, &e) == 1, "k8s without --podName");
	const char env_k8s[] = "SPARK_EXECUTOR_ID=7\0SPARK_EXECUTOR_POD_NAME=job-exec-7";
	spark_executor_parse_environ(env_k8s, sizeof(env_k8s) - 1, &e);
	CHECK_STR(e.executor_id, "7", "placeholder resolved from SPARK_EXECUTOR_ID");
	CHECK_STR(e.pod_name, "job-exec-7", "pod name from SPARK_EXECUTOR_POD_NAME");

	const char *local[] = {
		"/usr/lib/jvm/java-17-openjdk-amd64/bin/java", "-cp", "/x/jars/*", "-Xmx1g",
		"org.apache.spark.deploy.SparkSubmit", "--master", "local[2]", "--conf",
		"spark.app.name=t", "pyspark-shell", NULL };
	CHECK(parse(local, &e) == 1 && e.backend == SPARK_BACKEND_LOCAL, "local-mode driver");
	CHECK_STR(e.executor_id, "driver", "local executor id is driver");
	CHECK_STR(e.app_id, "local", "local app id placeholder");
	CHECK(!e.app_id_known && !e.master_assumed_local, "placeholder is marked unknown");
	const char *local_conf[] = {
		"java", "org.apache.spark.deploy.SparkSubmit", "--conf", "spark.master=local[*]",
		"--conf=spark.app.id=local-1700000000000", "--name", "x", "app.py", "--master",
		"spark://h:7077", NULL };
	CHECK(parse(local_conf, &e) == 1, "master from --conf; app args are not options");
	CHECK_STR(e.app_id, "local-1700000000000", "app id from --conf=spark.app.id");
	CHECK(e.app_id_known, "app id from the command line is known");
	const char *local_d[] = { "java", "-Dspark.master=local", "org.apache.spark.deploy.SparkSubmit",
				  "--verbose", "--class", "Main", "app.jar", NULL };
	CHECK(parse(local_d, &e) == 1, "master from -Dspark.master");
	const char *no_master[] = { "java", "org.apache.spark.deploy.SparkSubmit", "app.jar", NULL };
	CHECK(parse(no_master, &e) == 1 && e.master_assumed_local,
	      "no master on argv: local assumed and said so");
	const char *cluster_driver[] = { "java", "org.apache.spark.deploy.SparkSubmit", "--master",
					 "spark://h:7077", "app.jar", NULL };
	CHECK(parse(cluster_driver, &e) == 0, "a cluster-mode driver runs no tasks");
	const char *lc_driver[] = { "java", "org.apache.spark.deploy.SparkSubmit", "--master=local-cluster[2,1,1024]",
				    "app.jar", NULL };
	CHECK(parse(lc_driver, &e) == 0, "a local-cluster driver runs no tasks");

	const char *not_exec[][8] = {
		{ "bash", "-c", "java org.apache.spark.executor.CoarseGrainedExecutorBackend", NULL },
		{ "/bin/sh", "org.apache.spark.executor.CoarseGrainedExecutorBackend", "--executor-id", "1", NULL },
		{ "java", "-jar", "org.apache.spark.executor.CoarseGrainedExecutorBackend", NULL },
		{ "java", "-cp", "org.apache.spark.executor.CoarseGrainedExecutorBackend", "Main", NULL },
		{ "java", "-Dx=org.apache.spark.executor.CoarseGrainedExecutorBackend", NULL },
		{ "java", "org.apache.spark.deploy.master.Master", NULL },
		{ "java", NULL },
		{ "javac", "org.apache.spark.executor.CoarseGrainedExecutorBackend", NULL },
	};
	for (size_t i = 0; i < sizeof(not_exec) / sizeof(not_exec[0]); i++)
		CHECK(parse(not_exec[i], &e) == 0 && e.backend == SPARK_BACKEND_NONE,
		      "not an executor: %s %s", not_exec[i][0], not_exec[i][1] ? not_exec[i][1] : "");

	const char *no_id[] = { "java", "org.apache.spark.executor.CoarseGrainedExecutorBackend",
				"--app-id", "app-1", NULL };
	CHECK(parse(no_id, &e) == -EINVAL, "executor without --executor-id is an error");
	const char *bad_id[] = { "java", "org.apache.spark.executor.CoarseGrainedExecutorBackend",
				 "--executor-id", "../../etc", "--app-id", "app-1", NULL };
	CHECK(parse(bad_id, &e) == -EINVAL, "an id that is not a plain name is refused");
	const char *bad_app[] = { "java", "org.apache.spark.executor.CoarseGrainedExecutorBackend",
				  "--executor-id", "1", "--app-id", "a/b", NULL };
	CHECK(parse(bad_app, &e) == -EINVAL, "an app id with '/' is refused");
	const char *no_app[] = { "java", "org.apache.spark.executor.CoarseGrainedExecutorBackend",
				 "--executor-id", "1", NULL };
	CHECK(parse(no_app, &e) == 1 && !e.app_id_known && e.app_id[0] == 0,
	      "missing --app-id leaves it empty and unknown");

	/* A cut buffer (no final NUL) and an empty one. */
	char buf[512];
	size_t n = cmdline(buf, sizeof(buf), standalone);
	CHECK(spark_executor_parse_cmdline(buf, n - 1, &e) == 1 && strcmp(e.executor_id, "3") == 0,
	      "cmdline without its final NUL");
	CHECK(spark_executor_parse_cmdline(buf, 0, &e) == 0, "empty cmdline (kernel thread)");
	CHECK(spark_executor_parse_cmdline(NULL, 10, &e) == 0, "NULL cmdline");

	/* The same through a /proc-like directory. */
	char root[] = "/tmp/sparkprof-test-proc-XXXXXX", path[256];
	char *made = mkdtemp(root);
	CHECK(made != NULL, "temp proc root");
	snprintf(path, sizeof(path), "%s/4242", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/4242/cmdline", root);
	n = cmdline(buf, sizeof(buf), yarn);
	write_file(path, buf, n);
	snprintf(path, sizeof(path), "%s/4242/environ", root);
	write_file(path, env_yarn, sizeof(env_yarn) - 1);
	int ret = spark_executor_identify_at(root, 4242, &e);
	CHECK(ret == 1 && e.pid == 4242 &&
		      strcmp(e.executor_id, "12") == 0 &&
		      strcmp(e.container_id, "container_e07_1700000000000_0042_01_000013") == 0,
	      "identify_at reads cmdline and environ; no cgroup file is fine");
	ret = spark_executor_identify_at(root, 4243, &e);
	CHECK(ret == -ENOENT, "a gone pid is -ENOENT");

	/* 4244 was forked by 4242 and has not run exec yet: same cmdline. */
	static const char status_child[] = "Name:\tjava\nPid:\t4244\nPPid:\t4242\n";
	static const char status_executor[] = "Name:\tjava\nPid:\t4242\nPPid:\t4241\n";
	snprintf(path, sizeof(path), "%s/4244", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/4244/cmdline", root);
	write_file(path, buf, n);
	snprintf(path, sizeof(path), "%s/4244/status", root);
	write_file(path, status_child, sizeof(status_child) - 1);
	snprintf(path, sizeof(path), "%s/4242/status", root);
	write_file(path, status_executor, sizeof(status_executor) - 1);
	ret = spark_executor_identify_at(root, 4244, &e);
	CHECK(ret == 0 && e.executor_id[0] == '\0',
	      "a child of the executor that has not run exec is not an executor");
	ret = spark_executor_identify_at(root, 4242, &e);
	CHECK(ret == 1 && strcmp(e.executor_id, "12") == 0,
	      "the executor, whose parent (gone here) has another command line, still is");
	snprintf(path, sizeof(path), "%s/4244/cmdline", root);
	write_file(path, buf, n - 1);
	ret = spark_executor_identify_at(root, 4244, &e);
	CHECK(ret == 1, "a command line differing from the parent's by one byte is its own");

	static const char *const leftovers[] = { "4242/environ", "4242/cmdline", "4242/status",
						 "4244/cmdline", "4244/status" };
	for (size_t i = 0; i < sizeof(leftovers) / sizeof(leftovers[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, leftovers[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/4242", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/4244", root);
	rmdir(path);
	rmdir(root);

	/* This test process itself is not an executor; pid 1 neither. */
	CHECK(spark_executor_identify(getpid(), &e) == 0, "the test process is not an executor");
	CHECK_STR(spark_backend_name(SPARK_BACKEND_KUBERNETES), "kubernetes", "backend name");
	TAP_DONE();
}

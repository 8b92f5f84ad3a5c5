/* test_task_thread_name.c - task thread names of every Spark version.
 *
 * Run with "--parse NAME..." it instead prints, per name, what the parser
 * says (used by the integration tests on names taken from real JVMs):
 *   KIND STAGE STAGE_ATTEMPT TID CLASS    (KIND: none task tid pool idle)
 */
#include <stdio.h>
#include <string.h>

#include "spark/task_thread_name.h"
#include "tap.h"

static enum task_thread_kind parse(const char *s, struct task_thread_name *t)
{
	return task_thread_name_parse(s, strlen(s), t);
}

static int parse_mode(int argc, char **argv)
{
	static const char *const kinds[] = { "none", "task", "tid", "pool", "idle" };

	for (int i = 2; i < argc; i++) {
		struct task_thread_name t;
		enum task_thread_kind k = task_thread_name_parse(argv[i], strlen(argv[i]), &t);

		printf("%s %lld %lld %lld %s\n", kinds[k], (long long)t.stage,
		       (long long)t.stage_attempt, (long long)t.tid,
		       executor_thread_class_name(executor_thread_classify(argv[i], strlen(argv[i]))));
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct task_thread_name t;

	if (argc > 1 && strcmp(argv[1], "--parse") == 0)
		return parse_mode(argc, argv);
	const char *full = "Executor task launch worker for task 1.0 in stage 3.0 (TID 17)";

	CHECK(parse(full, &t) == TASK_THREAD_TASK, "3.1+ name is a task");
	CHECK(t.task_index == 1 && t.task_attempt == 0, "task index.attempt 1.0");
	CHECK(t.stage == 3 && t.stage_attempt == 0, "stage 3.0");
	CHECK(t.tid == 17, "TID 17");

	CHECK(parse("Executor task launch worker for task 12.3 in stage 45.2 (TID 98765)", &t) ==
		      TASK_THREAD_TASK && t.task_index == 12 && t.task_attempt == 3 &&
		      t.stage == 45 && t.stage_attempt == 2 && t.tid == 98765,
	      "retried attempts and large numbers");
	CHECK(parse("Executor task launch worker for task 17", &t) == TASK_THREAD_TASK_TID &&
		      t.tid == 17 && t.stage == 0,
	      "2.2-3.0 name gives the TID only");
	CHECK(parse("Executor task launch worker-0", &t) == TASK_THREAD_POOL && t.worker == 0,
	      "fresh pool thread -0");
	CHECK(parse("Executor task launch worker-123", &t) == TASK_THREAD_POOL && t.worker == 123,
	      "fresh pool thread -123");
	CHECK(parse("Executor task idle worker#42", &t) == TASK_THREAD_IDLE && t.worker == 42,
	      "4.2+ idle name");

	/* The name need not be NUL-terminated: only len bytes count. */
	CHECK(task_thread_name_parse(full, strlen(full) - 1, &t) == TASK_THREAD_NONE,
	      "a name cut before ')' is not a task");
	char buf[128];
	memcpy(buf, full, strlen(full));
	buf[strlen(full)] = 'X';
	CHECK(task_thread_name_parse(buf, strlen(full), &t) == TASK_THREAD_TASK && t.tid == 17,
	      "bytes after len are ignored");

	const char *bad[] = {
		"", "Executor task launch worker", "Executor task launch worker-",
		"Executor task launch worker-1x", "Executor task launch worker for task ",
		"Executor task launch worker for task 1.0 in stage 3.0 (TID 17) ",
		"Executor task launch worker for task 1.0 in stage 3.0 (TID 17",
		"Executor task launch worker for task 1.0 in stage 3 (TID 17)",
		"Executor task launch worker for task 1 in stage 3.0 (TID 17)",
		"Executor task launch worker for task -1.0 in stage 3.0 (TID 17)",
		"Executor task launch worker for task 1.0 in stage 3.0 (TID 1234567890123456789)",
		"Executor task launch worker for task 17x", "Executor task l",
		"executor task launch worker for task 17", "Executor task idle worker#",
		"Executor task idle worker#1 ", "dispatcher-event-loop-0", "main",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(parse(bad[i], &t) == TASK_THREAD_NONE, "not a task name: '%s'", bad[i]);
	char nul[] = "Executor task launch worker for task 1\0";
	CHECK(task_thread_name_parse(nul, sizeof(nul) - 1, &t) == TASK_THREAD_NONE,
	      "embedded NUL does not match");
	CHECK(task_thread_name_parse(NULL, 5, &t) == TASK_THREAD_NONE, "NULL name");

	struct {
		const char *name;
		enum executor_thread_class cls;
	} classes[] = {
		{ full, THREAD_CLASS_TASK }, { "Executor task l", THREAD_CLASS_TASK },
		{ "Executor task idle worker#3", THREAD_CLASS_TASK },
		{ "GC Thread#1", THREAD_CLASS_GC }, { "G1 Conc#0", THREAD_CLASS_GC },
		{ "G1 Main Marker", THREAD_CLASS_GC },
		{ "C2 CompilerThread0", THREAD_CLASS_JIT }, { "C1 CompilerThre", THREAD_CLASS_JIT },
		{ "VM Thread", THREAD_CLASS_JVM }, { "Reference Handler", THREAD_CLASS_JVM },
		{ "dispatcher-event-loop-0", THREAD_CLASS_RPC },
		{ "dispatcher-BlockManagerEndpoint1", THREAD_CLASS_RPC },
		{ "netty-rpc-env-timeout", THREAD_CLASS_RPC }, { "rpc-client-3-1", THREAD_CLASS_RPC },
		{ "shuffle-client-5-1", THREAD_CLASS_SHUFFLE },
		{ "shuffle-server-6-1", THREAD_CLASS_SHUFFLE },
		{ "shuffle-client-", THREAD_CLASS_SHUFFLE },
		{ "executor-heartbeater", THREAD_CLASS_HEARTBEAT },
		{ "executor-heartb", THREAD_CLASS_HEARTBEAT },
		{ "block-manager-future-0", THREAD_CLASS_BLOCK_MANAGER },
		{ "stdout writer for python3", THREAD_CLASS_PYTHON },
		{ "main", THREAD_CLASS_OTHER }, { "java", THREAD_CLASS_OTHER },
	};
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		CHECK_STR(executor_thread_class_name(executor_thread_classify(
				  classes[i].name, strlen(classes[i].name))),
			  executor_thread_class_name(classes[i].cls), "class of '%s'",
			  classes[i].name);
	CHECK_STR(executor_thread_class_name(THREAD_CLASS_MAX), "other", "out-of-range class");
	TAP_DONE();
}

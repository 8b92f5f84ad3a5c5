/* fuzz_task_thread_name.c - thread names are outside input (the helper's log). */
#include <stdint.h>
#include <stdlib.h>

#include "spark/task_thread_name.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct task_thread_name t;
	enum task_thread_kind k = task_thread_name_parse((const char *)data, size, &t);

	/* Only exact forms parse; every number is non-negative. */
	if (k == TASK_THREAD_TASK && (t.stage < 0 || t.stage_attempt < 0 || t.tid < 0 ||
				      t.task_index < 0 || t.task_attempt < 0))
		abort();
	if (k != TASK_THREAD_NONE && size < 27) /* "Executor task idle worker#N" */
		abort();
	(void)executor_thread_class_name(executor_thread_classify((const char *)data, size));
	return 0;
}

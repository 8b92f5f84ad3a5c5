/* quiet_stderr.h - keeps the one message a rejected input gets (sp_err)
 * off libFuzzer's stderr, around one call. */
#ifndef SPARKPROF_QUIET_STDERR_H
#define SPARKPROF_QUIET_STDERR_H

#include <fcntl.h>
#include <unistd.h>

static inline int quiet_stderr(void)
{
	int saved = dup(2), null = open("/dev/null", O_WRONLY);

	if (null >= 0) {
		dup2(null, 2);
		close(null);
	}
	return saved;
}

static inline void restore_stderr(int saved)
{
	if (saved >= 0) {
		dup2(saved, 2);
		close(saved);
	}
}

#endif

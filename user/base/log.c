/* log.c - see log.h. */
#include <stdarg.h>
#include <stdio.h>

#include "base/log.h"

/* The one process-wide setting: how chatty the program is. */
static enum sp_log_level log_level = SP_LOG_INFO;

void sp_log_set_level(enum sp_log_level level)
{
	log_level = level;
}

enum sp_log_level sp_log_get_level(void)
{
	return log_level;
}

void sp_log(enum sp_log_level level, const char *fmt, ...)
{
	static const char *const prefix[] = {
		[SP_LOG_ERROR] = "error: ",
		[SP_LOG_WARN] = "warning: ",
		[SP_LOG_INFO] = "",
		[SP_LOG_DEBUG] = "debug: ",
	};
	va_list ap;

	if (level > log_level)
		return;
	fprintf(stderr, "sparkprof: %s", prefix[level]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

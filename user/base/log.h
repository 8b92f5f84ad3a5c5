/* log.h - messages to the user, all prefixed "sparkprof: ".
 *
 * Errors are one line that names what failed, on which file or pid, and the
 * errno text: sp_err("open %s: %s", path, strerror(errno)).
 */
#ifndef SPARKPROF_LOG_H
#define SPARKPROF_LOG_H

#include <stdbool.h>

enum sp_log_level { SP_LOG_ERROR, SP_LOG_WARN, SP_LOG_INFO, SP_LOG_DEBUG };

/* Messages above this level are not printed (default SP_LOG_INFO). */
void sp_log_set_level(enum sp_log_level level);
enum sp_log_level sp_log_get_level(void);

void sp_log(enum sp_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define sp_err(...) sp_log(SP_LOG_ERROR, __VA_ARGS__)
#define sp_warn(...) sp_log(SP_LOG_WARN, __VA_ARGS__)
#define sp_info(...) sp_log(SP_LOG_INFO, __VA_ARGS__)
#define sp_debug(...) sp_log(SP_LOG_DEBUG, __VA_ARGS__)

#endif

/* fuzz_jvm_helper_log.c - the helper log parser and its lookups on any
 * bytes: fed, or read from a file (inlined frames deferred and read back). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jvm/jvm_helper_log.h"

static void count(void *ctx, const struct jvm_helper_thread_event *ev)
{
	(*(size_t *)ctx) += ev->name ? strlen(ev->name) : 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jvm_helper_log *log;
	size_t seen = 0;
	int fd = size & 4 ? memfd_create("helper-log", 0) : -1;

	if (fd >= 0 && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	log = fd >= 0 ? jvm_helper_log_from_fd(fd) : jvm_helper_log_new();
	if (!log) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	jvm_helper_log_set_thread_listener(log, count, &seen);
	if (fd >= 0) {
		jvm_helper_log_poll(log);
	} else {
		/* Fed in two pieces, as a reader polling a growing file would. */
		size_t half = size / 2;
		size_t used = jvm_helper_log_feed(log, (const char *)data, half);
		jvm_helper_log_feed(log, (const char *)data + used, size - used);
	}
	/* The same bytes as the new file a G record announces. */
	if (size & 2) {
		jvm_helper_log_next_file(log);
		jvm_helper_log_feed(log, (const char *)data, size);
	}

	struct frame f[16];
	uint64_t probes[] = { 0, 1, 0x1000, 0x10010, 0x7f0000001000, UINT64_MAX };
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		for (uint64_t ts = 0; ts < 4; ts++) {
			int n = jvm_helper_log_resolve(log, probes[i], ts * 1000, f, 1 + (int)ts * 5);
			for (int k = 0; k < n; k++)
				seen += strlen(f[k].name);
			const char *name = jvm_helper_log_thread_name(log, (pid_t)probes[i], ts * 100);
			seen += name ? strlen(name) : 0;
			jvm_helper_log_thread_idle(log, (pid_t)probes[i], ts * 100);
		}
		jvm_helper_log_covers(log, probes[i]);
	}
	/* Forgetting, then lookups over what is left. */
	jvm_helper_log_forget(log, size & 1 ? 2000 : UINT64_MAX);
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		int n = jvm_helper_log_resolve(log, probes[i], 3000, f, 16);
		for (int k = 0; k < n; k++)
			seen += strlen(f[k].name);
	}
	jvm_helper_log_free(log);
	return seen == (size_t)-1;
}

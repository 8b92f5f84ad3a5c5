/* publish.h - the helper's append-only log (format: sparkprof_helper_log.h)
 * and the safe creation of files in the JVM's /tmp.
 *
 * Each record is formatted into one buffer and written with one write() on
 * an O_APPEND descriptor.  Writers hold pub->lock while they take their
 * timestamps and write, so records appear in timestamp order.
 */
#ifndef SPARKPROF_AGENT_PUBLISH_H
#define SPARKPROF_AGENT_PUBLISH_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct publisher {
	int fd;                 /* -1: publishing is off */
	pthread_mutex_t lock;
	uint64_t next_code_id;  /* ids of L and D records, from 1 */
	int failed;             /* a write failed once: said so, now off */
	uint64_t size;          /* bytes in the current file */
	int pid;
	char jvm[128];          /* java.vm.version, escaped, for H records */
};

/* Where records lie in the current file, so that a new file can restate
 * them (log_rotation.h). */
struct log_span {
	uint64_t offset;
	uint32_t len;
};

/* Creates path exclusively (O_CREAT|O_EXCL|O_NOFOLLOW, mode).  If something
 * is already there, it is unlinked first (unlink never follows a symlink,
 * and in a sticky /tmp it only succeeds on our own files) and creation is
 * retried once.  Returns the fd or -errno. */
int create_exclusive(const char *path, int mode);

/* create_exclusive() with mode 0600 and O_APPEND set.  fd or -errno. */
int create_log_file(const char *path);

/* Opens the log for pid; fd -1 and a message on stderr when that fails. */
void publisher_open(struct publisher *pub, int pid);

/* Formats the H record that starts a file: mode "start", "attach" or
 * "continued".  Returns its length (< len). */
int publisher_header(const struct publisher *pub, const char *mode, char *line, size_t len);

/* Removes the log's name if it still names our file (readers that have it
 * open keep reading; later records still go to it).  Lock held. */
void publisher_unlink(struct publisher *pub);

/* Appends a buffer that holds complete lines; call with the lock held. */
void publisher_write(struct publisher *pub, const char *buf, size_t len);

/* Escapes name into dst (see the header's escaping rule); returns the
 * length written, always < dstlen, NUL-terminated. */
size_t escape_name(char *dst, size_t dstlen, const char *name);

#endif

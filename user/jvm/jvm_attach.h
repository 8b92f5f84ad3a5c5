/* jvm_attach.h - loading a JVMTI agent into a running HotSpot JVM.
 *
 * Speaks HotSpot's attach protocol as root from the host, also into JVMs in
 * other pid and mount namespaces (containers): create the trigger file
 * .attach_pidN, SIGQUIT the JVM, wait for its /tmp/.java_pidN socket, send
 * one command and read the reply. The socket work runs in a forked child
 * that enters the JVM's mount namespace and takes the JVM's effective uid
 * and gid, so the caller may be multi-threaded and keeps its own identity.
 *
 * Refuses (without signalling) JVMs that would die of SIGQUIT (no handler
 * yet, or -Xrs without a listener) and JVMs run with
 * -XX:+DisableAttachMechanism. Failures come back as -errno plus one line
 * "pid N: cause" in err:
 *   -ESRCH      no such process
 *   -ENOEXEC    not a JVM
 *   -EPERM      attach disabled, or SIGQUIT would kill the JVM
 *   -ETIMEDOUT  the JVM did not open its attach socket in time
 *   -EPROTO     the JVM answered with an error (agent failed, with its code
 *               and the JVM's text)
 *   -EALREADY   (load) a library with the agent's file name is already
 *               loaded: loading a second copy would run a second agent
 *   other       a system call failed (the line names it)
 */
#ifndef SPARKPROF_JVM_ATTACH_H
#define SPARKPROF_JVM_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* How long we wait for the JVM to open its attach socket. */
#define JVM_ATTACH_SOCKET_WAIT_MS 5000
/* How long we wait for the JVM to answer a command. */
#define JVM_ATTACH_REPLY_WAIT_MS 30000

/* Loads the agent at agent_path (a file on this host; copied into the JVM's
 * /tmp when the JVM cannot see or read it) with options (NULL: none).
 * Returns 0 when the agent's Agent_OnAttach returned 0. */
int jvm_attach_load_agent(pid_t pid, const char *agent_path, const char *options,
			  char *err, size_t errlen);

/* Runs a diagnostic command (as `jcmd PID command` does) and puts its
 * output, NUL-terminated and cut to fit, in out. Returns 0 or -errno. */
int jvm_attach_jcmd(pid_t pid, const char *command, char *out, size_t outlen,
		    char *err, size_t errlen);

/* A reply on the attach socket: a decimal status line, then text. */
struct jvm_attach_reply {
	int status;
	const char *text;	/* into the parsed buffer, not NUL-terminated */
	size_t text_len;
};

/* Splits a reply. Returns 0, or -EPROTO when there is no status line. */
int jvm_attach_parse_reply(const char *buf, size_t len, struct jvm_attach_reply *out);

/* Interprets the reply to `load`: JDK 9-20 answer status 0 and
 * "return code: N" (or status != 0 when the library could not be loaded);
 * JDK 21+ always answer status 0, then "return code: N" or an error text;
 * JDK 8 put N alone on the second line. Returns 0 when the agent returned
 * 0, else -EPROTO. *agent_ran says whether Agent_OnAttach ran; *code is its
 * result, or the JVM's status when it did not run (-1 when there is none). */
int jvm_attach_load_result(const char *buf, size_t len, int *code, bool *agent_ran);

/* Copies up to one line's worth of a JVM's text into out as one line:
 * newlines become "; ", control bytes '?', leading/trailing space dropped. */
void jvm_attach_one_line(const char *text, size_t len, char *out, size_t outlen);

/* Where the sparkprof helper is: beside this executable, in build/ beside
 * it, or installed (lib/sparkprof/ beside bin/, /usr/local/lib/sparkprof,
 * /usr/lib/sparkprof). Writes an absolute path. Returns 0 or -ENOENT. */
int jvm_attach_find_helper(char *path, size_t len);

#endif

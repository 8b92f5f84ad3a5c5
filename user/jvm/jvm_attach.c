/* jvm_attach.c - see jvm_attach.h.
 *
 * The parent (maybe a multi-threaded recorder) only reads /proc and copies
 * the agent; everything done as the JVM's user, inside its mount namespace,
 * happens in a forked child that reports back over a pipe:
 *   'R' reply-bytes...          the JVM's reply, read to EOF
 *   'E' int-errno message...    why it failed
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jvm/jvm_attach.h"
#include "jvm/jvm_process.h"
#include "proc/proc_root.h"
#include "proc/proc_status.h"

/* HotSpot's limits on a request (attachListener.hpp). */
#define ATTACH_NAME_MAX 16
#define ATTACH_ARG_MAX 1024
#define REPLY_MAX (1024 * 1024)
#define SOCKET_POLL_MS 20

/* ---- reply parsing ------------------------------------------------------ */

/* A whole field holding one decimal int, blanks around it allowed. */
static bool parse_int(const char *s, size_t len, int *v)
{
	size_t i = 0, digits = 0;
	long long n = 0;
	bool neg = false;

	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i < len && s[i] == '-') {
		neg = true;
		i++;
	}
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
		n = n * 10 + (s[i] - '0');
		if (n > INT_MAX)
			return false;
	}
	while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
		i++;
	if (!digits || i != len)
		return false;
	*v = (int)(neg ? -n : n);
	return true;
}

int jvm_attach_parse_reply(const char *buf, size_t len, struct jvm_attach_reply *out)
{
	const char *nl;
	size_t line_len;

	memset(out, 0, sizeof(*out));
	if (!buf || !len)
		return -EPROTO;
	nl = memchr(buf, '\n', len);
	line_len = nl ? (size_t)(nl - buf) : len;
	if (!parse_int(buf, line_len, &out->status))
		return -EPROTO;
	out->text = nl ? nl + 1 : buf + len;
	out->text_len = nl ? len - line_len - 1 : 0;
	return 0;
}

int jvm_attach_load_result(const char *buf, size_t len, int *code, bool *agent_ran)
{
	struct jvm_attach_reply r;
	const char *nl;
	size_t line_len;
	static const char rc[] = "return code:";

	*code = -1;
	*agent_ran = false;
	if (jvm_attach_parse_reply(buf, len, &r))
		return -EPROTO;
	if (r.status != 0) {
		*code = r.status;
		return -EPROTO;
	}
	nl = memchr(r.text, '\n', r.text_len);
	line_len = nl ? (size_t)(nl - r.text) : r.text_len;
	if (line_len >= sizeof(rc) - 1 && !memcmp(r.text, rc, sizeof(rc) - 1)) {
		if (!parse_int(r.text + sizeof(rc) - 1, line_len - (sizeof(rc) - 1), code)) {
			*code = -1;
			return -EPROTO;
		}
	} else if (!parse_int(r.text, line_len, code)) {
		/* JDK 21+: status 0 and an error text */
		*code = -1;
		return -EPROTO;
	}
	*agent_ran = true;
	return *code == 0 ? 0 : -EPROTO;
}

void jvm_attach_one_line(const char *text, size_t len, char *out, size_t outlen)
{
	size_t o = 0;
	bool pending_sep = false;

	if (!outlen)
		return;
	for (size_t i = 0; text && i < len && o + 1 < outlen; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c == '\n' || c == '\r') {
			pending_sep = o > 0;
			continue;
		}
		if (o == 0 && (c == ' ' || c == '\t'))
			continue;
		if (pending_sep) {
			if (o + 3 >= outlen)
				break;
			out[o++] = ';';
			out[o++] = ' ';
			pending_sep = false;
		}
		out[o++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	while (o > 0 && (out[o - 1] == ' ' || out[o - 1] == '\t'))
		o--;
	out[o] = '\0';
}

/* ---- the target --------------------------------------------------------- */

struct target {
	pid_t pid;		/* host pid */
	pid_t ns_pid;		/* the pid the JVM sees (its socket's name) */
	uid_t uid;
	gid_t gid;
	bool other_mntns;
	bool may_signal;	/* SIGQUIT is caught: it will not kill */
	int pidfd;		/* pins the process against pid reuse */
};

static void fail(char *err, size_t errlen, pid_t pid, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void fail(char *err, size_t errlen, pid_t pid, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!errlen)
		return;
	n = snprintf(err, errlen, "pid %d: ", (int)pid);
	if (n < 0 || (size_t)n >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static bool socket_exists(pid_t pid, pid_t ns_pid)
{
	char path[64];
	struct stat st;
	int fd;
	bool is_socket;

	snprintf(path, sizeof(path), "/tmp/.java_pid%d", (int)ns_pid);
	fd = proc_root_open(pid, path, O_PATH | O_NOFOLLOW);
	if (fd < 0)
		return false;
	is_socket = !fstat(fd, &st) && S_ISSOCK(st.st_mode);
	close(fd);
	return is_socket;
}

static int prepare_target(pid_t pid, struct target *t, char *err, size_t errlen)
{
	struct proc_status st;
	struct jvm_info info;
	char ns[64];
	int rc;

	memset(t, 0, sizeof(*t));
	t->pidfd = -1;
	if (pid <= 0) {
		fail(err, errlen, pid, "not a valid process id");
		return -ESRCH;
	}
	rc = jvm_process_inspect(pid, &info);
	if (rc == -ESRCH) {
		fail(err, errlen, pid, "no such process");
		return rc;
	}
	if (rc == -ENOEXEC) {
		fail(err, errlen, pid, "not a JVM (no libjvm.so in /proc/%d/maps)", (int)pid);
		return rc;
	}
	if (rc) {
		fail(err, errlen, pid, "reading /proc/%d/{status,maps,cmdline}: %s", (int)pid,
		     strerror(-rc));
		return rc;
	}
	pid = info.pid;
	if (info.flags.disable_attach == JVM_FLAG_ON) {
		fail(err, errlen, pid, "attach is disabled in this JVM (-XX:+DisableAttachMechanism)");
		return -EPERM;
	}
	rc = proc_status_read(pid, &st);
	if (rc) {
		fail(err, errlen, pid, rc == -ENOENT ? "no such process" : "reading status: %s",
		     strerror(-rc));
		return rc == -ENOENT ? -ESRCH : rc;
	}
	if (!(st.present & PROC_STATUS_SIGCGT)) {
		fail(err, errlen, pid, "/proc/%d/status has no SigCgt line", (int)pid);
		return -EPROTO;
	}
	t->pid = pid;
	t->ns_pid = info.ns_pid;
	t->uid = info.uid;
	t->gid = info.gid;
	t->may_signal = proc_status_catches(&st, SIGQUIT);
	if (!t->may_signal && !socket_exists(pid, t->ns_pid)) {
		fail(err, errlen, pid, "the JVM does not handle SIGQUIT yet (still starting, or "
		     "-Xrs): signalling it would kill it");
		return -EPERM;
	}
	snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", (int)pid);
	t->other_mntns = !same_file("/proc/self/ns/mnt", ns);
	t->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (t->pidfd < 0) {
		rc = -errno;
		fail(err, errlen, pid, rc == -ESRCH ? "no such process" : "pidfd_open: %s",
		     strerror(-rc));
		return rc;
	}
	return 0;
}

/* ---- the child: speaks to the JVM as the JVM's user --------------------- */

struct child_io {
	int fd;			/* pipe to the parent */
};

static void child_fail(struct child_io *io, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));

static void child_fail(struct child_io *io, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	ssize_t unused;

	msg[0] = 'E';
	memcpy(msg + 1, &code, sizeof(code));
	va_start(ap, fmt);
	vsnprintf(msg + 1 + sizeof(code), sizeof(msg) - 1 - sizeof(code), fmt, ap);
	va_end(ap);
	unused = write(io->fd, msg, 1 + sizeof(code) + strlen(msg + 1 + sizeof(code)));
	(void)unused;
	_exit(1);
}

static bool write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

static int connect_socket(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = JVM_ATTACH_REPLY_WAIT_MS / 1000 };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		int saved = errno;

		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

static bool path_is_socket(const char *path)
{
	struct stat st;

	return !lstat(path, &st) && S_ISSOCK(st.st_mode);
}

/* Creates the trigger in the JVM's cwd (checked first by HotSpot), else in
 * its /tmp. Writes which one into where (for the unlink). */
static bool create_trigger(int cwdfd, pid_t ns_pid, char *name, size_t namelen, bool *in_cwd)
{
	int fd;

	snprintf(name, namelen, ".attach_pid%d", (int)ns_pid);
	fd = cwdfd >= 0 ? openat(cwdfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
				 O_CLOEXEC, 0600) : -1;
	if (fd >= 0) {
		*in_cwd = true;
		close(fd);
		return true;
	}
	snprintf(name, namelen, "/tmp/.attach_pid%d", (int)ns_pid);
	fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return false;
	*in_cwd = false;
	close(fd);
	return true;
}

static void child_run(const struct target *t, const char *request, size_t request_len,
		      struct child_io *io)
{
	char sock[64], trigger[64], proc[64];
	int cwdfd, rootfd, fd;
	char *reply;
	size_t len = 0;
	bool in_cwd = false;

	/* Everything under /proc/P is opened before we leave our namespace
	 * and our identity. */
	snprintf(proc, sizeof(proc), "/proc/%d/cwd", (int)t->pid);
	cwdfd = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
	snprintf(proc, sizeof(proc), "/proc/%d/root", (int)t->pid);
	rootfd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		child_fail(io, -errno, "open %s: %s", proc, strerror(errno));
	if (t->other_mntns) {
		snprintf(proc, sizeof(proc), "/proc/%d/ns/mnt", (int)t->pid);
		fd = open(proc, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || setns(fd, CLONE_NEWNS) < 0)
			child_fail(io, -errno, "entering the JVM's mount namespace (%s): %s",
				   proc, strerror(errno));
		close(fd);
	}
	/* The JVM's /tmp is the one under its root, which may be a chroot
	 * inside its mount namespace. */
	if (fchdir(rootfd) < 0 || chroot(".") < 0 || chdir("/") < 0)
		child_fail(io, -errno, "entering the JVM's root directory: %s", strerror(errno));
	close(rootfd);
	if (setgroups(1, &t->gid) < 0 || setegid(t->gid) < 0 || seteuid(t->uid) < 0)
		child_fail(io, -errno, "taking the JVM's uid %u gid %u: %s", (unsigned)t->uid,
			   (unsigned)t->gid, strerror(errno));

	snprintf(sock, sizeof(sock), "/tmp/.java_pid%d", (int)t->ns_pid);
	fd = path_is_socket(sock) ? connect_socket(sock) : -1;
	if (fd < 0) {
		int waited = 0;

		/* No listener yet: start it. A stale socket file from an
		 * earlier JVM with the same pid is replaced by the JVM. */
		if (!t->may_signal)
			child_fail(io, -EPERM, "%s does not accept connections and the JVM "
				   "does not handle SIGQUIT: not signalling it", sock);
		if (!create_trigger(cwdfd, t->ns_pid, trigger, sizeof(trigger), &in_cwd))
			child_fail(io, -errno, "creating the attach trigger %s: %s", trigger,
				   strerror(errno));
		/* Signalling needs our own uid back for a moment (the JVM's
		 * real uid may differ from its effective one). */
		if (seteuid(0) < 0 || syscall(SYS_pidfd_send_signal, t->pidfd, SIGQUIT, NULL, 0) < 0) {
			int e = errno;

			if (in_cwd)
				unlinkat(cwdfd, trigger, 0);
			else
				unlink(trigger);
			child_fail(io, e == ESRCH ? -ESRCH : -e, "sending SIGQUIT: %s",
				   e == ESRCH ? "the process exited" : strerror(e));
		}
		if (seteuid(t->uid) < 0)
			child_fail(io, -errno, "taking the JVM's uid %u back: %s",
				   (unsigned)t->uid, strerror(errno));
		while (!path_is_socket(sock) && waited < JVM_ATTACH_SOCKET_WAIT_MS) {
			struct pollfd pfd = { .fd = t->pidfd, .events = POLLIN };

			if (poll(&pfd, 1, SOCKET_POLL_MS) > 0)
				break; /* the process exited */
			waited += SOCKET_POLL_MS;
		}
		if (in_cwd)
			unlinkat(cwdfd, trigger, 0);
		else
			unlink(trigger);
		if (!path_is_socket(sock)) {
			struct pollfd pfd = { .fd = t->pidfd, .events = POLLIN };

			if (poll(&pfd, 1, 0) > 0)
				child_fail(io, -ESRCH, "the JVM exited while we waited for %s", sock);
			child_fail(io, -ETIMEDOUT, "timed out after %d ms waiting for the JVM to "
				   "open %s (is it a HotSpot JVM?)", JVM_ATTACH_SOCKET_WAIT_MS, sock);
		}
		fd = connect_socket(sock);
		if (fd < 0)
			child_fail(io, -errno, "connecting to %s: %s", sock, strerror(errno));
	}
	for (size_t sent = 0; sent < request_len;) {
		/* MSG_NOSIGNAL: a JVM that hangs up must not SIGPIPE us */
		ssize_t n = send(fd, request + sent, request_len - sent, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			child_fail(io, -errno, "sending the request on %s: %s", sock,
				   strerror(errno));
		sent += (size_t)n;
	}

	reply = malloc(REPLY_MAX + 1);
	if (!reply)
		child_fail(io, -ENOMEM, "no memory for the reply");
	reply[0] = 'R';
	for (;;) {
		char sink[4096];
		ssize_t n;

		/* Past REPLY_MAX we keep reading (to EOF) but drop the rest. */
		if (len < REPLY_MAX)
			n = read(fd, reply + 1 + len, REPLY_MAX - len);
		else
			n = read(fd, sink, sizeof(sink));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			child_fail(io, errno == EAGAIN ? -ETIMEDOUT : -errno,
				   "reading the reply on %s: %s", sock,
				   errno == EAGAIN ? "timed out" : strerror(errno));
		if (n == 0)
			break;
		if (len < REPLY_MAX)
			len += (size_t)n;
	}
	close(fd);
	write_all(io->fd, reply, len + 1);
	_exit(0);
}

/* ---- the parent --------------------------------------------------------- */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Runs one request; on success *reply is the JVM's reply (malloc'ed). */
static int run_request(const struct target *t, const char *request, size_t request_len,
		       char **reply, size_t *reply_len, char *err, size_t errlen)
{
	int pipefd[2], status = 0, rc = 0;
	char *buf;
	size_t len = 0, cap = REPLY_MAX + 512;
	long long deadline = now_ms() + JVM_ATTACH_SOCKET_WAIT_MS + JVM_ATTACH_REPLY_WAIT_MS + 5000;
	pid_t child;

	buf = malloc(cap);
	if (!buf) {
		fail(err, errlen, t->pid, "no memory");
		return -ENOMEM;
	}
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		rc = -errno;
		free(buf);
		fail(err, errlen, t->pid, "pipe: %s", strerror(-rc));
		return rc;
	}
	child = fork();
	if (child < 0) {
		rc = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		free(buf);
		fail(err, errlen, t->pid, "fork: %s", strerror(-rc));
		return rc;
	}
	if (child == 0) {
		struct child_io io = { .fd = pipefd[1] };

		close(pipefd[0]);
		child_run(t, request, request_len, &io);
	}
	close(pipefd[1]);
	for (;;) {
		struct pollfd pfd = { .fd = pipefd[0], .events = POLLIN };
		long long left = deadline - now_ms();
		ssize_t n;

		if (left <= 0) {
			kill(child, SIGKILL);
			rc = -ETIMEDOUT;
			break;
		}
		n = poll(&pfd, 1, (int)left);
		if (n < 0 && errno != EINTR) {
			rc = -errno;
			break;
		}
		if (n <= 0)
			continue;
		n = read(pipefd[0], buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || (len += (size_t)n) == cap)
			break;
	}
	close(pipefd[0]);
	/* ECHILD (a caller's SIGCHLD handler reaped it) leaves status 0: the
	 * pipe's content decides. */
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	if (rc == -ETIMEDOUT) {
		fail(err, errlen, t->pid, "no reply from the JVM within %d ms",
		     JVM_ATTACH_SOCKET_WAIT_MS + JVM_ATTACH_REPLY_WAIT_MS);
	} else if (rc) {
		fail(err, errlen, t->pid, "waiting for the attach helper: %s", strerror(-rc));
	} else if (len >= 1 + sizeof(int) && buf[0] == 'E') {
		int code;

		memcpy(&code, buf + 1, sizeof(code));
		buf[len < cap ? len : cap - 1] = '\0';
		fail(err, errlen, t->pid, "%s", buf + 1 + sizeof(code));
		rc = code < 0 ? code : -EIO;
	} else if (len >= 1 && buf[0] == 'R' && WIFEXITED(status) && !WEXITSTATUS(status)) {
		memmove(buf, buf + 1, len - 1);
		*reply = buf;
		*reply_len = len - 1;
		return 0;
	} else {
		fail(err, errlen, t->pid, "the attach helper process died (status 0x%x)", status);
		rc = -EIO;
	}
	free(buf);
	return rc;
}

/* "1\0name\0a\0b\0c\0" (protocol version 1, exactly three arguments). */
static int build_request(const char *name, const char *args[3], char *buf, size_t cap,
			 size_t *len)
{
	size_t n = 0;
	const char *parts[5] = { "1", name, args[0], args[1], args[2] };

	if (strlen(name) > ATTACH_NAME_MAX)
		return -ENAMETOOLONG;
	for (int i = 0; i < 5; i++) {
		size_t l = strlen(parts[i]);

		if (l > ATTACH_ARG_MAX)
			return -ENAMETOOLONG;
		if (n + l + 1 > cap)
			return -ENAMETOOLONG;
		memcpy(buf + n, parts[i], l + 1);
		n += l + 1;
	}
	*len = n;
	return 0;
}

/* ---- agent copies ------------------------------------------------------- */

/* Whether uid/gid may read path: every directory searchable, the file
 * readable. Supplementary groups are not considered (we then copy, which
 * is merely unnecessary). */
static bool readable_by(const char *path, uid_t uid, gid_t gid)
{
	char dir[PATH_MAX];
	struct stat st;
	size_t len = strlen(path);

	if (uid == 0)
		return true;
	if (len >= sizeof(dir))
		return false;
	memcpy(dir, path, len + 1);
	for (char *slash = dir; (slash = strchr(slash + 1, '/')) != NULL;) {
		*slash = '\0';
		if (stat(dir, &st) < 0)
			return false;
		if (!(st.st_uid == uid ? st.st_mode & S_IXUSR :
		      st.st_gid == gid ? st.st_mode & S_IXGRP : st.st_mode & S_IXOTH))
			return false;
		*slash = '/';
	}
	if (stat(path, &st) < 0)
		return false;
	return st.st_uid == uid ? st.st_mode & S_IRUSR :
	       st.st_gid == gid ? st.st_mode & S_IRGRP : st.st_mode & S_IROTH;
}

struct agent_copy {
	int tmpfd;		/* the JVM's /tmp, or -1 when no copy */
	int dirfd;
	char dir[64];		/* our directory in it */
	char base[256];		/* the library's file name */
	char path[PATH_MAX];	/* the path the JVM loads */
};

static void remove_copy(struct agent_copy *c)
{
	if (c->tmpfd < 0)
		return;
	if (c->dirfd >= 0) {
		unlinkat(c->dirfd, c->base, 0);
		close(c->dirfd);
	}
	unlinkat(c->tmpfd, c->dir, AT_REMOVEDIR);
	close(c->tmpfd);
	c->tmpfd = c->dirfd = -1;
}

/* Copies the agent into the JVM's /tmp, in a fresh root-owned 0755
 * directory, so that the JVM's user can read it and nobody can swap it. */
static int copy_agent(const struct target *t, const char *agent, struct agent_copy *c,
		      char *err, size_t errlen)
{
	int in = -1, out = -1, rc = 0;
	struct timespec ts;

	in = open(agent, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		rc = -errno;
		fail(err, errlen, t->pid, "open %s: %s", agent, strerror(-rc));
		return rc;
	}
	c->tmpfd = proc_root_open(t->pid, "/tmp", O_PATH | O_DIRECTORY);
	if (c->tmpfd < 0) {
		rc = c->tmpfd;
		fail(err, errlen, t->pid, "opening the JVM's /tmp (/proc/%d/root/tmp): %s",
		     (int)t->pid, strerror(-rc));
		close(in);
		return rc;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	for (int attempt = 0;; attempt++) {
		snprintf(c->dir, sizeof(c->dir), "sparkprof-%d-%lx", (int)getpid(),
			 (unsigned long)(ts.tv_nsec + attempt));
		if (mkdirat(c->tmpfd, c->dir, 0755) == 0)
			break;
		if (errno != EEXIST || attempt == 100) {
			rc = -errno;
			fail(err, errlen, t->pid, "mkdir /proc/%d/root/tmp/%s: %s", (int)t->pid,
			     c->dir, strerror(-rc));
			c->dir[0] = '\0';
			goto out;
		}
	}
	c->dirfd = openat(c->tmpfd, c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->dirfd < 0 || fchmod(c->dirfd, 0755) < 0) {
		rc = -errno;
		fail(err, errlen, t->pid, "preparing /proc/%d/root/tmp/%s: %s", (int)t->pid,
		     c->dir, strerror(-rc));
		goto out;
	}
	out = openat(c->dirfd, c->base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     0644);
	if (out < 0 || fchmod(out, 0644) < 0) {
		rc = -errno;
		fail(err, errlen, t->pid, "creating /proc/%d/root/tmp/%s/%s: %s", (int)t->pid,
		     c->dir, c->base, strerror(-rc));
		goto out;
	}
	for (;;) {
		char buf[65536];
		ssize_t n = read(in, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (n > 0 && !write_all(out, buf, (size_t)n))) {
			rc = -errno;
			fail(err, errlen, t->pid, "copying %s into /proc/%d/root/tmp/%s: %s", agent,
			     (int)t->pid, c->dir, strerror(-rc));
			goto out;
		}
		if (n == 0)
			break;
	}
	snprintf(c->path, sizeof(c->path), "/tmp/%s/%s", c->dir, c->base);
out:
	close(in);
	if (out >= 0)
		close(out);
	if (rc)
		remove_copy(c);
	return rc;
}

/* ---- public ------------------------------------------------------------- */

int jvm_attach_load_agent(pid_t pid, const char *agent_path, const char *options,
			  char *err, size_t errlen)
{
	struct target t;
	struct agent_copy copy = { .tmpfd = -1, .dirfd = -1 };
	char abs[PATH_MAX], request[3 * ATTACH_ARG_MAX + 64], *reply = NULL, text[512];
	const char *args[3], *base;
	size_t request_len, reply_len;
	int rc, code;
	bool agent_ran;

	if (errlen)
		err[0] = '\0';
	if (!realpath(agent_path, abs)) {
		rc = -errno;
		fail(err, errlen, pid, "agent %s: %s", agent_path, strerror(-rc));
		return rc;
	}
	base = strrchr(abs, '/') + 1;
	if (strlen(base) >= sizeof(copy.base)) {
		fail(err, errlen, pid, "agent file name %s is too long", base);
		return -ENAMETOOLONG;
	}
	snprintf(copy.base, sizeof(copy.base), "%s", base);
	rc = prepare_target(pid, &t, err, errlen);
	if (rc)
		goto out;
	rc = jvm_process_has_library(t.pid, base);
	if (rc > 0) {
		fail(err, errlen, t.pid, "%s is already loaded", base);
		rc = -EALREADY;
		goto out;
	}
	if (t.other_mntns || !readable_by(abs, t.uid, t.gid)) {
		rc = copy_agent(&t, abs, &copy, err, errlen);
		if (rc)
			goto out;
		args[0] = copy.path;
	} else {
		args[0] = abs;
	}
	args[1] = "true"; /* the path is absolute */
	args[2] = options ? options : "";
	rc = build_request("load", args, request, sizeof(request), &request_len);
	if (rc) {
		fail(err, errlen, t.pid, "agent path or options longer than %d bytes",
		     ATTACH_ARG_MAX);
		goto out;
	}
	rc = run_request(&t, request, request_len, &reply, &reply_len, err, errlen);
	if (rc)
		goto out;
	rc = jvm_attach_load_result(reply, reply_len, &code, &agent_ran);
	if (rc) {
		struct jvm_attach_reply r;
		const char *detail;
		size_t detail_len;

		jvm_attach_parse_reply(reply, reply_len, &r);
		detail = r.text;
		detail_len = r.text_len;
		if (agent_ran) {
			/* the first line is "return code: N"; say only what follows */
			const char *nl = memchr(detail, '\n', detail_len);

			detail_len = nl ? detail_len - (size_t)(nl + 1 - detail) : 0;
			detail = nl ? nl + 1 : detail;
		}
		jvm_attach_one_line(detail, detail_len, text, sizeof(text));
		if (reply_len == 0)
			fail(err, errlen, t.pid, "the JVM closed the attach connection without a reply");
		else if (r.status != 0)
			fail(err, errlen, t.pid, "the JVM could not load %s (status %d)%s%s", args[0],
			     r.status, text[0] ? ": " : "", text);
		else if (!agent_ran)
			fail(err, errlen, t.pid, "the JVM could not load %s%s%s", args[0],
			     text[0] ? ": " : "", text);
		else
			fail(err, errlen, t.pid, "agent %s failed: Agent_OnAttach returned %d%s%s",
			     args[0], code, text[0] ? ": " : "", text);
	}
out:
	free(reply);
	remove_copy(&copy);
	if (t.pidfd >= 0)
		close(t.pidfd);
	return rc;
}

int jvm_attach_jcmd(pid_t pid, const char *command, char *out, size_t outlen,
		    char *err, size_t errlen)
{
	struct target t;
	char request[3 * ATTACH_ARG_MAX + 64], *reply = NULL, text[512];
	const char *args[3] = { command, "", "" };
	struct jvm_attach_reply r;
	size_t request_len, reply_len;
	int rc;

	if (errlen)
		err[0] = '\0';
	if (outlen)
		out[0] = '\0';
	rc = prepare_target(pid, &t, err, errlen);
	if (rc)
		goto out;
	rc = build_request("jcmd", args, request, sizeof(request), &request_len);
	if (rc) {
		fail(err, errlen, t.pid, "command longer than %d bytes", ATTACH_ARG_MAX);
		goto out;
	}
	rc = run_request(&t, request, request_len, &reply, &reply_len, err, errlen);
	if (rc)
		goto out;
	if (jvm_attach_parse_reply(reply, reply_len, &r)) {
		jvm_attach_one_line(reply, reply_len, text, sizeof(text));
		fail(err, errlen, t.pid, "unexpected reply to jcmd: %s", text);
		rc = -EPROTO;
		goto out;
	}
	if (outlen) {
		size_t n = r.text_len < outlen - 1 ? r.text_len : outlen - 1;

		memcpy(out, r.text, n);
		out[n] = '\0';
	}
	if (r.status != 0) {
		jvm_attach_one_line(r.text, r.text_len, text, sizeof(text));
		fail(err, errlen, t.pid, "jcmd %s failed (status %d)%s%s", command, r.status,
		     text[0] ? ": " : "", text);
		rc = -EPROTO;
	}
out:
	free(reply);
	if (t.pidfd >= 0)
		close(t.pidfd);
	return rc;
}

int jvm_attach_find_helper(char *path, size_t len)
{
	static const char *const beside[] = {
		"", "/build", "/../lib/sparkprof",
	};
	static const char *const installed[] = {
		"/usr/local/lib/sparkprof", "/usr/lib/sparkprof",
	};
	char self[PATH_MAX], cand[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash)
			*slash = '\0';
		for (size_t i = 0; i < sizeof(beside) / sizeof(beside[0]); i++) {
			snprintf(cand, sizeof(cand), "%s%s/" JVM_HELPER_BASENAME, self, beside[i]);
			if (!access(cand, R_OK) && realpath(cand, self) && strlen(self) < len) {
				strcpy(path, self);
				return 0;
			}
		}
	}
	for (size_t i = 0; i < sizeof(installed) / sizeof(installed[0]); i++) {
		snprintf(cand, sizeof(cand), "%s/" JVM_HELPER_BASENAME, installed[i]);
		if (!access(cand, R_OK) && strlen(cand) < len) {
			strcpy(path, cand);
			return 0;
		}
	}
	return -ENOENT;
}

/* cmd_install_helper.c - `sparkprof install-helper DIR`: copies the JVM
 * helper library to a folder executors can load it from.
 *
 * In a pod, DIR is a hostPath that executor pods mount too, so that
 * `-agentpath:DIR/libsparkprof-agent.so` works there. The copy is written
 * beside the target and renamed over it: a JVM that has the old library
 * mapped keeps its old file, never a half-written one.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/log.h"
#include "base/path_util.h"
#include "commands.h"
#include "jvm/jvm_attach.h"

#define HELPER_BASENAME "libsparkprof-agent.so"

static void usage(FILE *out)
{
	fputs("usage: sparkprof install-helper [--agent PATH] DIR\n"
	      "\n"
	      "Copies the JVM helper (" HELPER_BASENAME ") into DIR (created if missing),\n"
	      "mode 0644, replacing an older copy atomically. Executors then load it with\n"
	      "  spark.executor.extraJavaOptions=-agentpath:DIR/" HELPER_BASENAME "\n"
	      "\n"
	      "  --agent PATH   the helper to copy (default: beside sparkprof, or\n"
	      "                 /usr/local/lib/sparkprof)\n",
	      out);
}

/* Opens the helper to copy: a regular file. fd, or -errno (with a message). */
static int open_source(const char *src)
{
	struct stat st;
	int fd = open(src, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0) {
		err = -errno;
		sp_err("install-helper: open %s: %s", src, strerror(errno));
		return err;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		sp_err("install-helper: stat %s: %s", src, strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		sp_err("install-helper: %s: not a regular file", src);
	} else {
		return fd;
	}
	close(fd);
	return err;
}

/* Copies fd into the stream. 0 or -errno; the caller's commit reports it. */
static int copy_into(int fd, FILE *out)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (fwrite(buf, 1, (size_t)n, out) != (size_t)n)
			return -EIO;
	}
	return 0;
}

int cmd_install_helper(int argc, char **argv)
{
	static const struct option long_options[] = {
		{ "agent", required_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char src[PATH_MAX], dst[PATH_MAX];
	const char *agent = NULL, *dir;
	struct atomic_file af;
	struct stat st;
	FILE *out;
	int c, err, fd;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", long_options, NULL)) != -1) {
		switch (c) {
		case 'A':
			agent = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			sp_err("install-helper: unknown or incomplete option '%s' (see 'sparkprof "
			       "install-helper --help')", argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc - 1) {
		sp_err("install-helper: give one folder to copy the helper into (see "
		       "'sparkprof install-helper --help')");
		return 2;
	}
	dir = argv[optind];
	if (!*dir) {
		sp_err("install-helper: empty folder name");
		return 2;
	}
	if (agent) {
		if (snprintf(src, sizeof(src), "%s", agent) >= (int)sizeof(src)) {
			sp_err("install-helper: --agent path too long: %s", agent);
			return 2;
		}
	} else if (jvm_attach_find_helper(src, sizeof(src))) {
		sp_err("install-helper: cannot find " HELPER_BASENAME " beside the sparkprof "
		       "binary, in build/ beside it, or in /usr/local/lib/sparkprof; give --agent PATH");
		return 1;
	}
	if (snprintf(dst, sizeof(dst), "%s/" HELPER_BASENAME, dir) >= (int)sizeof(dst)) {
		sp_err("install-helper: folder name too long: %s", dir);
		return 2;
	}
	fd = open_source(src);
	if (fd < 0)
		return 1;
	err = make_dirs(dir);
	if (err) {
		sp_err("install-helper: create %s: %s", dir, strerror(-err));
		close(fd);
		return 1;
	}
	out = atomic_file_open(&af, dst);
	if (!out) {
		close(fd);
		return 1;
	}
	err = copy_into(fd, out);
	close(fd);
	/* Readable by the executors' users, whatever our umask. */
	if (!err && fchmod(af.fd, 0644))
		err = -errno;
	if (atomic_file_commit(&af, err))
		return 1;
	if (access(dir, X_OK) == 0 && stat(dir, &st) == 0 && !(st.st_mode & S_IXOTH))
		sp_warn("install-helper: %s is not searchable by other users (mode %03o): "
			"executors that do not run as root cannot load the helper", dir,
			(unsigned)(st.st_mode & 0777));
	printf("installed %s\nexecutors: spark.executor.extraJavaOptions=-agentpath:%s "
	       "-XX:+PreserveFramePointer\n", dst, dst);
	return 0;
}

/* test_proc_root.c - opening files as a process sees them. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc/proc_root.h"
#include "tap.h"

static void write_file(const char *path)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs("x\n", f);
		fclose(f);
	}
}

int main(void)
{
	char dir[] = "/tmp/sparkprof-proc-root-XXXXXX", path[PATH_MAX], fmt[PATH_MAX];
	char link[PATH_MAX], target[PATH_MAX];
	int fd;

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		TAP_DONE();
	}
	snprintf(path, sizeof(path), "%s/ours-%d", dir, (int)getpid());
	snprintf(fmt, sizeof(fmt), "%s/ours-%%d", dir);
	write_file(path);
	fd = proc_root_open_published(getpid(), fmt);
	CHECK(fd >= 0, "a regular file the process's user owns opens");
	if (fd >= 0)
		close(fd);

	/* Another user's file cannot speak for the process (we run as root,
	 * so make the test process's file someone else's). */
	if (chown(path, 65534, 65534) == 0) {
		fd = proc_root_open_published(getpid(), fmt);
		CHECK(fd == -EPERM, "a file owned by another user is refused (%d)", fd);
		if (fd >= 0)
			close(fd);
	}

	snprintf(target, sizeof(target), "%s/target", dir);
	write_file(target);
	snprintf(link, sizeof(link), "%s/link-%d", dir, (int)getpid());
	CHECK(symlink(target, link) == 0, "symlink made");
	snprintf(fmt, sizeof(fmt), "%s/link-%%d", dir);
	fd = proc_root_open_published(getpid(), fmt);
	CHECK(fd == -ELOOP, "a symlink as the last component is refused (%d)", fd);

	/* A FIFO with no writer: a blocking open would never return. */
	snprintf(path, sizeof(path), "%s/fifo-%d", dir, (int)getpid());
	snprintf(fmt, sizeof(fmt), "%s/fifo-%%d", dir);
	CHECK(mkfifo(path, 0600) == 0, "FIFO made");
	alarm(10); /* a hang fails the test instead of stalling the suite */
	fd = proc_root_open_published(getpid(), fmt);
	alarm(0);
	CHECK(fd == -EPERM, "a FIFO is refused at once (%d)", fd);
	unlink(path);
	snprintf(path, sizeof(path), "%s/ours-%d", dir, (int)getpid());

	snprintf(fmt, sizeof(fmt), "%s/missing-%%d", dir);
	CHECK(proc_root_open_published(getpid(), fmt) == -ENOENT, "a missing file: -ENOENT");
	CHECK(proc_root_open_published(999999999, "/tmp/x-%d") == -ENOENT,
	      "a missing process: -ENOENT");

	fd = proc_root_open(getpid(), dir, O_PATH | O_DIRECTORY);
	CHECK(fd >= 0, "a directory opens with O_PATH");
	if (fd >= 0)
		close(fd);

	unlink(link);
	unlink(target);
	unlink(path);
	rmdir(dir);
	TAP_DONE();
}

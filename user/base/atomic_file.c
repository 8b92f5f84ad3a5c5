/* atomic_file.c - see atomic_file.h. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "base/atomic_file.h"
#include "base/log.h"

FILE *atomic_file_open(struct atomic_file *af, const char *path)
{
	af->file = NULL;
	if ((size_t)snprintf(af->path, sizeof(af->path), "%s", path) >= sizeof(af->path) ||
	    (size_t)snprintf(af->tmp, sizeof(af->tmp), "%s.tmp", path) >= sizeof(af->tmp)) {
		sp_err("write %s: path too long", path);
		errno = ENAMETOOLONG;
		return NULL;
	}
	af->file = fopen(af->tmp, "we");
	if (!af->file)
		sp_err("create %s: %s", af->tmp, strerror(errno));
	return af->file;
}

int atomic_file_commit(struct atomic_file *af, int err)
{
	if (ferror(af->file) && !err)
		err = -EIO;
	if (fclose(af->file) && !err)
		err = -errno;
	af->file = NULL;
	if (!err && rename(af->tmp, af->path))
		err = -errno;
	if (err) {
		sp_err("write %s: %s", af->path, strerror(-err));
		unlink(af->tmp);
	}
	return err;
}

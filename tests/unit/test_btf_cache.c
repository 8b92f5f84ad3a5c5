/* test_btf_cache.c - which cached BTF files are trusted, and their names. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sampler/btf_cache.h"
#include "tap.h"

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

int main(void)
{
	char dir[] = "/tmp/sparkprof-test-btf-XXXXXX", path[512], again[512], other[512], cmd[600];

	CHECK(mkdtemp(dir) != NULL, "a folder (0700)");
	CHECK(btf_cache_path(dir, path, sizeof(path)) == 0, "a name: %s", path);
	CHECK(btf_cache_path(dir, again, sizeof(again)) == 0 && !strcmp(path, again),
	      "the same name every time");
	CHECK(!strncmp(path, dir, strlen(dir)) && strstr(path, ".btf"), "in the folder, .btf");
	CHECK(btf_cache_path("/other", other, sizeof(other)) == 0 &&
	      !strcmp(strrchr(other, '/'), strrchr(path, '/')), "the folder does not change the name");
	CHECK(btf_cache_path(dir, other, 16) == -ENAMETOOLONG, "too long: -ENAMETOOLONG");
	CHECK(!btf_cache_usable(path), "no file: not usable");
	put(path, "");
	CHECK(!btf_cache_usable(path), "an empty file: not usable");
	put(path, "some bytes");
	CHECK(btf_cache_usable(path), "root's file in root's 0700 folder: usable");
	chmod(path, 0666);
	CHECK(!btf_cache_usable(path), "a file others can write: not usable");
	chmod(path, 0644);
	chmod(dir, 0777);
	CHECK(!btf_cache_usable(path), "a folder others can write: not usable");
	chmod(dir, 0700);
	CHECK(chown(path, 65534, 65534) == 0 && !btf_cache_usable(path),
	      "another owner's file: not usable");
	unlink(path);
	CHECK(symlink("/etc/hostname", path) == 0 && !btf_cache_usable(path), "a symlink: not usable");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0, "clean up");
	TAP_DONE();
}

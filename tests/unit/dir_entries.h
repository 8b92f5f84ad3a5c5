/* dir_entries.h - how many entries a folder holds (not . and ..): what a
 * test checks to see that a temporary file left no name behind. */
#ifndef SPARKPROF_TEST_DIR_ENTRIES_H
#define SPARKPROF_TEST_DIR_ENTRIES_H

#include <dirent.h>
#include <string.h>

static int dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

#endif

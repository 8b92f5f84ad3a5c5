/* shell_tools.h - running commands from C unit tests, and reading symbol
 * values with nm (a reader independent of the code under test). */
#ifndef SPARKPROF_TEST_SHELL_TOOLS_H
#define SPARKPROF_TEST_SHELL_TOOLS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* system(cmd), saying which command failed. */
static int run(const char *cmd)
{
	int rc = system(cmd);
	if (rc != 0)
		printf("# command failed (%d): %s\n", rc, cmd);
	return rc;
}

/* The value of symbol name in file per `nm` (`nm -D`, the dynamic symbols,
 * when dynamic); 0 when not found. */
static uint64_t nm_symbol_value(const char *file, const char *name, bool dynamic)
{
	char cmd[512], line[512], sym[256], type;
	unsigned long long value;
	uint64_t found = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm %s %s", dynamic ? "-D" : "", file);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %c %255s", &value, &type, sym) == 3 && strcmp(sym, name) == 0)
			found = value;
	if (p)
		pclose(p);
	return found;
}

#endif

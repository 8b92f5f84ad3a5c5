/* main.c - sparkprof's entry point: picks the subcommand. */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/version.h"
#include "commands.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "record", cmd_record, "profile the node (or some processes) into a folder" },
	{ "list", cmd_list, "list the JVMs and Spark executors on this node" },
	{ "attach", cmd_attach, "load the sparkprof helper into a running JVM" },
	{ "flame", cmd_flame, "an HTML flame graph of a folded file" },
	{ "diff", cmd_diff, "a differential flame graph of two profiles or folders" },
	{ "report", cmd_report, "write a recording's flame graphs and index.html again" },
	{ "convert", cmd_convert, "convert a folded file to pprof (profile.proto)" },
	{ "install-helper", cmd_install_helper, "copy the JVM helper to a folder executors load it from" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: sparkprof [--version] <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-15s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'sparkprof <command> --help' describes a command's options.\n");
}

int main(int argc, char **argv)
{
	/* Blocks of 256 KiB or more (the stores' arrays, the writers' buffers)
	 * each get a mapping of their own: freed, they go back to the system
	 * at once; grown, they move by mremap instead of a copy; room not yet
	 * used is never touched.  glibc's default threshold rises after the
	 * first such block is freed, and later ones land in the heap, which
	 * they fragment. */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("sparkprof %s\n", SPARKPROF_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	sp_err("unknown command '%s' (try 'sparkprof --help')", argv[1]);
	return 2;
}

/* cmd_list.c - 'sparkprof list'. Placeholder until the command lands. */
#include "commands.h"
#include "log.h"

int cmd_list(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	sp_err("'list' is not available in this build yet");
	return 1;
}

/* cmd_attach.c - 'sparkprof attach'. Placeholder until the command lands. */
#include "commands.h"
#include "log.h"

int cmd_attach(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	sp_err("'attach' is not available in this build yet");
	return 1;
}

/* cmd_record.c - 'sparkprof record'. Placeholder until the command lands. */
#include "commands.h"
#include "log.h"

int cmd_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	sp_err("'record' is not available in this build yet");
	return 1;
}

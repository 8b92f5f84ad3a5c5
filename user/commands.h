/* commands.h - the sparkprof subcommands; main.c dispatches to them.
 *
 * Each takes the arguments after the subcommand name (argv[0] is the
 * subcommand) and returns the process exit status.
 */
#ifndef SPARKPROF_COMMANDS_H
#define SPARKPROF_COMMANDS_H

int cmd_record(int argc, char **argv);  /* cmd_record.c */
int cmd_list(int argc, char **argv);    /* cmd_list.c */
int cmd_attach(int argc, char **argv);  /* cmd_attach.c */
int cmd_install_helper(int argc, char **argv); /* cmd_install_helper.c */

#endif

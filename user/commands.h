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
int cmd_flame(int argc, char **argv);   /* cmd_flame.c */
int cmd_diff(int argc, char **argv);    /* cmd_diff.c */
int cmd_report(int argc, char **argv);  /* cmd_report.c */
int cmd_app_report(int argc, char **argv); /* cmd_app_report.c: report DIR... -o OUT */
int cmd_convert(int argc, char **argv); /* cmd_convert.c */
int cmd_install_helper(int argc, char **argv); /* cmd_install_helper.c */

#endif

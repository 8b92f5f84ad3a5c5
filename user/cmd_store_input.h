/* cmd_store_input.h - what the commands that read a recording's sample
 * store (`flame DIR`, `convert DIR`, `report DIR`) share: finding the
 * store, and the options that pick samples by their labels. */
#ifndef SPARKPROF_CMD_STORE_INPUT_H
#define SPARKPROF_CMD_STORE_INPUT_H

#include <stdbool.h>

#include "output/store_file.h"
#include "output/store_query.h"

/* Whether in is a recording folder with a store, or a store file. */
bool cmd_is_store_input(const char *in);
/* Opens the store of in (a folder, or samples.store itself). NULL after a
 * message. */
struct store_reader *cmd_open_store(const char *in);

/* Options --app, --executor, --stage S[.A] (or "none") and --task TID:
 * takes opt's argument into f. 1 when opt was one of them, 0 when not, -1
 * after a message naming cmd. */
#define CMD_FILTER_OPTIONS \
	{ "app", required_argument, NULL, 'A' }, { "executor", required_argument, NULL, 'E' }, \
	{ "stage", required_argument, NULL, 'S' }, { "task", required_argument, NULL, 'T' }
int cmd_filter_option(const char *cmd, int opt, const char *arg, struct label_filter *f);
/* A title part naming what f picks ("task 17, stage 3 of executor 1"). */
void cmd_filter_describe(const struct label_filter *f, char *buf, size_t size);

#endif

/* cmd_folded_input.h - what the commands that read one folded file
 * (`flame`, `convert`) make of it: its kind and the worth of one count. */
#ifndef SPARKPROF_CMD_FOLDED_INPUT_H
#define SPARKPROF_CMD_FOLDED_INPUT_H

#include <stdint.h>

#include "output/flame_page.h"

/* *out from text, a positive whole number; else -1 after a message naming
 * cmd and the option what. */
int cmd_parse_positive(const char *cmd, const char *what, const char *text, uint64_t *out);

/* The kind of profile in (from its name, or kind: "cpu", "wall", "offcpu")
 * and what one count is worth in ns (unit_ns when not 0; for a wall
 * profile else the wall interval of a summary.json above in). 0, or -1
 * after a message naming cmd. */
int cmd_folded_input_kind(const char *cmd, const char *in, const char *kind, uint64_t unit_ns,
			  enum flame_page_mode *mode, uint64_t *unit);

#endif

/* cmd_folded_input.c - see cmd_folded_input.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "cmd_folded_input.h"
#include "record/run_index.h"

int cmd_parse_positive(const char *cmd, const char *what, const char *text, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(text, &end, 10);
	if (errno || *end || end == text || !*out || *text == '-') {
		sp_err("%s: %s '%s' is not a positive whole number", cmd, what, text);
		return -1;
	}
	return 0;
}

int cmd_folded_input_kind(const char *cmd, const char *in, const char *kind, uint64_t unit_ns,
			  enum flame_page_mode *mode, uint64_t *unit)
{
	flame_page_mode_for(in, 0, mode, unit);
	if (kind) {
		if (!strcmp(kind, "cpu")) {
			*mode = FLAME_PAGE_CPU;
			*unit = 0;
		} else if (!strcmp(kind, "wall")) {
			*mode = FLAME_PAGE_WALL;
			*unit = 0;
		} else if (!strcmp(kind, "offcpu")) {
			*mode = FLAME_PAGE_OFFCPU;
			*unit = 1000000;
		} else {
			sp_err("%s: --kind '%s' is not cpu, wall or offcpu", cmd, kind);
			return -1;
		}
	}
	if (unit_ns)
		*unit = unit_ns;
	if (*mode == FLAME_PAGE_WALL && !*unit) {
		*unit = run_index_wall_unit_near(in);
		if (!*unit) {
			sp_err("%s: %s is a wall profile whose unit is unknown (no summary.json "
			       "near it): give --unit-ns", cmd, in);
			return -1;
		}
	}
	return 0;
}

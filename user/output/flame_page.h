/* flame_page.h - a self-contained HTML flame graph (user/output/web/flame.*)
 * of a flame_tree: one file that opens from file:// with no network.
 *
 * The tree goes into the page pruned: a node narrower than min_width_pct
 * percent of the root is left out (with everything under it), so a profile
 * with millions of samples and distinct stacks still makes a small page.
 * docs/flame.md describes the page and its data.
 */
#ifndef SPARKPROF_FLAME_PAGE_H
#define SPARKPROF_FLAME_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output/flame_tree.h"

enum flame_page_mode {
	FLAME_PAGE_CPU,     /* values are samples */
	FLAME_PAGE_WALL,    /* values are time (unit_ns each) */
	FLAME_PAGE_OFFCPU,  /* values are time (unit_ns each) */
	FLAME_PAGE_DIFF,    /* column 0 = base, column 1 = new */
};

#define FLAME_MIN_WIDTH_DEFAULT 0.01 /* percent */

struct flame_page_options {
	const char *title;     /* shown as the page's title and heading */
	enum flame_page_mode mode;
	uint64_t unit_ns;      /* what one count is worth; 0 = a sample */
	double min_width_pct;  /* prune nodes narrower than this (percent) */
	bool normalize;        /* diff: compare shares, not raw counts */
	bool thread_states;    /* wall: each stack ends in a state frame ("[sleeping]") */
};

/* Writes the page to path (atomically). 0 or -errno after a message. */
int flame_page_write(const struct flame_tree *t, const struct flame_page_options *o,
		     const char *path);

/* The mode and unit a folded file name suggests (".wall.folded": wall in
 * units of wall_interval_ns; ".offcpu.folded": off-CPU milliseconds; else
 * CPU samples). */
void flame_page_mode_for(const char *path, uint64_t wall_interval_ns, enum flame_page_mode *mode,
			 uint64_t *unit_ns);

/* "CPU", "Wall clock", "Off-CPU" or "Diff". */
const char *flame_page_mode_label(enum flame_page_mode mode);
/* A page title: "CPU: name". */
void flame_page_title(const char *name, enum flame_page_mode mode, char *buf, size_t len);

/* Writes path's page (PATH.folded -> PATH.html) from a folded file, titled
 * after its name relative to the output folder. 0 or -errno after a
 * message. */
int flame_page_from_folded(const char *folded_path, const char *rel_name,
			   uint64_t wall_interval_ns);

#endif

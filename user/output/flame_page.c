/* flame_page.c - see flame_page.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic_file.h"
#include "base/json_writer.h"
#include "base/log.h"
#include "output/flame_page.h"
#include "output/page_assets.h"

static const char *const mode_names[] = {
	[FLAME_PAGE_CPU] = "cpu", [FLAME_PAGE_WALL] = "wall",
	[FLAME_PAGE_OFFCPU] = "offcpu", [FLAME_PAGE_DIFF] = "diff",
};

struct page_ctx {
	const struct flame_tree *tree;
	const struct flame_page_options *opts;
};

struct sort_ctx {
	const struct flame_tree *tree;
	const struct flame_node *nodes;
};

/* qsort has no context argument: children are sorted by (name, type)
 * through a thread-local pointer set just before. */
static __thread const struct sort_ctx *sorting;

static int by_name(const void *a, const void *b)
{
	const struct flame_node *x = &sorting->nodes[*(const uint32_t *)a];
	const struct flame_node *y = &sorting->nodes[*(const uint32_t *)b];
	int c = strcmp(flame_tree_name(sorting->tree, x->name), flame_tree_name(sorting->tree, y->name));

	return c ? c : (int)x->type - (int)y->type;
}

struct visit {
	uint32_t node;
	uint32_t depth;
};

static int write_nodes(FILE *out, const struct flame_tree *t, const struct flame_page_options *o)
{
	size_t nnodes, nnames = flame_tree_name_count(t), nstack = 0, cap = 1024, used = 0;
	const struct flame_node *nodes = flame_tree_nodes(t, &nnodes);
	bool diff = o->mode == FLAME_PAGE_DIFF;
	uint64_t th0 = flame_tree_min_width(nodes[0].total[0], o->min_width_pct);
	uint64_t th1 = flame_tree_min_width(nodes[0].total[1], o->min_width_pct);
	uint32_t *name_map = malloc((nnames + 1) * sizeof(*name_map));
	uint32_t *kids = malloc(nnodes * sizeof(*kids));
	struct visit *stack = malloc(cap * sizeof(*stack));
	struct sort_ctx sc = { t, nodes };
	uint64_t emitted = 0;
	bool first = true;
	int err = 0;

	if (!name_map || !kids || !stack) {
		err = -ENOMEM;
		goto out;
	}
	memset(name_map, 0xff, (nnames + 1) * sizeof(*name_map));
	fputs("\"nodes\":[", out);
	stack[nstack++] = (struct visit){ 0, 0 };
	while (nstack) {
		struct visit v = stack[--nstack];
		const struct flame_node *nd = &nodes[v.node];
		size_t nkids = 0;
		uint32_t name = UINT32_MAX;

		if (v.node) {
			if (name_map[nd->name] == UINT32_MAX)
				name_map[nd->name] = (uint32_t)used++;
			name = name_map[nd->name];
		}
		fprintf(out, "%s%u,%d,%u,%llu,%llu", first ? "" : ",", v.depth,
			name == UINT32_MAX ? -1 : (int)name, nd->type,
			(unsigned long long)nd->total[0], (unsigned long long)nd->self[0]);
		if (diff)
			fprintf(out, ",%llu,%llu", (unsigned long long)nd->total[1],
				(unsigned long long)nd->self[1]);
		first = false;
		emitted++;
		for (uint32_t c = nd->first_child; c; c = nodes[c].next_sibling)
			if (nodes[c].total[0] >= th0 || (diff && nodes[c].total[1] >= th1))
				kids[nkids++] = c;
		sorting = &sc;
		qsort(kids, nkids, sizeof(*kids), by_name);
		if (nstack + nkids > cap) {
			struct visit *grown;

			while (nstack + nkids > cap)
				cap *= 2;
			grown = realloc(stack, cap * sizeof(*stack));
			if (!grown) {
				err = -ENOMEM;
				goto out;
			}
			stack = grown;
		}
		/* Pushed last-first, so they are emitted in name order. */
		for (size_t i = nkids; i-- > 0;)
			stack[nstack++] = (struct visit){ kids[i], v.depth + 1 };
	}
	fputs("],\n\"names\":[", out);
	/* Names in the order they were numbered. */
	for (size_t i = 0; i < nnames; i++)
		if (name_map[i] != UINT32_MAX)
			kids[name_map[i]] = (uint32_t)i;
	for (size_t i = 0; i < used; i++) {
		if (i)
			fputc(',', out);
		json_write_escaped_script(out, flame_tree_name(t, kids[i]));
	}
	fprintf(out, "],\n\"shown_nodes\":%llu,\"all_nodes\":%llu", (unsigned long long)emitted,
		(unsigned long long)(nnodes + flame_tree_left_out(t)));
out:
	free(name_map);
	free(kids);
	free(stack);
	return err;
}

static int write_marker(FILE *out, const char *marker, void *arg)
{
	struct page_ctx *pc = arg;
	const struct flame_page_options *o = pc->opts;
	size_t n;
	const struct flame_node *root = flame_tree_nodes(pc->tree, &n);

	if (!strcmp(marker, "TITLE")) {
		page_write_html_text(out, o->title ? o->title : "flame graph");
		return 0;
	}
	if (strcmp(marker, "DATA"))
		return 1;
	fputs("{\"title\":", out);
	json_write_escaped_script(out, o->title ? o->title : "flame graph");
	fprintf(out, ",\"mode\":\"%s\",\"unit_ns\":%llu,\"normalize\":%s,\"min_width_pct\":%g,"
		"\"states\":%s,", mode_names[o->mode], (unsigned long long)o->unit_ns,
		o->normalize ? "true" : "false", o->min_width_pct,
		o->thread_states ? "true" : "false");
	fprintf(out, "\"total\":[%llu,%llu],\n", (unsigned long long)root[0].total[0],
		(unsigned long long)root[0].total[1]);
	if (write_nodes(out, pc->tree, o))
		return -ENOMEM;
	fputc('}', out);
	return ferror(out) ? -EIO : 0;
}

int flame_page_write(const struct flame_tree *t, const struct flame_page_options *o,
		     const char *path)
{
	struct page_ctx pc = { t, o };
	struct atomic_file af;
	FILE *f = atomic_file_open(&af, path);
	int err;

	if (!f)
		return -errno;
	err = page_write_template(f, ASSET_FLAME_HTML, write_marker, &pc);
	if (err == -ENOMEM)
		sp_err("write %s: out of memory", path);
	return atomic_file_commit(&af, err);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

void flame_page_mode_for(const char *path, uint64_t wall_interval_ns, enum flame_page_mode *mode,
			 uint64_t *unit_ns)
{
	if (ends_with(path, ".wall.folded")) {
		*mode = FLAME_PAGE_WALL;
		*unit_ns = wall_interval_ns;
	} else if (ends_with(path, ".offcpu.folded")) {
		*mode = FLAME_PAGE_OFFCPU;
		*unit_ns = 1000000;
	} else {
		*mode = FLAME_PAGE_CPU;
		*unit_ns = 0;
	}
}

const char *flame_page_mode_label(enum flame_page_mode mode)
{
	switch (mode) {
	case FLAME_PAGE_WALL: return "Wall clock";
	case FLAME_PAGE_OFFCPU: return "Off-CPU";
	case FLAME_PAGE_DIFF: return "Diff";
	case FLAME_PAGE_CPU: break;
	}
	return "CPU";
}

void flame_page_title(const char *name, enum flame_page_mode mode, char *buf, size_t len)
{
	snprintf(buf, len, "%s: %s", flame_page_mode_label(mode), name);
}

static bool strip_suffix(char *s, const char *suffix)
{
	if (!ends_with(s, suffix))
		return false;
	s[strlen(s) - strlen(suffix)] = '\0';
	return true;
}

int flame_page_from_folded(const char *folded_path, const char *rel_name,
			   uint64_t wall_interval_ns)
{
	struct flame_page_options o = { .min_width_pct = FLAME_MIN_WIDTH_DEFAULT };
	char title[512], html[PATH_MAX], name[PATH_MAX];
	size_t n = strlen(folded_path);
	struct flame_tree *t;
	int err;

	if (n < 7 || strcmp(folded_path + n - 7, ".folded") || n + 1 > sizeof(html)) {
		sp_err("%s: not a .folded file name", folded_path);
		return -EINVAL;
	}
	snprintf(html, sizeof(html), "%.*s.html", (int)(n - 7), folded_path);
	flame_page_mode_for(folded_path, wall_interval_ns, &o.mode, &o.unit_ns);
	/* the output's name: the relative name without .folded, .wall.folded... */
	snprintf(name, sizeof(name), "%s", rel_name);
	strip_suffix(name, ".folded");
	if (!strip_suffix(name, ".wall"))
		strip_suffix(name, ".offcpu");
	flame_page_title(name, o.mode, title, sizeof(title));
	o.title = title;
	t = flame_tree_new();
	if (!t) {
		sp_err("%s: out of memory", folded_path);
		return -ENOMEM;
	}
	err = flame_tree_read_file(t, folded_path, 0);
	if (!err)
		err = flame_page_write(t, &o, html);
	flame_tree_free(t);
	return err;
}

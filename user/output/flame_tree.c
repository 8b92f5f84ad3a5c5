/* flame_tree.c - see flame_tree.h. */
#include <ctype.h>
#include <math.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow_array.h"
#include "base/log.h"
#include "base/string_pool.h"
#include "base/strmap.h"
#include "output/flame_tree.h"
#include "proc/file_slurp.h"

struct flame_tree {
	struct flame_node *nodes;
	size_t nnodes, cap;
	uint32_t *slots;         /* open addressing: child node index, 0 = empty */
	size_t nslots;
	struct strmap *name_ids; /* name -> id + 1 */
	struct string_pool *pool;
	const char **names;
	size_t nnames, names_cap;
	uint64_t left_out;       /* nodes never added (flame_tree_add_left_out) */
};

static bool is_java_ident(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$' || (unsigned char)c >= 0x80;
}

/* "pkg/Cls.m", "pkg.Cls.m", "Cls$1.lambda$0": identifiers joined by '/' or
 * '.', with a '.' before the method; no spaces, no brackets. */
static bool looks_java(const char *s, size_t len)
{
	size_t dots = 0, slashes = 0;
	bool after_slash_dot = false;

	if (!len || !(isalpha((unsigned char)s[0]) || s[0] == '_' || s[0] == '$'))
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (c == '.' || c == '/') {
			if (i + 1 == len || s[i + 1] == '.' || s[i + 1] == '/')
				return false;
			if (c == '/') {
				slashes++;
				after_slash_dot = false;
			} else {
				dots++;
				after_slash_dot = true;
			}
		} else if (!is_java_ident(c) && c != '<' && c != '>') {
			return false;
		}
	}
	return slashes ? after_slash_dot : dots >= 2;
}

int flame_frame_type(const char *s, size_t len, size_t *name_len)
{
	static const struct { char tag; int type; } suffixes[] = {
		{ 'k', FRAME_KERNEL }, { 'j', FRAME_JIT }, { '1', FRAME_JIT },
		{ 'i', FRAME_INLINED }, { '0', FRAME_INTERPRETED }, { 'p', FRAME_PYTHON },
	};

	*name_len = len;
	if (len > 4 && s[len - 4] == '_' && s[len - 3] == '[' && s[len - 1] == ']') {
		for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
			if (s[len - 2] == suffixes[i].tag) {
				*name_len = len - 4;
				return suffixes[i].type;
			}
		}
	}
	if (memmem(s, len, "::", 2))
		return FRAME_CPP;
	if (looks_java(s, len))
		return FLAME_JAVA;
	return FRAME_NATIVE;
}

struct flame_tree *flame_tree_new(void)
{
	struct flame_tree *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cap = 1024;
	t->nslots = 2048;
	t->nodes = calloc(t->cap, sizeof(*t->nodes));
	t->slots = calloc(t->nslots, sizeof(*t->slots));
	t->name_ids = strmap_new();
	t->pool = string_pool_new();
	if (!t->nodes || !t->slots || !t->name_ids || !t->pool) {
		flame_tree_free(t);
		errno = ENOMEM;
		return NULL;
	}
	t->nnodes = 1; /* the root, name 0 */
	t->nodes[0].type = FRAME_NATIVE;
	return t;
}

void flame_tree_free(struct flame_tree *t)
{
	if (!t)
		return;
	free(t->nodes);
	free(t->slots);
	strmap_free(t->name_ids, NULL);
	string_pool_free(t->pool);
	free(t->names);
	free(t);
}

static int name_id(struct flame_tree *t, const char *s, size_t len, uint32_t *id)
{
	int inserted;
	void **slot;

	/* Room first, so that a name in the map always has its id. */
	if (grow_array((void **)&t->names, &t->names_cap, t->nnames + 1, sizeof(*t->names)))
		return -ENOMEM;
	slot = strmap_slot(t->name_ids, s, len, &inserted);
	if (!slot)
		return -ENOMEM;
	if (*slot) {
		*id = (uint32_t)((uintptr_t)*slot - 1);
		return 0;
	}
	/* New (or left without an id by a failed copy: tried again). */
	t->names[t->nnames] = string_pool_intern(t->pool, s, len);
	if (!t->names[t->nnames])
		return -ENOMEM;
	*id = (uint32_t)t->nnames++;
	*slot = (void *)(uintptr_t)(*id + 1);
	return 0;
}

static size_t slot_of(uint32_t parent, uint32_t name, uint8_t type, size_t nslots)
{
	uint64_t h = ((uint64_t)parent << 32 | name) * 0x9E3779B97F4A7C15ULL ^ type;

	h ^= h >> 29;
	return (size_t)(h & (nslots - 1));
}

static int grow_slots(struct flame_tree *t)
{
	size_t n = t->nslots * 2;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 1; i < t->nnodes; i++) {
		const struct flame_node *nd = &t->nodes[i];
		size_t s = slot_of(nd->parent, nd->name, nd->type, n);

		while (slots[s])
			s = (s + 1) & (n - 1);
		slots[s] = (uint32_t)i;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	return 0;
}

static int child(struct flame_tree *t, uint32_t parent, uint32_t name, uint8_t type,
		 uint32_t *out)
{
	size_t s = slot_of(parent, name, type, t->nslots);
	struct flame_node *nd;

	for (; t->slots[s]; s = (s + 1) & (t->nslots - 1)) {
		nd = &t->nodes[t->slots[s]];
		if (nd->parent == parent && nd->name == name && nd->type == type) {
			*out = t->slots[s];
			return 0;
		}
	}
	if (t->nnodes >= FLAME_NODES_MAX)
		return -E2BIG;
	if (t->nnodes == t->cap) {
		struct flame_node *nodes = realloc(t->nodes, t->cap * 2 * sizeof(*nodes));

		if (!nodes)
			return -ENOMEM;
		t->nodes = nodes;
		t->cap *= 2;
	}
	nd = &t->nodes[t->nnodes];
	memset(nd, 0, sizeof(*nd));
	nd->name = name;
	nd->parent = parent;
	nd->type = type;
	nd->next_sibling = t->nodes[parent].first_child;
	t->nodes[parent].first_child = (uint32_t)t->nnodes;
	t->slots[s] = (uint32_t)t->nnodes;
	*out = (uint32_t)t->nnodes++;
	if (t->nnodes * 2 > t->nslots)
		return grow_slots(t);
	return 0;
}

static int add_count(uint64_t *v, uint64_t count)
{
	if (*v + count < *v)
		return -EOVERFLOW;
	*v += count;
	return 0;
}

int flame_tree_child(struct flame_tree *t, uint32_t parent, const char *text, size_t len,
		     int type, uint32_t *node)
{
	size_t name_len;
	int guessed;
	uint32_t id;
	int err;

	if (!len) {
		text = "[unknown]";
		len = strlen(text);
	}
	guessed = flame_frame_type(text, len, &name_len);
	err = name_id(t, text, name_len, &id);
	if (!err)
		err = child(t, parent, id, (uint8_t)(type >= 0 && type < FLAME_TYPES ? type : guessed),
			    node);
	return err;
}

int flame_tree_add_self(struct flame_tree *t, uint32_t node, uint64_t count, int column)
{
	int err;

	column = column ? 1 : 0;
	if ((err = add_count(&t->nodes[node].self[column], count)))
		return err;
	for (;; node = t->nodes[node].parent) {
		if ((err = add_count(&t->nodes[node].total[column], count)) || !node)
			return err;
	}
}

int flame_tree_add_counts(struct flame_tree *t, uint32_t node, uint64_t self, uint64_t total,
			  int column)
{
	struct flame_node *nd = &t->nodes[node];
	int err;

	column = column ? 1 : 0;
	if ((err = add_count(&nd->self[column], self)))
		return err;
	return add_count(&nd->total[column], total);
}

uint64_t flame_tree_min_width(uint64_t total, double pct)
{
	double t = ceil((double)total * pct / 100.0);

	return t < 1 ? 1 : (uint64_t)t;
}

void flame_tree_add_left_out(struct flame_tree *t, uint64_t nodes)
{
	t->left_out += nodes;
}

uint64_t flame_tree_left_out(const struct flame_tree *t)
{
	return t->left_out;
}

int flame_tree_add_stack(struct flame_tree *t, const char *stack, size_t len, uint64_t count,
			 int column)
{
	uint32_t node = 0;
	size_t depth = 0, start = 0;
	int err;

	while (start <= len && len) {
		const char *end = memchr(stack + start, ';', len - start);
		size_t flen = end ? (size_t)(end - (stack + start)) : len - start;

		if (depth++ == FLAME_DEPTH_MAX)
			return -E2BIG;
		if ((err = flame_tree_child(t, node, stack + start, flen, -1, &node)))
			return err;
		start += flen + (end ? 1 : 0);
		if (!end)
			break; /* after "a;" comes one more, empty, frame */
	}
	return flame_tree_add_self(t, node, count, column);
}

static int parse_line(struct flame_tree *t, const char *line, size_t len, int column,
		      const char **why)
{
	const char *sp;
	uint64_t count = 0;
	size_t i;
	int err;

	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (!len)
		return 0;
	if (len > FLAME_LINE_MAX) {
		*why = "line longer than 1 MiB";
		return -EINVAL;
	}
	sp = memrchr(line, ' ', len);
	if (!sp || sp == line) {
		*why = "no 'stack count' (a space and a count at the end)";
		return -EINVAL;
	}
	i = (size_t)(sp - line) + 1;
	if (i == len) {
		*why = "no count after the last space";
		return -EINVAL;
	}
	for (; i < len; i++) {
		if (line[i] < '0' || line[i] > '9') {
			*why = "the count is not a whole number";
			return -EINVAL;
		}
		uint64_t digit = (uint64_t)(line[i] - '0');

		if (count > (UINT64_MAX - digit) / 10) {
			*why = "the count is too large";
			return -EINVAL;
		}
		count = count * 10 + digit;
	}
	err = flame_tree_add_stack(t, line, (size_t)(sp - line), count, column);
	if (err == -E2BIG)
		*why = "stack deeper than 8192 frames, or more than 64M tree nodes";
	else if (err == -EOVERFLOW)
		*why = "counts add up beyond 2^64";
	else if (err)
		*why = "out of memory";
	return err == -EOVERFLOW ? -EINVAL : err;
}

int flame_tree_parse(struct flame_tree *t, const char *buf, size_t len, int column, char *errbuf,
		     size_t err_len)
{
	size_t pos = 0, lineno = 0;

	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t llen = nl ? (size_t)(nl - (buf + pos)) : len - pos;
		const char *why = NULL;
		int err;

		lineno++;
		err = parse_line(t, buf + pos, llen, column, &why);
		if (err) {
			if (errbuf && err_len)
				snprintf(errbuf, err_len, "line %zu: %s", lineno,
					 why ? why : strerror(-err));
			return err;
		}
		pos += llen + 1;
	}
	return 0;
}

int flame_tree_read_file(struct flame_tree *t, const char *path, int column)
{
	char why[128];
	size_t len;
	char *buf = file_slurp(path, (size_t)4 << 30, &len);
	int err;

	if (!buf) {
		err = -errno;
		sp_err("read %s: %s", path, strerror(errno));
		return err;
	}
	if (memchr(buf, '\0', len)) {
		sp_err("read %s: not a folded text file (it holds NUL bytes)", path);
		free(buf);
		return -EINVAL;
	}
	err = flame_tree_parse(t, buf, len, column, why, sizeof(why));
	if (err)
		sp_err("read %s: %s", path, why);
	free(buf);
	return err;
}

const struct flame_node *flame_tree_nodes(const struct flame_tree *t, size_t *count)
{
	*count = t->nnodes;
	return t->nodes;
}

const char *flame_tree_name(const struct flame_tree *t, uint32_t name)
{
	return name < t->nnames ? t->names[name] : "";
}

size_t flame_tree_name_count(const struct flame_tree *t)
{
	return t->nnames;
}

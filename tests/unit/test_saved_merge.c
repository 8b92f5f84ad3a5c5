/* test_saved_merge.c - saved trees merged as streams (folded_saved_merge):
 * the merge of two large trees in the spill file is the tree of both, to
 * the byte of its canonical form and to the line of its folded file, and
 * the merge holds little memory while it runs: malloc and friends are
 * replaced here by wrappers around glibc's own that keep the live heap
 * bytes and their peak.  Trees that break the format's order are refused. */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/flame_page.h"
#include "output/flame_tree.h"
#include "output/folded.h"
#include "tap.h"

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void __libc_free(void *p);

static size_t live_bytes, peak_bytes;

static void *note(void *p)
{
	if (p && (live_bytes += malloc_usable_size(p)) > peak_bytes)
		peak_bytes = live_bytes;
	return p;
}

void *malloc(size_t n)
{
	return note(__libc_malloc(n));
}

void *calloc(size_t n, size_t size)
{
	return note(__libc_calloc(n, size));
}

void *realloc(void *p, size_t n)
{
	size_t old = p ? malloc_usable_size(p) : 0;
	void *q = __libc_realloc(p, n);

	if (!q)
		return NULL;
	live_bytes -= old;
	return note(q);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	*out = note(__libc_memalign(align, n));
	return *out ? 0 : ENOMEM;
}

void free(void *p)
{
	if (p)
		live_bytes -= malloc_usable_size(p);
	__libc_free(p);
}

static uint64_t next_rand(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

/* A profile's worth of stacks: callers drawn from a few names so that
 * stacks share them, leaves from many, types varied; seed picks them. */
static void add_stacks(struct folded_profile *p, struct folded_profile *both, uint64_t seed,
		       int nstacks, char names[][16], const char *long_name)
{
	struct frame frames[48];

	for (int i = 0; i < nstacks; i++) {
		int depth = 4 + (int)(next_rand(&seed) % 40);
		uint64_t count = 1 + next_rand(&seed) % 1000;

		for (int d = 0; d < depth; d++) {
			int caller = depth - 1 - d;    /* frames are leaf first */
			uint64_t r = next_rand(&seed);
			int name = caller < 6 ? (int)(r % 3) + caller * 3 : (int)(r % 400);

			frames[d] = (struct frame){ names[name], (enum frame_type)(r >> 20) % FRAME_TYPE_MAX };
		}
		if (i % 5000 == 7)
			frames[0].name = long_name;
		folded_profile_add(p, i % 3 ? "java-1" : "java-2", i % 2 ? "worker" : NULL, frames,
				   (size_t)depth, count);
		folded_profile_add(both, i % 3 ? "java-1" : "java-2", i % 2 ? "worker" : NULL, frames,
				   (size_t)depth, count);
	}
}

static int by_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The file's lines, sorted, joined again: files that hold the same lines
 * in any order read the same. */
static char *sorted_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL, *out, **lines = NULL, *at;
	size_t len = 0, n = 0;

	if (!f)
		return NULL;
	if (getdelim(&text, &len, '\0', f) < 0) {
		fclose(f);
		free(text);
		return strdup("");
	}
	fclose(f);
	for (at = text; *at; at++)
		n += *at == '\n';
	lines = malloc((n + 1) * sizeof(*lines));
	out = malloc(strlen(text) + 1);
	n = 0;
	for (at = strtok(text, "\n"); at; at = strtok(NULL, "\n"))
		lines[n++] = at;
	qsort(lines, n, sizeof(*lines), by_line);
	*out = '\0';
	for (size_t i = 0, o = 0; i < n; i++) {
		size_t l = strlen(lines[i]);

		memcpy(out + o, lines[i], l);
		out[o + l] = '\n';
		o += l + 1;
		out[o] = '\0';
	}
	free(lines);
	free(text);
	return out;
}

static int write_page(const struct flame_tree *flame, const char *path)
{
	struct flame_page_options po = { .title = "merged", .mode = FLAME_PAGE_CPU,
					 .min_width_pct = FLAME_MIN_WIDTH_DEFAULT };

	return flame_page_write(flame, &po, path);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f)
		return NULL;
	n = getdelim(&text, &cap, '\0', f);
	fclose(f);
	*len = n > 0 ? (size_t)n : 0;
	return text;
}

/* The folded file and the page a stop writes from a saved tree as it
 * streams are those written from the tree built in memory, and writing
 * them holds the tree's texts, not its nodes. */
static void check_streamed(struct spill_file *spill, const struct spill_ref *merged,
			   const char *dir, const char *both_folded)
{
	char pf[PATH_MAX], pa[PATH_MAX], pb[PATH_MAX], *got, *want, *page_a = NULL, *page_b = NULL;
	struct folded_tree *t = folded_tree_new();
	struct flame_tree *full = NULL, *streamed = NULL;
	size_t before, full_peak, nfull = 0, nstreamed = 0, la = 0, lb = 0;
	int err = -1;
	const uint64_t unit = 3;    /* counts are rounded to the nearest 3 */

	snprintf(pf, sizeof(pf), "%s/streamed.folded", dir);
	before = live_bytes;
	peak_bytes = live_bytes;
	CHECK(folded_saved_write(spill, merged, pf, 1) == 0, "the merge written as it streams");
	CHECK(peak_bytes - before < (4u << 20) && live_bytes == before,
	      "holding at most %zu KiB of heap at once, and giving it all back",
	      (peak_bytes - before) >> 10);
	got = sorted_lines(pf);
	want = sorted_lines(both_folded);
	CHECK(got && want && !strcmp(got, want), "the same lines as the tree built in memory");
	free(got);
	free(want);

	before = live_bytes;
	peak_bytes = live_bytes;
	CHECK(t && folded_tree_add_spilled(t, spill, merged) == 0 &&
	      (full = folded_tree_flame(t, unit, &err)),
	      "a page's tree built from the tree in memory");
	full_peak = peak_bytes - before;
	folded_tree_free(t);
	before = live_bytes;
	peak_bytes = live_bytes;
	CHECK((streamed = folded_saved_flame(spill, merged, unit, FLAME_MIN_WIDTH_DEFAULT, &err)),
	      "and as the saved tree streams");
	if (!full || !streamed)
		return;
	flame_tree_nodes(full, &nfull);
	flame_tree_nodes(streamed, &nstreamed);
	CHECK(nstreamed * 20 < nfull && peak_bytes - before < full_peak / 8,
	      "only the nodes a page shows: %zu of %zu, %zu KiB of heap at most, not %zu KiB",
	      nstreamed, nfull, (peak_bytes - before) >> 10, full_peak >> 10);
	snprintf(pa, sizeof(pa), "%s/full.html", dir);
	snprintf(pb, sizeof(pb), "%s/streamed.html", dir);
	CHECK(write_page(full, pa) == 0 && write_page(streamed, pb) == 0 &&
	      (page_a = slurp(pa, &la)) && (page_b = slurp(pb, &lb)) && la == lb &&
	      !memcmp(page_a, page_b, la),
	      "the two pages are the same, byte for byte (%zu bytes)", la);
	free(page_a);
	free(page_b);
	flame_tree_free(full);
	flame_tree_free(streamed);
	unlink(pf);
	unlink(pa);
	unlink(pb);
}

/* The canonical bytes of the tree made from saved trees at refs. */
static int tree_bytes(struct spill_file *spill, const struct spill_ref *refs, int n,
		      void **data, size_t *len)
{
	struct folded_tree *t = folded_tree_new();
	int err = t ? 0 : -ENOMEM;

	for (int i = 0; i < n && !err; i++)
		err = folded_tree_add_spilled(t, spill, &refs[i]);
	if (!err)
		err = folded_tree_save(t, data, len);
	folded_tree_free(t);
	return err;
}

/* Saves the bytes as they are: a saved tree made by hand. */
static struct spill_ref put_bytes(struct spill_file *spill, const void *data, size_t len)
{
	struct spill_ref ref = { 0, 0 };

	spill_file_put(spill, data, len, &ref);
	return ref;
}

struct hand_node {
	uint32_t depth, text;
	uint64_t self;
};

/* magic, texts (types, length, bytes), the end mark, nodes. */
static size_t hand_tree(uint8_t *buf, const char *const *texts, int ntexts,
			const struct hand_node *nodes, int nnodes)
{
	uint32_t word = 0x32545053u;
	size_t at = 0;

	memcpy(buf, &word, 4);
	at += 4;
	for (int i = 0; i <= ntexts; i++) {
		uint32_t head[2] = { i < ntexts ? 0 : UINT32_MAX,
				     i < ntexts ? (uint32_t)strlen(texts[i]) : 0 };

		memcpy(buf + at, head, 8);
		at += 8;
		if (i < ntexts) {
			memcpy(buf + at, texts[i], head[1]);
			at += head[1];
		}
	}
	memcpy(buf + at, nodes, (size_t)nnodes * sizeof(*nodes));
	return at + (size_t)nnodes * sizeof(*nodes);
}

static int count_node(uint32_t depth, const char *text, size_t len, int type, uint64_t self,
		      uint64_t total, void *ctx)
{
	(void)depth, (void)text, (void)len, (void)type, (void)self, (void)total;
	++*(int *)ctx;
	return 0;
}

/* What a stop writes from a saved tree that breaks the format: -EINVAL,
 * and no file, not even a temporary one. */
static void check_streams_refused(struct spill_file *spill, const struct spill_ref *bad,
				  const char *dir, const char *what)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	uint64_t total;
	int visited = 0;

	snprintf(path, sizeof(path), "%s/bad.folded", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	CHECK(folded_saved_write(spill, bad, path, 1) == -EINVAL && access(path, F_OK) &&
	      access(tmp, F_OK) && folded_saved_total(spill, bad, 1, &total) == -EINVAL &&
	      folded_saved_foreach(spill, bad, 1, 1, count_node, &visited, NULL) == -EINVAL,
	      "%s: written, totalled and visited as streams: -EINVAL, no file left", what);
}

static void check_refused(struct spill_file *spill, const struct spill_ref *good, const char *dir)
{
	static const char *const ab[] = { "a", "b" }, *const ba[] = { "b", "a" };
	const struct hand_node fine[] = { { 1, 0, 5 }, { 2, 1, 3 }, { 1, 1, 2 } };
	const struct hand_node siblings[] = { { 1, 1, 5 }, { 1, 0, 3 } };
	const struct hand_node deep[] = { { 1, 0, 5 }, { 3, 1, 3 } };
	const struct hand_node text[] = { { 1, 2, 5 } };
	uint8_t buf[256];
	struct spill_ref ref, out = { 7, 7 };
	size_t len;

	len = hand_tree(buf, ab, 2, fine, 3);
	ref = put_bytes(spill, buf, len);
	CHECK(folded_saved_merge(spill, good, &ref, &out) == 0 && out.bytes,
	      "a tree made by hand in the format merges");
	out = (struct spill_ref){ 7, 7 };
	len = hand_tree(buf, ab, 2, siblings, 2);
	ref = put_bytes(spill, buf, len);
	CHECK(folded_saved_merge(spill, good, &ref, &out) == -EINVAL && out.offset == 7,
	      "siblings out of order: -EINVAL, nothing saved");
	check_streams_refused(spill, &ref, dir, "siblings out of order");
	len = hand_tree(buf, ba, 2, fine, 3);
	ref = put_bytes(spill, buf, len);
	CHECK(folded_saved_merge(spill, &ref, good, &out) == -EINVAL, "texts out of order: -EINVAL");
	len = hand_tree(buf, ab, 2, deep, 2);
	ref = put_bytes(spill, buf, len);
	CHECK(folded_saved_merge(spill, good, &ref, &out) == -EINVAL,
	      "a node two levels below the one before: -EINVAL");
	len = hand_tree(buf, ab, 2, text, 1);
	ref = put_bytes(spill, buf, len);
	CHECK(folded_saved_merge(spill, good, &ref, &out) == -EINVAL, "an unknown text: -EINVAL");
	len = hand_tree(buf, ab, 2, fine, 3);
	ref = put_bytes(spill, buf, len - 3);
	CHECK(folded_saved_merge(spill, good, &ref, &out) == -EINVAL, "a tree cut short: -EINVAL");
	check_streams_refused(spill, &ref, dir, "cut short");
	buf[0] ^= 1;
	ref = put_bytes(spill, buf, len);
	CHECK(folded_saved_merge(spill, &ref, good, &out) == -EINVAL && out.offset == 7,
	      "not a saved tree: -EINVAL; no failed merge gave a tree");
	check_streams_refused(spill, &ref, dir, "not a saved tree");
	len = hand_tree(buf, ab, 2, siblings, 2);
	{
		struct folded_tree *t = folded_tree_new();

		CHECK(t && folded_tree_add_saved(t, buf, len) == -EINVAL,
		      "a tree read from memory is checked alike");
		folded_tree_free(t);
	}
}

int main(void)
{
	static char names[400][16];
	char dir[] = "/tmp/sparkprof-test-merge-XXXXXX", pa[PATH_MAX], pb[PATH_MAX];
	struct folded_profile *first = folded_profile_new(NULL), *second = folded_profile_new(NULL);
	struct folded_profile *both = folded_profile_new(NULL), *none = folded_profile_new(NULL);
	struct folded_tree *t;
	struct spill_file *spill;
	struct spill_ref refs[2], merged, empty, again;
	char *long_name = malloc(300 << 10), *want, *got;
	void *expect = NULL, *have = NULL, *a_bytes = NULL, *m_bytes = NULL;
	size_t expect_len = 0, have_len = 0, before;

	CHECK(mkdtemp(dir) != NULL && long_name, "a folder");
	for (int i = 0; i < 400; i++)
		snprintf(names[i], sizeof(names[i]), "f%d", i);
	memset(long_name, 'x', (300 << 10) - 1);
	long_name[(300 << 10) - 1] = '\0';
	/* Stacks the two share (seed 1) and stacks of one only. */
	add_stacks(first, both, 1, 30000, names, long_name);
	add_stacks(first, both, 2, 30000, names, long_name);
	add_stacks(second, both, 1, 30000, names, long_name);
	add_stacks(second, both, 3, 30000, names, long_name);
	spill = spill_file_new(dir, "counts");
	t = folded_tree_build(first);
	CHECK(t && folded_tree_save_spill(t, spill, &refs[0]) == 0, "the first tree saved: %zu nodes, "
	      "%llu bytes", t ? folded_tree_node_count(t) : 0, (unsigned long long)refs[0].bytes);
	folded_tree_free(t);
	t = folded_tree_build(second);
	CHECK(t && folded_tree_save_spill(t, spill, &refs[1]) == 0, "the second: %llu bytes",
	      (unsigned long long)refs[1].bytes);
	folded_tree_free(t);
	CHECK(refs[0].bytes > (8u << 20) && refs[1].bytes > (8u << 20),
	      "each saved tree is many times the merge's buffers");

	before = live_bytes;
	peak_bytes = live_bytes;
	CHECK(folded_saved_merge(spill, &refs[0], &refs[1], &merged) == 0, "merged: %llu bytes",
	      (unsigned long long)merged.bytes);
	/* its buffers and the longest text, from each side: not the trees */
	CHECK(peak_bytes - before < (4u << 20),
	      "the merge held at most %zu KiB of heap at once, the trees %llu KiB",
	      (peak_bytes - before) >> 10, (unsigned long long)(refs[0].bytes + refs[1].bytes) >> 10);
	CHECK(live_bytes == before, "and gave it all back (%zd bytes left)",
	      (ssize_t)(live_bytes - before));

	CHECK(tree_bytes(spill, refs, 2, &expect, &expect_len) == 0 &&
	      tree_bytes(spill, &merged, 1, &have, &have_len) == 0,
	      "the trees of both inputs and of the merge made in memory");
	CHECK(expect_len == have_len && !memcmp(expect, have, have_len),
	      "the merge is the tree of both, to the byte (%zu bytes)", have_len);
	CHECK(have_len == merged.bytes, "and is saved in that form");

	snprintf(pa, sizeof(pa), "%s/merged.folded", dir);
	snprintf(pb, sizeof(pb), "%s/both.folded", dir);
	t = folded_tree_new();
	CHECK(t && folded_tree_add_spilled(t, spill, &merged) == 0 && folded_tree_write(t, pa, 1) == 0 &&
	      folded_profile_write(both, pb) == 0, "the merge and one profile of both written");
	folded_tree_free(t);
	got = sorted_lines(pa);
	want = sorted_lines(pb);
	CHECK(got && want && strlen(want) > (1u << 20) && !strcmp(got, want),
	      "the same lines, counts summed (%zu bytes)", want ? strlen(want) : 0);
	free(got);
	free(want);
	check_streamed(spill, &merged, dir, pb);

	t = folded_tree_build(none);
	CHECK(t && folded_tree_save_spill(t, spill, &empty) == 0, "an empty tree saved");
	folded_tree_free(t);
	CHECK(folded_saved_merge(spill, &refs[0], &empty, &again) == 0 &&
	      spill_file_get(spill, &refs[0], &a_bytes) == 0 &&
	      spill_file_get(spill, &again, &m_bytes) == 0 && again.bytes == refs[0].bytes &&
	      !memcmp(a_bytes, m_bytes, again.bytes),
	      "a tree merged with an empty one is itself, to the byte");
	check_refused(spill, &refs[0], dir);

	free(expect);
	free(have);
	free(a_bytes);
	free(m_bytes);
	free(long_name);
	folded_profile_free(first);
	folded_profile_free(second);
	folded_profile_free(both);
	folded_profile_free(none);
	spill_file_free(spill);
	unlink(pa);
	unlink(pb);
	CHECK(rmdir(dir) == 0, "the folder is left empty");
	TAP_DONE();
}

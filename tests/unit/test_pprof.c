/* test_pprof.c - the folded -> pprof encoding, decoded back field by field:
 * string table, functions, locations, samples and their values. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/flame_tree.h"
#include "output/pprof.h"
#include "tap.h"

struct reader {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t varint(struct reader *r)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		if (r->p >= r->end) {
			r->bad = 1;
			return 0;
		}
		v |= (uint64_t)(*r->p & 0x7f) << shift;
		if (!(*r->p++ & 0x80))
			return v;
	}
	r->bad = 1;
	return 0;
}

/* Next field: its number, and its value (varint) or bytes (length-delimited). */
static int field(struct reader *r, uint64_t *num, uint64_t *v, struct reader *sub)
{
	uint64_t key, len;

	if (r->p >= r->end || r->bad)
		return 0;
	key = varint(r);
	*num = key >> 3;
	if ((key & 7) == 0) {
		*v = varint(r);
	} else if ((key & 7) == 2) {
		len = varint(r);
		if (len > (uint64_t)(r->end - r->p)) {
			r->bad = 1;
			return 0;
		}
		sub->p = r->p;
		sub->end = r->p + len;
		sub->bad = 0;
		r->p += len;
	} else {
		r->bad = 1;
		return 0;
	}
	return !r->bad;
}

#define MAXN 64
struct decoded {
	char strings[MAXN][64];
	int nstrings;
	struct { uint64_t id, name, system_name, filename; } funcs[MAXN];
	int nfuncs;
	struct { uint64_t id, function; } locs[MAXN];
	int nlocs;
	struct { uint64_t locs[16]; int nlocs; uint64_t value; } samples[MAXN];
	int nsamples;
	uint64_t sample_type, sample_unit;
	int bad;
};

static void decode(const uint8_t *data, size_t len, struct decoded *d)
{
	struct reader r = { data, data + len, 0 }, m, mm;
	uint64_t num, v, n2, v2, n3, v3;

	memset(d, 0, sizeof(*d));
	while (field(&r, &num, &v, &m)) {
		switch (num) {
		case 1: /* sample_type */
			while (field(&m, &n2, &v2, &mm))
				*(n2 == 1 ? &d->sample_type : &d->sample_unit) = v2;
			break;
		case 2: /* sample */
			while (d->nsamples < MAXN && field(&m, &n2, &v2, &mm)) {
				if (n2 == 1)
					while (mm.p < mm.end && d->samples[d->nsamples].nlocs < 16)
						d->samples[d->nsamples].locs[d->samples[d->nsamples].nlocs++] =
							varint(&mm);
				if (n2 == 2)
					d->samples[d->nsamples].value = varint(&mm);
			}
			d->nsamples++;
			break;
		case 4: /* location */
			while (d->nlocs < MAXN && field(&m, &n2, &v2, &mm)) {
				if (n2 == 1)
					d->locs[d->nlocs].id = v2;
				if (n2 == 4)
					while (field(&mm, &n3, &v3, &(struct reader){ 0 }))
						if (n3 == 1)
							d->locs[d->nlocs].function = v3;
			}
			d->nlocs++;
			break;
		case 5: /* function */
			while (d->nfuncs < MAXN && field(&m, &n2, &v2, &mm)) {
				if (n2 == 1) d->funcs[d->nfuncs].id = v2;
				if (n2 == 2) d->funcs[d->nfuncs].name = v2;
				if (n2 == 3) d->funcs[d->nfuncs].system_name = v2;
				if (n2 == 4) d->funcs[d->nfuncs].filename = v2;
			}
			d->nfuncs++;
			break;
		case 6: /* string_table */
			if (d->nstrings < MAXN) {
				size_t n = (size_t)(m.end - m.p);

				snprintf(d->strings[d->nstrings++], 64, "%.*s", (int)n, (const char *)m.p);
			}
			break;
		}
	}
	d->bad = r.bad || r.p != r.end;
}

static const char *str(const struct decoded *d, uint64_t i)
{
	return i < (uint64_t)d->nstrings ? d->strings[i] : "(out of range)";
}

/* The stack of a sample as "root;...;leaf" (locations are leaf first). */
static void stack_text(const struct decoded *d, int s, char *buf, size_t len)
{
	buf[0] = '\0';
	for (int i = d->samples[s].nlocs - 1; i >= 0; i--) {
		uint64_t loc = d->samples[s].locs[i], fn = 0;

		for (int l = 0; l < d->nlocs; l++)
			if (d->locs[l].id == loc)
				fn = d->locs[l].function;
		for (int f = 0; f < d->nfuncs; f++)
			if (d->funcs[f].id == fn)
				snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", *buf ? ";" : "",
					 str(d, d->funcs[f].system_name));
	}
}

int main(void)
{
	static const char folded[] =
		"java-1;java/lang/Thread.run_[j];com/x/Hot.loop_[i] 700\n"
		"java-1;java/lang/Thread.run_[j];com/x/Cold.io_[0];read;do_syscall_64_[k] 200\n"
		"java-1;JavaThread::run 80\n"
		"java-1;java/lang/Thread.run_[j] 20\n";
	struct pprof_options cpu = { .sample_type = "samples", .unit = "count", .multiplier = 1 };
	struct pprof_options off = { .sample_type = "offcpu", .unit = "nanoseconds",
				     .multiplier = 1000000 };
	struct flame_tree *t = flame_tree_new();
	static struct decoded d;
	char err[128], stack[512];
	uint8_t *data;
	size_t len;
	uint64_t total = 0;
	int found = 0;

	CHECK(flame_tree_parse(t, folded, sizeof(folded) - 1, 0, err, sizeof(err)) == 0,
	      "folded text parses");
	CHECK(pprof_encode(t, &cpu, &data, &len) == 0, "encodes");
	decode(data, len, &d);
	free(data);
	CHECK(!d.bad, "every field decodes and the message ends where it should");
	CHECK_STR(d.strings[0], "", "string_table[0] is the empty string");
	CHECK_STR(str(&d, d.sample_type), "samples", "sample type is samples");
	CHECK_STR(str(&d, d.sample_unit), "count", "sample unit is count");
	for (int i = 1; i < d.nstrings; i++)
		for (int j = 0; j < i; j++)
			if (!strcmp(d.strings[i], d.strings[j]))
				found++;
	CHECK(found == 0, "no string appears twice in the table");
	/* 7 distinct frames: java-1, Thread.run, Hot.loop, Cold.io, read,
	 * do_syscall_64, JavaThread::run */
	CHECK(d.nfuncs == 7, "one function per distinct frame (%d)", d.nfuncs);
	CHECK(d.nlocs == 7, "one location per function (%d)", d.nlocs);
	for (int f = 0; f < d.nfuncs; f++) {
		const char *name = str(&d, d.funcs[f].name), *file = str(&d, d.funcs[f].filename);
		const char *sys = str(&d, d.funcs[f].system_name);

		if (!strcmp(name, "com/x/Hot.loop"))
			CHECK(!strcmp(file, "[inlined]") && !strcmp(sys, "com/x/Hot.loop_[i]"),
			      "inlined frame keeps its type: %s %s", file, sys);
		if (!strcmp(name, "com/x/Cold.io"))
			CHECK(!strcmp(file, "[interpreted]"), "interpreted frame keeps its type");
		if (!strcmp(name, "do_syscall_64"))
			CHECK(!strcmp(file, "[kernel]") && !strcmp(sys, "do_syscall_64_[k]"),
			      "kernel frame keeps its type");
		if (!strcmp(name, "JavaThread::run"))
			CHECK(!strcmp(file, "[c++]"), "C++ frame is typed by its name");
		if (!strcmp(name, "read"))
			CHECK(!strcmp(file, "[native]"), "plain name is native");
	}
	for (int l = 0; l < d.nlocs; l++) {
		int ok = 0;

		for (int f = 0; f < d.nfuncs; f++)
			ok |= d.funcs[f].id == d.locs[l].function;
		CHECK(ok && d.locs[l].id, "location %d names a function that exists", l);
	}
	CHECK(d.nsamples == 4, "one sample per distinct stack (%d)", d.nsamples);
	found = 0;
	for (int s = 0; s < d.nsamples; s++) {
		total += d.samples[s].value;
		stack_text(&d, s, stack, sizeof(stack));
		if (!strcmp(stack, "java-1;java/lang/Thread.run_[j];com/x/Cold.io_[0];read;do_syscall_64_[k]"))
			found += d.samples[s].value == 200;
		if (!strcmp(stack, "java-1;java/lang/Thread.run_[j]"))
			found += d.samples[s].value == 20;
		if (!strcmp(stack, "java-1;java/lang/Thread.run_[j];com/x/Hot.loop_[i]"))
			found += d.samples[s].value == 700;
	}
	CHECK(found == 3, "stacks come back root to leaf with their own counts (%d of 3)", found);
	CHECK(total == 1000, "values add up to the folded total (%llu)", (unsigned long long)total);

	CHECK(pprof_encode(t, &off, &data, &len) == 0, "encodes off-CPU");
	decode(data, len, &d);
	free(data);
	total = 0;
	for (int s = 0; s < d.nsamples; s++)
		total += d.samples[s].value;
	CHECK_STR(str(&d, d.sample_unit), "nanoseconds", "off-CPU unit is nanoseconds");
	CHECK(total == 1000ULL * 1000000, "milliseconds become nanoseconds");
	flame_tree_free(t);
	TAP_DONE();
}

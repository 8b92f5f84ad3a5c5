/* test_stack_resolver.c - naming a stack of this very process: its own
 * functions, JIT code in anonymous executable memory (named by a callback
 * that can expand one address into inlined frames), interpreted methods,
 * and a deep recursion, whose repeated frames are named once per stack but
 * appear (and are counted) at every depth. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sparkprof_events.h"
#include "symbols/proc_symbolizer.h"
#include "symbols/stack_resolver.h"
#include "tap.h"

__attribute__((noinline)) static int recurse_a(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) static int recurse_b(int x)
{
	return x * 5 + 2;
}

struct namer {
	uintptr_t jit;            /* the anonymous executable page */
	int jit_calls, method_calls;
};

/* The page's first half is one method with an inlined callee, the second
 * one plain method. */
static int name_jit(void *ctx, uint64_t addr, uint64_t ts, struct frame *out, int max)
{
	struct namer *nm = ctx;

	(void)ts;
	nm->jit_calls++;
	/* The page's last bytes: code the runtime cannot name. */
	if (addr < nm->jit || addr >= nm->jit + 4000 || max < 2)
		return 0;
	if (addr < nm->jit + 2048) {
		out[0] = (struct frame){ "Inlined.callee", FRAME_INLINED };
		out[1] = (struct frame){ "Compiled.caller", FRAME_JIT };
		return 2;
	}
	out[0] = (struct frame){ "Compiled.other", FRAME_JIT };
	return 1;
}

static int name_method(void *ctx, uint64_t method, struct frame *out)
{
	struct namer *nm = ctx;

	nm->method_calls++;
	if (method == 0x3000)
		return 0;  /* a method that cannot be read */
	*out = (struct frame){ method == 0x1000 ? "Interp.run" : "Interp.loop",
			       FRAME_INTERPRETED };
	return 1;
}

#define DEPTH 3000

int main(void)
{
	void *page = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct stack_resolver *r = stack_resolver_new_sharing(NULL);
	struct proc_symbolizer *self = r && page != MAP_FAILED ? stack_resolver_inspect(r, getpid())
							       : NULL;
	struct namer nm = { .jit = (uintptr_t)page };
	struct user_names names = { .symbolizer = self, .name_jit = name_jit,
				    .name_method = name_method, .jit_ctx = &nm };
	static uint64_t user[DEPTH];
	static struct frame out[STACK_MAX_FRAMES];
	const struct stack_resolver_stats *st;
	size_t n = 0, got;
	int wrong = 0;

	CHECK(r && self, "resolver and own process set up");
	if (!r || !self)
		TAP_DONE();
	/* Innermost first: a native leaf, a recursion through two functions,
	 * compiled code with inlining, two interpreted methods, again and again. */
	user[n++] = (uint64_t)(uintptr_t)recurse_a + 1;
	while (n < DEPTH - 6) {
		user[n++] = (uint64_t)(uintptr_t)recurse_b + 4;
		user[n++] = (uint64_t)(uintptr_t)recurse_a + 4;
		user[n++] = nm.jit + 16;
		user[n++] = nm.jit + 3000;
		user[n++] = 0x1000 | SP_USTACK_METHOD_TAG;
		user[n++] = 0x2000 | SP_USTACK_METHOD_TAG;
	}
	got = stack_resolver_resolve(r, &names, 1, NULL, 0, user, n, out, STACK_MAX_FRAMES);
	CHECK(got == 1 + (n - 1) / 6 * 7, "every walked frame named, inlining included (%zu)", got);
	CHECK_STR(out[0].name, "recurse_a", "the leaf");
	for (size_t i = 1; i + 7 <= got; i += 7) {
		static const char *const want[7] = { "recurse_b", "recurse_a", "Inlined.callee",
						     "Compiled.caller", "Compiled.other",
						     "Interp.run", "Interp.loop" };

		for (int k = 0; k < 7; k++)
			wrong += strcmp(out[i + (size_t)k].name, want[k]) != 0;
	}
	CHECK(wrong == 0, "every depth names the same frames in order (%d wrong)", wrong);
	CHECK(out[3].type == FRAME_INLINED && out[4].type == FRAME_JIT &&
	      out[6].type == FRAME_INTERPRETED, "frame types kept");
	CHECK(nm.jit_calls == 2 && nm.method_calls == 2,
	      "each distinct frame named once per stack (%d JIT, %d interpreted lookups)",
	      nm.jit_calls, nm.method_calls);
	st = stack_resolver_get_stats(r);
	CHECK(st->user_frames == 1 + (n - 1) / 3 && st->jit_frames == (n - 1) / 3 &&
	      st->interpreted_frames == (n - 1) / 3 && st->user_unknown == 0 &&
	      st->jit_unknown == 0, "stats count every frame (%llu native, %llu JIT, %llu interpreted)",
	      (unsigned long long)st->user_frames, (unsigned long long)st->jit_frames,
	      (unsigned long long)st->interpreted_frames);

	/* A second stack looks its frames up again (its time may name other
	 * JIT code), and an output too small is filled, not overrun. */
	got = stack_resolver_resolve(r, &names, 2, NULL, 0, user, n, out, 100);
	CHECK(got == 100, "a 100-frame output is filled to its end (%zu)", got);
	CHECK(nm.jit_calls == 4, "the next stack names JIT code anew (%d)", nm.jit_calls);
	CHECK_STR(out[99].name, out[99 - 7].name, "the cut stack still repeats in order");

	/* Frames that cannot be named count as unknown at every depth too,
	 * memoized or not. */
	struct stack_resolver_stats before = *st;
	size_t reps = 0;

	n = 0;
	user[n++] = (uint64_t)(uintptr_t)recurse_a + 1;
	for (; n + 3 <= 300; reps++) {
		user[n++] = nm.jit + 4050;
		user[n++] = 0x3000 | SP_USTACK_METHOD_TAG;
		user[n++] = 0x10; /* mapped nowhere */
	}
	got = stack_resolver_resolve(r, &names, 3, NULL, 0, user, n, out, STACK_MAX_FRAMES);
	CHECK(got == n && !strcmp(out[1].name, "[unknown]") && !strcmp(out[2].name, "Interpreter") &&
	      !strcmp(out[n - 1].name, "[unknown]"), "unnamed frames read [unknown] and Interpreter");
	CHECK(st->jit_frames - before.jit_frames == reps &&
	      st->jit_unknown - before.jit_unknown == reps &&
	      st->interpreted_frames - before.interpreted_frames == reps &&
	      st->interpreted_unknown - before.interpreted_unknown == reps &&
	      st->user_frames - before.user_frames == reps + 1 &&
	      st->user_unknown - before.user_unknown == reps,
	      "each of %zu repeats counted unknown (JIT %llu, interpreted %llu, native %llu)", reps,
	      (unsigned long long)(st->jit_unknown - before.jit_unknown),
	      (unsigned long long)(st->interpreted_unknown - before.interpreted_unknown),
	      (unsigned long long)(st->user_unknown - before.user_unknown));
	/* A walk through data (return addresses in a data page and nowhere)
	 * between two functions is one [unknown], counted once. */
	static uint64_t data_page[512];
	uint64_t walk[] = { (uint64_t)(uintptr_t)recurse_a + 1,
			    (uint64_t)(uintptr_t)&data_page[8], (uint64_t)(uintptr_t)&data_page[99],
			    0x10, (uint64_t)(uintptr_t)&data_page[7], (uint64_t)(uintptr_t)recurse_b + 4,
			    (uint64_t)(uintptr_t)&data_page[8] };

	before = *st;
	got = stack_resolver_resolve(r, &names, 4, NULL, 0, walk, 7, out, STACK_MAX_FRAMES);
	CHECK(got == 4 && !strcmp(out[0].name, "recurse_a") && !strcmp(out[1].name, "[unknown]") &&
	      !strcmp(out[2].name, "recurse_b") && !strcmp(out[3].name, "[unknown]"),
	      "four unnamed native frames in a row read as one [unknown] (%zu frames)", got);
	CHECK(st->user_frames - before.user_frames == 4 && st->user_unknown - before.user_unknown == 2,
	      "and count once (%llu frames, %llu unknown)",
	      (unsigned long long)(st->user_frames - before.user_frames),
	      (unsigned long long)(st->user_unknown - before.user_unknown));

	/* A frame-pointer walk's data can carry the bits that tag a walker's
	 * frames (a double >= 2.0 has SP_USTACK_PYTHON_TAG's, a negative one
	 * SP_USTACK_METHOD_TAG's): without the walker's names (a stack the
	 * walker did not make) they are native garbage, one [unknown]. */
	struct user_names plain = { .symbolizer = self };
	uint64_t doubles[] = { (uint64_t)(uintptr_t)recurse_a + 1, 0x40d3880000000000ull,
			       0xc000000000000000ull, (uint64_t)(uintptr_t)recurse_b + 4 };

	got = stack_resolver_resolve(r, &plain, 5, NULL, 0, doubles, 4, out, STACK_MAX_FRAMES);
	CHECK(got == 3 && !strcmp(out[0].name, "recurse_a") && !strcmp(out[1].name, "[unknown]") &&
	      out[1].type != FRAME_PYTHON && out[1].type != FRAME_INTERPRETED &&
	      !strcmp(out[2].name, "recurse_b"),
	      "tagged words of a stack no walker made read as one [unknown] (%zu frames: %s)", got,
	      got > 1 ? out[1].name : "-");

	proc_symbolizer_free(self); /* before the resolver: it holds its binaries */
	stack_resolver_free(r);
	munmap(page, 4096);
	TAP_DONE();
}

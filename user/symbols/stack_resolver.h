/* stack_resolver.h - raw stack addresses to named frames.
 *
 * Kernel addresses are named from /proc/kallsyms; user addresses from the
 * process's ELF files (proc_symbolizer), and addresses in anonymous
 * executable memory from the JVM's helper (JIT code as of the sample's
 * time, inlined frames expanded) or, failing that, a plain perf map. A frame
 * that cannot be named reads "[unknown]" or "lib.so+0xOFFSET", never a
 * wrong name.
 */
#ifndef SPARKPROF_STACK_RESOLVER_H
#define SPARKPROF_STACK_RESOLVER_H

#include <stddef.h>
#include <stdint.h>

#include "base/frame.h"

struct process;
struct binary_cache;

/* Frames one stack can expand to: inlining turns one address into many. */
#define STACK_MAX_FRAMES 4096

struct stack_resolver_stats {
	uint64_t kernel_frames, kernel_unknown;
	uint64_t user_frames, user_unknown;
	uint64_t jit_frames, jit_unknown; /* addresses in anonymous executable memory */
};

struct stack_resolver;

/* Loads /proc/kallsyms; NULL (with a message) when it cannot. */
struct stack_resolver *stack_resolver_new(void);
void stack_resolver_free(struct stack_resolver *r);

struct binary_cache *stack_resolver_binaries(struct stack_resolver *r);

/* Reads what naming p's frames needs while p is alive: its maps and ELF
 * files. 0 or -errno (-ESRCH: already gone; its frames will be unnamed). */
int stack_resolver_inspect(struct stack_resolver *r, struct process *p);

/* Names one sample's stack, leaf first: kernel frames, then user frames.
 * Addresses after the first of each stack are return addresses. Returns
 * the number of frames written to out (at most max). */
size_t stack_resolver_resolve(struct stack_resolver *r, struct process *p, uint64_t timestamp_ns,
			      const uint64_t *kernel, size_t nkernel,
			      const uint64_t *user, size_t nuser,
			      struct frame *out, size_t max);

const struct stack_resolver_stats *stack_resolver_get_stats(const struct stack_resolver *r);

#endif

/* stack_resolver.h - raw stack addresses to named frames.
 *
 * Kernel addresses are named from /proc/kallsyms; user addresses from the
 * process's ELF files (proc_symbolizer), and addresses in anonymous
 * executable memory (JIT code) by the process's runtime, which the caller
 * passes in (the jvm/ layer names Java code). A frame that cannot be named
 * reads "[unknown]" or "lib.so+0xOFFSET", never a wrong name; native frames
 * that cannot be named one after another (a walk through code without
 * frame pointers reading data) are one "[unknown]", counted once.
 */
#ifndef SPARKPROF_STACK_RESOLVER_H
#define SPARKPROF_STACK_RESOLVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/frame.h"

struct binary_cache;
struct proc_symbolizer;

/* Frames one stack can expand to: inlining turns one address into many. */
#define STACK_MAX_FRAMES 8192

struct stack_resolver_stats {
	uint64_t kernel_frames, kernel_unknown;
	uint64_t user_frames, user_unknown;
	uint64_t jit_frames, jit_unknown; /* addresses in anonymous executable memory */
	uint64_t interpreted_frames, interpreted_unknown; /* methods the walker recorded */
	uint64_t python_frames, python_unknown; /* code objects the Python walker recorded */
};

struct stack_resolver;

struct kallsyms;

/* Loads /proc/kallsyms; NULL (with a message) when it cannot. */
struct stack_resolver *stack_resolver_new(void);
/* The same, naming kernel frames from kernel, which stays the caller's and
 * must outlive the resolver (one table shared by successive recordings:
 * reading /proc/kallsyms costs about a second of CPU on a busy node). */
struct stack_resolver *stack_resolver_new_sharing(const struct kallsyms *kernel);
void stack_resolver_free(struct stack_resolver *r);
/* Whether kernel symbols are loaded (or failed to), so resolving a kernel
 * frame will not wait for them. */
bool stack_resolver_kernel_ready(const struct stack_resolver *r);

/* From now on large symbol tables (our own kernel table, ELF files' from
 * 64 KiB of names) keep their names in a temporary file in dir, read back
 * when first shown.  0 or -ENOMEM. */
int stack_resolver_keep_names_in(struct stack_resolver *r, const char *dir);

struct binary_cache *stack_resolver_binaries(struct stack_resolver *r);

/* Reads pid's maps while it is alive; its ELF files are loaded by
 * proc_symbolizer_load_files() (or when first needed). NULL and errno
 * (ESRCH: already gone; its frames will be unnamed).  Free it before r:
 * it holds binaries of r's cache. */
struct proc_symbolizer *stack_resolver_inspect(struct stack_resolver *r, pid_t pid);

/* How one process's user addresses are named. */
struct user_names {
	struct proc_symbolizer *symbolizer; /* NULL: /proc could not be read */
	/* Names JIT code at addr as of ts, innermost frame first; returns the
	 * frames written (at most max), 0 when unknown. NULL: no runtime. */
	int (*name_jit)(void *ctx, uint64_t addr, uint64_t ts, struct frame *out, int max);
	/* Names an interpreted frame, which the walker recorded as the
	 * runtime's method (a user address tagged SP_USTACK_METHOD_TAG);
	 * 1, or 0 when unknown. NULL: the stack is not the walker's (a
	 * tagged word is data a frame-pointer walk read: a native frame). */
	int (*name_method)(void *ctx, uint64_t method, struct frame *out);
	void *jit_ctx;
	/* Names a Python frame (SP_USTACK_PYTHON_TAG) as of ts: 1, or 0 when
	 * unknown. NULL: the stack holds no Python frames (not walked as a
	 * Python thread's: a tagged word is data, a native frame). */
	int (*name_python)(void *ctx, uint64_t frame, uint64_t ts, struct frame *out);
	/* Whether a native address is the Python interpreter's own code:
	 * native frames after it, up to the next Python frame, are dropped. */
	bool (*in_interpreter)(void *ctx, uint64_t addr);
	void *python_ctx;
};

/* Names one sample's stack, leaf first: kernel frames, then user frames.
 * Addresses after the first of each stack are return addresses. Returns
 * the number of frames written to out (at most max). */
size_t stack_resolver_resolve(struct stack_resolver *r, const struct user_names *names,
			      uint64_t timestamp_ns, const uint64_t *kernel, size_t nkernel,
			      const uint64_t *user, size_t nuser, struct frame *out, size_t max);

const struct stack_resolver_stats *stack_resolver_get_stats(const struct stack_resolver *r);

/* Heap bytes of the ELF symbol tables it loaded; *kernel: of the kernel's
 * symbols and the kernel addresses named. */
size_t stack_resolver_memory(const struct stack_resolver *r, size_t *kernel);

#endif

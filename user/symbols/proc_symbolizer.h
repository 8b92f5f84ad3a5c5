/* proc_symbolizer.h - names for native code addresses of one process.
 *
 * proc_symbolizer_new() reads /proc/PID/maps and loads the ELF files of the
 * executable mappings at once, so frames of a process that exits during the
 * recording still get names.  Addresses in anonymous executable memory are
 * not named here: they are JIT code, and the caller asks its JIT symbol
 * source (perf map / helper) for them.
 *
 * Frame names come from the binary_cache and stay valid until it is freed.
 * Not thread-safe.
 */
#ifndef SPARKPROF_PROC_SYMBOLIZER_H
#define SPARKPROF_PROC_SYMBOLIZER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/frame.h"
#include "symbols/binary_cache.h"

struct proc_symbolizer;

enum proc_sym_result {
	PROC_SYM_OK,        /* *out filled: "function", "libfoo.so+0x1234" (no
			     * symbol there; ELF address, or file offset when no
			     * segment holds it), "[vdso]+0x..", "[vsyscall]", or
			     * "[unknown]"; FRAME_CPP inside libjvm.so, else
			     * FRAME_NATIVE */
	PROC_SYM_ANON_EXEC, /* anonymous executable memory: ask the JIT source */
	PROC_SYM_UNMAPPED,  /* no mapping holds addr: maybe call _refresh() */
	PROC_SYM_NOT_CODE,  /* a mapping that is not executable holds addr (a
			     * walk through code without frame pointers read a
			     * data word as a return address), or did when the
			     * maps were read; but a function of the file there
			     * is PROC_SYM_OK (maps read while ld.so mapped it) */
};

/* Reads the maps of pid now and loads its executables and libraries into
 * bc.  NULL and errno: ESRCH when the process is gone. */
struct proc_symbolizer *proc_symbolizer_new(struct binary_cache *bc, pid_t pid);

/* The same in two steps: the maps now, the files when the caller has done
 * what cannot wait (turning a JVM's stack walker on: loading every library
 * of a JVM takes tens of milliseconds). Files not loaded are loaded when an
 * address in them is first named. */
struct proc_symbolizer *proc_symbolizer_new_maps(struct binary_cache *bc, pid_t pid);
void proc_symbolizer_load_files(struct proc_symbolizer *ps);

enum proc_sym_result proc_symbolizer_resolve(struct proc_symbolizer *ps, uint64_t addr,
					     struct frame *out);

/* Re-reads the maps (after PROC_SYM_UNMAPPED: a library was loaded since).
 * Returns 1 when the maps were read again (resolve once more), -EAGAIN when
 * called within 100 ms of the last read, -ESRCH when the process is gone
 * (the old mappings stay in use), or another -errno. */
int proc_symbolizer_refresh(struct proc_symbolizer *ps);

/* proc_symbolizer_resolve, and for an address no mapping holds, or none
 * that is executable, the maps read again first (at most every 100 ms).  A walk through code without
 * frame pointers yields such addresses sample after sample, and a JVM's
 * maps take milliseconds to read: each read that still does not hold the
 * address doubles the wait before the next, up to 3.2 s, and one that
 * does puts it back to 100 ms.  Code mapped meanwhile is named that much
 * later. */
enum proc_sym_result proc_symbolizer_resolve_fresh(struct proc_symbolizer *ps, uint64_t addr,
						   struct frame *out);

/* Times the maps were read, the first included. */
size_t proc_symbolizer_maps_reads(const struct proc_symbolizer *ps);

/* Heap bytes of the answers it keeps (each address named once). */
size_t proc_symbolizer_memory(const struct proc_symbolizer *ps);

/* Whether the maps last read hold every one of addrs[0..n) (a walked
 * stack's tagged method entries, SP_USTACK_METHOD_TAG, are not looked
 * at): false when the process mapped something since. */
bool proc_symbolizer_maps_hold(const struct proc_symbolizer *ps, const uint64_t *addrs,
			       size_t n);

/* Whether the maps last read hold a file named basename ("libjvm.so"). */
bool proc_symbolizer_maps_file(const struct proc_symbolizer *ps, const char *basename);

void proc_symbolizer_free(struct proc_symbolizer *ps);

#endif

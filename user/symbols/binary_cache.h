/* binary_cache.h - ELF symbol tables shared by every process of a recording.
 *
 * A binary is identified by the (device, inode) that /proc/PID/maps shows,
 * and also by its GNU build-id, so a libc mapped by 500 processes (or the
 * same libjvm in several containers) is parsed once.  Files are opened as
 * the process sees them: /proc/PID/map_files/START-END (the very file
 * mapped, even if deleted or replaced since), then /proc/PID/root/PATH
 * (containers), then PATH.  Failures are cached too, so a missing file is
 * tried once while it stays cached.
 *
 * A binary is held from binary_cache_get to binary_cache_put.  One no
 * process holds stays cached, to be handed out again, until the tables
 * take more than a budget (8 MiB) or there are too many (512): then those
 * unused longest are dropped, so a whole-node recording does not keep the
 * table of every program that ever ran.  Names (frame names, interned
 * strings) stay valid until binary_cache_free.  Not thread-safe.
 */
#ifndef SPARKPROF_BINARY_CACHE_H
#define SPARKPROF_BINARY_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proc/proc_maps.h"
#include "symbols/elf_symbols.h"

struct binary_cache;

/* One binary file: its name for unnamed frames and its symbols. */
struct binary {
	const char *basename;        /* "libc.so.6" */
	struct elf_symbols *symbols; /* NULL when the file could not be read */
	bool is_jvm;                 /* libjvm.so: frames are FRAME_CPP */
};

struct binary_cache *binary_cache_new(void);

/* The binary mapped by m in process pid, loaded on first use, held until
 * binary_cache_put.  NULL only for mappings that are not files (or out of
 * memory); a file that cannot be read gives a binary with symbols == NULL. */
const struct binary *binary_cache_get(struct binary_cache *bc, pid_t pid,
				      const struct proc_map *m);

/* Lets go of a binary from binary_cache_get (NULL: nothing). */
void binary_cache_put(struct binary_cache *bc, const struct binary *b);

/* The budget for binaries no process holds (tests set small ones): kept
 * while all tables take at most bytes and they number at most binaries. */
void binary_cache_keep_unused(struct binary_cache *bc, size_t bytes, size_t binaries);

/* The vDSO image of 64-bit processes (our own, which the kernel maps into
 * every 64-bit process), or NULL when it cannot be read.  *size is the
 * image's mapped size, to check against a target's [vdso] mapping.  Held
 * by the cache itself: not put. */
const struct binary *binary_cache_vdso(struct binary_cache *bc, uint64_t *size);

/* From now on, tables whose names take 64 KiB or more keep them in file
 * (elf_symbols_move_names), which must outlive the cache, and read them
 * back when a symbol is first shown. */
struct spill_file;
void binary_cache_keep_names_in(struct binary_cache *bc, struct spill_file *file);

/* A copy of s that lives as long as the cache; equal strings share one
 * copy.  NULL when out of memory. */
const char *binary_cache_intern(struct binary_cache *bc, const char *s);

/* Counters for reports and tests. */
struct binary_cache_stats {
	size_t binaries;      /* binaries made (files loaded or failed; one
			       * dropped and seen again counts again) */
	size_t loads;         /* ELF files parsed */
	size_t build_id_hits; /* new (dev, inode) found by build-id */
	size_t failures;      /* files that could not be opened or parsed */
	size_t dropped;       /* binaries dropped, unused, past the budget */
	size_t held;          /* binaries cached now, held or not */
	size_t memory;        /* bytes of the symbol tables and shown names */
};
void binary_cache_get_stats(const struct binary_cache *bc, struct binary_cache_stats *out);

void binary_cache_free(struct binary_cache *bc);

#endif

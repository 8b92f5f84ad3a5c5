/* kallsyms.h - kernel text symbols from /proc/kallsyms, address -> name.
 *
 * Lines are "ADDR TYPE NAME [MODULE]".  Text symbols (t, T, w, W), of the
 * kernel and of modules, are kept; each symbol ends where the next symbol
 * (of any type) starts.  When every address reads as zero the kernel hides
 * them (kernel.kptr_restrict, missing CAP_SYSLOG): loading fails with EACCES
 * and says so, rather than naming every kernel frame wrongly.
 */
#ifndef SPARKPROF_KALLSYMS_H
#define SPARKPROF_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kallsyms;

/* Reads and parses a kallsyms file (normally "/proc/kallsyms").  NULL and
 * errno on failure (EACCES: addresses hidden; ENOENT: no text symbol). */
struct kallsyms *kallsyms_load(const char *path);

/* The same, on a thread of its own: parsing takes ~150 ms that need not
 * delay the first sample.  start checks the file can be opened (NULL with a
 * message and errno if not); done says whether wait would return at once;
 * wait returns what kallsyms_load would have, and frees the loader. */
struct kallsyms_loader;
struct kallsyms_loader *kallsyms_load_start(const char *path);
bool kallsyms_load_done(const struct kallsyms_loader *loader);
struct kallsyms *kallsyms_load_wait(struct kallsyms_loader *loader);

/* Parses kallsyms text held in buf[0..len) (need not be NUL-terminated).
 * Malformed lines are skipped.  NULL and errno as kallsyms_load. */
struct kallsyms *kallsyms_parse(const char *buf, size_t len);

/* The name of the kernel function containing addr (module symbols too, with
 * the module left out, as perf shows them), or NULL when addr is not in
 * kernel text (or its moved name cannot be read back).  Valid until
 * kallsyms_free.  After kallsyms_move_names it changes the table (names
 * read back are kept): one thread at a time. */
const char *kallsyms_lookup(const struct kallsyms *ks, uint64_t addr);

/* Moves the names to a spill file, which must outlive the table: 1.8 MB
 * for a kernel's 120k text symbols, of which a recording shows a few
 * thousand.  A name is read back when first looked up and kept; lookups
 * then change the table, so one thread at a time.  0, or -errno with the
 * names still in memory. */
struct spill_file;
int kallsyms_move_names(struct kallsyms *ks, struct spill_file *to);

/* Number of text symbols kept. */
size_t kallsyms_count(const struct kallsyms *ks);

/* Bytes of memory held by the table (for reporting). */
size_t kallsyms_memory(const struct kallsyms *ks);

void kallsyms_free(struct kallsyms *ks);

#endif

/* elf_symbols.h - function symbols and loadable segments of one ELF file.
 *
 * Addresses in a process map to a symbol in two steps: the mapping gives a
 * file offset (addr - map start + map offset), and the PT_LOAD segment
 * holding that offset gives the link-time address:
 *     vaddr = file_off - p_offset + p_vaddr.
 * This works alike for PIE and non-PIE executables and shared libraries.
 *
 * Symbols come from .symtab, or from .dynsym when the file is stripped.
 * C++ names are demangled when first looked up (see demangle.h), so a table
 * must not be used by two threads at once.
 */
#ifndef SPARKPROF_ELF_SYMBOLS_H
#define SPARKPROF_ELF_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ELF_BUILD_ID_MAX 64

struct elf_symbols;

/* Loads from an open file (the fd is not kept).  what names the file in
 * error messages.  NULL and errno (ENOEXEC: not a usable ELF file). */
struct elf_symbols *elf_symbols_load_fd(int fd, const char *what);

/* Loads from an image in memory, e.g. the vDSO (the bytes are copied). */
struct elf_symbols *elf_symbols_load_mem(const void *image, size_t len);

/* The link-time address for a file offset, through the PT_LOAD segment that
 * holds it (executable segments preferred).  False when none does. */
bool elf_symbols_offset_to_vaddr(const struct elf_symbols *es, uint64_t file_off,
				 uint64_t *vaddr);

/* The readable name of the function containing vaddr, and vaddr's offset in
 * it, or NULL when no function does (past the end of the nearest sized
 * symbol, before the first one, outside executable segments for sizeless
 * ones).  The name stays valid until elf_symbols_free. */
const char *elf_symbols_lookup(struct elf_symbols *es, uint64_t vaddr, uint64_t *offset_in_sym);

/* From now on, each name a lookup shows is intern(ctx, name)'s copy, which
 * the table does not own: it stays valid after elf_symbols_free (the
 * caller drops tables of binaries no process maps any more, while frames
 * still hold their names).  Before any lookup.  intern returns NULL when
 * out of memory (the lookup then finds no name). */
typedef const char *(*elf_symbols_intern_fn)(void *ctx, const char *name);
void elf_symbols_intern_names(struct elf_symbols *es, elf_symbols_intern_fn intern, void *ctx);

/* The GNU build-id (NT_GNU_BUILD_ID); its length, 0 when there is none. */
size_t elf_symbols_build_id(const struct elf_symbols *es, const uint8_t **id);

/* Whether the symbols came from a full .symtab (not only .dynsym). */
bool elf_symbols_has_symtab(const struct elf_symbols *es);

size_t elf_symbols_count(const struct elf_symbols *es);
size_t elf_symbols_memory(const struct elf_symbols *es);

/* Moves the raw names to a spill file, to be read back when a symbol is
 * first looked up (its readable name is then kept): they are most of a
 * large table's memory (libjvm's: 2.3 of 3.3 MB) and few are ever shown.
 * Before any lookup (-EBUSY after), after elf_symbols_take_symbols; the
 * file must outlive the table.  0 or the file's -errno (the names stay). */
struct spill_file;
int elf_symbols_move_names(struct elf_symbols *es, struct spill_file *to);
/* Bytes of raw names held in memory: 0 once moved. */
size_t elf_symbols_names_bytes(const struct elf_symbols *es);

/* Replaces into's symbols by from's and frees from: for a separate debug
 * file, whose own program headers describe no file content. */
void elf_symbols_take_symbols(struct elf_symbols *into, struct elf_symbols *from);

void elf_symbols_free(struct elf_symbols *es);

/* The st_value of each of names[0..n) among the defined symbols of an open
 * ELF file's .dynsym and .symtab, whatever their type: an address for code
 * and data, the offset in the module's TLS block for STT_TLS.  A versioned
 * name ("x@@V") matches "x".  Sets values[i] and found[i] for each name seen
 * (found[] is cleared first).  Returns how many were found, or -errno
 * (ENOEXEC: not an ELF file).  what names the file in messages. */
int elf_find_symbol_values(int fd, const char *what, const char *const names[], size_t n,
			   uint64_t values[], bool found[]);

/* Reads the build-id of an open file (cheap: notes only).  Returns its
 * length, 0 when it has none, or -errno.  When names_digest is not NULL, it
 * also gets a 64-bit hash of the bytes names come from (the symbol tables
 * and their strings): a build-id says which build a file claims to be, not
 * that two files name their code alike (a fixed --build-id, a file made to
 * look like another). */
int elf_read_build_id(int fd, uint8_t id[ELF_BUILD_ID_MAX], uint64_t *names_digest);

#endif

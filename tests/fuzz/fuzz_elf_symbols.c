/* fuzz_elf_symbols.c - ELF images from memory (as the vDSO is loaded):
 * loading, offset mapping and lookups (with demangling, and with the names
 * interned elsewhere, as the binary cache does) must not crash. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "symbols/elf_symbols.h"

/* The names a table shows when they are interned (the binary cache's
 * way): copies the table must neither free nor keep using after it. */
struct name_pool {
	char *names[64];
	size_t n;
};

static const char *pool_intern(void *ctx, const char *name)
{
	struct name_pool *pool = ctx;

	if (pool->n == 64)
		return NULL;
	return pool->names[pool->n++] = strdup(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct name_pool pool = { .n = 0 };
	struct elf_symbols *es;
	const uint8_t *id;

	sp_log_set_level(SP_LOG_ERROR);
	es = elf_symbols_load_mem(data, size);
	if (!es)
		return 0;
	if (size & 1)
		elf_symbols_intern_names(es, pool_intern, &pool);
	if (elf_symbols_build_id(es, &id) > ELF_BUILD_ID_MAX)
		__builtin_trap();
	for (uint64_t off = 0; off < 0x4000; off += 0x101) {
		uint64_t vaddr, in_sym;
		const char *name;

		if (!elf_symbols_offset_to_vaddr(es, off, &vaddr))
			vaddr = off;
		name = elf_symbols_lookup(es, vaddr, &in_sym);
		if (name && (name[0] == '\0' || in_sym > vaddr))
			__builtin_trap();
	}
	(void)elf_symbols_memory(es);
	elf_symbols_free(es);
	for (size_t i = 0; i < pool.n; i++) {
		if (pool.names[i] && !pool.names[i][0])
			__builtin_trap();
		free(pool.names[i]);
	}
	return 0;
}

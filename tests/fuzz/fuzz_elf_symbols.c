/* fuzz_elf_symbols.c - ELF images from memory (as the vDSO is loaded):
 * loading, offset mapping and lookups (with demangling) must not crash. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/log.h"
#include "symbols/elf_symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_symbols *es;
	const uint8_t *id;

	sp_log_set_level(SP_LOG_ERROR);
	es = elf_symbols_load_mem(data, size);
	if (!es)
		return 0;
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
	return 0;
}

/* fuzz_hotspot_symbols.c - looking libjvm's symbols up by name in an
 * arbitrary file (as hotspot_open does in the libjvm.so a process maps):
 * elf_find_symbol_values must not crash, and reports only what it found. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/log.h"
#include "symbols/elf_symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {
		"gHotSpotVMStructs", "_ZN6Thread12_thr_currentE", "_ZTV10JavaThread", "use",
	};
	uint64_t values[4];
	bool found[4];
	int fd, n, seen = 0;

	sp_log_set_level(SP_LOG_ERROR);
	fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		n = elf_find_symbol_values(fd, "fuzz input", names, 4, values, found);
		for (int i = 0; i < 4; i++)
			seen += found[i];
		if (n > 4 || (n >= 0 && n != seen))
			__builtin_trap();
	}
	close(fd);
	return 0;
}

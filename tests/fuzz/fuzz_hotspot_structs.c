/* fuzz_hotspot_structs.c - a JVM's memory as a byte image: reading the
 * vmStructs and vmTypes tables, the interpreter, the ThreadsList and TLS,
 * and naming Method*s must stay within the image and its bounds.
 *
 * Image layout (user/jvm/hotspot.h): HS_EX_COUNT words naming the libjvm
 * symbols, then (a convention of this harness and of the seeds, which
 * tests/unit/test_hotspot.c writes with SPARKPROF_WRITE_SEEDS=DIR) up to 4
 * Method*s to name.  The image sits at 0x10000, as in that test. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/log.h"
#include "jvm/hotspot.h"

#define IMAGE_ADDR 0x10000ull
#define HINT_WORDS 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_hotspot_info info;
	struct hotspot *hs;

	sp_log_set_level(SP_LOG_ERROR);
	hs = hotspot_open_image(data, size, IMAGE_ADDR);
	if (!hs)
		return 0;
	hotspot_walker_info(hs, &info);
	if (info.interp_lo >= info.interp_hi || info.tls_modid > 16)
		__builtin_trap();
	for (size_t i = 0; i < HINT_WORDS; i++) {
		size_t at = 8 * (HS_EX_COUNT + i);
		const char *name, *again;
		uint64_t method;

		if (at + 8 > size)
			break;
		memcpy(&method, data + at, 8);
		name = hotspot_method_name(hs, method, false);
		if (name && (strlen(name) >= 512 || !strchr(name, '.')))
			__builtin_trap();
		/* The image does not change: a cached name stays the same copy. */
		again = hotspot_method_name(hs, method, true);
		if (name && again != name)
			__builtin_trap();
	}
	hotspot_free(hs);
	return 0;
}

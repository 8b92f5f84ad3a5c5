/* fuzz_codec_snappy.c - Spark's snappy event log framing (event_log_codec.h) on
 * any bytes. */
#include "codec_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_codec(SPARK_CODEC_SNAPPY, data, size);
}

/* fuzz_otlp_store.c - a sample store file (output/store_file.h) from
 * arbitrary bytes, each segment that reads made an OTLP profiles request
 * (export/otlp_profiles.h): the request must decode again, with every
 * index inside its table. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "export/otlp_profiles.h"

#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
	Request;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary Dictionary;
typedef Opentelemetry__Proto__Profiles__V1development__Profile Profile;

static void check_profile(const Dictionary *d, const Profile *p)
{
	for (size_t i = 0; i < p->n_samples; i++) {
		if (p->samples[i]->stack_index < 0 ||
		    (size_t)p->samples[i]->stack_index >= d->n_stack_table)
			abort();
		for (size_t a = 0; a < p->samples[i]->n_attribute_indices; a++)
			if ((size_t)p->samples[i]->attribute_indices[a] >= d->n_attribute_table)
				abort();
	}
}

static void check(const uint8_t *bytes, size_t len)
{
	Request *req = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(NULL, len, bytes);
	const Dictionary *d;

	if (!req || !(d = req->dictionary) || !d->n_string_table || !d->n_stack_table)
		abort();
	for (size_t i = 0; i < d->n_stack_table; i++)
		for (size_t k = 0; k < d->stack_table[i]->n_location_indices; k++)
			if ((size_t)d->stack_table[i]->location_indices[k] >= d->n_location_table)
				abort();
	for (size_t r = 0; r < req->n_resource_profiles; r++)
		for (size_t s = 0; s < req->resource_profiles[r]->n_scope_profiles; s++)
			for (size_t p = 0; p < req->resource_profiles[r]->scope_profiles[s]->n_profiles; p++)
				check_profile(d, req->resource_profiles[r]->scope_profiles[s]->profiles[p]);
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(req, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("store", 0);
	struct store_reader *r;

	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (!(r = store_reader_open_fd(fd, "fuzz")))
		return 0;
	for (size_t i = 0; i < store_reader_segments(r); i++) {
		struct otlp_batch_settings set = { .info = store_reader_info(r) };
		struct otlp_batch *b = otlp_batch_new(&set);
		uint8_t *bytes;
		size_t len;

		if (!b)
			abort();
		if (!otlp_batch_add_segment(b, r, i) && !otlp_batch_encode(b, &bytes, &len)) {
			check(bytes, len);
			free(bytes);
		}
		otlp_batch_free(b);
	}
	store_reader_close(r);
	return 0;
}

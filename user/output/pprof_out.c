/* pprof_out.c - see pprof_out.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/strmap.h"
#include "output/pprof_out.h"

#include "pprof/profile.pb-c.h"

typedef Perftools__Profiles__Profile Profile;

/* protobuf-c's output, appended to the byte buffer. */
struct sink {
	ProtobufCBuffer base;
	struct byte_buf *out;
};

static void append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	byte_buf_bytes(((struct sink *)b)->out, data, len);
}

static void pack(struct pprof_out *p, const Profile *piece)
{
	struct sink s = { { append }, &p->bytes };

	protobuf_c_message_pack_to_buffer(&piece->base, &s.base);
	if (p->bytes.failed)
		p->failed = true;
}

int64_t pprof_out_string(struct pprof_out *p, const char *str)
{
	int inserted = 0;
	void **slot = strmap_slot(p->strings, str, strlen(str), &inserted);
	Profile piece = PERFTOOLS__PROFILES__PROFILE__INIT;

	if (!slot) {
		p->failed = true;
		return 0;
	}
	if (inserted) {
		*slot = (void *)(uintptr_t)++p->nstrings;
		piece.n_string_table = 1;
		piece.string_table = (char **)&str;
		pack(p, &piece);
	}
	return (int64_t)(uintptr_t)*slot - 1;
}

int pprof_out_init(struct pprof_out *p)
{
	*p = (struct pprof_out){ .strings = strmap_new() };
	if (!p->strings)
		return -ENOMEM;
	pprof_out_string(p, "");
	return p->failed ? -ENOMEM : 0;
}

void pprof_out_free(struct pprof_out *p)
{
	strmap_free(p->strings, NULL);
	byte_buf_free(&p->bytes);
	p->strings = NULL;
}

void pprof_out_value_type(struct pprof_out *p, bool period, const char *type, const char *unit,
			  int64_t period_value)
{
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT, *one = &vt;
	Profile piece = PERFTOOLS__PROFILES__PROFILE__INIT;

	vt.type = pprof_out_string(p, type);
	vt.unit = pprof_out_string(p, unit);
	if (period) {
		piece.period_type = &vt;
		piece.period = period_value;
	} else {
		piece.n_sample_type = 1;
		piece.sample_type = &one;
	}
	pack(p, &piece);
}

void pprof_out_function(struct pprof_out *p, uint64_t id, const char *name,
			const char *system_name, const char *filename)
{
	Perftools__Profiles__Function fn = PERFTOOLS__PROFILES__FUNCTION__INIT, *fns = &fn;
	Perftools__Profiles__Line line = PERFTOOLS__PROFILES__LINE__INIT, *lines = &line;
	Perftools__Profiles__Location loc = PERFTOOLS__PROFILES__LOCATION__INIT, *locs = &loc;
	Profile piece = PERFTOOLS__PROFILES__PROFILE__INIT;

	fn.id = id;
	fn.name = pprof_out_string(p, name);
	fn.system_name = pprof_out_string(p, system_name);
	fn.filename = pprof_out_string(p, filename);
	line.function_id = id;
	loc.id = id;
	loc.n_line = 1;
	loc.line = &lines;
	piece.n_function = 1;
	piece.function = &fns;
	piece.n_location = 1;
	piece.location = &locs;
	pack(p, &piece);
}

/* A sample's labels: at most this many. */
#define LABELS_MAX 16

void pprof_out_sample(struct pprof_out *p, const uint64_t *locations, size_t nlocations,
		      const int64_t *values, size_t nvalues, const struct pprof_label *labels,
		      size_t nlabels)
{
	Perftools__Profiles__Label l[LABELS_MAX], *lp[LABELS_MAX];
	Perftools__Profiles__Sample s = PERFTOOLS__PROFILES__SAMPLE__INIT, *sp = &s;
	Profile piece = PERFTOOLS__PROFILES__PROFILE__INIT;

	if (nlabels > LABELS_MAX)
		nlabels = LABELS_MAX;
	for (size_t i = 0; i < nlabels; i++) {
		perftools__profiles__label__init(&l[i]);
		l[i].key = pprof_out_string(p, labels[i].key);
		l[i].str = pprof_out_string(p, labels[i].value);
		lp[i] = &l[i];
	}
	s.n_location_id = nlocations;
	s.location_id = (uint64_t *)locations;
	s.n_value = nvalues;
	s.value = (int64_t *)values;
	s.n_label = nlabels;
	s.label = lp;
	piece.n_sample = 1;
	piece.sample = &sp;
	pack(p, &piece);
}

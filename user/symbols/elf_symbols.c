/* elf_symbols.c - see elf_symbols.h. */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/log.h"
#include "base/spill_file.h"
#include "symbols/demangle.h"
#include "symbols/elf_symbols.h"

/* Refuse absurd tables rather than allocating gigabytes for a bad file. */
/* What one ELF file may cost (it may be any user's file, reached through a
 * process's root): large C++ libraries with full symbol tables have a few
 * million symbols and ~200 MiB of names. */
#define MAX_SYMBOLS (4u << 20)
#define MAX_NAME_BYTES (256u << 20)
#define MAX_SEGMENTS 4096u
/* Rank of synthesized "name@plt" symbols: any real symbol wins over them. */
#define PLT_RANK 254

/* A symbol while the table is built. */
struct sym_proto {
	uint64_t addr;
	uint64_t end;        /* exclusive; computed at load */
	uint64_t size;       /* st_size, 0 when unknown */
	uint64_t limit;      /* end of the symbol's section, 0 when unknown */
	uint32_t name;       /* offset in names (the raw, mangled name) */
	uint8_t rank;        /* lower wins among symbols at one address */
};

/* A symbol of the finished table: 16 bytes, as libjvm alone has 48,000. */
struct elf_sym {
	uint64_t addr;
	uint32_t len;        /* end - addr, at most UINT32_MAX */
	uint32_t name;       /* offset in names, and SYM_PLT */
};
/* names stay under MAX_NAME_BYTES (2^28): the top bit is free. */
#define SYM_PLT 0x80000000u
#define SYM_NAME(s) ((s)->name & ~SYM_PLT)

struct elf_segment {
	uint64_t offset, vaddr, filesz, memsz;
	uint32_t flags;
};

struct elf_symbols {
	struct elf_sym *syms;
	size_t nsyms;
	char **shown;        /* per symbol: readable name, made on first lookup */
	elf_symbols_intern_fn intern; /* when set, shown names are its copies */
	void *intern_ctx;
	char *names;         /* NULL once moved to cold (elf_symbols_move_names) */
	size_t names_len;
	struct spill_file *cold;
	uint64_t cold_at;    /* where names[0] went in cold */
	struct elf_segment *segs;
	size_t nsegs;
	uint8_t build_id[ELF_BUILD_ID_MAX];
	size_t build_id_len;
	bool has_symtab;
};

static int cmp_sym(const void *a, const void *b)
{
	const struct sym_proto *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* Among aliases prefer a sized, global, un-underscored name (as perf does). */
static uint8_t symbol_rank(const GElf_Sym *s, const char *name)
{
	unsigned bind = GELF_ST_BIND(s->st_info), rank, underscores = 0;

	rank = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
	if (s->st_size == 0)
		rank += 3;
	while (name[underscores] == '_' && underscores < 3)
		underscores++;
	return (uint8_t)(rank * 4 + underscores);
}

static void read_build_id_notes(Elf *elf, struct elf_symbols *es)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			continue;
		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    name_off + 4 <= data->d_size && desc_off <= data->d_size &&
			    nh.n_descsz <= data->d_size - desc_off &&
			    memcmp((char *)data->d_buf + name_off, "GNU", 4) == 0 &&
			    nh.n_descsz > 0 && nh.n_descsz <= ELF_BUILD_ID_MAX) {
				memcpy(es->build_id, (char *)data->d_buf + desc_off, nh.n_descsz);
				es->build_id_len = nh.n_descsz;
				return;
			}
		}
	}
}

static int read_segments(Elf *elf, struct elf_symbols *es)
{
	size_t n;

	if (elf_getphdrnum(elf, &n) != 0)
		return -ENOEXEC;
	if (n > MAX_SEGMENTS)
		return -ENOEXEC;
	es->segs = calloc(n ? n : 1, sizeof(*es->segs));
	if (!es->segs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_offset + ph.p_filesz < ph.p_offset || ph.p_vaddr + ph.p_memsz < ph.p_vaddr)
			continue; /* wraps: bogus */
		es->segs[es->nsegs++] = (struct elf_segment){
			.offset = ph.p_offset, .vaddr = ph.p_vaddr, .filesz = ph.p_filesz,
			.memsz = ph.p_memsz, .flags = ph.p_flags,
		};
	}
	return 0;
}

/* The end of the executable segment holding addr, or 0. */
static uint64_t exec_segment_end(const struct elf_symbols *es, uint64_t addr)
{
	for (size_t i = 0; i < es->nsegs; i++) {
		const struct elf_segment *s = &es->segs[i];
		if ((s->flags & PF_X) && addr >= s->vaddr && addr - s->vaddr < s->memsz)
			return s->vaddr + s->memsz;
	}
	return 0;
}

/* A sized symbol ends at its size; a sizeless one (hand-written assembly)
 * at the next symbol, but never past its executable segment. */
static void compute_ends(const struct elf_symbols *es, struct sym_proto *syms, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct sym_proto *s = &syms[i];
		uint64_t next = i + 1 < n ? syms[i + 1].addr : UINT64_MAX;
		uint64_t seg_end = exec_segment_end(es, s->addr);

		if (s->size) {
			s->end = s->addr + s->size < s->addr ? UINT64_MAX : s->addr + s->size;
		} else {
			s->end = next;
			/* _init is sizeless and followed by the PLT: stop at the
			 * end of its section rather than name PLT stubs "_init". */
			if (s->limit > s->addr && s->limit < s->end)
				s->end = s->limit;
			if (seg_end && seg_end < s->end)
				s->end = seg_end;
			if (!seg_end)
				s->end = s->addr + 1 < next ? s->addr + 1 : next;
		}
	}
}

static Elf_Scn *find_symbol_section(Elf *elf, Elf64_Word type, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, sh) && sh->sh_type == type)
			return scn;
	return NULL;
}

/* The end address of section shndx, 0 when unknown. */
static uint64_t section_end(Elf *elf, unsigned shndx)
{
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
		return 0;
	scn = elf_getscn(elf, shndx);
	if (!scn || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC))
		return 0;
	if (sh.sh_addr + sh.sh_size < sh.sh_addr)
		return 0;
	return sh.sh_addr + sh.sh_size;
}

/* The symbols while loading, and the growth of the name array. */
struct sym_builder {
	struct sym_proto *syms;
	size_t nsyms, cap, names_cap;
};

/* Appends symbol proto named name[0..len) + suffix.  0, 1 when the name
 * space is full, or -ENOMEM. */
static int add_symbol(struct elf_symbols *es, struct sym_builder *b, struct sym_proto proto,
		      const char *name, size_t len, const char *suffix)
{
	size_t slen = strlen(suffix), need = len + slen + 1;

	if (b->nsyms == b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 256;
		struct sym_proto *n = realloc(b->syms, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		b->syms = n;
		b->cap = ncap;
	}
	if (es->names_len + need > MAX_NAME_BYTES)
		return 1;
	if (es->names_len + need > b->names_cap) {
		size_t ncap = b->names_cap ? b->names_cap * 2 : 4096;
		char *n;

		while (ncap < es->names_len + need)
			ncap *= 2;
		n = realloc(es->names, ncap);
		if (!n)
			return -ENOMEM;
		es->names = n;
		b->names_cap = ncap;
	}
	proto.name = (uint32_t)es->names_len;
	b->syms[b->nsyms++] = proto;
	memcpy(es->names + es->names_len, name, len);
	memcpy(es->names + es->names_len + len, suffix, slen);
	es->names_len += len + slen;
	es->names[es->names_len++] = '\0';
	return 0;
}

/* A symbol section's data and how many of its entries to read (at most
 * MAX_SYMBOLS); 0 when it has none. */
static size_t symbol_section(Elf_Scn *scn, const GElf_Shdr *sh, Elf_Data **data)
{
	size_t count;

	*data = elf_getdata(scn, NULL);
	if (!*data || sh->sh_entsize == 0)
		return 0;
	count = (*data)->d_size / sh->sh_entsize;
	return count > MAX_SYMBOLS ? MAX_SYMBOLS : count;
}

/* Appends the function symbols of one symbol section.  Returns how many. */
static long read_symbol_section(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
				struct elf_symbols *es, struct sym_builder *b)
{
	Elf_Data *data;
	size_t count = symbol_section(scn, sh, &data), added = 0;

	for (size_t i = 0; i < count; i++) {
		GElf_Sym s;
		const char *name;
		unsigned type;
		int err;

		if (!gelf_getsym(data, (int)i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
		    s.st_value == 0)
			continue;
		name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		err = add_symbol(es, b, (struct sym_proto){
				.addr = s.st_value, .size = s.st_size,
				.limit = s.st_size ? 0 : section_end(elf, s.st_shndx),
				.rank = symbol_rank(&s, name),
			}, name, strnlen(name, 4096), "");
		if (err < 0)
			return err;
		if (err > 0)
			break;
		added++;
	}
	return (long)added;
}

static Elf_Scn *find_section_named(Elf *elf, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh->sh_name);
		if (name && strcmp(name, want) == 0)
			return scn;
	}
	return NULL;
}

struct got_slot {
	uint64_t got;        /* r_offset of a JUMP_SLOT or IRELATIVE relocation */
	uint64_t ifunc;      /* IRELATIVE: its addend, the IFUNC's resolver */
	uint32_t sym;        /* its .dynsym index (IRELATIVE: the IFUNC's, 0: none) */
};

/* The IFUNC symbols of .dynsym, by address and then rank, to name the
 * IRELATIVE stubs; built only when there are some (39 in libc's PLT). */
struct ifunc_sym {
	uint64_t addr;
	uint32_t sym;
	uint8_t rank;
};

static int cmp_ifunc_sym(const void *a, const void *b)
{
	const struct ifunc_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

static struct ifunc_sym *read_ifuncs(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, size_t *n)
{
	Elf_Data *data;
	size_t count = symbol_section(scn, sh, &data);
	struct ifunc_sym *out = NULL, *grown;
	size_t cap = 0;

	*n = 0;
	for (size_t i = 1; i < count; i++) {
		const char *name;
		GElf_Sym s;

		if (!gelf_getsym(data, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_GNU_IFUNC ||
		    s.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			grown = realloc(out, cap * sizeof(*out));
			if (!grown) {
				free(out);
				*n = 0;
				return NULL;
			}
			out = grown;
		}
		out[(*n)++] = (struct ifunc_sym){ s.st_value, (uint32_t)i, symbol_rank(&s, name) };
	}
	if (*n)
		qsort(out, *n, sizeof(*out), cmp_ifunc_sym);
	return out;
}

/* The .dynsym index of the best-ranked IFUNC symbol at addr, 0 when none. */
static uint32_t ifunc_at(const struct ifunc_sym *ifuncs, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ifuncs[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && ifuncs[lo].addr == addr ? ifuncs[lo].sym : 0;
}

static int cmp_got_slot(const void *a, const void *b)
{
	const struct got_slot *x = a, *y = b;
	return x->got < y->got ? -1 : x->got > y->got;
}

/* The GOT slot a 16-byte x86-64 PLT stub jumps through: "jmp *d(%rip)"
 * (ff 25 d32), maybe after endbr64 (f3 0f 1e fa) and a bnd prefix (f2).
 * 0 when the stub is not of that form. */
static uint64_t plt_stub_target(const uint8_t *code, size_t len, uint64_t addr)
{
	size_t i = 0;
	int32_t disp;

	if (len >= 4 && code[0] == 0xf3 && code[1] == 0x0f && code[2] == 0x1e && code[3] == 0xfa)
		i = 4;
	if (i < len && code[i] == 0xf2)
		i++;
	if (i + 6 > len || code[i] != 0xff || code[i + 1] != 0x25)
		return 0;
	memcpy(&disp, code + i + 2, 4);
	return addr + i + 6 + (uint64_t)(int64_t)disp;
}

/* x86-64 PLT stubs, named "function@plt" as perf does.  Each stub of .plt
 * (after its 16-byte header) or of .plt.sec is decoded to find the GOT slot
 * it jumps through; the JUMP_SLOT relocation of that slot names it.  An
 * IRELATIVE slot (libc calling its own memcpy, strlen...) is named by the
 * IFUNC symbol at the relocation's addend, where perf shows "*ABS*+0x...".
 * Stubs that do not decode stay unnamed: no guessing. */
static int read_plt_symbols(Elf *elf, struct elf_symbols *es, struct sym_builder *b)
{
	GElf_Shdr rela_sh, plt_sh, dynsym_sh;
	Elf_Scn *rela, *plt, *dynsym;
	Elf_Data *rela_data, *sym_data, *code;
	struct got_slot *slots;
	struct ifunc_sym *ifuncs = NULL;
	size_t n, nslots = 0, nirelative = 0, nifuncs = 0, skip;
	GElf_Ehdr eh;
	int err = 0;

	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64)
		return 0;
	rela = find_section_named(elf, ".rela.plt", &rela_sh);
	if (!rela || rela_sh.sh_type != SHT_RELA || rela_sh.sh_entsize == 0)
		return 0;
	n = rela_sh.sh_size / rela_sh.sh_entsize;
	plt = find_section_named(elf, ".plt.sec", &plt_sh);
	skip = 0;
	if (!plt) {
		plt = find_section_named(elf, ".plt", &plt_sh);
		skip = 16;
	}
	if (!plt || plt_sh.sh_type != SHT_PROGBITS || n == 0 || n > MAX_SYMBOLS)
		return 0;
	dynsym = elf_getscn(elf, rela_sh.sh_link);
	if (!dynsym || !gelf_getshdr(dynsym, &dynsym_sh) || dynsym_sh.sh_type != SHT_DYNSYM)
		return 0;
	rela_data = elf_getdata(rela, NULL);
	sym_data = elf_getdata(dynsym, NULL);
	code = elf_getdata(plt, NULL);
	if (!rela_data || !sym_data || !code || !code->d_buf)
		return 0;
	slots = calloc(n, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Rela r;

		if (!gelf_getrela(rela_data, (int)i, &r))
			break;
		if (GELF_R_TYPE(r.r_info) == R_X86_64_JUMP_SLOT && GELF_R_SYM(r.r_info) != 0)
			slots[nslots++] = (struct got_slot){ .got = r.r_offset,
							     .sym = (uint32_t)GELF_R_SYM(r.r_info) };
		else if (GELF_R_TYPE(r.r_info) == R_X86_64_IRELATIVE && r.r_addend > 0) {
			slots[nslots++] = (struct got_slot){ .got = r.r_offset,
							     .ifunc = (uint64_t)r.r_addend };
			nirelative++;
		}
	}
	if (nirelative)
		ifuncs = read_ifuncs(elf, dynsym, &dynsym_sh, &nifuncs);
	for (size_t i = 0; ifuncs && i < nslots; i++)
		if (slots[i].ifunc)
			slots[i].sym = ifunc_at(ifuncs, nifuncs, slots[i].ifunc);
	free(ifuncs);
	qsort(slots, nslots, sizeof(*slots), cmp_got_slot);
	for (size_t off = skip; nslots && off + 16 <= code->d_size; off += 16) {
		uint64_t addr = plt_sh.sh_addr + off;
		struct got_slot key = { .got = plt_stub_target((const uint8_t *)code->d_buf + off, 16, addr) };
		struct got_slot *slot;
		const char *name;
		GElf_Sym s;

		if (!key.got)
			continue;
		slot = bsearch(&key, slots, nslots, sizeof(*slots), cmp_got_slot);
		if (!slot || !slot->sym || !gelf_getsym(sym_data, (int)slot->sym, &s))
			continue;
		name = elf_strptr(elf, dynsym_sh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		err = add_symbol(es, b, (struct sym_proto){ .addr = addr, .size = 16, .rank = PLT_RANK },
				 name, strnlen(name, 4096), "@plt");
		if (err)
			break;
	}
	free(slots);
	return err < 0 ? err : 0;
}

/* Sorts, keeps the best name per address, computes ends, and makes the
 * compact table from b's symbols (which it frees). */
static int finish_table(struct elf_symbols *es, struct sym_builder *b)
{
	size_t out = 0;

	/* The names are final: give back what doubling left unused (up to
	 * half of libjvm's 3 MB). */
	if (es->names && es->names_len < b->names_cap) {
		char *fit = realloc(es->names, es->names_len ? es->names_len : 1);

		if (fit)
			es->names = fit;
	}
	free(es->shown);
	es->shown = NULL;
	free(es->syms);
	es->syms = NULL;
	es->nsyms = 0;
	if (b->nsyms == 0) {
		free(b->syms);
		return 0;
	}
	qsort(b->syms, b->nsyms, sizeof(*b->syms), cmp_sym);
	for (size_t i = 0; i < b->nsyms; i++)
		if (!out || b->syms[out - 1].addr != b->syms[i].addr)
			b->syms[out++] = b->syms[i];
	compute_ends(es, b->syms, out);
	es->syms = malloc(out * sizeof(*es->syms));
	es->shown = calloc(out, sizeof(*es->shown));
	if (!es->syms || !es->shown) {
		free(b->syms);
		return -ENOMEM;
	}
	for (size_t i = 0; i < out; i++) {
		const struct sym_proto *p = &b->syms[i];
		uint64_t len = p->end - p->addr;

		es->syms[i] = (struct elf_sym){
			.addr = p->addr,
			.len = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len,
			.name = p->name | (p->rank == PLT_RANK ? SYM_PLT : 0),
		};
	}
	es->nsyms = out;
	free(b->syms);
	return 0;
}

static int read_symbols(Elf *elf, struct elf_symbols *es)
{
	struct sym_builder b = { 0 };
	GElf_Shdr sh;
	Elf_Scn *scn;
	long n = 0;

	scn = find_symbol_section(elf, SHT_SYMTAB, &sh);
	if (scn) {
		n = read_symbol_section(elf, scn, &sh, es, &b);
		if (n < 0) {
			free(b.syms);
			return (int)n;
		}
		es->has_symtab = n > 0;
	}
	if (n == 0) {
		scn = find_symbol_section(elf, SHT_DYNSYM, &sh);
		if (scn && (n = read_symbol_section(elf, scn, &sh, es, &b)) < 0) {
			free(b.syms);
			return (int)n;
		}
	}
	n = read_plt_symbols(elf, es, &b);
	if (n < 0) {
		free(b.syms);
		return (int)n;
	}
	return finish_table(es, &b);
}

static struct elf_symbols *load_elf(Elf *elf, const char *what)
{
	struct elf_symbols *es;
	GElf_Ehdr eh;
	int err;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		sp_debug("%s: not an ELF file: %s", what, elf_errmsg(-1));
		errno = ENOEXEC;
		return NULL;
	}
	es = calloc(1, sizeof(*es));
	if (!es) {
		errno = ENOMEM;
		return NULL;
	}
	err = read_segments(elf, es);
	if (!err)
		err = read_symbols(elf, es);
	if (err) {
		elf_symbols_free(es);
		errno = -err;
		return NULL;
	}
	read_build_id_notes(elf, es);
	return es;
}

struct elf_symbols *elf_symbols_load_fd(int fd, const char *what)
{
	struct elf_symbols *es;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = ENOSYS;
		return NULL;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		sp_debug("%s: libelf: %s", what, elf_errmsg(-1));
		errno = ENOEXEC;
		return NULL;
	}
	es = load_elf(elf, what);
	elf_end(elf);
	return es;
}

struct elf_symbols *elf_symbols_load_mem(const void *image, size_t len)
{
	struct elf_symbols *es;
	char *copy;
	Elf *elf;
	int saved;

	if (!image || len == 0) {
		errno = ENOEXEC;
		return NULL;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = ENOSYS;
		return NULL;
	}
	/* libelf may convert data in place; never touch the caller's bytes. */
	copy = malloc(len);
	if (!copy) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(copy, image, len);
	elf = elf_memory(copy, len);
	if (!elf) {
		free(copy);
		errno = ENOEXEC;
		return NULL;
	}
	es = load_elf(elf, "ELF image in memory");
	saved = errno;
	elf_end(elf);
	free(copy);
	errno = saved;
	return es;
}

bool elf_symbols_offset_to_vaddr(const struct elf_symbols *es, uint64_t file_off,
				 uint64_t *vaddr)
{
	const struct elf_segment *found = NULL;

	for (size_t i = 0; es && i < es->nsegs; i++) {
		const struct elf_segment *s = &es->segs[i];
		if (file_off < s->offset || file_off - s->offset >= s->filesz)
			continue;
		if (!found || ((s->flags & PF_X) && !(found->flags & PF_X)))
			found = s;
	}
	if (!found)
		return false;
	*vaddr = file_off - found->offset + found->vaddr;
	return true;
}

/* Names at most this long (add_symbol cuts at 4096, plus "@plt"). */
#define RAW_NAME_MAX 4112

/* Symbol i's raw name: in names, or read back from cold into buf.  NULL
 * when it cannot be read back (the spill file says why once). */
static const char *raw_name(const struct elf_symbols *es, size_t i, char *buf, size_t cap)
{
	uint32_t at = SYM_NAME(&es->syms[i]);

	if (es->names)
		return es->names + at;
	return at < es->names_len ? spill_file_read_text(es->cold, es->cold_at + at,
							 es->names_len - at, buf, cap)
				  : NULL;
}

/* Whether symbol i's shown name is its raw name in names (not a copy). */
static bool shown_is_raw(const struct elf_symbols *es, size_t i)
{
	return es->names && es->shown[i] == es->names + SYM_NAME(&es->syms[i]);
}

/* Whether the table owns symbol i's shown name (to free and count it). */
static bool shown_is_owned(const struct elf_symbols *es, size_t i)
{
	return es->shown[i] && !es->intern && !shown_is_raw(es, i);
}

void elf_symbols_intern_names(struct elf_symbols *es, elf_symbols_intern_fn intern, void *ctx)
{
	es->intern = intern;
	es->intern_ctx = ctx;
}

/* Symbol i's readable name, made now: NULL when its raw name cannot be
 * read back, or out of memory. */
static char *make_shown(struct elf_symbols *es, size_t i)
{
	char buf[RAW_NAME_MAX];
	const char *raw = raw_name(es, i, buf, sizeof(buf));
	char *readable = raw ? demangle_symbol(raw) : NULL;
	const char *copy;

	if (!raw)
		return NULL;
	if (!es->intern)
		return readable ? readable : es->names ? (char *)raw : strdup(raw);
	copy = es->intern(es->intern_ctx, readable ? readable : raw);
	free(readable);
	return (char *)copy;
}

int elf_symbols_move_names(struct elf_symbols *es, struct spill_file *to)
{
	struct spill_ref ref;
	int err;

	if (!es->names || !es->names_len)
		return 0;
	/* A name already shown may point into names: they must stay. */
	for (size_t i = 0; i < es->nsyms; i++)
		if (es->shown[i] && shown_is_raw(es, i))
			return -EBUSY;
	if ((err = spill_file_put(to, es->names, es->names_len, &ref)))
		return err;
	free(es->names);
	es->names = NULL;
	es->cold = to;
	es->cold_at = ref.offset;
	return 0;
}

const char *elf_symbols_lookup(struct elf_symbols *es, uint64_t vaddr, uint64_t *offset_in_sym)
{
	size_t lo = 0, hi;

	if (!es || es->nsyms == 0 || vaddr < es->syms[0].addr)
		return NULL;
	hi = es->nsyms;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (es->syms[mid].addr <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	/* A function can contain a smaller symbol (a local label with a size):
	 * look back a little for an enclosing one before giving up. */
	for (size_t back = 0; back < 4 && back <= lo; back++) {
		size_t i = lo - back;
		struct elf_sym *s = &es->syms[i];

		if (vaddr - s->addr >= s->len)
			continue;
		if (!es->shown[i] && !(es->shown[i] = make_shown(es, i)))
			return NULL;
		if (offset_in_sym)
			*offset_in_sym = vaddr - s->addr;
		return es->shown[i];
	}
	return NULL;
}

size_t elf_symbols_build_id(const struct elf_symbols *es, const uint8_t **id)
{
	*id = es->build_id;
	return es->build_id_len;
}

bool elf_symbols_has_symtab(const struct elf_symbols *es)
{
	return es->has_symtab;
}

size_t elf_symbols_count(const struct elf_symbols *es)
{
	return es ? es->nsyms : 0;
}

size_t elf_symbols_names_bytes(const struct elf_symbols *es)
{
	return es && es->names ? es->names_len : 0;
}

size_t elf_symbols_memory(const struct elf_symbols *es)
{
	size_t total = sizeof(*es);

	if (!es)
		return 0;
	total += es->nsyms * (sizeof(*es->syms) + sizeof(*es->shown)) +
		 (es->names ? es->names_len : 0);
	total += es->nsegs * sizeof(*es->segs);
	for (size_t i = 0; i < es->nsyms; i++)
		if (shown_is_owned(es, i))
			total += strlen(es->shown[i]) + 1;
	return total;
}

void elf_symbols_take_symbols(struct elf_symbols *into, struct elf_symbols *from)
{
	struct sym_builder b = { .names_cap = from->names_len };

	/* from's table, as symbols being built again: its ends as sizes. */
	b.syms = malloc((from->nsyms ? from->nsyms : 1) * sizeof(*b.syms));
	b.cap = b.syms ? from->nsyms : 0;
	for (size_t i = 0; b.syms && i < from->nsyms; i++)
		b.syms[b.nsyms++] = (struct sym_proto){
			.addr = from->syms[i].addr, .size = from->syms[i].len,
			.name = SYM_NAME(&from->syms[i]),
			.rank = from->syms[i].name & SYM_PLT ? PLT_RANK : 0,
		};
	/* The debug file has no PLT contents: keep the stubs found in into. */
	for (size_t i = 0; b.syms && i < into->nsyms; i++) {
		char buf[RAW_NAME_MAX];
		const char *name = raw_name(into, i, buf, sizeof(buf));

		if (name && (into->syms[i].name & SYM_PLT) &&
		    add_symbol(from, &b, (struct sym_proto){ .addr = into->syms[i].addr,
							     .size = into->syms[i].len,
							     .rank = PLT_RANK },
			       name, strlen(name), "") < 0)
			break;
	}
	for (size_t i = 0; into->shown && i < into->nsyms; i++)
		if (shown_is_owned(into, i))
			free(into->shown[i]);
	free(into->shown);
	free(into->names);
	into->shown = NULL;
	into->names = from->names;
	into->names_len = from->names_len;
	into->has_symtab = from->has_symtab;
	from->names = NULL;
	elf_symbols_free(from);
	if (finish_table(into, &b) < 0)
		into->nsyms = 0; /* out of memory: no names rather than a crash */
}

void elf_symbols_free(struct elf_symbols *es)
{
	if (!es)
		return;
	for (size_t i = 0; es->shown && i < es->nsyms; i++)
		if (shown_is_owned(es, i))
			free(es->shown[i]);
	/* Its names in the spill file are read no more: their room goes back. */
	if (es->cold)
		spill_file_discard(es->cold, &(struct spill_ref){ es->cold_at, es->names_len });
	free(es->shown);
	free(es->syms);
	free(es->names);
	free(es->segs);
	free(es);
}

/* Hashes every symbol table and the string table it links to. */
static uint64_t digest_names(Elf *elf)
{
	uint64_t h = FNV1A_INIT;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		Elf_Scn *strs = elf_getscn(elf, sh.sh_link);
		Elf_Data *d = elf_rawdata(scn, NULL);

		if (d && d->d_buf)
			h = fnv1a(h, d->d_buf, d->d_size);
		d = strs ? elf_rawdata(strs, NULL) : NULL;
		if (d && d->d_buf)
			h = fnv1a(h, d->d_buf, d->d_size);
	}
	return h;
}

int elf_read_build_id(int fd, uint8_t id[ELF_BUILD_ID_MAX], uint64_t *names_digest)
{
	struct elf_symbols tmp;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -ENOEXEC;
	memset(&tmp, 0, sizeof(tmp));
	if (elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return -ENOEXEC;
	}
	read_build_id_notes(elf, &tmp);
	if (names_digest)
		*names_digest = digest_names(elf);
	elf_end(elf);
	memcpy(id, tmp.build_id, tmp.build_id_len);
	return (int)tmp.build_id_len;
}

/* Whether symbol name sym is want, maybe with a version suffix. */
static bool symbol_name_is(const char *sym, const char *want)
{
	size_t len = strlen(want);

	return strncmp(sym, want, len) == 0 && (sym[len] == '\0' || sym[len] == '@');
}

/* Looks names up in one symbol section; returns how many it newly found. */
static size_t find_in_section(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			      const char *const names[], size_t n, uint64_t values[], bool found[])
{
	Elf_Data *data;
	size_t count = symbol_section(scn, sh, &data), hits = 0;

	for (size_t i = 0; i < count; i++) {
		const char *name;
		GElf_Sym s;

		if (!gelf_getsym(data, (int)i, &s))
			break;
		if (s.st_shndx == SHN_UNDEF || s.st_name == 0)
			continue;
		name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!name)
			continue;
		for (size_t k = 0; k < n; k++) {
			if (found[k] || name[0] != names[k][0] || !symbol_name_is(name, names[k]))
				continue;
			values[k] = s.st_value;
			found[k] = true;
			hits++;
		}
	}
	return hits;
}

int elf_find_symbol_values(int fd, const char *what, const char *const names[], size_t n,
			   uint64_t values[], bool found[])
{
	Elf_Scn *scn = NULL;
	size_t hits = 0;
	Elf *elf;

	for (size_t k = 0; k < n; k++)
		found[k] = false;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		sp_debug("%s: not an ELF file: %s", what, elf_errmsg(-1));
		elf_end(elf);
		return -ENOEXEC;
	}
	while (hits < n && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM))
			hits += find_in_section(elf, scn, &sh, names, n, values, found);
	}
	elf_end(elf);
	return (int)hits;
}

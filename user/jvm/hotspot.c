/* hotspot.c - see hotspot.h.
 *
 * Opening a JVM: find libjvm.so in the maps, look its gHotSpot* symbols up in
 * the file, read the vmStructs/vmTypes tables from the process into a
 * temporary list, resolve the handful of fields we use (following the type
 * table's superclass links: a field may be listed under Thread or JavaThread
 * depending on the JDK), then read the interpreter's bounds and find libjvm's
 * TLS module id through one JavaThread.  Naming a Method*: Method ->
 * ConstMethod -> ConstantPool -> holder Klass -> name Symbols.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hash.h"
#include "base/clock.h"
#include "base/log.h"
#include "jvm/hotspot.h"
#include "proc/proc_maps.h"
#include "proc/proc_mem.h"
#include "proc/proc_root.h"
#include "symbols/elf_symbols.h"

/* Bounds on what a (possibly hostile) process can make us read or keep. */
#define MAX_TABLE_ENTRIES 20000u    /* vmStructs: 788 (17), 585 (25) */
#define MAX_STRIDE 512u             /* entry strides: 48 and 40 */
#define NAME_CAP 96                 /* type and field names: longest seen 62 */
#define MAX_SUPER_DEPTH 16          /* superclass links followed */
#define MAX_FIELD_OFFSET 65536u     /* JavaThread is ~2 KiB */
#define MAX_TYPE_SIZE 65536u
#define MAX_INTERP_BYTES (64u << 20) /* the interpreter is ~100 KB */
#define MAX_METHOD_NAME 512         /* bytes of "pkg/Class.method", NUL included */
#define MAX_CACHED_METHODS 65536u   /* per JVM */
#define MAX_NAMES 131072u           /* distinct names kept per JVM */
#define MAX_NAME_BYTES (16u << 20)  /* their bytes */
#define NAME_CHUNK (64u << 10)
#define MAX_THREADS_TRIED 64u       /* JavaThreads tried to find the TLS modid */
#define MAX_TLS_MODID 16u
#define USER_ADDR_END PROC_USER_ADDR_END

/* Where a JVM's memory comes from: a live process, or an image (tests). */
struct hs_mem {
	pid_t pid;
	const uint8_t *image;
	size_t image_len;
	uint64_t image_addr;
};

struct cache_entry {
	uint64_t method;       /* 0: empty slot */
	uint64_t const_method; /* Method::_constMethod when named */
	uint64_t checked_ns;   /* when it was last read or revalidated */
	const char *name;
};

/* A Method* is revalidated at most this often: a deep or recursive
 * interpreted stack repeats the same methods in every sample, and one read
 * each per sample would cost far more than naming the sample. A class
 * unloaded and its Method* reused within the window is named as before. */
#define REVALIDATE_NS (100ULL * 1000 * 1000)

/* Name copies, shared by equal names (a reused Method* often gets the same
 * name again, and Spark's generated classes repeat names), kept until
 * hotspot_free because callers hold them. */
struct name_store {
	const char **slots;    /* open addressing; NULL: empty */
	size_t nslots, count, bytes;
	char *chunk;           /* current chunk, chunk_used bytes taken */
	size_t chunk_used;
	char **chunks;
	size_t nchunks, chunks_cap;
	bool full_warned;
};

/* The offsets this module uses, from vmStructs. */
struct layout {
	/* walker */
	uint64_t anchor, last_java_sp, last_java_fp, last_java_pc, stack_base;
	/* interpreter: AbstractInterpreter::_code is a StubQueue* */
	uint64_t interp_code_addr, stub_buffer, buffer_limit;
	/* naming */
	uint64_t method_const_method, const_method_constants, const_method_name_index;
	uint64_t cp_pool_holder, cp_length, cp_size, klass_name, symbol_length, symbol_body;
	bool has_cp_length;
	/* finding the TLS modid (optional) */
	uint64_t java_thread_list_addr, tl_length, tl_threads, osthread, pthread_id;
	bool has_threads;
	uint64_t vm_major_addr;  /* 0: unknown */
	/* the code cache, for compiled frames' sizes (optional) */
	uint64_t heaps_addr, low_bound_addr, high_bound_addr, array_len, array_data;
	uint64_t heap_memory, heap_segmap, heap_log2_segment, space_low, space_high;
	uint64_t block_size, blob_frame_size;
	bool has_code_heaps;
};

struct hotspot {
	struct hs_mem mem;
	struct layout l;
	struct sp_hotspot_info info;
	int jdk_major;
	struct cache_entry *cache;  /* open addressing, ncache slots */
	size_t ncache, cached;
	struct name_store names;
};

/* ---- reading the process ---------------------------------------------- */

/* Copies n bytes at addr.  0, -EFAULT when not all are readable, -ESRCH when
 * the process is gone, or another -errno of process_vm_readv. */
static int mem_read(const struct hs_mem *m, uint64_t addr, void *dst, size_t n)
{
	if (n == 0)
		return 0;
	if (m->image) {
		uint64_t off = addr - m->image_addr;

		if (addr < m->image_addr || off > m->image_len || n > m->image_len - off)
			return -EFAULT;
		memcpy(dst, m->image + off, n);
		return 0;
	}
	return proc_mem_read(m->pid, addr, dst, n);
}

static int read_u64(const struct hs_mem *m, uint64_t addr, uint64_t *v)
{
	return mem_read(m, addr, v, sizeof(*v));
}

static int read_u32(const struct hs_mem *m, uint64_t addr, uint32_t *v)
{
	return mem_read(m, addr, v, sizeof(*v));
}

static int read_u16(const struct hs_mem *m, uint64_t addr, uint16_t *v)
{
	return mem_read(m, addr, v, sizeof(*v));
}

/* Reads the C string at addr into buf[cap], page by page (a string may end
 * just before an unreadable page).  A longer string is cut at cap - 1
 * bytes, which no name we look for is.  0 or -errno. */
static int read_cstr(const struct hs_mem *m, uint64_t addr, char *buf, size_t cap)
{
	size_t got = 0;

	while (got + 1 < cap) {
		size_t want = 4096 - ((addr + got) & 4095);
		char *nul;
		int err;

		if (want > cap - 1 - got)
			want = cap - 1 - got;
		err = mem_read(m, addr + got, buf + got, want);
		if (err)
			return err;
		nul = memchr(buf + got, '\0', want);
		if (nul)
			return 0;
		got += want;
	}
	buf[cap - 1] = '\0';
	return 0;
}

static bool user_pointer(uint64_t p)
{
	return p != 0 && p < USER_ADDR_END;
}

/* ---- the vmStructs and vmTypes tables ------------------------------------ */

struct vm_field {
	char type[NAME_CAP], field[NAME_CAP];
	bool is_static;
	uint64_t value;        /* offset, or address when static */
};

struct vm_type {
	char name[NAME_CAP], super[NAME_CAP];
	uint64_t size;
};

struct vm_tables {
	struct vm_field *fields;
	size_t nfields, fields_cap;
	struct vm_type *types;
	size_t ntypes, types_cap;
};

static void vm_tables_free(struct vm_tables *t)
{
	free(t->fields);
	free(t->types);
}

/* Makes room for one more element. */
static int grow(void **v, size_t *cap, size_t count, size_t elem)
{
	size_t ncap;
	void *n;

	if (count < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 256;
	n = realloc(*v, ncap * elem);
	if (!n)
		return -ENOMEM;
	*v = n;
	*cap = ncap;
	return 0;
}

/* The layout of one table's entries: where each member sits. */
struct entry_shape {
	uint64_t table;        /* first entry */
	uint64_t stride;
	uint64_t off[5];       /* where each member is, in an order per table */
};

/* Reads a table's address, stride and member offsets from the export
 * variables, and checks that each member (8 bytes) fits in an entry. */
static int read_shape(const struct hs_mem *m, const uint64_t ex[HS_EX_COUNT],
		      enum hotspot_export table, enum hotspot_export stride,
		      const enum hotspot_export *members, unsigned nmembers,
		      struct entry_shape *s)
{
	int err;

	memset(s, 0, sizeof(*s));
	if (!ex[table] || !ex[stride])
		return -ENOENT;
	err = read_u64(m, ex[table], &s->table);
	if (!err)
		err = read_u64(m, ex[stride], &s->stride);
	if (err)
		return err;
	/* The JVM fills the table pointers in as it starts. */
	if (!s->table)
		return -EAGAIN;
	if (s->stride < 8 || s->stride > MAX_STRIDE)
		return -EPROTO;
	for (unsigned i = 0; i < nmembers; i++) {
		if (!ex[members[i]])
			return -ENOENT;
		err = read_u64(m, ex[members[i]], &s->off[i]);
		if (err)
			return err;
		if (s->off[i] > s->stride - 8)
			return -EPROTO;
	}
	return 0;
}

static uint64_t entry_u64(const uint8_t *entry, uint64_t off)
{
	uint64_t v;

	memcpy(&v, entry + off, sizeof(v));
	return v;
}

/* Reads entry i of a table.  1 when it is the NULL entry that ends the
 * table, 0, or -errno (EPROTO when the table would wrap). */
static int read_entry(const struct hs_mem *m, const struct entry_shape *s, size_t i,
		      uint8_t entry[MAX_STRIDE])
{
	uint64_t addr = s->table + i * s->stride;
	int err;

	if (addr < s->table)
		return -EPROTO;
	err = mem_read(m, addr, entry, s->stride);
	if (err)
		return err;
	return entry_u64(entry, s->off[0]) == 0;
}

/* Reads the optional string at addr (empty when NULL). */
static int read_name(const struct hs_mem *m, uint64_t addr, char buf[NAME_CAP])
{
	buf[0] = '\0';
	return addr ? read_cstr(m, addr, buf, NAME_CAP) : 0;
}

/* Adds one entry of a table to t.  0 or -errno. */
typedef int add_entry_fn(const struct hs_mem *m, const struct entry_shape *s,
			 const uint8_t *entry, struct vm_tables *t);

/* Calls add for each entry of a table, up to the NULL entry that ends it.
 * -EPROTO when there is none within MAX_TABLE_ENTRIES. */
static int read_table(const struct hs_mem *m, const struct entry_shape *s, add_entry_fn *add,
		      struct vm_tables *t)
{
	uint8_t entry[MAX_STRIDE];

	for (size_t i = 0; i < MAX_TABLE_ENTRIES; i++) {
		int err = read_entry(m, s, i, entry);

		if (err)
			return err > 0 ? 0 : err;
		err = add(m, s, entry, t);
		if (err)
			return err;
	}
	return -EPROTO;
}

/* A gHotSpotVMStructs entry; off[] is type name, field name, offset,
 * address, then where isStatic (an int) is. */
static int add_field(const struct hs_mem *m, const struct entry_shape *s, const uint8_t *entry,
		     struct vm_tables *t)
{
	struct vm_field *f;
	int32_t is_static;
	int err;

	err = grow((void **)&t->fields, &t->fields_cap, t->nfields, sizeof(*f));
	if (err)
		return err;
	f = &t->fields[t->nfields];
	err = read_name(m, entry_u64(entry, s->off[0]), f->type);
	if (!err)
		err = read_name(m, entry_u64(entry, s->off[1]), f->field);
	if (err)
		return err;
	memcpy(&is_static, entry + s->off[4], sizeof(is_static));
	f->is_static = is_static != 0;
	f->value = entry_u64(entry, f->is_static ? s->off[3] : s->off[2]);
	if (f->field[0])
		t->nfields++;
	return 0;
}

/* A gHotSpotVMTypes entry; off[] is type name, superclass name, size. */
static int add_type(const struct hs_mem *m, const struct entry_shape *s, const uint8_t *entry,
		    struct vm_tables *t)
{
	struct vm_type *ty;
	int err;

	err = grow((void **)&t->types, &t->types_cap, t->ntypes, sizeof(*ty));
	if (err)
		return err;
	ty = &t->types[t->ntypes];
	err = read_name(m, entry_u64(entry, s->off[0]), ty->name);
	if (!err)
		err = read_name(m, entry_u64(entry, s->off[1]), ty->super);
	if (err)
		return err;
	ty->size = entry_u64(entry, s->off[2]);
	t->ntypes++;
	return 0;
}

/* Reads both tables into t.  0 or -errno: ENOENT an export missing,
 * EPROTO a malformed table, EFAULT one pointing at nothing. */
static int read_tables(const struct hs_mem *m, const uint64_t ex[HS_EX_COUNT], struct vm_tables *t)
{
	static const enum hotspot_export fields[] = {
		HS_EX_STRUCT_TYPE_NAME, HS_EX_STRUCT_FIELD_NAME, HS_EX_STRUCT_OFFSET,
		HS_EX_STRUCT_ADDRESS,
	};
	static const enum hotspot_export types[] = {
		HS_EX_TYPE_TYPE_NAME, HS_EX_TYPE_SUPER_NAME, HS_EX_TYPE_SIZE,
	};
	struct entry_shape s;
	int err;

	err = read_shape(m, ex, HS_EX_STRUCTS, HS_EX_STRUCT_STRIDE, fields, 4, &s);
	/* isStatic is an int: it only needs 4 bytes of the entry. */
	if (!err && !ex[HS_EX_STRUCT_IS_STATIC])
		err = -ENOENT;
	if (!err)
		err = read_u64(m, ex[HS_EX_STRUCT_IS_STATIC], &s.off[4]);
	if (!err && s.off[4] > s.stride - 4)
		err = -EPROTO;
	if (!err)
		err = read_table(m, &s, add_field, t);
	if (!err)
		err = read_shape(m, ex, HS_EX_TYPES, HS_EX_TYPE_STRIDE, types, 3, &s);
	if (!err)
		err = read_table(m, &s, add_type, t);
	return err;
}

static const struct vm_type *find_type(const struct vm_tables *t, const char *name)
{
	for (size_t i = 0; i < t->ntypes; i++)
		if (strcmp(t->types[i].name, name) == 0)
			return &t->types[i];
	return NULL;
}

/* type::field, or the same field of a superclass of type. */
static const struct vm_field *find_field(const struct vm_tables *t, const char *type,
					 const char *field)
{
	for (int depth = 0; type && type[0] && depth < MAX_SUPER_DEPTH; depth++) {
		const struct vm_type *ty;

		for (size_t i = 0; i < t->nfields; i++)
			if (strcmp(t->fields[i].type, type) == 0 &&
			    strcmp(t->fields[i].field, field) == 0)
				return &t->fields[i];
		ty = find_type(t, type);
		type = ty ? ty->super : NULL;
	}
	return NULL;
}

/* Resolution of the layout; names the first thing missing. */
struct resolver {
	const struct vm_tables *t;
	const char *missing;   /* "Type::_field" of the first one missing */
	char missing_buf[2 * NAME_CAP + 2];
};

static void note_missing(struct resolver *r, const char *type, const char *field)
{
	if (r->missing)
		return;
	snprintf(r->missing_buf, sizeof(r->missing_buf), "%s%s%s", type, field ? "::" : "",
		 field ? field : "");
	r->missing = r->missing_buf;
}

/* An instance field's offset; false (and noted when required) if absent. */
static bool offset_of(struct resolver *r, const char *type, const char *field, uint64_t *out,
		      bool required)
{
	const struct vm_field *f = find_field(r->t, type, field);

	if (f && !f->is_static && f->value < MAX_FIELD_OFFSET) {
		*out = f->value;
		return true;
	}
	if (required)
		note_missing(r, type, field);
	return false;
}

/* A static field's address. */
static bool address_of(struct resolver *r, const char *type, const char *field, uint64_t *out,
		       bool required)
{
	const struct vm_field *f = find_field(r->t, type, field);

	if (f && f->is_static && user_pointer(f->value)) {
		*out = f->value;
		return true;
	}
	if (required)
		note_missing(r, type, field);
	return false;
}

static bool size_of(struct resolver *r, const char *type, uint64_t *out, bool required)
{
	const struct vm_type *ty = find_type(r->t, type);

	if (ty && ty->size > 0 && ty->size < MAX_TYPE_SIZE) {
		*out = ty->size;
		return true;
	}
	if (required)
		note_missing(r, type, NULL);
	return false;
}

/* The code cache's fields: none required (without them compiled frames are
 * walked by frame pointers only). A GrowableArray's _data follows its
 * base's two ints. */
static bool resolve_code_heaps(struct resolver *r, struct layout *l)
{
	return address_of(r, "CodeCache", "_heaps", &l->heaps_addr, false) &&
	       address_of(r, "CodeCache", "_low_bound", &l->low_bound_addr, false) &&
	       address_of(r, "CodeCache", "_high_bound", &l->high_bound_addr, false) &&
	       offset_of(r, "GrowableArrayBase", "_len", &l->array_len, false) &&
	       size_of(r, "GrowableArrayBase", &l->array_data, false) &&
	       offset_of(r, "CodeHeap", "_memory", &l->heap_memory, false) &&
	       offset_of(r, "CodeHeap", "_segmap", &l->heap_segmap, false) &&
	       offset_of(r, "CodeHeap", "_log2_segment_size", &l->heap_log2_segment, false) &&
	       offset_of(r, "VirtualSpace", "_low_boundary", &l->space_low, false) &&
	       offset_of(r, "VirtualSpace", "_high_boundary", &l->space_high, false) &&
	       size_of(r, "HeapBlock", &l->block_size, false) &&
	       offset_of(r, "CodeBlob", "_frame_size", &l->blob_frame_size, false);
}

/* Fills l from the tables.  NULL, or the name of the first required field
 * or type missing. */
static const char *resolve_layout(struct resolver *r, struct layout *l)
{
	memset(l, 0, sizeof(*l));
	offset_of(r, "JavaThread", "_anchor", &l->anchor, true);
	offset_of(r, "JavaFrameAnchor", "_last_Java_sp", &l->last_java_sp, true);
	offset_of(r, "JavaFrameAnchor", "_last_Java_fp", &l->last_java_fp, true);
	offset_of(r, "JavaFrameAnchor", "_last_Java_pc", &l->last_java_pc, true);
	offset_of(r, "JavaThread", "_stack_base", &l->stack_base, true);
	address_of(r, "AbstractInterpreter", "_code", &l->interp_code_addr, true);
	offset_of(r, "StubQueue", "_stub_buffer", &l->stub_buffer, true);
	offset_of(r, "StubQueue", "_buffer_limit", &l->buffer_limit, true);
	offset_of(r, "Method", "_constMethod", &l->method_const_method, true);
	offset_of(r, "ConstMethod", "_constants", &l->const_method_constants, true);
	offset_of(r, "ConstMethod", "_name_index", &l->const_method_name_index, true);
	offset_of(r, "ConstantPool", "_pool_holder", &l->cp_pool_holder, true);
	size_of(r, "ConstantPool", &l->cp_size, true);
	offset_of(r, "Klass", "_name", &l->klass_name, true);
	offset_of(r, "Symbol", "_length", &l->symbol_length, true);
	offset_of(r, "Symbol", "_body", &l->symbol_body, true);
	l->has_cp_length = offset_of(r, "ConstantPool", "_length", &l->cp_length, false);
	/* _osthread is JavaThread's on 17, Thread's on 25: the superclass
	 * walk finds either. */
	l->has_threads =
		address_of(r, "ThreadsSMRSupport", "_java_thread_list", &l->java_thread_list_addr,
			   false) &&
		offset_of(r, "ThreadsList", "_length", &l->tl_length, false) &&
		offset_of(r, "ThreadsList", "_threads", &l->tl_threads, false) &&
		offset_of(r, "JavaThread", "_osthread", &l->osthread, false) &&
		offset_of(r, "OSThread", "_pthread_id", &l->pthread_id, false);
	address_of(r, "Abstract_VM_Version", "_vm_major_version", &l->vm_major_addr, false);
	l->has_code_heaps = resolve_code_heaps(r, l);
	/* The walker reads the anchor's words in one 24-byte copy. */
	if (!r->missing && (l->last_java_sp > 16 || l->last_java_fp > 16 || l->last_java_pc > 16))
		note_missing(r, "JavaFrameAnchor", "_last_Java_sp/_fp/_pc within 24 bytes");
	return r->missing;
}

/* ---- the JVM's state ----------------------------------------------------- */

/* The interpreter's code, [lo, hi).  -EAGAIN while it is not generated yet. */
static int read_interpreter(struct hotspot *hs)
{
	uint64_t queue, buffer;
	int32_t limit;
	int err;

	err = read_u64(&hs->mem, hs->l.interp_code_addr, &queue);
	if (!err && !queue)
		return -EAGAIN;
	if (!err)
		err = read_u64(&hs->mem, queue + hs->l.stub_buffer, &buffer);
	if (!err)
		err = mem_read(&hs->mem, queue + hs->l.buffer_limit, &limit, sizeof(limit));
	if (err)
		return err;
	if (!buffer || limit == 0)
		return -EAGAIN;
	if (!user_pointer(buffer) || limit < 0 || (uint32_t)limit > MAX_INTERP_BYTES ||
	    buffer + (uint32_t)limit > USER_ADDR_END)
		return -EPROTO;
	hs->info.interp_lo = buffer;
	hs->info.interp_hi = buffer + (uint32_t)limit;
	return 0;
}

/* The code cache's bounds and heaps, for BPF to size compiled frames. Left
 * empty (frame pointers only) when anything looks wrong: fixed from the
 * JVM's start, they are read once. */
static void read_code_heaps(struct hotspot *hs)
{
	const struct layout *l = &hs->l;
	struct sp_hotspot_info *info = &hs->info;
	uint64_t array, data, lo, hi, heap;
	int32_t len, log2;

	if (!l->has_code_heaps || read_u64(&hs->mem, l->low_bound_addr, &lo) ||
	    read_u64(&hs->mem, l->high_bound_addr, &hi) || !user_pointer(lo) || hi <= lo ||
	    hi > USER_ADDR_END || read_u64(&hs->mem, l->heaps_addr, &array) ||
	    !user_pointer(array) || mem_read(&hs->mem, array + l->array_len, &len, sizeof(len)) ||
	    len <= 0 || len > SP_MAX_CODE_HEAPS ||
	    read_u64(&hs->mem, array + l->array_data, &data) || !user_pointer(data))
		return;
	for (int32_t i = 0; i < len; i++) {
		struct sp_code_heap *h = &info->code_heaps[i];

		if (read_u64(&hs->mem, data + 8 * (uint64_t)i, &heap) || !user_pointer(heap) ||
		    mem_read(&hs->mem, heap + l->heap_memory + l->space_low, &h->lo, 8) ||
		    mem_read(&hs->mem, heap + l->heap_memory + l->space_high, &h->hi, 8) ||
		    mem_read(&hs->mem, heap + l->heap_segmap + l->space_low, &h->segmap, 8) ||
		    mem_read(&hs->mem, heap + l->heap_log2_segment, &log2, sizeof(log2)) ||
		    h->lo < lo || h->hi > hi || h->hi <= h->lo || !user_pointer(h->segmap) ||
		    log2 < 4 || log2 > 16) {
			memset(info->code_heaps, 0, sizeof(info->code_heaps));
			return;
		}
		h->log2_segment = (uint32_t)log2;
	}
	info->code_lo = lo;
	info->code_hi = hi;
	info->n_code_heaps = (uint32_t)len;
	info->frame_size_offset = (uint32_t)(l->block_size + l->blob_frame_size);
}

static int read_jdk_major(const struct hotspot *hs)
{
	int32_t v;

	if (!hs->l.vm_major_addr || mem_read(&hs->mem, hs->l.vm_major_addr, &v, sizeof(v)))
		return 0;
	return v > 0 && v < 1000 ? v : 0;
}

/* The TLS module id under which jt's thread holds libjvm's TLS block: the
 * one whose block has Thread::_thr_current == jt.  pthread_t is the TCB,
 * which holds the DTV pointer at +8 (x86-64 glibc); DTV entries are 16
 * bytes, the block's address first.  0 when none matches. */
static uint32_t modid_of_thread(const struct hotspot *hs, uint64_t jt)
{
	const struct hs_mem *m = &hs->mem;
	uint64_t osthread, tcb, dtv;

	if (read_u64(m, jt + hs->l.osthread, &osthread) || !user_pointer(osthread) ||
	    read_u64(m, osthread + hs->l.pthread_id, &tcb) || !user_pointer(tcb) ||
	    read_u64(m, tcb + 8, &dtv) || !user_pointer(dtv))
		return 0;
	for (uint32_t modid = 1; modid <= MAX_TLS_MODID; modid++) {
		uint64_t block, current;

		if (read_u64(m, dtv + 16 * modid, &block) || !user_pointer(block))
			continue; /* unallocated blocks are 0 or -1 */
		if (!read_u64(m, block + hs->info.thr_current_offset, &current) && current == jt)
			return modid;
	}
	return 0;
}

/* libjvm's TLS module id, matched through the first JavaThreads of
 * ThreadsSMRSupport::_java_thread_list.  0 when not found. */
static uint32_t find_tls_modid(const struct hotspot *hs)
{
	const struct hs_mem *m = &hs->mem;
	uint64_t list, threads;
	uint32_t length;

	if (!hs->l.has_threads ||
	    read_u64(m, hs->l.java_thread_list_addr, &list) || !user_pointer(list) ||
	    read_u32(m, list + hs->l.tl_length, &length) ||
	    read_u64(m, list + hs->l.tl_threads, &threads) || !user_pointer(threads))
		return 0;
	if (length > MAX_THREADS_TRIED)
		length = MAX_THREADS_TRIED;
	for (uint32_t i = 0; i < length; i++) {
		uint64_t jt;
		uint32_t modid;

		if (read_u64(m, threads + 8 * i, &jt) || !user_pointer(jt))
			continue;
		modid = modid_of_thread(hs, jt);
		if (modid)
			return modid;
	}
	return 0;
}

/* ---- opening --------------------------------------------------------------- */

static const char *const export_symbols[HS_EX_COUNT] = {
	[HS_EX_STRUCTS] = "gHotSpotVMStructs",
	[HS_EX_STRUCT_TYPE_NAME] = "gHotSpotVMStructEntryTypeNameOffset",
	[HS_EX_STRUCT_FIELD_NAME] = "gHotSpotVMStructEntryFieldNameOffset",
	[HS_EX_STRUCT_IS_STATIC] = "gHotSpotVMStructEntryIsStaticOffset",
	[HS_EX_STRUCT_OFFSET] = "gHotSpotVMStructEntryOffsetOffset",
	[HS_EX_STRUCT_ADDRESS] = "gHotSpotVMStructEntryAddressOffset",
	[HS_EX_STRUCT_STRIDE] = "gHotSpotVMStructEntryArrayStride",
	[HS_EX_TYPES] = "gHotSpotVMTypes",
	[HS_EX_TYPE_TYPE_NAME] = "gHotSpotVMTypeEntryTypeNameOffset",
	[HS_EX_TYPE_SUPER_NAME] = "gHotSpotVMTypeEntrySuperclassNameOffset",
	[HS_EX_TYPE_SIZE] = "gHotSpotVMTypeEntrySizeOffset",
	[HS_EX_TYPE_STRIDE] = "gHotSpotVMTypeEntryArrayStride",
	[HS_EX_THR_CURRENT] = "_ZN6Thread12_thr_currentE",
	[HS_EX_JAVA_THREAD_VTABLE] = "_ZTV10JavaThread",
};

/* Describes the JVM whose memory is hs->mem and whose libjvm symbols are
 * ex[] (addresses with the load base added; the TLS offset as is).  what
 * names the JVM in messages.  0 or -errno. */
static int describe(struct hotspot *hs, const uint64_t ex[HS_EX_COUNT], const char *what)
{
	struct vm_tables t = { 0 };
	struct resolver r = { .t = &t };
	const char *missing;
	int err;

	err = read_tables(&hs->mem, ex, &t);
	if (err == -ESRCH || err == -EAGAIN) {
		sp_debug("%s: vmStructs: %s", what, strerror(-err));
	} else if (err) {
		/* A missing export or a pointer into nothing: not a table we can
		 * use, like a malformed one. */
		sp_warn("%s: cannot read libjvm's vmStructs tables: %s", what, strerror(-err));
		if (err == -ENOENT || err == -EFAULT)
			err = -EPROTO;
	}
	if (err) {
		vm_tables_free(&t);
		return err;
	}
	missing = resolve_layout(&r, &hs->l);
	vm_tables_free(&t);
	if (missing) {
		sp_warn("%s: libjvm's vmStructs lack %s: %s", what, missing, strerror(EPROTO));
		return -EPROTO;
	}
	err = read_interpreter(hs);
	if (err) {
		if (err == -EFAULT || err == -EPROTO) {
			sp_warn("%s: no usable interpreter bounds: %s", what, strerror(EPROTO));
			err = -EPROTO;
		} else {
			sp_debug("%s: interpreter: %s", what, strerror(-err));
		}
		return err;
	}
	hs->jdk_major = read_jdk_major(hs);
	read_code_heaps(hs);
	hs->info.anchor_offset = (uint32_t)hs->l.anchor;
	hs->info.last_java_sp_offset = (uint32_t)hs->l.last_java_sp;
	hs->info.last_java_fp_offset = (uint32_t)hs->l.last_java_fp;
	hs->info.last_java_pc_offset = (uint32_t)hs->l.last_java_pc;
	hs->info.stack_base_offset = (uint32_t)hs->l.stack_base;
	/* Without the vtable BPF could not tell JavaThreads from the GC and
	 * VM threads that also set _thr_current: no anchors then. */
	if (ex[HS_EX_JAVA_THREAD_VTABLE] && ex[HS_EX_THR_CURRENT] < MAX_FIELD_OFFSET) {
		hs->info.java_thread_vtable = ex[HS_EX_JAVA_THREAD_VTABLE] + 16;
		hs->info.thr_current_offset = ex[HS_EX_THR_CURRENT];
		hs->info.tls_modid = find_tls_modid(hs);
	}
	if (!hs->info.tls_modid)
		sp_debug("%s: libjvm's TLS module id not found: waits will not be continued", what);
	return 0;
}

static struct hotspot *hotspot_new(void)
{
	struct hotspot *hs = calloc(1, sizeof(*hs));

	if (!hs)
		errno = ENOMEM;
	return hs;
}

struct hotspot *hotspot_open_image(const void *image, size_t len, uint64_t image_addr)
{
	uint64_t ex[HS_EX_COUNT] = { 0 };
	struct hotspot *hs;
	int err;

	if (!image || len < sizeof(ex)) {
		errno = ENOENT;
		return NULL;
	}
	memcpy(ex, image, sizeof(ex));
	if (!ex[HS_EX_STRUCTS]) {
		errno = ENOENT;
		return NULL;
	}
	hs = hotspot_new();
	if (!hs)
		return NULL;
	hs->mem = (struct hs_mem){ .image = image, .image_len = len, .image_addr = image_addr };
	err = describe(hs, ex, "memory image");
	if (err) {
		hotspot_free(hs);
		errno = -err;
		return NULL;
	}
	return hs;
}

static bool is_libjvm(const struct proc_map *m)
{
	const char *slash;

	if (m->kind != PROC_MAP_FILE)
		return false;
	slash = strrchr(m->path, '/');
	return strcmp(slash ? slash + 1 : m->path, "libjvm.so") == 0;
}

/* Looks libjvm's symbols up: ex[] gets load base + st_value, or the TLS
 * offset as is.  0, -ENOENT (no libjvm or no gHotSpotVMStructs), -errno. */
static int libjvm_exports(pid_t pid, uint64_t ex[HS_EX_COUNT], char *what, size_t what_len)
{
	const struct proc_map *jvm = NULL;
	uint64_t values[HS_EX_COUNT];
	bool found[HS_EX_COUNT];
	struct proc_maps *pm;
	int fd, n;

	pm = proc_maps_read(pid);
	if (!pm)
		return -errno;
	/* The load base is where the offset-0 mapping starts (libjvm is
	 * linked at 0, as shared objects are). */
	for (size_t i = 0; i < pm->count && !jvm; i++)
		if (is_libjvm(&pm->maps[i]) && pm->maps[i].offset == 0)
			jvm = &pm->maps[i];
	if (!jvm) {
		proc_maps_free(pm);
		sp_debug("pid %d: no libjvm.so mapped: %s", (int)pid, strerror(ENOENT));
		return -ENOENT;
	}
	snprintf(what, what_len, "pid %d (%s)", (int)pid, jvm->path);
	fd = proc_root_open_mapping(pid, jvm);
	if (fd < 0) {
		sp_warn("%s: open: %s", what, strerror(-fd));
		proc_maps_free(pm);
		return fd;
	}
	n = elf_find_symbol_values(fd, what, export_symbols, HS_EX_COUNT, values, found);
	close(fd);
	for (int i = 0; n > 0 && i < HS_EX_COUNT; i++)
		ex[i] = !found[i] ? 0 : i == HS_EX_THR_CURRENT ? values[i] : jvm->start + values[i];
	proc_maps_free(pm);
	if (n < 0) {
		sp_warn("%s: cannot read its symbols: %s", what, strerror(-n));
		return n == -ENOEXEC ? -ENOENT : n;
	}
	if (!found[HS_EX_STRUCTS]) {
		sp_debug("%s: no gHotSpotVMStructs: %s", what, strerror(ENOENT));
		return -ENOENT;
	}
	/* A TLS offset of 0 is legal, but then the symbol must have been seen. */
	if (!found[HS_EX_THR_CURRENT])
		ex[HS_EX_JAVA_THREAD_VTABLE] = 0;
	return 0;
}

struct hotspot *hotspot_open(pid_t pid)
{
	uint64_t ex[HS_EX_COUNT] = { 0 };
	char what[320];
	struct hotspot *hs;
	int err;

	snprintf(what, sizeof(what), "pid %d", (int)pid);
	err = libjvm_exports(pid, ex, what, sizeof(what));
	if (err) {
		if (err == -ESRCH)
			sp_debug("pid %d: %s", (int)pid, strerror(ESRCH));
		errno = -err;
		return NULL;
	}
	hs = hotspot_new();
	if (!hs)
		return NULL;
	hs->mem.pid = pid;
	err = describe(hs, ex, what);
	if (err) {
		hotspot_free(hs);
		/* A process that exited under us reads as unreadable memory. */
		if (kill(pid, 0) < 0 && errno == ESRCH)
			err = -ESRCH;
		errno = -err;
		return NULL;
	}
	return hs;
}

bool hotspot_find_tls(struct hotspot *hs)
{
	if (hs->info.tls_modid || !hs->info.java_thread_vtable)
		return false;
	hs->info.tls_modid = find_tls_modid(hs);
	return hs->info.tls_modid != 0;
}

void hotspot_walker_info(const struct hotspot *hs, struct sp_hotspot_info *out)
{
	*out = hs->info;
}

int hotspot_jdk_major(const struct hotspot *hs)
{
	return hs->jdk_major;
}

void hotspot_interpreter(const struct hotspot *hs, uint64_t *lo, uint64_t *hi)
{
	*lo = hs->info.interp_lo;
	*hi = hs->info.interp_hi;
}

size_t hotspot_cached_methods(const struct hotspot *hs)
{
	return hs->cached;
}

/* ---- names --------------------------------------------------------------- */

static uint64_t hash_bytes(const char *s, size_t len)
{
	return fnv1a(FNV1A_INIT, s, len);
}

static uint64_t hash_u64(uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdULL;
	v ^= v >> 33;
	return v;
}

/* Copies s[0..len) into the current chunk (a new one when it is full). */
static const char *store_copy(struct name_store *ns, const char *s, size_t len)
{
	char *copy;

	if (!ns->chunk || NAME_CHUNK - ns->chunk_used < len + 1) {
		if (grow((void **)&ns->chunks, &ns->chunks_cap, ns->nchunks, sizeof(char *)))
			return NULL;
		ns->chunk = malloc(NAME_CHUNK);
		if (!ns->chunk)
			return NULL;
		ns->chunks[ns->nchunks++] = ns->chunk;
		ns->chunk_used = 0;
	}
	copy = ns->chunk + ns->chunk_used;
	memcpy(copy, s, len);
	copy[len] = '\0';
	ns->chunk_used += len + 1;
	ns->bytes += len + 1;
	return copy;
}

/* Doubles the name slots. */
static int names_rehash(struct name_store *ns)
{
	size_t n = ns->nslots ? ns->nslots * 2 : 1024;
	const char **slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < ns->nslots; i++) {
		const char *s = ns->slots[i];
		size_t j;

		if (!s)
			continue;
		for (j = hash_bytes(s, strlen(s)) & (n - 1); slots[j]; j = (j + 1) & (n - 1))
			;
		slots[j] = s;
	}
	free(ns->slots);
	ns->slots = slots;
	ns->nslots = n;
	return 0;
}

/* The kept copy of s (a NUL-terminated name shorter than NAME_CHUNK), or
 * NULL when the store is full or out of memory. */
static const char *names_intern(struct name_store *ns, const char *s)
{
	size_t len = strlen(s), j;
	const char *copy;

	if (ns->count * 2 >= ns->nslots && ns->count < MAX_NAMES && names_rehash(ns))
		return NULL;
	for (j = hash_bytes(s, len) & (ns->nslots - 1); ns->slots[j];
	     j = (j + 1) & (ns->nslots - 1))
		if (strcmp(ns->slots[j], s) == 0)
			return ns->slots[j];
	if (ns->count >= MAX_NAMES || ns->bytes + len + 1 > MAX_NAME_BYTES)
		return NULL;
	copy = store_copy(ns, s, len);
	if (copy) {
		ns->slots[j] = copy;
		ns->count++;
	}
	return copy;
}

static void names_free(struct name_store *ns)
{
	for (size_t i = 0; i < ns->nchunks; i++)
		free(ns->chunks[i]);
	free(ns->chunks);
	free(ns->slots);
}

/* Appends Symbol sym's bytes to out[*len..cap - 1), cut to fit; NULs (which
 * modified UTF-8 never has) become '?' so the name stays one C string. */
static int append_symbol(const struct hotspot *hs, uint64_t sym, char *out, size_t *len,
			 size_t cap)
{
	uint16_t n;
	int err;

	if (!user_pointer(sym))
		return -EINVAL;
	err = read_u16(&hs->mem, sym + hs->l.symbol_length, &n);
	if (err)
		return err;
	if (n > cap - 1 - *len)
		n = (uint16_t)(cap - 1 - *len);
	err = mem_read(&hs->mem, sym + hs->l.symbol_body, out + *len, n);
	if (err)
		return err;
	for (size_t i = *len; i < *len + n; i++)
		if (out[i] == '\0')
			out[i] = '?';
	*len += n;
	out[*len] = '\0';
	return 0;
}

/* A hidden class is named "Name+0x<hex>" inside the JVM, and JVMTI (hence
 * the helper's JIT frames) shows the last '+' as '.'.  Hidden classes are
 * known by that suffix here. */
static void hidden_class_spelling(char *klass, size_t len)
{
	char *plus = memrchr(klass, '+', len);
	size_t digits;

	if (!plus || plus[1] != '0' || plus[2] != 'x')
		return;
	digits = strspn(plus + 3, "0123456789abcdefABCDEF");
	if (digits > 0 && plus + 3 + digits == klass + len)
		*plus = '.';
}

/* The ConstantPool's Symbol* at index (entries follow the ConstantPool;
 * the low bit is a tag). */
static int pool_symbol(const struct hotspot *hs, uint64_t cp, uint16_t index, uint64_t *sym)
{
	int32_t length;
	int err;

	if (index == 0)
		return -EINVAL;
	if (hs->l.has_cp_length) {
		err = mem_read(&hs->mem, cp + hs->l.cp_length, &length, sizeof(length));
		if (err)
			return err;
		if (length <= 0 || index >= length)
			return -EINVAL;
	}
	err = read_u64(&hs->mem, cp + hs->l.cp_size + 8ull * index, sym);
	*sym &= ~1ULL;
	return err;
}

/* Reads method's name into out[MAX_METHOD_NAME] and its ConstMethod*.
 * 0 or -errno (EINVAL: not a Method*). */
static int read_method_name(const struct hotspot *hs, uint64_t method, char *out,
			    uint64_t *const_method)
{
	const struct hs_mem *m = &hs->mem;
	uint64_t cm, cp, holder, klass_sym, method_sym;
	uint16_t name_index;
	size_t len = 0;
	int err;

	if (!user_pointer(method) || (method & 7))
		return -EINVAL;
	err = read_u64(m, method + hs->l.method_const_method, &cm);
	if (!err && !user_pointer(cm))
		err = -EINVAL;
	if (!err)
		err = read_u64(m, cm + hs->l.const_method_constants, &cp);
	if (!err && !user_pointer(cp))
		err = -EINVAL;
	if (!err)
		err = read_u64(m, cp + hs->l.cp_pool_holder, &holder);
	if (!err && !user_pointer(holder))
		err = -EINVAL;
	if (!err)
		err = read_u64(m, holder + hs->l.klass_name, &klass_sym);
	if (!err)
		err = read_u16(m, cm + hs->l.const_method_name_index, &name_index);
	if (!err)
		err = pool_symbol(hs, cp, name_index, &method_sym);
	/* Leave room for '.' and the method's name. */
	if (!err)
		err = append_symbol(hs, klass_sym, out, &len, MAX_METHOD_NAME - 64);
	if (err)
		return err;
	hidden_class_spelling(out, len);
	out[len++] = '.';
	err = append_symbol(hs, method_sym, out, &len, MAX_METHOD_NAME);
	*const_method = cm;
	return err;
}

static struct cache_entry *cache_slot(const struct hotspot *hs, uint64_t method)
{
	size_t mask = hs->ncache - 1, j;

	for (j = hash_u64(method) & mask; hs->cache[j].method; j = (j + 1) & mask)
		if (hs->cache[j].method == method)
			break;
	return &hs->cache[j];
}

/* Doubles the cache's slots (it holds at most half of them). */
static int cache_grow(struct hotspot *hs)
{
	struct cache_entry *old = hs->cache;
	size_t n = hs->ncache;

	hs->ncache = n ? n * 2 : 1024;
	hs->cache = calloc(hs->ncache, sizeof(*hs->cache));
	if (!hs->cache) {
		hs->cache = old;
		hs->ncache = n;
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		if (old[i].method)
			*cache_slot(hs, old[i].method) = old[i];
	free(old);
	return 0;
}

/* The cached entry of method, or NULL. */
static struct cache_entry *cache_find(const struct hotspot *hs, uint64_t method)
{
	struct cache_entry *e;

	if (!hs->ncache)
		return NULL;
	e = cache_slot(hs, method);
	return e->method ? e : NULL;
}

/* Caches a name when there is room: past MAX_CACHED_METHODS names are
 * still answered, only not remembered. */
static void cache_add(struct hotspot *hs, uint64_t method, uint64_t const_method,
		      const char *name)
{
	if (hs->cached >= MAX_CACHED_METHODS)
		return;
	if (hs->cached * 2 >= hs->ncache && cache_grow(hs))
		return;
	*cache_slot(hs, method) = (struct cache_entry){
		.method = method,
		.const_method = const_method,
		.checked_ns = monotonic_ns(),
		.name = name,
	};
	hs->cached++;
}

/* Whether e still names its Method*: 1 yes, 0 no (reused), -errno when
 * Method::_constMethod cannot be read.  A process that is gone has not
 * reused it. */
static int cache_still_valid(const struct hotspot *hs, const struct cache_entry *e)
{
	uint64_t cm;
	int err = read_u64(&hs->mem, e->method + hs->l.method_const_method, &cm);

	if (err == -ESRCH)
		return 1;
	return err ? err : cm == e->const_method;
}

/* now: when to revalidate a cached entry as of (0: not at all). */
static const char *method_name(struct hotspot *hs, uint64_t method, uint64_t now)
{
	char buf[MAX_METHOD_NAME];
	struct cache_entry *e;
	const char *name;
	uint64_t cm;

	if (!hs || !user_pointer(method) || (method & 7))
		return NULL;
	e = cache_find(hs, method);
	if (e) {
		int valid = 1;

		if (now && now - e->checked_ns >= REVALIDATE_NS) {
			valid = cache_still_valid(hs, e);
			e->checked_ns = now;
		}
		if (valid > 0)
			return e->name;
		if (valid < 0)
			return NULL;
	}
	if (read_method_name(hs, method, buf, &cm))
		return NULL;
	name = names_intern(&hs->names, buf);
	if (!name) {
		if (!hs->names.full_warned)
			sp_warn("pid %d: over %u method names or %u MiB of them: more interpreted "
				"frames go unnamed: %s", (int)hs->mem.pid, MAX_NAMES,
				MAX_NAME_BYTES >> 20, strerror(ENOSPC));
		hs->names.full_warned = true;
		return NULL;
	}
	if (e) {
		e->const_method = cm;
		e->name = name;
		e->checked_ns = monotonic_ns();
	} else {
		cache_add(hs, method, cm, name);
	}
	return name;
}

const char *hotspot_method_name(struct hotspot *hs, uint64_t method, bool revalidate)
{
	return method_name(hs, method, revalidate ? monotonic_ns() : 0);
}

void hotspot_read_methods(struct hotspot *hs, const uint64_t *user, size_t n)
{
	uint64_t now = 0, last = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t method = user[i] & ~SP_USTACK_METHOD_TAG;

		/* Recursion repeats a method: one look per run of it. */
		if (!(user[i] & SP_USTACK_METHOD_TAG) || method == last)
			continue;
		/* The clock once per stack: per frame it cost more than the rest. */
		if (!now)
			now = monotonic_ns();
		method_name(hs, method, now);
		last = method;
	}
}

void hotspot_release(struct hotspot *hs)
{
	if (!hs)
		return;
	free(hs->cache);
	hs->cache = NULL;
	hs->ncache = hs->cached = 0;
}

void hotspot_free(struct hotspot *hs)
{
	if (!hs)
		return;
	free(hs->cache);
	names_free(&hs->names);
	free(hs);
}

/* test_hotspot.c - HotSpot JVMs described from outside: synthetic memory
 * images (layouts, naming, revalidation, bounds, malformed tables), the ELF
 * symbol lookup it relies on, and real JDK 17 and Temurin 25 JVMs, where a
 * thread spinning in interpreted code is stopped with ptrace and the Method*
 * of its frame named, and a parked thread's JavaThread is found through TLS
 * as the BPF walker will.
 *
 * SPARKPROF_WRITE_SEEDS=DIR also writes the synthetic images into DIR as
 * seeds for tests/fuzz/fuzz_hotspot_structs.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "jvm/hotspot.h"
#include "proc/proc_maps.h"
#include "symbols/elf_symbols.h"
#include "shell_tools.h"
#include "tap.h"

/* Where images live; tests/fuzz/fuzz_hotspot_structs.c uses the same. */
#define IMAGE_ADDR 0x10000ull
/* After the export words, an image made here holds 4 Method*s for the
 * fuzzer to name. */
#define HINT_WORDS 4

/* ---- synthetic images -------------------------------------------------- */

struct img {
	uint8_t *buf;
	size_t len, cap;
};

static uint64_t img_alloc(struct img *im, size_t n, size_t align)
{
	size_t at = (im->len + align - 1) & ~(align - 1);

	if (at + n > im->cap) {
		fprintf(stderr, "image too small\n");
		exit(2);
	}
	im->len = at + n;
	return IMAGE_ADDR + at;
}

static void put64(struct img *im, uint64_t addr, uint64_t v)
{
	memcpy(im->buf + (addr - IMAGE_ADDR), &v, 8);
}

static void put32(struct img *im, uint64_t addr, uint32_t v)
{
	memcpy(im->buf + (addr - IMAGE_ADDR), &v, 4);
}

static void put16(struct img *im, uint64_t addr, uint16_t v)
{
	memcpy(im->buf + (addr - IMAGE_ADDR), &v, 2);
}

static uint64_t get64(const struct img *im, uint64_t addr)
{
	uint64_t v;

	memcpy(&v, im->buf + (addr - IMAGE_ADDR), 8);
	return v;
}

static uint64_t img_str(struct img *im, const char *s)
{
	uint64_t a = img_alloc(im, strlen(s) + 1, 1);

	memcpy(im->buf + (a - IMAGE_ADDR), s, strlen(s) + 1);
	return a;
}

/* A Symbol: u32 hash and refcount, u16 length at 4, bytes at 6. */
static uint64_t img_symbol(struct img *im, const char *s)
{
	uint64_t a = img_alloc(im, 8 + strlen(s), 8);

	put16(im, a + 4, (uint16_t)strlen(s));
	memcpy(im->buf + (a + 6 - IMAGE_ADDR), s, strlen(s));
	return a;
}

/* An export variable holding v; its address goes to header word i. */
static void img_export(struct img *im, enum hotspot_export i, uint64_t v)
{
	uint64_t a = img_alloc(im, 8, 8);

	put64(im, a, v);
	put64(im, IMAGE_ADDR + 8 * i, a);
}

/* The synthetic layout (JDK-17-like offsets, but _osthread only under
 * Thread, JavaThread's superclass, as on 25). */
#define O_CONST_METHOD 8
#define O_CONSTANTS 8
#define O_NAME_INDEX 34
#define O_POOL_HOLDER 24
#define O_CP_LENGTH 60
#define CP_SIZE 72
#define CP_LENGTH 10
#define O_KLASS_NAME 24
#define O_OSTHREAD 560
#define O_STACK_BASE 592
#define O_ANCHOR 656
#define O_PTHREAD_ID 24
#define THR_CURRENT 0x20
#define INTERP 0x7f0000001000ull
#define INTERP_SIZE 100000

struct field_def {
	const char *type, *field;
	int is_static;
	uint64_t value;    /* offset, or address for statics (patched later) */
};

/* What a built image holds, for checks and for making it malformed. */
struct fake {
	uint64_t method_run, method_hidden, method_long, method_bad_index;
	uint64_t cm_call;          /* a ConstMethod named "call" */
	uint64_t methods;          /* extra Method*s: methods + 8*i, all "run" */
	size_t nmethods;
	uint64_t struct_stride_var, interp_code_var, field_table, field_terminator;
	uint64_t anchor_name;      /* the string "_anchor" (field 0's name) */
	uint64_t long_name;        /* 699 bytes of 'k' */
	uint64_t vtable;
};

/* A Klass named name, a ConstantPool holding "run" at 1 and "call" at 2,
 * and a Method with its ConstMethod naming index.  Returns the Method*. */
static uint64_t img_method(struct img *im, const char *klass_name, uint16_t index,
			   uint64_t *cm_out)
{
	uint64_t klass = img_alloc(im, 208, 8), cp = img_alloc(im, CP_SIZE + 8 * CP_LENGTH, 8);
	uint64_t cm = img_alloc(im, 48, 8), method = img_alloc(im, 88, 8);

	put64(im, klass + O_KLASS_NAME, img_symbol(im, klass_name));
	put64(im, cp + O_POOL_HOLDER, klass);
	put32(im, cp + O_CP_LENGTH, CP_LENGTH);
	put64(im, cp + CP_SIZE + 8 * 1, img_symbol(im, "run") | 1); /* tagged, as HotSpot may */
	put64(im, cp + CP_SIZE + 8 * 2, img_symbol(im, "call"));
	put64(im, cm + O_CONSTANTS, cp);
	put16(im, cm + O_NAME_INDEX, index);
	put64(im, method + O_CONST_METHOD, cm);
	if (cm_out)
		*cm_out = cm;
	return method;
}

/* A JavaThread whose TLS block (module 2; module 1 unallocated) points
 * back at it, and the ThreadsList holding it. */
static uint64_t img_threads(struct img *im, uint64_t vtable)
{
	uint64_t jt = img_alloc(im, 1400, 8), os = img_alloc(im, 216, 8);
	uint64_t tcb = img_alloc(im, 64, 64), dtv = img_alloc(im, 16 * 4, 16);
	uint64_t block = img_alloc(im, 0x40, 8), list = img_alloc(im, 32, 8);
	uint64_t threads = img_alloc(im, 16, 8);

	put64(im, jt, vtable + 16);
	put64(im, jt + O_OSTHREAD, os);
	put64(im, os + O_PTHREAD_ID, tcb);
	put64(im, tcb, tcb);
	put64(im, tcb + 8, dtv);
	put64(im, dtv + 16 * 1, UINT64_MAX);
	put64(im, dtv + 16 * 2, block);
	put64(im, block + THR_CURRENT, jt);
	put32(im, list + 4, 2);
	put64(im, list + 16, threads);
	put64(im, threads, 0);   /* a NULL entry is skipped */
	put64(im, threads + 8, jt);
	return list;
}

/* Builds a whole image of a JVM into im; extra_methods adds that many
 * Method*s all sharing one name (for the cache bound). */
static struct fake build_image(struct img *im, size_t extra_methods)
{
	struct field_def fields[] = {
		{ "JavaThread", "_anchor", 0, O_ANCHOR },
		{ "JavaFrameAnchor", "_last_Java_sp", 0, 0 },
		{ "JavaFrameAnchor", "_last_Java_pc", 0, 8 },
		{ "JavaFrameAnchor", "_last_Java_fp", 0, 16 },
		{ "JavaThread", "_stack_base", 0, O_STACK_BASE },
		{ "Thread", "_osthread", 0, O_OSTHREAD },
		{ "OSThread", "_pthread_id", 0, O_PTHREAD_ID },
		{ "ThreadsList", "_length", 0, 4 },
		{ "ThreadsList", "_threads", 0, 16 },
		{ "Method", "_constMethod", 0, O_CONST_METHOD },
		{ "ConstMethod", "_constants", 0, O_CONSTANTS },
		{ "ConstMethod", "_name_index", 0, O_NAME_INDEX },
		{ "ConstantPool", "_pool_holder", 0, O_POOL_HOLDER },
		{ "ConstantPool", "_length", 0, O_CP_LENGTH },
		{ "Klass", "_name", 0, O_KLASS_NAME },
		{ "Symbol", "_length", 0, 4 },
		{ "Symbol", "_body", 0, 6 },
		{ "StubQueue", "_stub_buffer", 0, 8 },
		{ "StubQueue", "_buffer_limit", 0, 20 },
		{ "AbstractInterpreter", "_code", 1, 0 },
		{ "ThreadsSMRSupport", "_java_thread_list", 1, 0 },
		{ "Abstract_VM_Version", "_vm_major_version", 1, 0 },
		{ "Klass", "_layout_helper", 0, 8 },  /* unused ones too */
	};
	struct { const char *name, *super; uint64_t size; } types[] = {
		{ "Thread", "ThreadShadow", 648 }, { "JavaThread", "Thread", 1384 },
		{ "ConstantPool", "Metadata", CP_SIZE }, { "ThreadShadow", NULL, 16 },
	};
	size_t nfields = sizeof(fields) / sizeof(fields[0]), ntypes = sizeof(types) / sizeof(types[0]);
	uint64_t queue, code_var, list_var, major_var, hints, ftable, ttable;
	uint64_t type_names[sizeof(fields) / sizeof(fields[0])];
	uint64_t field_names[sizeof(fields) / sizeof(fields[0])];
	struct fake f = { 0 };

	im->len = 0;
	memset(im->buf, 0, im->cap);
	img_alloc(im, 8 * HS_EX_COUNT, 8);
	hints = img_alloc(im, 8 * HINT_WORDS, 8);
	f.vtable = img_alloc(im, 64, 8);
	put64(im, IMAGE_ADDR + 8 * HS_EX_JAVA_THREAD_VTABLE, f.vtable);
	put64(im, IMAGE_ADDR + 8 * HS_EX_THR_CURRENT, THR_CURRENT);
	/* statics */
	queue = img_alloc(im, 40, 8);
	put64(im, queue + 8, INTERP);
	put32(im, queue + 20, INTERP_SIZE);
	code_var = img_alloc(im, 8, 8);
	put64(im, code_var, queue);
	list_var = img_alloc(im, 8, 8);
	put64(im, list_var, img_threads(im, f.vtable));
	major_var = img_alloc(im, 8, 8);
	put32(im, major_var, 17);
	fields[nfields - 4].value = code_var;
	fields[nfields - 3].value = list_var;
	fields[nfields - 2].value = major_var;
	f.interp_code_var = code_var;
	/* methods */
	f.method_run = img_method(im, "sp/fake/Cls", 1, NULL);
	f.method_hidden = img_method(im, "sp/fake/Cls$$Lambda+0x0000000800c01000", 1, NULL);
	{
		char big[700];

		memset(big, 'k', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		uint64_t sym;

		f.method_long = img_method(im, big, 2, NULL);
		sym = get64(im, get64(im, get64(im, get64(im, f.method_long + O_CONST_METHOD) +
						  O_CONSTANTS) + O_POOL_HOLDER) + O_KLASS_NAME);
		put16(im, sym + 4, 65535); /* the longest a Symbol can claim */
		f.long_name = sym + 6;
	}
	f.method_bad_index = img_method(im, "sp/fake/Bad", 200, NULL);
	img_method(im, "sp/fake/Cls", 2, &f.cm_call);
	put64(im, hints, f.method_run);
	put64(im, hints + 8, f.method_hidden);
	put64(im, hints + 16, f.method_long);
	put64(im, hints + 24, f.method_bad_index);
	if (extra_methods) {
		uint64_t cm = get64(im, f.method_run + O_CONST_METHOD);

		f.methods = img_alloc(im, 8 * extra_methods, 8);
		f.nmethods = extra_methods;
		for (size_t i = 0; i < extra_methods; i++)
			put64(im, f.methods + 8 * i, cm);
		f.methods -= O_CONST_METHOD;
	}
	/* export variables: entry layouts as on 17 and 25 */
	img_export(im, HS_EX_STRUCT_TYPE_NAME, 0);
	img_export(im, HS_EX_STRUCT_FIELD_NAME, 8);
	img_export(im, HS_EX_STRUCT_IS_STATIC, 24);
	img_export(im, HS_EX_STRUCT_OFFSET, 32);
	img_export(im, HS_EX_STRUCT_ADDRESS, 40);
	img_export(im, HS_EX_STRUCT_STRIDE, 48);
	f.struct_stride_var = get64(im, IMAGE_ADDR + 8 * HS_EX_STRUCT_STRIDE);
	img_export(im, HS_EX_TYPE_TYPE_NAME, 0);
	img_export(im, HS_EX_TYPE_SUPER_NAME, 8);
	img_export(im, HS_EX_TYPE_SIZE, 32);
	img_export(im, HS_EX_TYPE_STRIDE, 40);
	/* type table, then the field table last: nothing readable follows it */
	ttable = img_alloc(im, 40 * (ntypes + 1), 8);
	for (size_t i = 0; i < ntypes; i++) {
		put64(im, ttable + 40 * i, img_str(im, types[i].name));
		put64(im, ttable + 40 * i + 8, types[i].super ? img_str(im, types[i].super) : 0);
		put64(im, ttable + 40 * i + 32, types[i].size);
	}
	img_export(im, HS_EX_TYPES, ttable);
	for (size_t i = 0; i < nfields; i++) {
		type_names[i] = img_str(im, fields[i].type);
		field_names[i] = img_str(im, fields[i].field);
	}
	f.anchor_name = field_names[0];
	img_export(im, HS_EX_STRUCTS, 0);
	ftable = img_alloc(im, 48 * (nfields + 1), 8);
	put64(im, get64(im, IMAGE_ADDR + 8 * HS_EX_STRUCTS), ftable);
	for (size_t i = 0; i < nfields; i++) {
		uint64_t e = ftable + 48 * i;

		put64(im, e, type_names[i]);
		put64(im, e + 8, field_names[i]);
		put32(im, e + 24, (uint32_t)fields[i].is_static);
		put64(im, fields[i].is_static ? e + 40 : e + 32, fields[i].value);
	}
	f.field_table = ftable;
	f.field_terminator = ftable + 48 * nfields;
	return f;
}

static void write_seed(const char *name, const struct img *im)
{
	const char *dir = getenv("SPARKPROF_WRITE_SEEDS");
	char path[512];
	FILE *out;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	out = fopen(path, "w");
	if (out) {
		fwrite(im->buf, 1, im->len, out);
		fclose(out);
	}
}

static void test_image(void)
{
	struct img im = { .cap = 1 << 16 };
	struct sp_hotspot_info info;
	const char *run, *name;
	struct hotspot *hs;
	struct fake f;
	uint64_t lo, hi, cm_run;

	im.buf = calloc(1, im.cap);
	f = build_image(&im, 0);
	write_seed("synthetic", &im);
	hs = hotspot_open_image(im.buf, im.len, IMAGE_ADDR);
	CHECK(hs, "a synthetic image opens");
	if (!hs)
		return;
	hotspot_walker_info(hs, &info);
	hotspot_interpreter(hs, &lo, &hi);
	CHECK(lo == INTERP && hi == INTERP + INTERP_SIZE && info.interp_lo == lo &&
	      info.interp_hi == hi, "interpreter range from StubQueue");
	CHECK(hotspot_jdk_major(hs) == 17, "JDK major from Abstract_VM_Version");
	CHECK(info.anchor_offset == O_ANCHOR && info.stack_base_offset == O_STACK_BASE &&
	      info.last_java_sp_offset == 0 && info.last_java_pc_offset == 8 &&
	      info.last_java_fp_offset == 16, "walker offsets");
	CHECK(info.java_thread_vtable == f.vtable + 16 && info.thr_current_offset == THR_CURRENT,
	      "vtable + 16 and the TLS offset");
	CHECK(info.tls_modid == 2, "TLS modid through Thread::_osthread (a superclass field): %u",
	      info.tls_modid);
	run = hotspot_method_name(hs, f.method_run, false);
	CHECK_STR(run, "sp/fake/Cls.run", "a Method* is named with slashes, no signature");
	CHECK(hotspot_method_name(hs, f.method_run, true) == run, "revalidated, same copy");
	CHECK_STR(hotspot_method_name(hs, f.method_hidden, false),
		  "sp/fake/Cls$$Lambda.0x0000000800c01000.run", "a hidden class as JVMTI spells it");
	name = hotspot_method_name(hs, f.method_long, false);
	CHECK(name && strlen(name) < 512 && !strncmp(name, "kkkk", 4) &&
	      !strcmp(name + strlen(name) - 5, ".call"), "a 65535-byte Symbol is cut: %zu bytes",
	      name ? strlen(name) : 0);
	CHECK(!hotspot_method_name(hs, f.method_bad_index, false), "a pool index past its end: NULL");
	CHECK(!hotspot_method_name(hs, f.method_run + 4, false), "a misaligned Method*: NULL");
	CHECK(!hotspot_method_name(hs, 0x7f0000000000ull, false), "an unreadable Method*: NULL");
	CHECK(!hotspot_method_name(hs, 1ull << 60, false), "a kernel address: NULL");
	/* Class unloading frees the Method*, a new one takes its place. */
	cm_run = get64(&im, f.method_run + O_CONST_METHOD);
	put64(&im, f.method_run + O_CONST_METHOD, f.cm_call);
	CHECK(hotspot_method_name(hs, f.method_run, false) == run, "without revalidation: cached");
	CHECK(hotspot_method_name(hs, f.method_run, true) == run,
	      "revalidated within 100 ms of the last check: cached (bounded cost)");
	usleep(110 * 1000);
	CHECK_STR(hotspot_method_name(hs, f.method_run, true), "sp/fake/Cls.call",
		  "revalidated later: a reused Method* is renamed");
	CHECK_STR(run, "sp/fake/Cls.run", "and the old name stays valid");
	/* A walked stack: native frames, a recursion, the reused Method* again. */
	{
		uint64_t stack[] = { 0x401000, f.method_hidden | SP_USTACK_METHOD_TAG,
				     f.method_hidden | SP_USTACK_METHOD_TAG,
				     f.method_run | SP_USTACK_METHOD_TAG, 0x402000 };

		put64(&im, f.method_run + O_CONST_METHOD, cm_run);
		hotspot_read_methods(hs, stack, 5);
		CHECK_STR(hotspot_method_name(hs, f.method_run, false), "sp/fake/Cls.call",
			  "a stack read within 100 ms keeps the cached name");
		usleep(110 * 1000);
		hotspot_read_methods(hs, stack, 5);
		CHECK_STR(hotspot_method_name(hs, f.method_run, false), "sp/fake/Cls.run",
			  "a stack read later revalidates its methods: renamed back");
		CHECK(hotspot_method_name(hs, f.method_run, false) == run,
		      "to the interned copy of the first name");
	}
	put64(&im, f.method_run + O_CONST_METHOD, 0x7f0000000000ull);
	usleep(110 * 1000);
	CHECK(!hotspot_method_name(hs, f.method_run, true), "a Method* gone bad: NULL");
	CHECK(hotspot_cached_methods(hs) == 3, "3 Method*s cached (%zu)", hotspot_cached_methods(hs));
	hotspot_free(hs);
	free(im.buf);
}

/* Each malformed image must fail with errno want. */
static void check_bad(struct img *im, int want, const char *what)
{
	struct hotspot *hs;

	errno = 0;
	hs = hotspot_open_image(im->buf, im->len, IMAGE_ADDR);
	CHECK(!hs && errno == want, "%s: %s", what, strerror(errno));
	hotspot_free(hs);
}

static void test_bad_images(void)
{
	struct img im = { .cap = 1 << 16 };
	struct fake f;

	im.buf = calloc(1, im.cap);
	sp_log_set_level(SP_LOG_ERROR);
	f = build_image(&im, 0);
	put64(&im, f.field_terminator, f.anchor_name);
	write_seed("unterminated", &im);
	check_bad(&im, EPROTO, "a field table without its NULL entry");
	f = build_image(&im, 0);
	put64(&im, f.struct_stride_var, 0);
	check_bad(&im, EPROTO, "a stride of 0");
	put64(&im, f.struct_stride_var, 1 << 20);
	check_bad(&im, EPROTO, "a stride of 1 MiB");
	f = build_image(&im, 0);
	/* "_anchor" replaced by 699 bytes of 'k': read up to its bound only */
	put64(&im, f.field_table + 8, f.long_name);
	write_seed("long_name", &im);
	check_bad(&im, EPROTO, "a field name longer than any looked for");
	f = build_image(&im, 0);
	memcpy(im.buf + (f.anchor_name - IMAGE_ADDR), "_ANCHOR", 7);
	check_bad(&im, EPROTO, "no JavaThread::_anchor");
	f = build_image(&im, 0);
	put64(&im, f.interp_code_var, 0);
	check_bad(&im, EAGAIN, "no interpreter yet");
	memset(im.buf, 0, 8 * HS_EX_COUNT);
	check_bad(&im, ENOENT, "no gHotSpotVMStructs");
	im.len = 8;
	check_bad(&im, ENOENT, "an image shorter than its header");
	sp_log_set_level(SP_LOG_INFO);
	free(im.buf);
}

/* The name cache holds at most 65536 Method*s, and answers past that. */
static void test_cache_bound(void)
{
	struct img im = { .cap = 1 << 20 };
	struct hotspot *hs;
	size_t named = 0;
	struct fake f;

	im.buf = calloc(1, im.cap);
	f = build_image(&im, 70000);
	hs = hotspot_open_image(im.buf, im.len, IMAGE_ADDR);
	CHECK(hs, "an image with 70000 Method*s opens");
	if (!hs)
		return;
	for (size_t i = 0; i < f.nmethods; i++)
		named += hotspot_method_name(hs, f.methods + 8 * i, false) != NULL;
	CHECK(named == 70000, "all 70000 named (%zu)", named);
	CHECK(hotspot_cached_methods(hs) == 65536, "65536 cached (%zu)", hotspot_cached_methods(hs));
	hotspot_free(hs);
	free(im.buf);
}

/* ---- the ELF lookup ---------------------------------------------------- */

static void test_elf_lookup(void)
{
	static const char src[] =
		"__thread long pad[4];\n"
		"__thread void *thr_current __asm__(\"_ZN6Thread12_thr_currentE\");\n"
		"__thread void *thr2 __asm__(\"_ZN6Thread12_thr_currentE2\");\n"
		"static long table[4];\n"
		"void *gHotSpotVMStructs = table;\n"
		"static void *local_vt[4] __asm__(\"_ZTV10JavaThread\") __attribute__((used));\n"
		"void *use(void) { return (char *)&thr_current + (long)&thr2 + pad[0]; }\n";
	static const char map[] = "SUNWprivate_1.1 { global: gHotSpotVMStructs; use; local: *; };\n";
	const char *names[] = { "gHotSpotVMStructs", "_ZN6Thread12_thr_currentE",
				"_ZTV10JavaThread", "missing" };
	char dir[] = "/tmp/sparkprof-hselfXXXXXX", cmd[1024], so[128], path[192];
	uint64_t values[4];
	bool found[4];
	FILE *f;
	int fd, n;

	if (!mkdtemp(dir))
		return;
	snprintf(path, sizeof(path), "%s/t.c", dir);
	snprintf(so, sizeof(so), "%s/t.so", dir);
	f = fopen(path, "w");
	fputs(src, f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/t.map", dir);
	f = fopen(path, "w");
	fputs(map, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -shared -fPIC -O1 -o %s %s/t.c -Wl,--version-script=%s",
		 so, dir, path);
	if (run(cmd) == 0 && (fd = open(so, O_RDONLY)) >= 0) {
		n = elf_find_symbol_values(fd, so, names, 4, values, found);
		close(fd);
		CHECK(n == 3 && found[0] && found[1] && found[2] && !found[3],
		      "3 of 4 symbols found (%d)", n);
		CHECK(values[0] == nm_symbol_value(so, "gHotSpotVMStructs", false) && values[0],
		      "a global object's address");
		CHECK(values[1] == nm_symbol_value(so, "_ZN6Thread12_thr_currentE", false),
		      "a TLS symbol's offset (%#" PRIx64 "), not its longer-named neighbour",
		      values[1]);
		CHECK(values[2] == nm_symbol_value(so, "_ZTV10JavaThread", false) && values[2],
		      "a local .symtab object");
		/* Stripped: only .dynsym, where the name carries a version. */
		snprintf(cmd, sizeof(cmd), "strip -o %s.stripped %s", so, so);
		snprintf(path, sizeof(path), "%s.stripped", so);
		if (run(cmd) == 0 && (fd = open(path, O_RDONLY)) >= 0) {
			uint64_t want = values[0];

			n = elf_find_symbol_values(fd, path, names, 4, values, found);
			close(fd);
			CHECK(n == 1 && found[0] && values[0] == want,
			      "stripped: the versioned .dynsym symbol alone (%d)", n);
		}
		if (getenv("SPARKPROF_WRITE_SEEDS")) {
			snprintf(cmd, sizeof(cmd), "cp %s $SPARKPROF_WRITE_SEEDS/tls.elf-seed", so);
			run(cmd);
		}
	}
	fd = open("/proc/self/status", O_RDONLY);
	CHECK(elf_find_symbol_values(fd, "status", names, 4, values, found) == -ENOEXEC,
	      "a text file: -ENOEXEC");
	close(fd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	run(cmd);
}

/* ---- live JVMs ----------------------------------------------------------- */

static const char spin_java[] =
	"package sp.test;\n"
	"import java.util.concurrent.locks.LockSupport;\n"
	"public class Spin {\n"
	"    static volatile long sink;\n"
	"    static long spinLeaf(long n) {\n"
	"        long x = 0;\n"
	"        for (long i = 0; i < n; i++) x += i ^ (x >>> 3);\n"
	"        return x;\n"
	"    }\n"
	"    public static void main(String[] args) throws Exception {\n"
	"        Thread parked = new Thread(() -> { while (true) LockSupport.park(); }, \"parked\");\n"
	"        parked.setDaemon(true);\n"
	"        parked.start();\n"
	"        Thread spinner = new Thread(() -> { while (true) sink += spinLeaf(1000000); },"
	" \"spinner\");\n"
	"        spinner.setDaemon(true);\n"
	"        spinner.start();\n"
	"        Thread.sleep(300);\n"
	"        System.out.println(\"ready\");\n"
	"        System.out.flush();\n"
	"        while (System.in.read() >= 0) { }\n"
	"        System.exit(0);\n"
	"    }\n"
	"}\n";

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A JVM running sp.test.Spin; it dies with us (PDEATHSIG, and stdin EOF). */
struct jvm {
	pid_t pid;
	int to, from;
};

static bool start_jvm(struct jvm *j, const char *java, const char *classes)
{
	int in[2], out[2];
	char line[64];
	size_t got = 0;
	double deadline = now_s() + 60;

	j->pid = -1;
	if (pipe(in) || pipe(out))
		return false;
	fflush(stdout);
	j->pid = fork();
	if (j->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(java, java, "-Xint", "-XX:+PreserveFramePointer", "-Xmx64m", "-cp", classes,
		      "sp.test.Spin", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	j->to = in[1];
	j->from = out[0];
	while (j->pid > 0 && got < sizeof(line) - 1 && now_s() < deadline) {
		struct pollfd p = { j->from, POLLIN, 0 };
		ssize_t n;

		if (poll(&p, 1, 1000) <= 0)
			continue;
		n = read(j->from, line + got, sizeof(line) - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		line[got] = '\0';
		if (strstr(line, "ready\n"))
			return true;
	}
	return false;
}

static void stop_jvm(struct jvm *j)
{
	if (j->pid > 0) {
		kill(j->pid, SIGKILL);
		waitpid(j->pid, NULL, 0);
	}
	if (j->to >= 0)
		close(j->to);
	if (j->from >= 0)
		close(j->from);
	*j = (struct jvm){ -1, -1, -1 };
}

/* The tid of pid's thread named comm, or -1. Reads /proc/pid/task: on a
 * busy machine a JVM's tids are not contiguous. */
static pid_t find_thread(pid_t pid, const char *comm)
{
	char path[96], buf[64];
	struct dirent *e;
	pid_t found = -1;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while (found < 0 && (e = readdir(d))) {
		pid_t tid = atoi(e->d_name);
		FILE *f;

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
		f = fopen(path, "r");
		if (!f)
			continue;
		buf[0] = '\0';
		if (fgets(buf, sizeof(buf), f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
		if (!strcmp(buf, comm))
			found = tid;
	}
	closedir(d);
	return found;
}

/* Waits (at most 5 s) for traced tid to stop. */
static bool wait_stop(pid_t tid)
{
	double deadline = now_s() + 5;
	int st;

	while (now_s() < deadline) {
		pid_t r = waitpid(tid, &st, __WALL | WNOHANG);

		if (r == tid)
			return WIFSTOPPED(st);
		if (r < 0)
			return false;
		usleep(1000);
	}
	return false;
}

/* Stops tid (already seized) and reads its registers. */
static bool interrupt(pid_t tid, struct user_regs_struct *regs)
{
	return ptrace(PTRACE_INTERRUPT, tid, 0, 0) == 0 && wait_stop(tid) &&
	       ptrace(PTRACE_GETREGS, tid, 0, regs) == 0;
}

static uint64_t peek(int mem, uint64_t addr)
{
	uint64_t v = 0;

	if (pread(mem, &v, 8, (off_t)addr) != 8)
		return 0;
	return v;
}

static bool in_range(uint64_t a, uint64_t lo, uint64_t hi)
{
	return a >= lo && a < hi;
}

/* The parked thread's JavaThread found as BPF will (fsbase -> DTV -> TLS
 * block -> Thread::_thr_current), its vtable checked and its anchor read. */
static void check_parked(struct hotspot *hs, pid_t pid, int mem, const struct sp_hotspot_info *in)
{
	pid_t tid = find_thread(pid, "parked");
	struct user_regs_struct regs;
	uint64_t jt = 0, sp, fp, pc, base;
	double deadline = now_s() + 5;
	bool stopped = false;

	CHECK(tid > 0, "the parked thread is found");
	if (tid <= 0 || ptrace(PTRACE_SEIZE, tid, 0, 0))
		return;
	/* Wait until it is in park (its anchor set). */
	do {
		stopped = interrupt(tid, &regs);
		if (!stopped)
			break;
		jt = peek(mem, peek(mem, peek(mem, regs.fs_base + 8) + 16 * in->tls_modid) +
			       in->thr_current_offset);
		sp = peek(mem, jt + in->anchor_offset + in->last_java_sp_offset);
		if (sp)
			break;
		ptrace(PTRACE_CONT, tid, 0, 0);
		usleep(20000);
		stopped = false;
	} while (now_s() < deadline);
	CHECK(stopped, "parked thread stopped with its anchor set");
	if (stopped) {
		fp = peek(mem, jt + in->anchor_offset + in->last_java_fp_offset);
		pc = peek(mem, jt + in->anchor_offset + in->last_java_pc_offset);
		base = peek(mem, jt + in->stack_base_offset);
		CHECK(jt && peek(mem, jt) == in->java_thread_vtable,
		      "fsbase -> TLS gives a JavaThread (%#" PRIx64 ") with JavaThread's vtable", jt);
		CHECK(regs.rsp < sp && sp <= base, "anchor sp within its stack: rsp %#llx < %#" PRIx64
		      " <= base %#" PRIx64, regs.rsp, sp, base);
		CHECK(in_range(pc, in->interp_lo, in->interp_hi) && fp > sp && fp < base,
		      "interpreted park: last_Java_pc in the interpreter, fp above sp");
		CHECK_STR(hotspot_method_name(hs, peek(mem, fp - 24), true),
			  "jdk/internal/misc/Unsafe.park", "the anchor frame's Method*");
	}
	ptrace(PTRACE_DETACH, tid, 0, 0);
}

/* Stops the spinner 30 times; its frames in the interpreter are named
 * through fp[-3]. */
static void check_spinner(struct hotspot *hs, pid_t pid, int mem, const struct sp_hotspot_info *in,
			  uint64_t *a_method)
{
	pid_t tid = find_thread(pid, "spinner");
	struct user_regs_struct regs;
	int stops = 0, interp = 0, leaf = 0, unnamed = 0;
	bool chain_printed = false;

	CHECK(tid > 0, "the spinning thread is found");
	if (tid <= 0 || ptrace(PTRACE_SEIZE, tid, 0, 0))
		return;
	for (int i = 0; i < 30; i++) {
		const char *name;
		uint64_t method;

		if (i && (ptrace(PTRACE_CONT, tid, 0, 0) || usleep(3000)))
			break;
		if (!interrupt(tid, &regs))
			break;
		stops++;
		if (!in_range(regs.rip, in->interp_lo, in->interp_hi))
			continue;
		interp++;
		method = peek(mem, regs.rbp - 24);
		name = hotspot_method_name(hs, method, i & 1);
		if (!name) {
			unnamed++;
			continue;
		}
		if (strcmp(name, "sp/test/Spin.spinLeaf"))
			continue;
		leaf++;
		*a_method = method;
		/* The callers, as the walker will see them. */
		for (uint64_t fp = peek(mem, regs.rbp), d = 0; !chain_printed && fp && d < 6; d++) {
			const char *caller = hotspot_method_name(hs, peek(mem, fp - 24), false);

			printf("#   caller %" PRIu64 ": %s\n", d, caller ? caller : "(not named)");
			fp = peek(mem, fp);
		}
		chain_printed = true;
	}
	ptrace(PTRACE_DETACH, tid, 0, 0);
	CHECK(stops == 30, "30 ptrace stops of the spinner (%d)", stops);
	CHECK(interp >= 25, "in the interpreter at %d of them", interp);
	CHECK(leaf >= interp * 8 / 10 && leaf > 0,
	      "fp[-3] named sp/test/Spin.spinLeaf at %d of %d (%d not named)", leaf, interp,
	      unnamed);
}

static void test_live(const char *jdk, int major)
{
	char dir[] = "/tmp/sparkprof-hotspotXXXXXX", path[256], cmd[1024], java[256];
	struct sp_hotspot_info in = { 0 };
	const struct proc_map *m;
	struct proc_maps *pm = NULL;
	struct hotspot *hs = NULL;
	struct jvm j = { -1, -1, -1 };
	uint64_t method = 0;
	const char *cached = NULL;
	double t0;
	FILE *f;
	int mem = -1;

	snprintf(java, sizeof(java), "%s/bin/java", jdk);
	if (access(java, X_OK)) {
		CHECK(0, "JDK %d at %s", major, jdk);
		return;
	}
	if (!mkdtemp(dir))
		return;
	snprintf(path, sizeof(path), "%s/Spin.java", dir);
	f = fopen(path, "w");
	fputs(spin_java, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s/bin/javac -d %s %s", jdk, dir, path);
	CHECK(run(cmd) == 0, "JDK %d compiles Spin.java", major);
	CHECK(start_jvm(&j, java, dir), "JDK %d runs sp.test.Spin -Xint", major);
	if (j.pid <= 0)
		goto out;
	t0 = now_s();
	hs = hotspot_open(j.pid);
	CHECK(hs, "hotspot_open on JDK %d: %s (%.1f ms)", major, hs ? "ok" : strerror(errno),
	      (now_s() - t0) * 1e3);
	if (!hs)
		goto out;
	hotspot_walker_info(hs, &in);
	CHECK(hotspot_jdk_major(hs) == major, "JDK major %d", hotspot_jdk_major(hs));
	printf("#   JDK %d: interpreter [%#llx, %#llx) vtable %#llx tls modid %u at +%#llx;"
	       " anchor %u (sp %u pc %u fp %u) stack_base %u\n", major,
	       (unsigned long long)in.interp_lo, (unsigned long long)in.interp_hi,
	       (unsigned long long)in.java_thread_vtable, in.tls_modid,
	       (unsigned long long)in.thr_current_offset, in.anchor_offset, in.last_java_sp_offset,
	       in.last_java_pc_offset, in.last_java_fp_offset, in.stack_base_offset);
	pm = proc_maps_read(j.pid);
	m = pm && in.interp_hi > in.interp_lo ? proc_maps_find(pm, in.interp_lo) : NULL;
	CHECK(m && m->kind == PROC_MAP_ANON && proc_map_is_exec(m) && in.interp_hi <= m->end,
	      "the interpreter lies in one executable anonymous mapping");
	m = pm ? proc_maps_find(pm, in.java_thread_vtable) : NULL;
	CHECK(m && strstr(m->path, "/libjvm.so"), "JavaThread's vtable is in libjvm");
	CHECK(in.tls_modid >= 1 && in.tls_modid <= 16, "TLS modid found: %u", in.tls_modid);
	CHECK(in.thr_current_offset == 0x20, "Thread::_thr_current at 0x20 of the TLS block");
	CHECK(in.anchor_offset >= 256 && in.anchor_offset < 4096 &&
	      in.stack_base_offset >= 256 && in.stack_base_offset < 4096 &&
	      in.last_java_sp_offset == 0 && in.last_java_pc_offset == 8 &&
	      in.last_java_fp_offset == 16, "anchor and stack offsets plausible");
	snprintf(path, sizeof(path), "/proc/%d/mem", j.pid);
	mem = open(path, O_RDONLY);
	if (mem < 0)
		goto out;
	check_parked(hs, j.pid, mem, &in);
	check_spinner(hs, j.pid, mem, &in, &method);
	cached = method ? hotspot_method_name(hs, method, true) : NULL;
	stop_jvm(&j);
	CHECK(cached && hotspot_method_name(hs, method, true) == cached,
	      "after the JVM exits, a cached name is still given");
	CHECK(!hotspot_method_name(hs, method + 64, false), "and nothing new is named");
out:
	if (mem >= 0)
		close(mem);
	proc_maps_free(pm);
	hotspot_free(hs);
	stop_jvm(&j);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	run(cmd);
}

static void test_not_jvm(void)
{
	pid_t child;

	errno = 0;
	CHECK(!hotspot_open(getpid()) && errno == ENOENT, "this test is no JVM: ENOENT (%s)",
	      strerror(errno));
	child = fork();
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	errno = 0;
	CHECK(!hotspot_open(child) && errno == ESRCH, "an exited pid: ESRCH (%s)", strerror(errno));
}

int main(void)
{
	test_image();
	test_bad_images();
	test_cache_bound();
	test_elf_lookup();
	test_not_jvm();
	test_live("/usr/lib/jvm/java-17-openjdk-amd64", 17);
	test_live("/usr/lib/jvm/temurin-25-jdk-amd64", 25);
	TAP_DONE();
}

/* test_elf_symbols.c - ELF function symbols: a test program (PIE and
 * non-PIE), a stripped shared library, the vDSO, bad images, demangling,
 * libjvm's names kept in a spill file. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/spill_file.h"
#include "shell_tools.h"
#include "symbols/demangle.h"
#include "symbols/elf_symbols.h"
#include "tap.h"

#define TARGET_SRC "tests/progs/symbols_target.c"

static char tmpdir[] = "/tmp/sparkprof-elf-XXXXXX";

/* Symbol values from nm; the dynamic symbols for shared libraries. */
static uint64_t nm_value(const char *file, const char *name)
{
	return nm_symbol_value(file, name, strstr(file, ".so") != NULL);
}

/* The address of section name in file, from readelf. */
static uint64_t section_address(const char *file, const char *name)
{
	char cmd[512], line[512];
	uint64_t found = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -SW %s", file);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		char *open = strchr(line, ']');
		char sect[64], type[64];
		unsigned long long addr;

		if (open && sscanf(open + 1, "%63s %63s %llx", sect, type, &addr) == 3 &&
		    strcmp(sect, name) == 0)
			found = addr;
	}
	if (p)
		pclose(p);
	return found;
}

/* Every "<name@plt>" stub objdump shows gets that name. */
static void check_plt_names(struct elf_symbols *es, const char *path, const char *what)
{
	char cmd[512], line[512], label[256];
	unsigned long long addr;
	int stubs = 0, named = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt %s", path);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		char *end;
		const char *got;

		if (sscanf(line, "%llx <%255[^>]>:", &addr, label) != 2)
			continue;
		end = strstr(label, "@plt");
		if (!end || end[4] != '\0')
			continue; /* the PLT header "<puts@plt-0x10>" */
		stubs++;
		got = elf_symbols_lookup(es, addr + 4, NULL);
		if (got && strcmp(got, label) == 0)
			named++;
		else
			printf("# %s: %s at 0x%llx named %s\n", what, label, addr, got ? got : "(none)");
	}
	if (p)
		pclose(p);
	CHECK(stubs > 3 && named == stubs, "%s: %d of %d PLT stubs named like objdump", what, named,
	      stubs);
}

static struct elf_symbols *load_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct elf_symbols *es;

	if (fd < 0)
		return NULL;
	es = elf_symbols_load_fd(fd, path);
	close(fd);
	return es;
}

static void check_target(const char *path, const char *what)
{
	static const char *const names[] = { "symtarget_leaf_alpha", "symtarget_middle_beta",
					     "symtarget_outer_gamma", "sized_short" };
	struct elf_symbols *es = load_path(path);
	uint64_t off, v;

	CHECK(es != NULL, "%s: loads", what);
	if (!es)
		return;
	CHECK(elf_symbols_has_symtab(es), "%s: has .symtab", what);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		v = nm_value(path, names[i]);
		CHECK(v != 0, "%s: nm knows %s", what, names[i]);
		CHECK_STR(elf_symbols_lookup(es, v, &off), names[i], "%s: %s start", what, names[i]);
		CHECK(off == 0, "%s: offset 0 at the start", what);
		if (strcmp(names[i], "sized_short") != 0) {
			CHECK_STR(elf_symbols_lookup(es, v + 5, &off), names[i], "%s: %s + 5", what,
				  names[i]);
			CHECK(off == 5, "%s: offset 5", what);
		}
	}
	v = nm_value(path, "sized_short");
	CHECK_STR(elf_symbols_lookup(es, v + 1, NULL), "sized_short", "%s: inside a 2-byte symbol", what);
	CHECK(elf_symbols_lookup(es, v + 4, NULL) == NULL,
	      "%s: past a sized symbol's end: no name", what);
	v = nm_value(path, "_ZN9sparkprof6Target3runEi");
	CHECK_STR(elf_symbols_lookup(es, v + 2, NULL), "sparkprof::Target::run",
		  "%s: C++ name demangled, arguments cut", what);
	CHECK(elf_symbols_lookup(es, 1, NULL) == NULL, "%s: address 1 has no name", what);
	/* _init has no size and the PLT follows it: PLT stubs are not "_init". */
	v = section_address(path, ".plt");
	CHECK(v != 0, "%s: readelf shows a .plt", what);
	CHECK_STR(elf_symbols_lookup(es, nm_value(path, "_init"), NULL), "_init", "%s: _init", what);
	const char *stub = elf_symbols_lookup(es, v + 0x10, NULL);
	CHECK(!stub || strcmp(stub, "_init") != 0, "%s: a PLT stub is not named _init", what);
	check_plt_names(es, path, what);
	CHECK(elf_symbols_build_id(es, &(const uint8_t *){ NULL }) == 20, "%s: 20-byte build-id", what);

	/* The text segment's file offsets map back to the nm addresses. */
	v = nm_value(path, "symtarget_leaf_alpha");
	int found = 0;
	for (uint64_t delta = 0; delta <= 0x400000 && !found; delta += 0x1000) {
		uint64_t back;
		/* nm value = file offset - p_offset + p_vaddr; try the usual bases. */
		if (v >= delta && elf_symbols_offset_to_vaddr(es, v - delta, &back) && back == v)
			found = 1;
	}
	CHECK(found, "%s: some file offset maps to symtarget_leaf_alpha's address", what);
	elf_symbols_free(es);
}

static void check_build_id(const char *path)
{
	char cmd[512], line[512], want[200] = "", got[200] = "";
	const uint8_t *id;
	struct elf_symbols *es = load_path(path);
	int fd = open(path, O_RDONLY);
	uint8_t cheap[ELF_BUILD_ID_MAX];
	int cheap_len = fd >= 0 ? elf_read_build_id(fd, cheap, NULL) : -1;
	FILE *p;
	size_t len;

	if (fd >= 0)
		close(fd);
	snprintf(cmd, sizeof(cmd), "readelf -n %s", path);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		char *s = strstr(line, "Build ID: ");
		if (s)
			sscanf(s + 10, "%199s", want);
	}
	if (p)
		pclose(p);
	len = es ? elf_symbols_build_id(es, &id) : 0;
	for (size_t i = 0; i < len; i++)
		sprintf(got + 2 * i, "%02x", id[i]);
	CHECK(want[0] != '\0', "readelf shows a build-id for %s", path);
	CHECK_STR(got, want, "build-id matches readelf");
	CHECK(cheap_len == (int)len && memcmp(cheap, id, len) == 0, "elf_read_build_id agrees");
	elf_symbols_free(es);
}

static void test_stripped_library(void)
{
	char cmd[1024], src[256], lib[256];
	FILE *f;

	snprintf(src, sizeof(src), "%s/lib.c", tmpdir);
	snprintf(lib, sizeof(lib), "%s/libstripped.so", tmpdir);
	f = fopen(src, "w");
	if (!f)
		return;
	fputs("int exported_one(int x) { return x * 3 + 1; }\n"
	      "static int hidden(int x) { return x ^ 7; }\n"
	      "int exported_two(int x) { return hidden(x) + exported_one(x); }\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -O1 -shared -fPIC -o %s %s && strip --strip-all %s", lib, src, lib);
	if (run(cmd) != 0) {
		CHECK(0, "build a stripped shared library");
		return;
	}
	struct elf_symbols *es = load_path(lib);
	uint64_t one = nm_value(lib, "exported_one"), two = nm_value(lib, "exported_two");

	CHECK(es != NULL && !elf_symbols_has_symtab(es), "stripped library: .dynsym only");
	CHECK(one && two, "nm -D sees the exported functions");
	CHECK_STR(elf_symbols_lookup(es, one + 1, NULL), "exported_one", "dynsym lookup");
	CHECK_STR(elf_symbols_lookup(es, two, NULL), "exported_two", "dynsym lookup 2");
	elf_symbols_free(es);
}

static void test_vdso(void)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR);
	void *h = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
	void *fn = h ? dlsym(h, "__vdso_clock_gettime") : NULL;
	struct elf_symbols *es;
	uint64_t vaddr;
	const char *name;

	CHECK(base && fn, "vDSO and its clock_gettime found");
	if (!base || !fn)
		return;
	/* The vDSO is at most a few pages; 8 KiB holds the ELF image. */
	es = elf_symbols_load_mem((const void *)(uintptr_t)base, 8192);
	CHECK(es != NULL && elf_symbols_count(es) > 3, "vDSO image loads from memory");
	if (!es)
		return;
	CHECK(elf_symbols_offset_to_vaddr(es, (uint64_t)(uintptr_t)fn - base, &vaddr),
	      "vDSO offset maps to an address");
	name = elf_symbols_lookup(es, vaddr + 4, NULL);
	CHECK(name && strstr(name, "clock_gettime"), "vDSO clock_gettime named (%s)",
	      name ? name : "null");
	elf_symbols_free(es);
}

static void test_bad_images(void)
{
	static const char junk[] = "\x7f" "ELF this is not really an ELF file at all...........";
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fopen("build/progs/symbols_target", "rb");
	struct elf_symbols *es;

	CHECK(elf_symbols_load_mem(junk, sizeof(junk)) == NULL && errno == ENOEXEC,
	      "junk with an ELF magic: ENOEXEC");
	CHECK(elf_symbols_load_mem("", 0) == NULL, "empty image: NULL");
	if (f) {
		buf = malloc(1 << 20);
		len = buf ? fread(buf, 1, 1 << 20, f) : 0;
		fclose(f);
	}
	CHECK(len > 4096, "read the test program into memory");
	if (len <= 4096) {
		free(buf);
		return;
	}
	es = elf_symbols_load_mem(buf, 64);
	CHECK(es == NULL || elf_symbols_count(es) == 0, "ELF header only: no symbols, no crash");
	elf_symbols_free(es);
	uint64_t alpha = nm_value("build/progs/symbols_target", "symtarget_leaf_alpha");
	const char *name;
	es = elf_symbols_load_mem(buf, len / 2);
	name = es ? elf_symbols_lookup(es, alpha, NULL) : NULL;
	CHECK(!name || strcmp(name, "symtarget_leaf_alpha") == 0,
	      "truncated file: no crash and no wrong name (%s)", name ? name : "none");
	elf_symbols_free(es);
	/* Corrupt the section header offset: must not crash. */
	memset(buf + 0x28, 0xff, 8);
	es = elf_symbols_load_mem(buf, len);
	CHECK(es == NULL || elf_symbols_count(es) == 0, "wild e_shoff: no symbols, no crash");
	elf_symbols_free(es);
	free(buf);
}

static void test_demangle(void)
{
	char a[] = "JavaThread::thread_main_inner()";
	char b[] = "Foo::operator()(int) const";
	char c[] = "void foo<int>(int) [clone .cold]";
	char d[] = "std::function<void (int)>::operator()(int) const";
	char e[] = "(anonymous namespace)::helper";
	char f[] = "std::pair<int, int> (anonymous namespace)::make<long>(long)";
	char g[] = "bool operator< <A>(A const&, A const&)";
	char h[] = "void* Arena::operator new(unsigned long)";
	char *s;

	demangle_cut_arguments(a);
	demangle_cut_arguments(b);
	demangle_cut_arguments(c);
	demangle_cut_arguments(d);
	demangle_cut_arguments(e);
	CHECK_STR(a, "JavaThread::thread_main_inner", "cut ()");
	CHECK_STR(b, "Foo::operator()", "operator() kept, const cut");
	CHECK_STR(c, "foo<int>", "clone suffix and return type cut");
	CHECK_STR(d, "std::function<void (int)>::operator()", "parentheses in templates kept");
	CHECK_STR(e, "(anonymous namespace)::helper", "no parameter list: unchanged");
	demangle_cut_arguments(f);
	demangle_cut_arguments(g);
	demangle_cut_arguments(h);
	CHECK_STR(f, "(anonymous namespace)::make<long>", "return type with template arguments cut");
	CHECK_STR(g, "bool operator< <A>", "operators: return type kept rather than guessed");
	CHECK_STR(h, "void* Arena::operator new", "operator new not cut at its space");
	s = demangle_symbol("_ZN13WeakProcessor12weak_oops_doI19G1STWIsAliveClosure18G1KeepAliveClosureEEvP10WorkerThreadPT_PT0_");
	CHECK(s && strncmp(s, "WeakProcessor::weak_oops_do<", 11 + 15) == 0,
	      "template function: no return type (%s)", s ? s : "null");
	free(s);
	s = demangle_symbol("_ZN10JavaThread17thread_main_innerEv");
	CHECK_STR(s, "JavaThread::thread_main_inner", "libjvm-style name demangled");
	free(s);
	s = demangle_symbol("_ZN10JavaThread17thread_main_innerEv@plt");
	CHECK_STR(s, "JavaThread::thread_main_inner@plt", "PLT suffix kept after demangling");
	free(s);
	CHECK(demangle_symbol("main") == NULL, "C name: not demangled");
	CHECK(demangle_symbol("_Z!!bogus") == NULL, "invalid mangled name: NULL");
}

/* Every symbol named at file offsets step apart in both tables; how many
 * were, -1 on the first difference. */
static int same_names(struct elf_symbols *a, struct elf_symbols *b, uint64_t size, uint64_t step)
{
	int named = 0;

	for (uint64_t off = 0; off < size; off += step) {
		uint64_t v, ia = 0, ib = 0;
		const char *na, *nb;

		if (!elf_symbols_offset_to_vaddr(a, off, &v))
			continue;
		na = elf_symbols_lookup(a, v, &ia);
		nb = elf_symbols_lookup(b, v, &ib);
		if (!na != !nb || (na && (strcmp(na, nb) || ia != ib))) {
			printf("# at 0x%" PRIx64 ": %s / %s\n", v, na ? na : "-", nb ? nb : "-");
			return -1;
		}
		named += na != NULL;
	}
	return named;
}

/* A large table's names moved to a spill file read back the same names
 * (libjvm's C++ names, demangled), and the memory they took is gone; a
 * move after a lookup, or into a file that cannot be made, leaves them. */
static void test_names_in_spill_file(void)
{
	char path[512] = "", dir[600], missing[600];
	FILE *p = popen("ls /usr/lib/jvm/*/lib/server/libjvm.so 2>/dev/null | head -1", "r");
	struct elf_symbols *kept, *moved, *late;
	struct spill_file *spill, *nowhere;
	size_t names, before;
	struct stat st;
	int n;

	if (p && fgets(path, sizeof(path), p))
		path[strcspn(path, "\n")] = 0;
	if (!p || stat(path, &st)) {
		CHECK(0, "a JDK's libjvm.so under /usr/lib/jvm (make deps installs one)");
		if (p)
			pclose(p);
		return;
	}
	pclose(p);
	snprintf(dir, sizeof(dir), "%s/spill", tmpdir);
	snprintf(missing, sizeof(missing), "%s/no/such/folder", tmpdir);
	mkdir(dir, 0700);
	kept = load_path(path);
	moved = load_path(path);
	late = load_path(path);
	spill = spill_file_new(dir, "symbol names");
	nowhere = spill_file_new(missing, "symbol names");
	if (!kept || !moved || !late || !spill || !nowhere) {
		CHECK(0, "load %s three times", path);
		goto out;
	}
	names = elf_symbols_names_bytes(moved);
	before = elf_symbols_memory(moved);
	CHECK(names > (1u << 20), "%s: %zu KiB of names in memory", path, names >> 10);
	CHECK(elf_symbols_move_names(moved, spill) == 0 && !elf_symbols_names_bytes(moved) &&
	      elf_symbols_memory(moved) == before - names,
	      "moved to the spill file: %zu KiB of memory left of %zu",
	      elf_symbols_memory(moved) >> 10, before >> 10);
	n = same_names(kept, moved, (uint64_t)st.st_size, 251);
	CHECK(n > 20000, "the same names read back (%d symbols compared)", n);
	CHECK_STR(elf_symbols_lookup(moved, nm_symbol_value(path, "_ZN10JavaThread17thread_main_innerEv",
							  false), NULL),
		  "JavaThread::thread_main_inner", "a C++ name read back and demangled");
	CHECK(elf_symbols_move_names(kept, spill) == -EBUSY && elf_symbols_names_bytes(kept) == names,
	      "after a lookup the names stay");
	CHECK(elf_symbols_move_names(late, nowhere) < 0 && elf_symbols_names_bytes(late) == names &&
	      same_names(kept, late, (uint64_t)st.st_size, 4093) > 1000,
	      "a spill file that cannot be made: the names stay and still name");
out:
	elf_symbols_free(kept);
	elf_symbols_free(moved);
	elf_symbols_free(late);
	spill_file_free(spill);
	spill_file_free(nowhere);
}

int main(void)
{
	char cmd[1024], nopie[256];

	if (!mkdtemp(tmpdir)) {
		CHECK(0, "mkdtemp");
		TAP_DONE();
	}
	check_target("build/progs/symbols_target", "PIE test program");
	check_build_id("build/progs/symbols_target");
	snprintf(nopie, sizeof(nopie), "%s/symbols_target_nopie", tmpdir);
	snprintf(cmd, sizeof(cmd), "cc -O1 -g -fno-omit-frame-pointer -fno-inline -no-pie -fno-pie "
		 "-o %s " TARGET_SRC, nopie);
	if (run(cmd) == 0)
		check_target(nopie, "non-PIE test program");
	else
		CHECK(0, "build the non-PIE test program");
	test_stripped_library();
	test_vdso();
	test_bad_images();
	test_demangle();
	test_names_in_spill_file();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	run(cmd);
	TAP_DONE();
}

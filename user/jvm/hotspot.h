/* hotspot.h - a HotSpot JVM described from outside: what the BPF walker needs
 * (struct sp_hotspot_info) and names of Method*s, read through the JVM's own
 * vmStructs in its memory (no helper needed).
 *
 * libjvm.so exports gHotSpotVMStructs and gHotSpotVMTypes: tables naming the
 * offset of every field and the size of every type the serviceability agent
 * uses.  Offsets change between JDKs (JDK 17 and 25 differ), so every one is
 * taken from these tables by name; docs/stack-walker.md lists the values seen.
 * Everything read from the process is hostile input: its user controls it.
 * Reads are bounded, pointers are never dereferenced locally, and memory held
 * per JVM is capped.  x86-64 only (the TLS layout).  Not thread-safe.
 */
#ifndef SPARKPROF_HOTSPOT_H
#define SPARKPROF_HOTSPOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sparkprof_events.h"

struct hotspot;

/* Reads pid's vmStructs now.  NULL and errno: ENOENT not a HotSpot JVM (no
 * libjvm.so mapped or no gHotSpotVMStructs), ESRCH gone, EPROTO a table it
 * cannot make sense of, EAGAIN a JVM still starting (no interpreter yet: try
 * later); plus an sp_debug/sp_warn line.  The TLS module id is looked for
 * once, here. */
struct hotspot *hotspot_open(pid_t pid);
/* The process is gone: frees the index of method names (the names handed
 * out stay valid until hotspot_free). */
void hotspot_release(struct hotspot *hs);
void hotspot_free(struct hotspot *hs);

/* Fills the walker's map value.  tls_modid is 0 when it could not be found
 * (then waits are not continued, everything else works); so is it when
 * libjvm has no `vtable for JavaThread` to check threads against. */
/* Looks for libjvm's TLS module id again when open could not find it (a JVM
 * that had no Java thread listed yet). True when it is found now. */
bool hotspot_find_tls(struct hotspot *hs);

void hotspot_walker_info(const struct hotspot *hs, struct sp_hotspot_info *out);

/* "pkg/Class.method" for Method* method, spelled as the helper names JIT
 * frames (tools/jvmti/code_events.c: internal class name with slashes, a
 * hidden class's last '+' as '.', no signature), read from the live process
 * and cached by Method*.  The string stays valid until hotspot_free.  NULL
 * when it cannot be read (process gone, not a Method*, or the JVM has shown
 * more distinct names than this module keeps).  With revalidate, a cached
 * entry is checked by re-reading Method::_constMethod (class unloading and
 * redefinition free and reuse Method*s), at most every 100 ms per Method*,
 * so a reused Method* is renamed; a cached name is kept when the process is
 * gone. */
const char *hotspot_method_name(struct hotspot *hs, uint64_t method, bool revalidate);

/* Reads (and revalidates) the names of the interpreted frames among a
 * walked user stack's n entries (those tagged SP_USTACK_METHOD_TAG) while
 * the process still runs them. */
void hotspot_read_methods(struct hotspot *hs, const uint64_t *user, size_t n);

/* For tests and `sparkprof list`: the JDK major version seen (0 when
 * unknown), the interpreter's code [lo, hi), and how many Method*s the name
 * cache holds. */
int hotspot_jdk_major(const struct hotspot *hs);
void hotspot_interpreter(const struct hotspot *hs, uint64_t *lo, uint64_t *hi);
size_t hotspot_cached_methods(const struct hotspot *hs);

/* The libjvm symbols hotspot_open looks up, in the order of the words of a
 * memory image (below). */
enum hotspot_export {
	HS_EX_STRUCTS,             /* gHotSpotVMStructs: holds the field table's address */
	HS_EX_STRUCT_TYPE_NAME,    /* gHotSpotVMStructEntryTypeNameOffset, ... */
	HS_EX_STRUCT_FIELD_NAME,
	HS_EX_STRUCT_IS_STATIC,
	HS_EX_STRUCT_OFFSET,
	HS_EX_STRUCT_ADDRESS,
	HS_EX_STRUCT_STRIDE,
	HS_EX_TYPES,               /* gHotSpotVMTypes: holds the type table's address */
	HS_EX_TYPE_TYPE_NAME,
	HS_EX_TYPE_SUPER_NAME,
	HS_EX_TYPE_SIZE,
	HS_EX_TYPE_STRIDE,
	HS_EX_THR_CURRENT,         /* Thread::_thr_current: an offset in libjvm's TLS block */
	HS_EX_JAVA_THREAD_VTABLE,  /* vtable for JavaThread (objects hold it + 16) */
	HS_EX_COUNT
};

/* For the fuzzer and tests: a JVM whose memory is image[0..len) at address
 * image_addr (nothing else is readable).  The image starts with HS_EX_COUNT
 * little-endian 8-byte words: the values the symbols of enum hotspot_export
 * would have, load base added (0: absent).  The image is read in place, not
 * copied: it must outlive hs, and may change (to test revalidation). */
struct hotspot *hotspot_open_image(const void *image, size_t len, uint64_t image_addr);

#endif

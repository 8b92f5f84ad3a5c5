/* btf_cache.h - a BTF of just the kernel types our BPF programs use, kept
 * between runs, so that loading them does not parse the kernel's whole BTF.
 *
 * libbpf relocates CO-RE programs against /sys/kernel/btf/vmlinux (5.5 MB,
 * 127k types on 6.18): parsing it is 45-100 ms of a start-up of about 160.
 * `bpftool gen min_core_btf` writes the types the programs need (under
 * 1 KiB).  When no file fits, a recording starts bpftool in the
 * background after sampling has started; later recordings load with it.
 *
 * A file is used only when it and its folder are root's and nobody else can
 * write them, and only for the kernel and programs it was made for: its
 * name hashes the kernel release, version and BTF size and the programs'
 * bytes.  Anything else (no file, no bpftool, a file that does not load)
 * means the kernel's BTF, as before; the sampler falls back by itself.
 */
#ifndef SPARKPROF_BTF_CACHE_H
#define SPARKPROF_BTF_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define BTF_CACHE_DIR "/var/cache/sparkprof/btf"

/* The file for this kernel and these programs, in dir (NULL:
 * BTF_CACHE_DIR), whether or not it exists.  0, or -ENAMETOOLONG /
 * -errno of uname or of reading the kernel's BTF size. */
int btf_cache_path(const char *dir, char *path, size_t cap);

/* Whether path exists and can be trusted (see above). */
bool btf_cache_usable(const char *path);

/* Starts `bpftool gen min_core_btf` writing path (through a temporary
 * file and rename), creating its folder (0700) if needed.  Returns the
 * child's pid, 0 when bpftool is not installed, -EPERM when the folder is
 * not root's alone, or -errno.  The child works on after we exit if it
 * must. */
pid_t btf_cache_make(const char *path);

#endif

/* bpf_load.h - loads a BPF skeleton and, when the kernel refuses it, says
 * which program, on which kernel, and the verifier's own reason.
 *
 * A verifier's refusal is not a missing privilege: the message says "run as
 * root" only when sparkprof is not root. With -v the verifier's whole log
 * is printed too.
 */
#ifndef SPARKPROF_BPF_LOAD_H
#define SPARKPROF_BPF_LOAD_H

#include <stddef.h>

struct bpf_object_skeleton;

/* Loads skel (its programs set to load already). what names it in
 * messages ("BPF sampler"), release is the kernel's (uname -r). Returns 0,
 * or -errno after printing one line. */
int bpf_load_skeleton(struct bpf_object_skeleton *skel, const char *what, const char *release);

/* The verifier's reason in log[0, len): its last line that is not a trace
 * of instructions, register states or statistics. Copied into out, cut to
 * size; returns the length copied (0: none found). */
size_t verifier_reason(const char *log, size_t len, char *out, size_t size);

#endif

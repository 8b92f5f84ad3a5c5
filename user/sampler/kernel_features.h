/* kernel_features.h - what this kernel's BPF offers sparkprof, probed once
 * at start, and what a recording does without each part.
 *
 * Every feature is probed as the running kernel has it (tiny program loads,
 * a map, the kernel's BTF), never by its version number: distribution
 * kernels carry backports. The Linux release a feature names is where it
 * first appeared upstream, for messages only.
 *
 * Without HOTSPOT_WALK the sampler walks every stack by frame pointers
 * (JIT, native and kernel frames are still named); without OFF_CPU there is
 * no --wall or --off-cpu. Nothing is named differently because a feature is
 * missing: what cannot be walked is left out, never guessed.
 */
#ifndef SPARKPROF_KERNEL_FEATURES_H
#define SPARKPROF_KERNEL_FEATURES_H

#include <stdbool.h>
#include <stddef.h>

struct json_writer;

enum kernel_feature {
	KERNEL_HOTSPOT_WALK,   /* bpf_loop, bpf_task_pt_regs, task BTF pointers, atomics */
	KERNEL_OFF_CPU,        /* task storage, atomic exchange */
	KERNEL_SEED_BLOCKED,   /* bpf_copy_from_user_task in sleepable task iterators */
	KERNEL_SWITCH_STATE,   /* sched_switch passes the state prev leaves in */
	KERNEL_FEATURES,
};

struct kernel_features {
	char release[65];              /* uname -r */
	bool has[KERNEL_FEATURES];
};

/* Probes the running kernel (needs CAP_BPF). Returns 0, or -errno when the
 * probes could not run; kf->release is filled either way.
 * SPARKPROF_ASSUME_FEATURES=all in the environment skips the probes and
 * claims every feature: the suite uses it to see an old kernel's verifier
 * refuse what it lacks. */
int kernel_features_probe(struct kernel_features *kf);

/* True when every feature is there. */
bool kernel_features_full(const struct kernel_features *kf);

/* "hotspot_walk", "off_cpu", "seed_blocked_threads", "switch_state". */
const char *kernel_feature_key(enum kernel_feature f);
/* What the kernel lacks, and the release that first had it. */
const char *kernel_feature_needs(enum kernel_feature f);

/* One line: "Linux R, reduced: KEY (...); ..." or "Linux R: every feature",
 * cut to size; true when something is reduced. The parts of off-CPU
 * profiles count only with off_cpu (they matter then), and not when
 * off-CPU profiles are missing as a whole. */
bool kernel_features_describe(const struct kernel_features *kf, bool off_cpu, char *buf,
			      size_t size);

/* {"release", "mode": "full"|"reduced", "reduced": [{"feature", "needs",
 * "without"}]} as the value of the key just written. */
void kernel_features_write_json(const struct kernel_features *kf, struct json_writer *w);

#endif

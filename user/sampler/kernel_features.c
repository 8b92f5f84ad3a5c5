/* kernel_features.c - see kernel_features.h. */
#include <errno.h>
#include <stdarg.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "base/json_writer.h"
#include "sampler/kernel_features.h"

static const struct {
	const char *key, *needs, *without;
} features[KERNEL_FEATURES] = {
	[KERNEL_HOTSPOT_WALK] = {
		"hotspot_walk",
		"bpf_loop and bpf_task_pt_regs (Linux 5.17)",
		"Java stacks by frame pointers alone: at most 127 frames, interpreted "
		"frames read 'Interpreter', waits end in libc without their Java callers",
	},
	[KERNEL_OFF_CPU] = {
		"off_cpu",
		"BPF task storage and atomic exchange (Linux 5.12)",
		"no --wall or --off-cpu",
	},
	[KERNEL_SEED_BLOCKED] = {
		"seed_blocked_threads",
		"bpf_copy_from_user_task in sleepable task iterators (Linux 5.18)",
		"with --wall or --off-cpu, a thread already blocked when recording starts "
		"counts from its next switch off the CPU",
	},
	[KERNEL_SWITCH_STATE] = {
		"switch_state",
		"sched_switch's prev_state argument (Linux 5.18)",
		"off-CPU thread states are read from the task: a wake-up racing the "
		"switch can show a wait as preempted",
	},
};

static int helper_available(enum bpf_func_id id, bool *has)
{
	int rc = libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, id, NULL);

	*has = rc == 1;
	return rc < 0 ? rc : 0;
}

/* An atomic exchange on the stack (Linux 5.12 has BPF_ATOMIC). */
static bool atomic_exchange_available(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10, .off = -8, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 1 },
		{ .code = BPF_STX | BPF_ATOMIC | BPF_DW, .dst_reg = BPF_REG_10,
		  .src_reg = BPF_REG_1, .off = -8, .imm = BPF_XCHG },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Whether the kernel's enum bpf_func_id names helper. */
static bool btf_has_helper(const struct btf *btf, const char *helper)
{
	int id = btf__find_by_name_kind(btf, "bpf_func_id", BTF_KIND_ENUM);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	const struct btf_enum *e = t ? btf_enum(t) : NULL;

	for (int i = 0; e && i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, e[i].name_off), helper))
			return true;
	return false;
}

/* sched_switch's BTF prototype: (void *, preempt, prev, next[, prev_state]). */
static bool btf_switch_passes_state(const struct btf *btf)
{
	int id = btf__find_by_name_kind(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;

	if (t)
		t = btf__type_by_id(btf, t->type);
	if (t && btf_is_ptr(t))
		t = btf__type_by_id(btf, t->type);
	return t && btf_is_func_proto(t) && btf_vlen(t) >= 5;
}

static int probe_btf(struct kernel_features *kf, bool *copy_from_user_task)
{
	struct btf *btf = btf__load_vmlinux_btf();

	if (!btf)
		return -errno;
	*copy_from_user_task = btf_has_helper(btf, "BPF_FUNC_copy_from_user_task");
	kf->has[KERNEL_SWITCH_STATE] = btf_switch_passes_state(btf);
	btf__free(btf);
	return 0;
}

int kernel_features_probe(struct kernel_features *kf)
{
	struct utsname u;
	bool loop = false, regs = false, task_btf = false, atomics, copy_task = false;
	const char *assume = getenv("SPARKPROF_ASSUME_FEATURES");
	int err;

	memset(kf, 0, sizeof(*kf));
	if (!uname(&u))
		snprintf(kf->release, sizeof(kf->release), "%s", u.release);
	if (assume && !strcmp(assume, "all")) {
		for (int f = 0; f < KERNEL_FEATURES; f++)
			kf->has[f] = true;
		return 0;
	}
	err = helper_available(BPF_FUNC_loop, &loop);
	if (!err)
		err = helper_available(BPF_FUNC_task_pt_regs, &regs);
	if (!err)
		err = helper_available(BPF_FUNC_get_current_task_btf, &task_btf);
	if (!err)
		err = probe_btf(kf, &copy_task);
	if (err)
		return err;
	atomics = atomic_exchange_available();
	kf->has[KERNEL_HOTSPOT_WALK] = loop && regs && task_btf && atomics;
	kf->has[KERNEL_OFF_CPU] = atomics &&
		libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) == 1;
	kf->has[KERNEL_SEED_BLOCKED] = copy_task && kf->has[KERNEL_HOTSPOT_WALK];
	return 0;
}

bool kernel_features_full(const struct kernel_features *kf)
{
	for (int f = 0; f < KERNEL_FEATURES; f++)
		if (!kf->has[f])
			return false;
	return true;
}

const char *kernel_feature_key(enum kernel_feature f)
{
	return features[f].key;
}

const char *kernel_feature_needs(enum kernel_feature f)
{
	return features[f].needs;
}

/* snprintf at buf's end, keeping what fits. */
__attribute__((format(printf, 3, 4)))
static void append(char *buf, size_t size, const char *fmt, ...)
{
	size_t used = strnlen(buf, size);
	va_list args;

	if (used + 1 >= size)
		return;
	va_start(args, fmt);
	vsnprintf(buf + used, size - used, fmt, args);
	va_end(args);
}

/* Seeding and switch states are parts of off-CPU profiles. */
static bool off_cpu_part(enum kernel_feature f)
{
	return f == KERNEL_SEED_BLOCKED || f == KERNEL_SWITCH_STATE;
}

bool kernel_features_describe(const struct kernel_features *kf, bool off_cpu, char *buf,
			      size_t size)
{
	const char *sep = ", reduced: ";
	bool parts = off_cpu && kf->has[KERNEL_OFF_CPU], reduced = false;

	if (!size)
		return false;
	buf[0] = '\0';
	append(buf, size, "Linux %s", kf->release);
	for (int f = 0; f < KERNEL_FEATURES; f++) {
		if (kf->has[f] || (off_cpu_part(f) && !parts))
			continue;
		append(buf, size, "%s%s (%s; needs %s)", sep, features[f].key,
		       features[f].without, features[f].needs);
		sep = "; ";
		reduced = true;
	}
	if (!reduced)
		append(buf, size, ": every feature");
	return reduced;
}

void kernel_features_write_json(const struct kernel_features *kf, struct json_writer *w)
{
	json_begin_object(w);
	json_key(w, "release");
	json_string(w, kf->release);
	json_key(w, "mode");
	json_string(w, kernel_features_full(kf) ? "full" : "reduced");
	json_key(w, "reduced");
	json_begin_array(w);
	for (int f = 0; f < KERNEL_FEATURES; f++) {
		if (kf->has[f])
			continue;
		json_begin_object(w);
		json_key(w, "feature");
		json_string(w, features[f].key);
		json_key(w, "needs");
		json_string(w, features[f].needs);
		json_key(w, "without");
		json_string(w, features[f].without);
		json_end_object(w);
	}
	json_end_array(w);
	json_end_object(w);
}

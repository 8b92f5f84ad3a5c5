/* bpf_offcpu.c - see bpf_offcpu.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/clock.h"
#include "base/log.h"
#include "offcpu.skel.h"
#include "sampler/bpf_load.h"
#include "sampler/bpf_offcpu.h"

struct bpf_offcpu {
	struct offcpu_bpf *skel;
	struct bpf_program *on_switch;  /* on_switch, or on_switch_fp */
	bool seed;                      /* seed_open_intervals is loaded */
	struct bpf_link *switch_link;
};

static int reuse_map(struct bpf_map *map, int fd)
{
	int err = bpf_map__reuse_fd(map, fd);

	if (err)
		sp_err("share the sampler's BPF map %s with the off-CPU tracer: %s",
		       bpf_map__name(map), strerror(-err));
	return err;
}

struct bpf_offcpu *bpf_offcpu_open(const struct bpf_sampler_fds *fds,
				   const struct bpf_offcpu_options *opts)
{
	struct bpf_offcpu *o;
	int err;

	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->skel = offcpu_bpf__open();
	if (!o->skel) {
		err = -errno;
		sp_err("open BPF object offcpu.bpf.o: %s", strerror(-err));
		goto fail;
	}
	o->skel->rodata->filter_tgids = opts->filter_tgids;
	o->skel->rodata->include_kthreads = opts->include_kthreads;
	o->skel->rodata->self_tgid = getpid();
	o->skel->rodata->min_off_cpu_ns = opts->min_off_cpu_ns;
	/* The same threshold as the sampler's. */
	o->skel->rodata->wakeup_bytes = opts->ringbuf_bytes / 8;
	o->skel->rodata->switch_passes_state = opts->kernel->has[KERNEL_SWITCH_STATE];
	o->on_switch = opts->hotspot_walk ? o->skel->progs.on_switch : o->skel->progs.on_switch_fp;
	bpf_program__set_autoload(opts->hotspot_walk ? o->skel->progs.on_switch_fp
			: o->skel->progs.on_switch, false);
	o->seed = opts->kernel->has[KERNEL_SEED_BLOCKED];
	bpf_program__set_autoload(o->skel->progs.seed_open_intervals, o->seed);

	err = reuse_map(o->skel->maps.events, fds->events);
	if (!err)
		err = reuse_map(o->skel->maps.counters, fds->counters);
	if (!err)
		err = reuse_map(o->skel->maps.target_tgids, fds->target_tgids);
	if (!err)
		err = reuse_map(o->skel->maps.known_tgids, fds->known_tgids);
	if (!err)
		err = reuse_map(o->skel->maps.hotspot_jvms, fds->hotspot_jvms);
	if (!err)
		err = reuse_map(o->skel->maps.python_procs, fds->python_procs);
	if (err)
		goto fail;
	err = bpf_load_skeleton(o->skel->skeleton, "the BPF off-CPU tracer", opts->kernel->release);
	if (err)
		goto fail;
	return o;
fail:
	bpf_offcpu_close(o);
	errno = err ? -err : EINVAL;
	return NULL;
}

/* Runs a task iterator program once over every task. */
static int run_task_iterator(struct bpf_program *prog)
{
	struct bpf_link *link;
	char buf[64];
	ssize_t n;
	int fd, err = 0;

	link = bpf_program__attach_iter(prog, NULL);
	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
	} else {
		/* The programs print nothing; reading to the end runs them. */
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			;
		if (n < 0)
			err = -errno;
		close(fd);
	}
	bpf_link__destroy(link);
	return err;
}

int bpf_offcpu_start(struct bpf_offcpu *o)
{
	int err;

	if (o->switch_link)
		return -EALREADY;
	o->skel->bss->session_start_ns = monotonic_ns();
	o->switch_link = bpf_program__attach(o->on_switch);
	if (!o->switch_link) {
		err = -errno;
		sp_err("attach the off-CPU tracer to sched_switch: %s", strerror(-err));
		return err;
	}
	/* After the attach: threads already off the CPU start their interval
	 * now; those that leave from now on are on_switch's. */
	bpf_offcpu_seed(o);
	return 0;
}

int bpf_offcpu_seed(struct bpf_offcpu *o)
{
	int err;

	if (!o->switch_link)
		return -EINVAL;
	if (!o->seed)
		return 0;
	err = run_task_iterator(o->skel->progs.seed_open_intervals);
	if (err)
		sp_warn("find the profiled threads already off the CPU: %s "
			"(their current interval is left out)", strerror(-err));
	return err;
}

void bpf_offcpu_stop(struct bpf_offcpu *o)
{
	int err;

	if (!o->switch_link)
		return;
	/* While on_switch is still attached: a thread that came back after a
	 * detach would still look off the CPU. */
	err = run_task_iterator(o->skel->progs.flush_open_intervals);
	if (err)
		sp_warn("send the off-CPU intervals still open at the end: %s (they are left out)",
			strerror(-err));
	bpf_link__destroy(o->switch_link);
	o->switch_link = NULL;
}

void bpf_offcpu_close(struct bpf_offcpu *o)
{
	if (!o)
		return;
	bpf_offcpu_stop(o);
	offcpu_bpf__destroy(o->skel);
	free(o);
}

int bpf_offcpu_prog_fd(const struct bpf_offcpu *o)
{
	return bpf_program__fd(o->on_switch);
}

/* bpf_sampler.c - see bpf_sampler.h. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "base/log.h"
#include "profile.skel.h"
#include "sampler/bpf_load.h"
#include "sampler/bpf_sampler.h"
#include "sampler/cpu_list.h"

struct bpf_sampler {
	struct profile_bpf *skel;
	struct ring_buffer *ringbuf;
	int *cpus;
	int nr_cpus;
	int *perf_fds;
	struct bpf_program *prog;    /* sample_cpu, or sample_cpu_fp */
	struct bpf_link **links;
	struct bpf_link *fork_link;
	struct bpf_link *exec_link;
	unsigned int frequency_hz;
	int nr_possible_cpus;
	/* The ring's consumer and producer positions, mapped read-only beside
	 * libbpf's mapping (NULL if that failed): the fill level at each
	 * wake-up, before draining, is what sizing the ring is about. */
	const volatile uint64_t *positions;
	size_t positions_len;
	size_t ring_bytes, peak_fill;
};

static int open_cpu_clock(int cpu, unsigned int frequency_hz)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		/* cpu-clock counts nanoseconds: a fixed period gives an exact
		 * rate with no frequency feedback loop. */
		.sample_period = 1000000000ULL / frequency_hz,
	};

	return (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int libbpf_print_quiet(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_WARN && sp_log_get_level() >= SP_LOG_DEBUG)
		return vfprintf(stderr, fmt, args);
	if (level == LIBBPF_DEBUG)
		return 0;
	return sp_log_get_level() >= SP_LOG_DEBUG ? vfprintf(stderr, fmt, args) : 0;
}

/* Page 0 holds the consumer position, page 1 the producer's. Only the
 * figure is lost if this fails. */
static void map_positions(struct bpf_sampler *s)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, 2 * page, PROT_READ, MAP_SHARED, bpf_map__fd(s->skel->maps.events), 0);

	if (p == MAP_FAILED) {
		sp_debug("map the ring buffer's positions: %s (no fill figure)", strerror(errno));
		return;
	}
	s->positions = p;
	s->positions_len = 2 * page;
}

static void note_fill(struct bpf_sampler *s)
{
	size_t page_words = s->positions_len / 2 / sizeof(uint64_t);
	uint64_t consumer, producer;

	if (!s->positions)
		return;
	consumer = s->positions[0];
	producer = __atomic_load_n(&s->positions[page_words], __ATOMIC_ACQUIRE);
	if (producer - consumer > s->peak_fill && producer - consumer <= s->ring_bytes)
		s->peak_fill = producer - consumer;
}

/* Sets the programs' constants, picks the sampling program, loads them
 * and sets up the ring buffer. 0, or -1 after a message. */
static int load_programs(struct bpf_sampler *s, const struct bpf_sampler_options *opts)
{
	int err;

	libbpf_set_print(libbpf_print_quiet);
	s->skel = profile_bpf__open();
	if (!s->skel) {
		sp_err("open BPF object profile.bpf.o: %s", strerror(errno));
		return -1;
	}
	s->skel->rodata->filter_tgids = opts->filter_tgids;
	s->skel->rodata->follow_children = opts->follow_children;
	s->skel->rodata->self_tgid = getpid();
	s->skel->rodata->wakeup_bytes = opts->ringbuf_bytes / 8;
	s->prog = opts->hotspot_walk ? s->skel->progs.sample_cpu : s->skel->progs.sample_cpu_fp;
	bpf_program__set_autoload(opts->hotspot_walk ? s->skel->progs.sample_cpu_fp
			: s->skel->progs.sample_cpu, false);
	err = bpf_map__set_max_entries(s->skel->maps.events, opts->ringbuf_bytes);
	if (err) {
		sp_err("size the BPF ring buffer (%zu bytes): %s", opts->ringbuf_bytes, strerror(-err));
		return -1;
	}
	if (bpf_load_skeleton(s->skel->skeleton, "the BPF sampler", opts->kernel->release))
		return -1;
	s->ringbuf = ring_buffer__new(bpf_map__fd(s->skel->maps.events),
				      (ring_buffer_sample_fn)opts->on_record, opts->ctx, NULL);
	if (!s->ringbuf) {
		sp_err("set up the BPF ring buffer: %s", strerror(errno));
		return -1;
	}
	s->ring_bytes = opts->ringbuf_bytes;
	map_positions(s);
	return 0;
}

/* exec (always) and fork (following children) tracepoints, and the
 * cpu-clock events, opened now so that a missing capability is reported
 * before anything starts; they stay disabled until attached. */
static int attach_events(struct bpf_sampler *s, const struct bpf_sampler_options *opts)
{
	s->exec_link = bpf_program__attach(s->skel->progs.note_exec);
	if (!s->exec_link) {
		sp_err("attach to sched_process_exec: %s", strerror(errno));
		return -1;
	}
	if (opts->follow_children) {
		s->fork_link = bpf_program__attach(s->skel->progs.follow_fork);
		if (!s->fork_link) {
			sp_err("attach to sched_process_fork: %s", strerror(errno));
			return -1;
		}
	}
	for (int i = 0; i < s->nr_cpus; i++) {
		s->perf_fds[i] = open_cpu_clock(s->cpus[i], opts->frequency_hz);
		if (s->perf_fds[i] < 0) {
			sp_err("perf_event_open cpu-clock on CPU %d: %s", s->cpus[i], strerror(errno));
			return -1;
		}
	}
	return 0;
}

struct bpf_sampler *bpf_sampler_open(const struct bpf_sampler_options *opts)
{
	struct bpf_sampler *s;
	int cpus[CPU_LIST_MAX];
	int n;

	if (opts->frequency_hz == 0 || opts->frequency_hz > 100000) {
		sp_err("sampling frequency %u Hz is out of range (1..100000)", opts->frequency_hz);
		return NULL;
	}
	n = cpu_list_online(cpus, CPU_LIST_MAX);
	if (n <= 0) {
		sp_err("read /sys/devices/system/cpu/online: %s", strerror(n ? -n : EINVAL));
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->nr_cpus = n;
	s->frequency_hz = opts->frequency_hz;
	s->cpus = malloc(n * sizeof(int));
	s->perf_fds = malloc(n * sizeof(int));
	s->links = calloc(n, sizeof(*s->links));
	if (!s->cpus || !s->perf_fds || !s->links)
		goto fail;
	memcpy(s->cpus, cpus, n * sizeof(int));
	for (int i = 0; i < n; i++)
		s->perf_fds[i] = -1;
	s->nr_possible_cpus = libbpf_num_possible_cpus();
	if (load_programs(s, opts) || attach_events(s, opts))
		goto fail;
	return s;
fail:
	bpf_sampler_close(s);
	return NULL;
}

int bpf_sampler_start(struct bpf_sampler *s)
{
	for (int i = 0; i < s->nr_cpus; i++) {
		s->links[i] = bpf_program__attach_perf_event(s->prog, s->perf_fds[i]);
		if (!s->links[i]) {
			int err = -errno;

			sp_err("attach the sampler to CPU %d: %s", s->cpus[i], strerror(-err));
			bpf_sampler_stop(s);
			return err;
		}
	}
	return 0;
}

void bpf_sampler_stop(struct bpf_sampler *s)
{
	for (int i = 0; i < s->nr_cpus; i++) {
		bpf_link__destroy(s->links[i]);
		s->links[i] = NULL;
	}
}

void bpf_sampler_close(struct bpf_sampler *s)
{
	if (!s)
		return;
	if (s->links)
		bpf_sampler_stop(s);
	bpf_link__destroy(s->fork_link);
	bpf_link__destroy(s->exec_link);
	ring_buffer__free(s->ringbuf);
	if (s->positions)
		munmap((void *)s->positions, s->positions_len);
	for (int i = 0; s->perf_fds && i < s->nr_cpus; i++)
		if (s->perf_fds[i] >= 0)
			close(s->perf_fds[i]);
	profile_bpf__destroy(s->skel);
	free(s->cpus);
	free(s->perf_fds);
	free(s->links);
	free(s);
}

static int set_flag(int map_fd, pid_t tgid)
{
	__u32 key = (__u32)tgid;
	__u8 one = 1;

	return bpf_map_update_elem(map_fd, &key, &one, BPF_ANY) ? -errno : 0;
}

int bpf_sampler_add_target(struct bpf_sampler *s, pid_t tgid)
{
	return set_flag(bpf_map__fd(s->skel->maps.target_tgids), tgid);
}

int bpf_sampler_mark_known(struct bpf_sampler *s, pid_t tgid)
{
	return set_flag(bpf_map__fd(s->skel->maps.known_tgids), tgid);
}

int bpf_sampler_set_hotspot(struct bpf_sampler *s, pid_t tgid, const struct sp_hotspot_info *info)
{
	__u32 key = (__u32)tgid;
	int fd = bpf_map__fd(s->skel->maps.hotspot_jvms);

	if (info)
		return bpf_map_update_elem(fd, &key, info, BPF_ANY) ? -errno : 0;
	return bpf_map_delete_elem(fd, &key) && errno != ENOENT ? -errno : 0;
}

int bpf_sampler_set_python(struct bpf_sampler *s, pid_t tgid, const struct sp_python_info *info)
{
	__u32 key = (__u32)tgid;
	int fd = bpf_map__fd(s->skel->maps.python_procs);

	if (info)
		return bpf_map_update_elem(fd, &key, info, BPF_ANY) ? -errno : 0;
	return bpf_map_delete_elem(fd, &key) && errno != ENOENT ? -errno : 0;
}

int bpf_sampler_poll(struct bpf_sampler *s, int timeout_ms)
{
	struct epoll_event event;
	int consumed;

	/* ring_buffer__poll would consume at once: wait here, so that the
	 * fill is seen at its highest, just before draining. */
	if (epoll_wait(ring_buffer__epoll_fd(s->ringbuf), &event, 1, timeout_ms) < 0 &&
	    errno != EINTR)
		return -errno;
	note_fill(s);
	/* Records submitted without a wake-up end no wait: collect them too. */
	consumed = ring_buffer__consume(s->ringbuf);
	return consumed;
}

void bpf_sampler_ring_use(const struct bpf_sampler *s, struct ring_use *use)
{
	use->bytes = s->ring_bytes;
	use->peak_fill = s->positions ? s->peak_fill : 0;
	use->peak_known = s->positions != NULL;
}

int bpf_sampler_counters(struct bpf_sampler *s, uint64_t counters[SP_CNT_MAX])
{
	int fd = bpf_map__fd(s->skel->maps.counters);
	uint64_t *values = calloc(s->nr_possible_cpus, sizeof(uint64_t));

	if (!values)
		return -ENOMEM;
	for (__u32 key = 0; key < SP_CNT_MAX; key++) {
		counters[key] = 0;
		if (bpf_map_lookup_elem(fd, &key, values)) {
			int err = -errno;

			free(values);
			return err;
		}
		for (int cpu = 0; cpu < s->nr_possible_cpus; cpu++)
			counters[key] += values[cpu];
	}
	free(values);
	return 0;
}

void bpf_sampler_shared_fds(const struct bpf_sampler *s, struct bpf_sampler_fds *fds)
{
	fds->events = bpf_map__fd(s->skel->maps.events);
	fds->counters = bpf_map__fd(s->skel->maps.counters);
	fds->target_tgids = bpf_map__fd(s->skel->maps.target_tgids);
	fds->known_tgids = bpf_map__fd(s->skel->maps.known_tgids);
	fds->hotspot_jvms = bpf_map__fd(s->skel->maps.hotspot_jvms);
	fds->python_procs = bpf_map__fd(s->skel->maps.python_procs);
}


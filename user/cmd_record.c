/* cmd_record.c - `sparkprof record`: sample, then write the profiles.
 *
 * Order matters: everything that can fail for a reason the user can fix
 * (options, privileges, BTF, pids, the output folder) is checked before
 * anything starts; once sampling has started, Ctrl-C or SIGTERM always ends
 * in writing what was recorded.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/path_util.h"
#include "commands.h"
#include "record/child_command.h"
#include "record/record_attach.h"
#include "record/record_options.h"
#include "record/recorder.h"
#include "record/rotation.h"
#include "record/target_exits.h"
#include "sampler/bpf_offcpu.h"
#include "sampler/bpf_sampler.h"
#include "sampler/drain_thread.h"
#include "sampler/kernel_features.h"

#define NSEC_PER_SEC 1000000000ULL
/* The ring buffer rides out the drain thread's waits for a CPU. That
 * thread only copies records out, at nice -10, yet on this shared VM under
 * load it was kept waiting long enough to fill a 1 MiB ring in a Spark soak
 * (bench/results/ring-20261126.md): the ring holds about a second of
 * records on every CPU, at least 1 MiB. A record is as long as its frames:
 * 64 to 80 bytes and 8 per frame, so 50 Java frames and 10 kernel frames
 * take about 560 (every record had a 1 KiB kernel array before); --wall
 * adds about 1,000 off-CPU intervals a second per CPU on a busy Spark node.
 * Each byte is resident twice in our RSS: the kernel maps the pages twice
 * so that no record wraps. Deeper stacks at high rates want --ring-buffer. */
#define RECORD_BYTES_GUESS 512u
#define OFF_CPU_EVENTS_GUESS 1000u
#define RINGBUF_MIN (1u << 20)
#define RINGBUF_MAX (512u << 20)
/* Records waiting to be named: 16 s of 2 CPUs at 10 kHz with deep stacks. */
#define QUEUE_BYTES (256u << 20)
#define POLL_MS 100
/* Records taken per turn of the loop, in time: -d and signals stay prompt
 * on a node so busy that naming falls behind. */
#define TAKE_BUDGET_MS 200
/* How long records wait before they are named: the JVM helper's records of
 * the same moment (JIT code, renames) must have arrived. */
#define RESOLVE_DELAY_NS (NSEC_PER_SEC)

/* Set by the signal handler; the only state shared with it. */
static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static int check_privileges(void)
{
	struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	/* BPF and perf events, and reading other users' /proc/PID/maps and
	 * mapped files. */
	const int needed[] = { CAP_BPF, CAP_PERFMON, CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH };
	const char *names[] = { "CAP_BPF", "CAP_PERFMON", "CAP_SYS_PTRACE", "CAP_DAC_READ_SEARCH" };

	if (syscall(SYS_capget, &header, data)) {
		sp_err("read this process's capabilities: %s", strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
		int cap = needed[i];

		if (!(data[cap / 32].effective & (1u << (cap % 32)))) {
			sp_err("sparkprof needs root (missing %s): run it with sudo, or in a "
			       "privileged pod", names[i]);
			return -1;
		}
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		sp_err("this kernel has no BTF (/sys/kernel/btf/vmlinux: %s); sparkprof needs a "
		       "kernel built with CONFIG_DEBUG_INFO_BTF", strerror(errno));
		return -1;
	}
	return 0;
}

/* What this kernel's BPF lacks: said in one line when anything is reduced;
 * an option that needs a missing part is refused before anything starts. */
static int check_kernel(struct kernel_features *kernel, const struct record_options *opts)
{
	char line[1024];
	int err = kernel_features_probe(kernel);

	if (err) {
		sp_err("probe what the BPF of Linux %s offers: %s", kernel->release, strerror(-err));
		return -1;
	}
	if ((opts->wall || opts->off_cpu) && !kernel->has[KERNEL_OFF_CPU]) {
		sp_err("%s needs %s; this kernel is Linux %s: record without it",
		       opts->wall ? "--wall" : "--off-cpu", kernel_feature_needs(KERNEL_OFF_CPU),
		       kernel->release);
		return -1;
	}
	if (kernel_features_describe(kernel, opts->wall || opts->off_cpu, line, sizeof(line)))
		sp_warn("%s", line);
	return 0;
}

static int check_pids(const struct record_options *opts)
{
	for (int i = 0; i < opts->npids; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d", opts->pids[i]);
		if (access(path, F_OK)) {
			sp_err("-p: no process with pid %d", opts->pids[i]);
			return -1;
		}
	}
	return 0;
}

/* Creates the output folder and proves it is writable now, rather than
 * after a long recording. */
static int prepare_output_dir(const char *dir)
{
	char probe[PATH_MAX];
	int err = make_dirs(dir), fd;

	if (err) {
		sp_err("create output folder %s: %s", dir, strerror(-err));
		return -1;
	}
	snprintf(probe, sizeof(probe), "%s/.sparkprof-write-test", dir);
	fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		sp_err("cannot write to output folder %s: %s", dir, strerror(errno));
		return -1;
	}
	close(fd);
	unlink(probe);
	return 0;
}

static void default_output_dir(char *buf, size_t size)
{
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(buf, size, "sparkprof-%Y%m%d-%H%M%S", &tm);
}

static void install_signal_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a signal must wake the poll at once. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* What the recorder's callbacks tell the BPF side. */
struct bpf_side {
	struct bpf_sampler *sampler;
	struct bpf_offcpu *offcpu;    /* NULL without --wall/--off-cpu */
};

static int read_counters(void *ctx, uint64_t counters[SP_CNT_MAX])
{
	struct bpf_side *bpf = ctx;

	return bpf->sampler ? bpf_sampler_counters(bpf->sampler, counters) : 0;
}

static void mark_known(void *ctx, pid_t pid)
{
	struct bpf_side *bpf = ctx;

	bpf_sampler_mark_known(bpf->sampler, pid);
}

struct live_status {
	bool on_terminal;
	uint64_t last_print_ns, last_samples;
	bool printed;
};

static void describe_jvm(void *ctx, pid_t pid, const struct sp_hotspot_info *info)
{
	struct bpf_side *bpf = ctx;
	int err = bpf_sampler_set_hotspot(bpf->sampler, pid, info);

	if (err)
		sp_warn("pid %d: stack walker map: %s (plain frame-pointer stacks)", (int)pid,
			strerror(-err));
	/* Its threads already off the CPU were walked without the layout. */
	else if (info && bpf->offcpu)
		bpf_offcpu_seed(bpf->offcpu);
}

static void print_status(struct live_status *st, struct bpf_sampler *sampler,
			 struct recorder *rec, uint64_t now, uint64_t start)
{
	uint64_t counters[SP_CNT_MAX];
	struct recorder_totals totals;
	double interval;

	if (!st->on_terminal || now - st->last_print_ns < NSEC_PER_SEC)
		return;
	if (bpf_sampler_counters(sampler, counters))
		return;
	recorder_get_totals(rec, &totals);
	interval = (double)(now - st->last_print_ns) / 1e9;
	fprintf(stderr, "\rsparkprof: %5.0fs  %7.0f samples/s  %llu samples  %llu processes  "
		"lost %llu   ",
		(double)(now - start) / 1e9,
		st->last_print_ns ? (double)(counters[SP_CNT_SAMPLES] - st->last_samples) / interval : 0.0,
		(unsigned long long)counters[SP_CNT_SAMPLES], (unsigned long long)totals.processes,
		(unsigned long long)(counters[SP_CNT_LOST_RINGBUF] + counters[SP_CNT_OFFCPU_LOST]));
	st->last_samples = counters[SP_CNT_SAMPLES];
	st->last_print_ns = now;
	st->printed = true;
}

static void print_summary(const char *dir, const uint64_t *counters,
			  const struct recorder_totals *totals, double seconds, bool with_off_cpu)
{
	fprintf(stderr, "sparkprof: %.1f s, %llu samples from %llu processes, lost %llu "
		"(ring buffer full)",
		seconds, (unsigned long long)counters[SP_CNT_SAMPLES],
		(unsigned long long)totals->processes,
		(unsigned long long)counters[SP_CNT_LOST_RINGBUF]);
	if (with_off_cpu)
		fprintf(stderr, ", %llu off-CPU intervals (lost %llu)",
			(unsigned long long)counters[SP_CNT_OFFCPU_EVENTS],
			(unsigned long long)counters[SP_CNT_OFFCPU_LOST]);
	fprintf(stderr, "\nsparkprof: wrote %s/all.folded and %s/summary.json\n", dir, dir);
}

/* A power of two (the kernel's rule), from --ring-buffer or the rate. */
static size_t ring_buffer_bytes(const struct record_options *opts)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	uint64_t per_cpu = opts->frequency_hz + (opts->wall || opts->off_cpu ? OFF_CPU_EVENTS_GUESS : 0);
	uint64_t want = opts->ring_buffer_mib ? (uint64_t)opts->ring_buffer_mib << 20
		: (uint64_t)(cpus > 0 ? cpus : 1) * per_cpu * RECORD_BYTES_GUESS;
	size_t bytes = 1u << 20;

	if (!opts->ring_buffer_mib)
		want = want < RINGBUF_MIN ? RINGBUF_MIN : want > RINGBUF_MAX ? RINGBUF_MAX : want;
	while (bytes < want && bytes < (1u << 30))
		bytes <<= 1;
	return bytes;
}

static bool access_summary(const char *dir)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/summary.json", dir);
	return access(path, F_OK) == 0;
}

int cmd_record(int argc, char **argv)
{
	struct record_options opts;
	struct child_command child = { .pid = -1, .gate_fd = -1 };
	struct target_exits *targets = NULL;
	struct bpf_side bpf = { 0 };
	struct kernel_features kernel;
	struct bpf_sampler *sampler = NULL;
	struct bpf_offcpu *offcpu = NULL;
	struct drain_thread *drain = NULL;
	struct recorder *rec = NULL;
	struct rotation *rot = NULL;    /* --rotate: intervals, each its own recorder */
	bpf_sampler_record_fn file_record;   /* the recorder's (or rotation's) */
	void *file_ctx;
	struct live_status status = { .on_terminal = isatty(STDERR_FILENO) };
	uint64_t counters[SP_CNT_MAX] = { 0 };
	uint64_t start_mono, start_real, end_mono;
	char default_dir[64];
	const char *dir;
	bool filter, with_off_cpu;
	int exit_code = 1, err;
	uint64_t launch_mono = clock_ns(CLOCK_MONOTONIC);

	if (record_options_parse(&opts, argc, argv))
		return 2;
	if (opts.help) {
		record_options_usage(stdout);
		return 0;
	}
	if (opts.verbose)
		sp_log_set_level(SP_LOG_DEBUG);
	if (check_privileges() || check_kernel(&kernel, &opts) || check_pids(&opts))
		return 1;
	dir = opts.output_dir;
	if (!dir) {
		default_output_dir(default_dir, sizeof(default_dir));
		dir = default_dir;
	}
	if (prepare_output_dir(dir))
		return 1;

	filter = opts.npids > 0 || opts.command;
	with_off_cpu = opts.wall || opts.off_cpu;
	install_signal_handlers();
	if (opts.command && child_command_spawn(&child, opts.command))
		return 1;

	struct bpf_sampler_options sampler_opts = {
		.frequency_hz = opts.frequency_hz,
		.filter_tgids = filter,
		.follow_children = opts.command != NULL,
		.ringbuf_bytes = ring_buffer_bytes(&opts),
		.hotspot_walk = opts.java_walker && kernel.has[KERNEL_HOTSPOT_WALK],
		.kernel = &kernel,
		.on_record = drain_thread_push,
	};
	start_mono = clock_ns(CLOCK_MONOTONIC);
	start_real = clock_ns(CLOCK_REALTIME);
	struct recorder_config rec_config = {
		.opts = &opts,
		.output_dir = dir,
		.start_monotonic_ns = start_mono,
		.start_realtime_ns = start_real,
		.launch_monotonic_ns = launch_mono,
		.resolve_delay_ns = RESOLVE_DELAY_NS,
		.on_new_process = mark_known,
		.on_jvm = sampler_opts.hotspot_walk ? describe_jvm : NULL,
		.kernel = &kernel,
	};
	drain = drain_thread_new(QUEUE_BYTES);
	if (!drain) {
		sp_err("set up the drain thread: %s", strerror(errno));
		goto out;
	}
	sampler_opts.ctx = drain;
	rec_config.drain = drain;
	if (opts.rotate_ns) {
		struct rotation_config rot_config = {
			.recorder = rec_config,
			.interval_ns = opts.rotate_ns,
			.keep = opts.keep,
			.close_delay_ns = RESOLVE_DELAY_NS + NSEC_PER_SEC / 2,
			.read_counters = read_counters,
			.counters_ctx = &bpf,
		};

		if (!(rot = rotation_new(&rot_config)))
			goto out;
		file_record = rotation_on_record;
		file_ctx = rot;
	} else {
		if (!(rec = recorder_new(&rec_config)))
			goto out;
		file_record = recorder_on_record;
		file_ctx = rec;
	}
	sampler = bpf_sampler_open(&sampler_opts);
	if (!sampler)
		goto out;
	bpf.sampler = sampler;
	if (rot)
		rotation_set_callback_ctx(rot, &bpf);
	else
		recorder_set_new_process_ctx(rec, &bpf);
	for (int i = 0; i < opts.npids; i++)
		if (bpf_sampler_add_target(sampler, opts.pids[i])) {
			sp_err("-p: add pid %d to the BPF filter: %s", opts.pids[i], strerror(errno));
			goto out;
		}
	if (opts.npids && !(targets = target_exits_new(opts.pids, opts.npids))) {
		sp_err("-p: watch the targets for their exit: %s", strerror(errno));
		goto out;
	}
	if (opts.command && bpf_sampler_add_target(sampler, child.pid)) {
		sp_err("add the command (pid %d) to the BPF filter: %s", child.pid, strerror(errno));
		goto out;
	}
	if (with_off_cpu) {
		struct bpf_sampler_fds fds;
		struct bpf_offcpu_options offcpu_opts = {
			.filter_tgids = filter,
			.min_off_cpu_ns = opts.min_off_cpu_ns,
			.ringbuf_bytes = ring_buffer_bytes(&opts),
			.hotspot_walk = sampler_opts.hotspot_walk,
			.kernel = &kernel,
		};

		bpf_sampler_shared_fds(sampler, &fds);
		offcpu = bpf_offcpu_open(&fds, &offcpu_opts);
		if (!offcpu)
			goto out;
		bpf.offcpu = offcpu;
	}
	if (opts.attach)
		record_attach_jvms(&opts);
	/* The first interval starts with sampling: every record is later. */
	if (rot && rotation_start(rot, clock_ns(CLOCK_MONOTONIC)))
		goto out;
	if (bpf_sampler_start(sampler) || (offcpu && bpf_offcpu_start(offcpu)))
		goto out;
	err = drain_thread_start(drain, sampler);
	if (err) {
		sp_err("start the drain thread: %s", strerror(-err));
		goto out;
	}
	start_mono = clock_ns(CLOCK_MONOTONIC);
	if (rec)
		recorder_sampling_started(rec, start_mono);
	if (opts.command)
		child_command_release(&child);
	sp_info("recording into %s%s", dir,
		opts.duration_s > 0 || opts.command ? "" : " (Ctrl-C to stop)");

	for (;;) {
		uint64_t now;
		int n = drain_thread_take(drain, POLL_MS, TAKE_BUDGET_MS, file_record, file_ctx);

		if (n < 0) {
			sp_err("read BPF records: %s", strerror(-n));
			break;
		}
		now = clock_ns(CLOCK_MONOTONIC);
		if (rot) {
			if (rotation_tick(rot, now))
				break;
		} else {
			recorder_drain(rec, now, false);
			print_status(&status, sampler, rec, now, start_mono);
		}
		if (stop_requested)
			break;
		if (opts.duration_s > 0 && now - start_mono >= (uint64_t)(opts.duration_s * 1e9))
			break;
		if (opts.command && child_command_poll_exit(&child))
			break;
		if (targets && target_exits_all(targets)) {
			sp_info("every process of -p has exited");
			break;
		}
	}
	end_mono = clock_ns(CLOCK_MONOTONIC);
	if (status.printed)
		fputc('\n', stderr);
	/* Stop new records, then take everything still in flight. */
	if (offcpu)
		bpf_offcpu_stop(offcpu);
	bpf_sampler_stop(sampler);
	drain_thread_stop(drain);
	while (bpf_sampler_poll(sampler, 0) > 0)
		;
	drain_thread_flush(drain);
	drain_thread_take(drain, 0, 0, file_record, file_ctx);
	if (rec) {
		struct ring_use ring;

		bpf_sampler_ring_use(sampler, &ring);
		recorder_set_ring_use(rec, &ring);
		recorder_set_queue_full(rec, drain_thread_dropped(drain));
	}
	bpf_sampler_counters(sampler, counters);
	if (rot) {
		struct rotation_totals totals;

		if (rotation_finish(rot, counters, end_mono) == 0)
			exit_code = opts.command && child.exited && child.exit_status ?
				    child.exit_status : 0;
		rotation_get_totals(rot, &totals);
		fprintf(stderr, "sparkprof: %.1f s, %llu intervals written into %s, %llu records "
			"too late for their interval\n", (double)(end_mono - start_mono) / 1e9,
			(unsigned long long)totals.intervals_written, dir,
			(unsigned long long)totals.records_too_late);
	} else if (recorder_finish(rec, counters, end_mono) == 0) {
		struct recorder_totals totals;

		recorder_get_totals(rec, &totals);
		print_summary(dir, counters, &totals, (double)(end_mono - start_mono) / 1e9,
			      with_off_cpu);
		if (opts.html)
			fprintf(stderr, "sparkprof: flame graphs: open %s/index.html\n", dir);
		exit_code = 0;
		if (opts.command && child.exited && child.exit_status)
			exit_code = child.exit_status;
	} else {
		sp_err("the recording in %s is incomplete: the files above could not be written%s",
		       dir, access_summary(dir) ? " (summary.json lists them)" : "");
	}
out:
	if (opts.command && !child.exited)
		child_command_abort(&child);
	drain_thread_free(drain);   /* joins the thread before the sampler goes */
	bpf_offcpu_close(offcpu);
	bpf_sampler_close(sampler);
	recorder_free(rec);
	rotation_free(rot);
	target_exits_free(targets);
	return exit_code;
}

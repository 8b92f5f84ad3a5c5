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
#include "proc/proc_children.h"
#include "record/child_command.h"
#include "record/record_attach.h"
#include "record/record_options.h"
#include "record/record_otlp.h"
#include "record/record_sink.h"
#include "record/target_exits.h"
#include "sampler/bpf_offcpu.h"
#include "sampler/bpf_sampler.h"
#include "sampler/drain_thread.h"
#include "sampler/kernel_features.h"

#define NSEC_PER_SEC 1000000000ULL
/* The ring buffer rides out the drain thread's waits for a CPU. That
 * thread only copies records out, at nice -10, yet a loaded node can keep
 * it waiting long enough to fill a 1 MiB ring: the ring holds about a
 * second of records on every CPU, at least 1 MiB. A record is as long as
 * its frames: 64 to 80 bytes and 8 per frame, so 50 Java frames and 10
 * kernel frames take about 560; --wall
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
/* How long the end of --rotate waits for --otlp's last requests. */
#define OTLP_LAST_WAIT_MS 10000

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

/* The BPF side and what feeds from it: what the recorders' callbacks use. */
struct bpf_side {
	struct bpf_sampler *sampler;
	struct bpf_offcpu *offcpu;    /* NULL without --wall/--off-cpu */
	struct drain_thread *drain;
};

static int read_counters(void *ctx, uint64_t counters[SP_CNT_MAX])
{
	struct bpf_side *bpf = ctx;

	return bpf->sampler ? bpf_sampler_counters(bpf->sampler, counters) : 0;
}

static void read_losses(void *ctx, struct ring_use *ring, uint64_t *dropped)
{
	struct bpf_side *bpf = ctx;

	*ring = (struct ring_use){ 0 };
	if (bpf->sampler)
		bpf_sampler_ring_use(bpf->sampler, ring);
	*dropped = bpf->drain ? drain_thread_dropped(bpf->drain) : 0;
}

static void mark_known(void *ctx, pid_t pid)
{
	struct bpf_side *bpf = ctx;

	bpf_sampler_mark_known(bpf->sampler, pid);
}

static void describe_python(void *ctx, pid_t pid, const struct sp_python_info *info)
{
	struct bpf_side *bpf = ctx;
	int err = bpf_sampler_set_python(bpf->sampler, pid, info);

	if (err)
		sp_warn("pid %d: Python walker map: %s (native frames only)", (int)pid,
			strerror(-err));
}

static bool describe_jvm(void *ctx, pid_t pid, const struct sp_hotspot_info *info)
{
	struct bpf_side *bpf = ctx;
	int err = bpf_sampler_set_hotspot(bpf->sampler, pid, info);

	if (err) {
		sp_warn("pid %d: stack walker map: %s (plain frame-pointer stacks)", (int)pid,
			strerror(-err));
		return false;
	}
	/* Its threads already off the CPU were walked without the layout. */
	if (info && bpf->offcpu)
		bpf_offcpu_seed(bpf->offcpu);
	return true;
}

struct live_status {
	bool on_terminal;
	uint64_t last_print_ns, last_samples;
	bool printed;
};

static void print_status(struct live_status *st, struct bpf_sampler *sampler,
			 const struct record_sink *sink, uint64_t now, uint64_t start)
{
	uint64_t counters[SP_CNT_MAX];
	double interval;

	if (!st->on_terminal || now - st->last_print_ns < NSEC_PER_SEC)
		return;
	if (bpf_sampler_counters(sampler, counters))
		return;
	interval = (double)(now - st->last_print_ns) / 1e9;
	fprintf(stderr, "\rsparkprof: %5.0fs  %7.0f samples/s  %llu samples  %llu processes  "
		"lost %llu   ",
		(double)(now - start) / 1e9,
		st->last_print_ns ? (double)(counters[SP_CNT_SAMPLES] - st->last_samples) / interval : 0.0,
		(unsigned long long)counters[SP_CNT_SAMPLES],
		(unsigned long long)record_sink_processes(sink),
		(unsigned long long)(counters[SP_CNT_LOST_RINGBUF] + counters[SP_CNT_OFFCPU_LOST]));
	st->last_samples = counters[SP_CNT_SAMPLES];
	st->last_print_ns = now;
	st->printed = true;
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

/* Everything a recording holds while it runs. */
struct recording {
	struct record_options opts;
	struct kernel_features kernel;
	struct child_command child;
	struct target_exits *targets;
	struct bpf_side bpf;
	struct record_sink *sink;
	struct record_otlp *otlp;       /* --otlp; NULL: none */
	const char *dir;
	char default_dir[64];
	uint64_t launch_ns, start_ns, end_ns;
};

/* Options, privileges, kernel, pids and the output folder: what the user
 * can fix is checked before anything starts. 0, or an exit status. */
static int prepare(struct recording *r, int argc, char **argv)
{
	if (record_options_parse(&r->opts, argc, argv))
		return 2;
	if (r->opts.help) {
		record_options_usage(stdout);
		return -1;
	}
	if (r->opts.verbose)
		sp_log_set_level(SP_LOG_DEBUG);
	if (check_privileges() || check_kernel(&r->kernel, &r->opts) || check_pids(&r->opts))
		return 1;
	r->dir = r->opts.output_dir;
	if (!r->dir) {
		default_output_dir(r->default_dir, sizeof(r->default_dir));
		r->dir = r->default_dir;
	}
	if (prepare_output_dir(r->dir))
		return 1;
	install_signal_handlers();
	if (r->opts.command && child_command_spawn(&r->child, r->opts.command))
		return 1;
	return 0;
}

static int add_child(pid_t pid, void *ctx)
{
	if (bpf_sampler_add_target(ctx, pid))
		sp_warn("-p: add child %d to the BPF filter: %s", (int)pid, strerror(errno));
	return 0;
}

/* The sampler, its targets and the off-CPU tracer, loaded; nothing runs. */
static int open_bpf(struct recording *r, bool walk)
{
	const struct record_options *o = &r->opts;
	bool filter = o->npids > 0 || o->command;
	int err;
	struct bpf_sampler_options so = {
		.frequency_hz = o->frequency_hz, .filter_tgids = filter,
		.follow_children = filter, .ringbuf_bytes = ring_buffer_bytes(o),
		.hotspot_walk = walk, .kernel = &r->kernel,
		.on_record = drain_thread_push, .ctx = r->bpf.drain,
	};

	if (!(r->bpf.sampler = bpf_sampler_open(&so)))
		return -1;
	for (int i = 0; i < o->npids; i++)
		if (bpf_sampler_add_target(r->bpf.sampler, o->pids[i])) {
			sp_err("-p: add pid %d to the BPF filter: %s", o->pids[i], strerror(errno));
			return -1;
		}
	/* A target's children are profiled too: an executor's Python workers. */
	if (o->npids && (err = proc_children_each(o->pids, (size_t)o->npids, add_child,
						  r->bpf.sampler)) < 0)
		sp_warn("-p: the targets' children already running are left out: %s",
			strerror(-err));
	if (o->npids && !(r->targets = target_exits_new(o->pids, o->npids))) {
		sp_err("-p: watch the targets for their exit: %s", strerror(errno));
		return -1;
	}
	if (o->command && bpf_sampler_add_target(r->bpf.sampler, r->child.pid)) {
		sp_err("add the command (pid %d) to the BPF filter: %s", r->child.pid, strerror(errno));
		return -1;
	}
	if (o->wall || o->off_cpu) {
		struct bpf_sampler_fds fds;
		struct bpf_offcpu_options oo = { .filter_tgids = filter,
						 .min_off_cpu_ns = o->min_off_cpu_ns,
						 .ringbuf_bytes = so.ringbuf_bytes,
						 .hotspot_walk = walk, .kernel = &r->kernel };

		bpf_sampler_shared_fds(r->bpf.sampler, &fds);
		if (!(r->bpf.offcpu = bpf_offcpu_open(&fds, &oo)))
			return -1;
	}
	return 0;
}

/* The drain, the sink and the BPF side, made; then sampling starts. */
static int start(struct recording *r)
{
	bool walk = r->opts.java_walker && r->kernel.has[KERNEL_HOTSPOT_WALK];
	struct recorder_config rc = {
		.opts = &r->opts, .output_dir = r->dir, .start_monotonic_ns = clock_ns(CLOCK_MONOTONIC),
		.start_realtime_ns = clock_ns(CLOCK_REALTIME), .launch_monotonic_ns = r->launch_ns,
		.resolve_delay_ns = RESOLVE_DELAY_NS, .on_new_process = mark_known,
		.on_jvm = walk ? describe_jvm : NULL, .on_python = walk ? describe_python : NULL,
		.kernel = &r->kernel, .read_losses = read_losses,
	};
	int err;

	if (!(r->bpf.drain = drain_thread_new(QUEUE_BYTES))) {
		sp_err("set up the drain thread: %s", strerror(errno));
		return -1;
	}
	rc.drain = r->bpf.drain;
	if (r->opts.otlp.sender.url && !(rc.otlp = r->otlp = record_otlp_new(&r->opts.otlp)))
		return -1;
	if (!(r->sink = record_sink_new(&rc, read_counters, &r->bpf)) || open_bpf(r, walk))
		return -1;
	record_sink_set_callback_ctx(r->sink, &r->bpf);
	if (r->opts.attach)
		record_attach_jvms(&r->opts);
	/* With --rotate the first interval starts with sampling. */
	if (r->opts.rotate_ns && record_sink_start(r->sink, clock_ns(CLOCK_MONOTONIC)))
		return -1;
	if (bpf_sampler_start(r->bpf.sampler) || (r->bpf.offcpu && bpf_offcpu_start(r->bpf.offcpu)))
		return -1;
	if ((err = drain_thread_start(r->bpf.drain, r->bpf.sampler))) {
		sp_err("start the drain thread: %s", strerror(-err));
		return -1;
	}
	r->start_ns = clock_ns(CLOCK_MONOTONIC);
	if (!r->opts.rotate_ns)
		record_sink_start(r->sink, r->start_ns);
	if (r->opts.command)
		child_command_release(&r->child);
	sp_info("recording into %s%s", r->dir,
		r->opts.duration_s > 0 || r->opts.command ? "" : " (Ctrl-C to stop)");
	return 0;
}

/* Takes and files records until a stop: a signal, -d, the command's or
 * the targets' exit, or an error. */
static void run(struct recording *r)
{
	struct live_status status = { .on_terminal = isatty(STDERR_FILENO) };

	for (;;) {
		uint64_t now;
		int n = drain_thread_take(r->bpf.drain, POLL_MS, TAKE_BUDGET_MS, record_sink_on_record,
					  r->sink);

		if (n < 0) {
			sp_err("read BPF records: %s", strerror(-n));
			break;
		}
		now = clock_ns(CLOCK_MONOTONIC);
		if (record_sink_tick(r->sink, now))
			break;
		if (!r->opts.rotate_ns)
			print_status(&status, r->bpf.sampler, r->sink, now, r->start_ns);
		if (stop_requested ||
		    (r->opts.duration_s > 0 && now - r->start_ns >= (uint64_t)(r->opts.duration_s * 1e9)) ||
		    (r->opts.command && child_command_poll_exit(&r->child)))
			break;
		if (r->targets && target_exits_all(r->targets)) {
			sp_info("every process of -p has exited");
			break;
		}
	}
	r->end_ns = clock_ns(CLOCK_MONOTONIC);
	if (status.printed)
		fputc('\n', stderr);
}

/* Stops new records, takes everything in flight and writes the files. The
 * exit status. */
static int finish(struct recording *r)
{
	uint64_t counters[SP_CNT_MAX] = { 0 };

	if (r->bpf.offcpu)
		bpf_offcpu_stop(r->bpf.offcpu);
	bpf_sampler_stop(r->bpf.sampler);
	drain_thread_stop(r->bpf.drain);
	while (bpf_sampler_poll(r->bpf.sampler, 0) > 0)
		;
	drain_thread_flush(r->bpf.drain);
	drain_thread_take(r->bpf.drain, 0, 0, record_sink_on_record, r->sink);
	bpf_sampler_counters(r->bpf.sampler, counters);
	if (record_sink_finish(r->sink, counters, r->start_ns, r->end_ns)) {
		if (!r->opts.rotate_ns)
			sp_err("the recording in %s is incomplete: the files above could not be "
			       "written%s", r->dir,
			       access_summary(r->dir) ? " (summary.json lists them)" : "");
		return 1;
	}
	return r->opts.command && r->child.exited && r->child.exit_status ? r->child.exit_status : 0;
}

int cmd_record(int argc, char **argv)
{
	struct recording r = { .child = { .pid = -1, .gate_fd = -1 },
			       .launch_ns = clock_ns(CLOCK_MONOTONIC) };
	int exit_code = prepare(&r, argc, argv);

	if (exit_code)
		return exit_code < 0 ? 0 : exit_code;
	exit_code = 1;
	if (!start(&r)) {
		run(&r);
		exit_code = finish(&r);
	}
	if (r.opts.command && !r.child.exited)
		child_command_abort(&r.child);
	drain_thread_free(r.bpf.drain);   /* joins the thread before the sampler goes */
	bpf_offcpu_close(r.bpf.offcpu);
	bpf_sampler_close(r.bpf.sampler);
	record_sink_free(r.sink);
	/* The end of a recording waited for the last segment already; the last
	 * interval of --rotate gets a while now. */
	record_otlp_free(r.otlp, r.opts.rotate_ns ? OTLP_LAST_WAIT_MS : 0);
	target_exits_free(r.targets);
	return exit_code;
}

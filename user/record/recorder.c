/* recorder.c - see recorder.h. */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fifo_arena.h"
#include "base/grow_array.h"
#include "base/log.h"
#include "base/sample.h"
#include "base/version.h"
#include "jvm/java_process.h"
#include "jvm/jvm_process.h"
#include "output/sample_store.h"
#include "output/stage_writer.h"
#include "output/views.h"
#include "proc/proc_stat.h"
#include "proc/proc_status.h"
#include "python/python_process.h"
#include "record/process_perf_map.h"
#include "record/process_table.h"
#include "record/python_procs.h"
#include "record/record_otlp.h"
#include "record/record_summary.h"
#include "record/recorder.h"
#include "record/run_index.h"
#include "sampler/drain_thread.h"
#include "spark/executor_stages.h"
#include "spark/task_thread_name.h"
#include "symbols/binary_cache.h"
#include "symbols/proc_symbolizer.h"
#include "symbols/stack_resolver.h"

#define NSEC_PER_MSEC 1000000ULL
/* How often helper logs are read (a "java" process that has not mapped
 * libjvm.so yet is checked again as java_look_again says). */
#define HELPER_POLL_NS (100 * NSEC_PER_MSEC)
/* Records wait about a second: the arena grows to a second's worth of
 * records in chunks of this size, then reuses them.  Small chunks keep
 * what a burst left behind small (the arena keeps two spare chunks). */
#define PENDING_CHUNK_BYTES (256u << 10)
#define DRAIN_BUDGET_NS (200 * NSEC_PER_MSEC)
/* How often, and after how long without a record, processes are checked
 * for having exited: a whole-node recording sees thousands of short-lived
 * processes in an hour, and each holds its maps and address tables. */
#define EXIT_SWEEP_NS (2000 * NSEC_PER_MSEC)
#define MEMORY_LOG_NS (60000 * NSEC_PER_MSEC)
/* How often executors' threads' old states are forgotten. */
#define THREAD_SWEEP_NS (10000 * NSEC_PER_MSEC)
/* A segment of the sample store spans at most this much sample time (and
 * its memory at most --stack-memory). */
#define SEGMENT_NS (60000 * NSEC_PER_MSEC)
/* A process first seen in its first milliseconds may not have mapped its
 * libraries yet, and one that lives half a second is gone before its
 * samples are named: in its first second in the table, its maps are read
 * again when a record arrives with an address they do not hold (at most
 * every 100 ms, proc_symbolizer_refresh). */
#define YOUNG_MAPS_NS (1000 * NSEC_PER_MSEC)

/* A record waiting to be named: the BPF record without its unused stack
 * slots. */
struct pending_record {
	struct pending_record *next;
	struct process *process;  /* as it was when the record arrived (exec) */
	uint64_t arrival_ns;
	uint64_t timestamp_ns;
	uint64_t off_cpu_ns;
	uint32_t kind, cpu, tgid, tid, state;
	uint32_t nkernel, nuser;
	uint32_t ustack_flags;        /* SP_USTACK_* */
	char comm[SP_COMM_LEN];
	uint64_t addrs[]; /* nkernel kernel addresses, then nuser user ones */
};

struct recorder {
	struct recorder_config cfg;
	struct process_table *processes;
	struct stack_resolver *resolver;
	struct sample_store *store;         /* every sample, labelled */
	struct views_settings views;        /* how its files are written */
	struct stage_writer *stages;        /* ended stages' files, while recording */
	struct views *live_jfr;             /* the node's and executors' JFR files, likewise */
	uint64_t live_jfr_ns;               /* time spent writing them */
	struct executor_stages *executors;
	struct perf_map_names *perf_map_names; /* what processes' perf maps named */
	struct pending_record *head, *tail;
	struct fifo_arena *pending;         /* where head..tail live */
	struct frame *frames;
	struct recorder_totals totals;
	struct ring_use ring;         /* bytes 0 until set */
	int store_error;              /* the first segment write's -errno (said) */
	uint64_t dropped_at_start;    /* the drain thread's drops when it was made */
	uint64_t last_helper_poll_ns;
	uint64_t last_exit_sweep_ns;
	uint64_t last_thread_sweep_ns;
	uint64_t last_memory_log_ns;   /* -v: what the memory holds, every minute */
};

/* How long the end of a recording waits for --otlp's last requests. */
#define RECORD_OTLP_FINISH_MS 10000

/* What the recorder knows of a process beyond the store's labels: a
 * Kubernetes executor's pod. */
static void resource_of(void *ctx, pid_t pid, struct otlp_resource_extra *out)
{
	struct process *p = process_table_find(((struct recorder *)ctx)->processes, pid);
	const struct spark_executor *e = p && p->executor ? executor_identity(p->executor) : NULL;

	if (!e)
		return;
	snprintf(out->k8s_pod_name, sizeof(out->k8s_pod_name), "%s", e->pod_name);
	snprintf(out->k8s_pod_uid, sizeof(out->k8s_pod_uid), "%s", e->pod_uid);
}

/* A segment is in the file: its stages are tracked, the node's and
 * executors' JFR files get its samples, and --otlp sends it. */
static void segment_written(void *ctx, const struct store_segment_written *seg)
{
	struct recorder *rec = ctx;
	uint64_t t0;

	stage_writer_segment(rec->stages, seg);
	if (rec->live_jfr) {
		t0 = monotonic_ns();
		views_live_segment(rec->live_jfr, seg);   /* what fails is written at the stop */
		rec->live_jfr_ns += monotonic_ns() - t0;
	}
	if (rec->cfg.otlp)
		record_otlp_segment(rec->cfg.otlp, seg, resource_of, rec);
}

/* Views are written as the options say; the stop leaves out the stages
 * written during the recording. */
static struct stage_writer *new_stage_writer(struct recorder *rec)
{
	const struct record_options *o = rec->cfg.opts;
	char path[PATH_MAX];
	struct stage_writer *w;

	rec->views = (struct views_settings){ .dir = rec->cfg.output_dir, .jfr = o->jfr,
					      .compress = o->compress, .html = o->html,
					      .attribution = attribution_mode_name(o->attribution) };
	snprintf(path, sizeof(path), "%s/%s", rec->cfg.output_dir, STORE_FILE_NAME);
	if (!(w = stage_writer_new(path, &rec->views)))
		sp_err("out of memory setting up the recording");
	return w;
}

static struct sample_store *open_store(struct recorder *rec)
{
	const struct recorder_config *cfg = &rec->cfg;
	const struct record_options *o = cfg->opts;
	struct sample_store_settings st = {
		.dir = cfg->output_dir,
		.info = {
			.flags = (o->per_thread ? STORE_PER_THREAD : 0) | (o->wall ? STORE_WALL : 0) |
				 (o->off_cpu ? STORE_OFF_CPU : 0) | (o->jfr ? 0 : STORE_NO_JFR) |
				 (o->compress ? STORE_GZIP_JFR : 0) | (o->html ? 0 : STORE_NO_HTML) |
				 (o->attribution == ATTRIBUTION_EPOCH ? STORE_EPOCH : 0),
			.start_monotonic_ns = cfg->start_monotonic_ns,
			.start_realtime_ns = cfg->start_realtime_ns,
			.cpu_period_ns = 1000000000ULL / o->frequency_hz,
			.wall_interval_ns = o->wall_interval_ns,
			.frequency_hz = o->frequency_hz,
		},
		.segment_bytes = o->stack_memory_bytes ? (size_t)o->stack_memory_bytes : SIZE_MAX,
		.segment_ns = SEGMENT_NS,
		.segment_written = segment_written,
		.segment_ctx = rec,
		.segment_samples = o->jfr || cfg->otlp,   /* the live JFR files, OTLP */
	};

	if (gethostname(st.info.host, sizeof(st.info.host) - 1))
		strcpy(st.info.host, "unknown");
	return sample_store_open(&st);
}

struct recorder *recorder_new(const struct recorder_config *cfg)
{
	const struct record_options *o = cfg->opts;
	struct executor_stages_config executors = {
		.executors = o->executors,
		.app_id = o->app_id,
		.mode = o->attribution,
		.epoch_interval_ns = o->epoch_interval_ns,
		.start_ns = cfg->start_monotonic_ns,
	};
	struct recorder *rec = calloc(1, sizeof(*rec));

	if (!rec)
		return NULL;
	rec->cfg = *cfg;
	rec->processes = process_table_new();
	rec->frames = calloc(STACK_MAX_FRAMES, sizeof(struct frame));
	rec->pending = fifo_arena_new(PENDING_CHUNK_BYTES);
	if (!rec->processes || !rec->frames || !rec->pending) {
		sp_err("out of memory setting up the recording");
		goto fail;
	}
	rec->resolver = cfg->kernel_symbols ? stack_resolver_new_sharing(cfg->kernel_symbols)
				       : stack_resolver_new();
	if (!rec->resolver)
		goto fail;
	/* libjvm's names alone take 2.3 MB, the kernel's 1.8; few are shown. */
	if (stack_resolver_keep_names_in(rec->resolver, cfg->output_dir)) {
		sp_err("out of memory setting up the recording");
		goto fail;
	}
	rec->executors = executor_stages_new(&executors);
	rec->perf_map_names = perf_map_names_new();
	if (!rec->executors || !rec->perf_map_names || !(rec->stages = new_stage_writer(rec)))
		goto fail;
	if (o->jfr && !(rec->live_jfr = views_live_new(&rec->views))) {
		sp_err("out of memory setting up the recording");
		goto fail;
	}
	if (!(rec->store = open_store(rec)))
		goto fail;
	if (cfg->read_losses && cfg->ctx)
		cfg->read_losses(cfg->ctx, &rec->ring, &rec->dropped_at_start);
	rec->ring = (struct ring_use){ 0 };
	return rec;
fail:
	recorder_free(rec);
	return NULL;
}

void recorder_sampling_started(struct recorder *rec, uint64_t start_monotonic_ns)
{
	rec->cfg.start_monotonic_ns = start_monotonic_ns;
}

void recorder_set_new_process_ctx(struct recorder *rec, void *ctx)
{
	rec->cfg.ctx = ctx;
}

static void release_process(struct process *p, void *ctx)
{
	(void)ctx;
	proc_symbolizer_free(p->symbolizer);
	java_process_free(p->java);
	python_process_free(p->python);
	process_perf_map_release(p);
	executor_free(p->executor);
}

void recorder_free(struct recorder *rec)
{
	if (!rec)
		return;
	fifo_arena_free(rec->pending);
	if (rec->processes)
		process_table_free(rec->processes, release_process, NULL);
	executor_stages_free(rec->executors);
	perf_map_names_free(rec->perf_map_names);
	sample_store_free(rec->store);
	stage_writer_free(rec->stages);
	views_free(rec->live_jfr);
	stack_resolver_free(rec->resolver);
	free(rec->frames);
	free(rec);
}

/* The labels every sample of process p gets, whatever its thread does. */
static void process_labels(const struct process *p, const struct resolved_sample *s,
			   struct sample_labels *l)
{
	const struct spark_executor *id = p->executor ? executor_identity(p->executor) : NULL;

	*l = (struct sample_labels){ .pid = s->pid, .tid = s->tid, .process = p->label,
				     .thread = s->thread_name, .app_id = id ? id->app_id : "",
				     .executor_id = id ? id->executor_id : "", .stage = -1,
				     .attempt = -1, .task = -1 };
}

/* A task thread's task id, from its name; -1. */
static int64_t task_of(const char *name, struct task_thread_name *t)
{
	enum task_thread_kind k = task_thread_name_parse(name, strlen(name), t);

	return k == TASK_THREAD_TASK || k == TASK_THREAD_TASK_TID ? t->tid : -1;
}

/* A thread of a selected executor took a task: a mark in the store, so
 * that its stage counts the task even if no sample caught it. */
static void file_task_mark(struct recorder *rec, struct process *p,
			   const struct jvm_helper_thread_event *ev)
{
	struct resolved_sample s = { .timestamp_ns = ev->ts, .pid = p->pid, .tid = ev->tid,
				     .kind = SAMPLE_TASK, .thread_name = ev->name };
	struct task_thread_name t;
	struct sample_labels l;

	if (ev->kind != JVM_THREAD_NAMED || !ev->name || !executor_selected(p->executor))
		return;
	process_labels(p, &s, &l);
	if ((l.task = task_of(ev->name, &t)) < 0)
		return;
	if (t.kind == TASK_THREAD_TASK && t.stage <= INT32_MAX && t.stage_attempt <= INT32_MAX) {
		l.stage = (int32_t)t.stage;
		l.attempt = (int32_t)t.stage_attempt;
	}
	l.attribution = ATTRIBUTED_THREAD_NAME;
	l.flags = LABEL_EXECUTOR_VIEWS;
	if (sample_store_add(rec->store, &s, &l))
		rec->totals.bad_records++;
}

static void on_thread_event(void *ctx, const struct jvm_helper_thread_event *ev)
{
	static const enum thread_event kinds[] = {
		[JVM_THREAD_NAMED] = THREAD_EVENT_NAME,
		[JVM_THREAD_ENDED] = THREAD_EVENT_EXIT,
		[JVM_THREAD_IDLE] = THREAD_EVENT_IDLE,
		[JVM_THREAD_BUSY] = THREAD_EVENT_BUSY,
	};
	struct process *p = ctx;

	if (!p->executor || (unsigned)ev->kind >= sizeof(kinds) / sizeof(kinds[0]))
		return;
	executor_thread_event(p->executor, kinds[ev->kind], ev->ts, ev->tid, ev->name,
			      ev->name ? strlen(ev->name) : 0);
	file_task_mark(p->recorder, p, ev);
}

/* Gives the stack walker the JVM's HotSpot layout, once it is read; the
 * moment is taken once the walker has it. */
static void give_walker(struct recorder *rec, struct process *p)
{
	struct sp_hotspot_info info;

	if (!rec->cfg.on_jvm || !java_process_walker_info(p->java, &info) ||
	    !rec->cfg.on_jvm(rec->cfg.ctx, p->pid, &info) || p->java_walked_ns)
		return;
	p->java_walked_ns = monotonic_ns();
	sp_debug("pid %d: HotSpot: its interpreted frames are walked", (int)p->pid);
}

static void become_jvm(struct recorder *rec, struct process *p)
{
	p->java = java_process_new(p->pid, monotonic_ns(), on_thread_event, p);
	if (p->java)
		give_walker(rec, p);
}

/* Everything about a new process that can only be read while it lives;
 * now: before its name was read. */
static void inspect_process(struct recorder *rec, struct process *p, uint64_t now)
{
	p->first_seen_ns = p->last_jvm_check_ns = now;
	/* Before the maps: an exec between the two reads is then seen as an
	 * exec after the inspection. */
	if (proc_address_space_id(p->pid, &p->address_space))
		p->address_space = 0;
	p->symbolizer = stack_resolver_inspect(rec->resolver, p->pid);
	if (!p->symbolizer && errno != ESRCH && errno != ENOENT)
		sp_debug("inspect pid %d: %s", p->pid, strerror(errno));
	/* The executor first: its stage tracker must exist before the helper's
	 * thread records are read. */
	p->executor = executor_stages_inspect(rec->executors, p->pid);
	/* A JVM maps libjvm.so; its anonymous executable memory is JIT code. */
	if (p->symbolizer && proc_symbolizer_maps_file(p->symbolizer, "libjvm.so"))
		become_jvm(rec, p);
	else
		python_procs_look(p, monotonic_ns(), rec->cfg.on_python, rec->cfg.ctx);
	/* The ELF files last: a JVM's walker is on before its libraries load. */
	if (p->symbolizer)
		proc_symbolizer_load_files(p->symbolizer);
}

/* Marked before /proc is read: an exec after the mark is reported (and
 * the new program inspected afresh), one before it is what /proc shows.
 * Returns the time just after the mark, which on_exec compares with the
 * exec's. */
static uint64_t mark_known(struct recorder *rec, pid_t pid)
{
	if (rec->cfg.on_new_process)
		rec->cfg.on_new_process(rec->cfg.ctx, pid);
	return monotonic_ns();
}

/* A waiting entry (record_process) becomes the new program's. */
static void inspect_after_exec(struct recorder *rec, struct process *p)
{
	uint64_t now = mark_known(rec, p->pid);

	p->awaiting_exec = false;
	process_table_rename(p);
	inspect_process(rec, p, now);
}

/* Whether p was inspected in the address space pid has now: read while
 * an exec was under way (new memory, not yet reported), it already
 * describes the new program. */
static bool same_address_space(const struct process *p)
{
	uint64_t now;

	return p->address_space && !proc_address_space_id(p->pid, &now) &&
	       now == p->address_space;
}

/* A known process ran exec. An entry inspected before it describes the old
 * program: records already queued keep it, the next one opens a new entry.
 * One inspected after it, or during it, or waiting for it, is the new
 * program's: its exec was only reported because the mark came first. */
static void on_exec(struct recorder *rec, const struct sp_event_header *hdr)
{
	pid_t tgid = (pid_t)hdr->tgid;
	struct process *p = process_table_find(rec->processes, tgid);

	if (p && p->awaiting_exec) {
		inspect_after_exec(rec, p);
		return;
	}
	if (p && p->first_seen_ns > hdr->timestamp_ns) {
		mark_known(rec, tgid);
		return;
	}
	/* Its name may have been read before the exec set the new one. */
	if (p && same_address_space(p)) {
		mark_known(rec, tgid);
		process_table_rename(p);
		return;
	}
	process_table_retire(rec->processes, tgid);
	if (rec->cfg.on_jvm)
		rec->cfg.on_jvm(rec->cfg.ctx, tgid, NULL);
	if (rec->cfg.on_python)
		rec->cfg.on_python(rec->cfg.ctx, tgid, NULL);
}

/* The stacks of a CPU sample or off-CPU record of size bytes, and their
 * kernel and user frame counts; NULL for a record that does not hold what
 * it says (the frames follow the fixed part, user then kernel). */
static const struct sp_stacks *record_stacks(const struct sp_event_header *hdr, size_t size,
					     uint32_t *nk, uint32_t *nu)
{
	const struct sp_stacks *stacks;
	size_t fixed;

	if (hdr->kind == SP_EVENT_CPU_SAMPLE) {
		fixed = sizeof(struct sp_cpu_sample);
		stacks = &((const struct sp_cpu_sample *)hdr)->stacks;
	} else if (hdr->kind == SP_EVENT_OFF_CPU) {
		fixed = sizeof(struct sp_off_cpu_event);
		stacks = &((const struct sp_off_cpu_event *)hdr)->stacks;
	} else {
		return NULL;
	}
	if (size < fixed)
		return NULL;
	*nk = stacks->kstack_bytes > 0 ? (uint32_t)stacks->kstack_bytes / sizeof(uint64_t) : 0;
	*nu = stacks->ustack_bytes > 0 ? (uint32_t)stacks->ustack_bytes / sizeof(uint64_t) : 0;
	if (*nk > SP_MAX_STACK_DEPTH || *nu > SP_MAX_USER_DEPTH ||
	    *nk + *nu > (size - fixed) / sizeof(uint64_t))
		return NULL;
	return stacks;
}

/* The record's process, inspected when first seen; NULL when the table is
 * full. A record from inside exec, or one whose thread's name /proc no
 * longer shows (its exec ran meanwhile), opens an entry that /proc may not
 * describe: it waits, and is inspected as the new program once the exec is
 * reported or a record from after it arrives. */
static struct process *record_process(struct recorder *rec, const struct sp_event_header *hdr,
				      bool in_exec)
{
	struct process *p = process_table_find(rec->processes, (pid_t)hdr->tgid);
	char comm[SP_COMM_LEN];
	uint64_t now;
	bool created;

	if (p) {
		if (p->awaiting_exec && !in_exec)
			inspect_after_exec(rec, p);
		return p;
	}
	/* Marked after /proc is read, an exec in between (a `-- cmd` child
	 * leaving the gate) would leave the entry describing the old program. */
	now = mark_known(rec, (pid_t)hdr->tgid);
	memcpy(comm, hdr->comm, SP_COMM_LEN);
	comm[SP_COMM_LEN - 1] = '\0';
	p = process_table_get(rec->processes, (pid_t)hdr->tgid, comm, &created);
	if (!p || !created)
		return p;
	rec->totals.processes++;
	p->recorder = rec;
	p->awaiting_exec = in_exec || (hdr->tid == hdr->tgid && strcmp(p->comm, comm));
	if (!p->awaiting_exec)
		inspect_process(rec, p, now);
	return p;
}

/* A copy of the record, kernel frames first, queued to be named; NULL
 * when the queue has no room. */
static struct pending_record *queue_record(struct recorder *rec, struct process *p,
					   const struct sp_event_header *hdr,
					   const struct sp_stacks *stacks, uint32_t nk, uint32_t nu)
{
	struct pending_record *pr;

	pr = fifo_arena_alloc(rec->pending, sizeof(*pr) + (nk + nu) * sizeof(uint64_t));
	if (!pr)
		return NULL;
	pr->next = NULL;
	/* The last tick's time, at most a tick behind: a fine clock per record
	 * costs too much at 10 kHz, and a record named a tick early still
	 * waits about resolve_delay_ns. */
	pr->arrival_ns = clock_ns(CLOCK_MONOTONIC_COARSE);
	pr->timestamp_ns = hdr->timestamp_ns;
	pr->kind = hdr->kind;
	pr->cpu = hdr->cpu;
	pr->tgid = hdr->tgid;
	pr->tid = hdr->tid;
	memcpy(pr->comm, hdr->comm, SP_COMM_LEN);
	pr->comm[SP_COMM_LEN - 1] = '\0';
	pr->off_cpu_ns = 0;
	pr->state = SP_STATE_RUNNING;
	if (hdr->kind == SP_EVENT_OFF_CPU) {
		const struct sp_off_cpu_event *ev = (const struct sp_off_cpu_event *)hdr;

		pr->off_cpu_ns = ev->off_cpu_ns;
		pr->state = ev->state;
	}
	pr->nkernel = nk;
	pr->nuser = nu;
	pr->ustack_flags = stacks->ustack_flags;
	memcpy(pr->addrs, stacks->frames + nu, nk * sizeof(uint64_t));
	memcpy(pr->addrs + nk, stacks->frames, nu * sizeof(uint64_t));
	pr->process = p;
	if (rec->tail)
		rec->tail->next = pr;
	else
		rec->head = pr;
	rec->tail = pr;
	return pr;
}

int recorder_on_record(void *ctx, const void *data, size_t size)
{
	struct recorder *rec = ctx;
	const struct sp_event_header *hdr = data;
	const struct sp_stacks *stacks = NULL;
	const struct pending_record *pr = NULL;
	struct process *p = NULL;
	uint32_t nk = 0, nu = 0;
	const uint64_t *user;

	rec->totals.records++;
	if (size >= sizeof(*hdr) && hdr->kind == SP_EVENT_EXEC) {
		on_exec(rec, hdr);
		return 0;
	}
	if (size < sizeof(*hdr) || !(stacks = record_stacks(hdr, size, &nk, &nu)) ||
	    !(p = record_process(rec, hdr, stacks->ustack_flags & SP_USTACK_IN_EXEC)) ||
	    !(pr = queue_record(rec, p, hdr, stacks, nk, nu))) {
		rec->totals.bad_records++;
		return 0;
	}
	p->pending++;
	p->last_record_ns = pr->arrival_ns;
	user = pr->addrs + nk;
	if (p->symbolizer && pr->arrival_ns < p->first_seen_ns + YOUNG_MAPS_NS &&
	    !proc_symbolizer_maps_hold(p->symbolizer, user, nu))
		proc_symbolizer_refresh(p->symbolizer);
	if (p->java && (stacks->ustack_flags & SP_USTACK_WALKED))
		java_process_read_methods(p->java, user, nu);
	return 0;
}

/* A starting JVM maps libjvm.so after its first instructions, and writes
 * the helper's log after that: look again now and then. */
struct poll_ctx {
	struct recorder *rec;
	uint64_t now;
};

static int poll_jvm(struct process *p, void *ctx)
{
	struct poll_ctx *pc = ctx;
	uint64_t now = pc->now;

	if (p->released || p->awaiting_exec)
		return 0;
	if (!p->python_settled)
		python_procs_look(p, now, pc->rec->cfg.on_python, pc->rec->cfg.ctx);
	if (p->java) {
		if (java_process_poll(p->java, now, p->retired))
			give_walker(pc->rec, p);
		return 0;
	}
	/* A retired entry's pid now runs another program: nothing to find. */
	if (p->retired || strcmp(p->comm, "java") ||
	    !java_look_again(p->first_seen_ns, p->last_jvm_check_ns, now))
		return 0;
	p->last_jvm_check_ns = now;
	if (jvm_process_has_library(p->pid, "libjvm.so") > 0)
		become_jvm(pc->rec, p);
	return 0;
}

static const struct frame idle_task_frame = { "[idle task thread: waiting for a task]",
					      FRAME_NATIVE };
static const struct frame truncated_frame = { "[truncated: deeper frames not walked]",
					      FRAME_NATIVE };

/* Who a sample belongs to: its process, and for a selected executor its
 * stage and task; with --threads tasks, samples of threads not running a
 * task are left out of the executor's views. */
static void label_sample(struct recorder *rec, struct process *p, const struct resolved_sample *s,
			 int helper_idle, struct sample_labels *l)
{
	struct stage_attribution_result stage;
	struct task_thread_name t;

	process_labels(p, s, l);
	if (p->python && python_procs_label(rec->processes, p, s, l))
		return;
	if (!p->executor || !executor_selected(p->executor))
		return;
	stage = executor_sample_stage(p->executor, s);
	if (!stage_key_is_none(stage.stage)) {
		l->stage = stage.stage.stage;
		l->attempt = stage.stage.attempt;
	}
	l->attribution = (uint8_t)stage.how;
	l->task = task_of(s->thread_name, &t);
	if (rec->cfg.opts->threads == THREADS_ALL || executor_runs_task(s->thread_name, helper_idle))
		l->flags |= LABEL_EXECUTOR_VIEWS;
}

static void file_record(struct recorder *rec, const struct pending_record *pr)
{
	struct process *p = pr->process;
	struct resolved_sample s = {
		.timestamp_ns = pr->timestamp_ns,
		.pid = (pid_t)pr->tgid,
		.tid = (pid_t)pr->tid,
		.cpu = pr->cpu,
		.kind = pr->kind == SP_EVENT_OFF_CPU ? SAMPLE_OFF_CPU : SAMPLE_CPU,
		.thread_state = pr->state,
		.off_cpu_ns = pr->off_cpu_ns,
		.thread_name = pr->comm,
	};

	struct user_names names = { .symbolizer = p->symbolizer };
	struct perf_map_ctx perf_map = { rec->perf_map_names, p };
	struct sample_labels labels;
	uint64_t unknown_before = stack_resolver_get_stats(rec->resolver)->user_unknown;
	int helper_idle = -1;

	s.ns_tid = s.tid;
	if (p->java) {
		const char *name;

		s.ns_tid = java_process_ns_tid(p->java, s.tid);
		name = java_process_thread_name(p->java, s.ns_tid, sample_lookup_time(&s));
		if (name)
			s.thread_name = name;
		names.name_jit = java_process_name_jit;
		if (pr->ustack_flags & SP_USTACK_WALKED)
			names.name_method = java_process_name_method;
		names.jit_ctx = p->java;
		if (p->executor)
			helper_idle = java_process_thread_idle(p->java, s.ns_tid,
								 sample_lookup_time(&s));
	} else {
		names.name_jit = process_perf_map_name;
		names.jit_ctx = &perf_map;
	}
	if (p->python) {
		python_procs_find_served(rec->processes, p, pr->timestamp_ns);
		if (pr->ustack_flags & SP_USTACK_PYTHON)
			names.name_python = python_process_name_frame;
		names.in_interpreter = python_process_in_interpreter;
		names.python_ctx = p->python;
	}
	s.root_label = p->label;
	/* Slot 0 is kept for the idle marker below. */
	s.frames = rec->frames + 1;
	s.nframes = stack_resolver_resolve(rec->resolver, &names, pr->timestamp_ns, pr->addrs,
					   pr->nkernel, pr->addrs + pr->nkernel, pr->nuser,
					   rec->frames + 1, STACK_MAX_FRAMES - 1);
	p->unknown_user_frames += stack_resolver_get_stats(rec->resolver)->user_unknown -
				  unknown_before;
	/* A stack cut at the walker's depth keeps its leaf side and says so at
	 * its root. */
	if ((pr->ustack_flags & SP_USTACK_TRUNCATED) && s.nframes < STACK_MAX_FRAMES - 1)
		rec->frames[1 + s.nframes++] = truncated_frame;
	/* An idle task thread's wait is not a task's wait: a leaf frame says
	 * so, so that idle pools do not pass for I/O in wall profiles. */
	if (s.kind == SAMPLE_OFF_CPU && p->executor &&
	    executor_idle_task_thread(s.thread_name, helper_idle)) {
		rec->frames[0] = idle_task_frame;
		s.frames = rec->frames;
		s.nframes++;
	}
	if (s.kind == SAMPLE_CPU) {
		rec->totals.cpu_samples++;
		p->cpu_samples++;
	} else {
		rec->totals.off_cpu_events++;
		p->off_cpu_ns += s.off_cpu_ns;
	}
	label_sample(rec, p, &s, helper_idle, &labels);
	if (sample_store_add(rec->store, &s, &labels))
		rec->totals.bad_records++;
}

struct sweep_ctx {
	struct recorder *rec;
	uint64_t now;
	pid_t *gone;           /* pids to retire once the table is not walked */
	size_t ngone, capgone;
};

/* Frees the tables of a process whose records are all named and that has
 * exited (or ran exec: its entry describes a program no longer running).
 * The names handed out live in the binary cache and the JVM's name stores,
 * which stay: outputs still to be written point into them. */
static int release_exited(struct process *p, void *ctx)
{
	struct sweep_ctx *sc = ctx;

	if (p->released || p->pending)
		return 0;
	if (!p->retired) {
		if (sc->now - p->last_record_ns < EXIT_SWEEP_NS ||
		    kill(p->pid, 0) == 0 || errno != ESRCH ||
		    grow_array((void **)&sc->gone, &sc->capgone, sc->ngone + 1, sizeof(*sc->gone)))
			return 0;
		sc->gone[sc->ngone++] = p->pid;
		p->exited = true;
		/* Its slot in the walker's map is free for the next JVM. */
		if (p->java && sc->rec->cfg.on_jvm)
			sc->rec->cfg.on_jvm(sc->rec->cfg.ctx, p->pid, NULL);
		if (p->python && sc->rec->cfg.on_python)
			sc->rec->cfg.on_python(sc->rec->cfg.ctx, p->pid, NULL);
	}
	proc_symbolizer_free(p->symbolizer);
	p->symbolizer = NULL;
	if (p->java)
		java_process_release(p->java);
	python_process_release(p->python);
	process_perf_map_release(p);
	p->released = true;
	return 0;
}

static void sweep_exited(struct recorder *rec, uint64_t now)
{
	struct sweep_ctx sc = { .rec = rec, .now = now };

	rec->last_exit_sweep_ns = now;
	process_table_foreach_active(rec->processes, release_exited, &sc);
	/* A later process with the same pid gets an entry of its own. */
	for (size_t i = 0; i < sc.ngone; i++)
		process_table_retire(rec->processes, sc.gone[i]);
	free(sc.gone);
	process_table_settle(rec->processes);
}

static int forget_threads(struct process *p, void *ctx)
{
	if (p->executor)
		executor_forget_threads(p->executor, *(const uint64_t *)ctx);
	return 0;
}

static void sweep_threads(struct recorder *rec, uint64_t now)
{
	rec->last_thread_sweep_ns = now;
	process_table_foreach(rec->processes, forget_threads, &now);
}

static int add_process_memory(struct process *p, void *ctx)
{
	struct record_memory *m = ctx;
	size_t names = 0;

	m->jit += p->java ? java_process_jit_memory(p->java, &names) : 0;
	m->jit_names += names;
	m->threads += p->java ? java_process_thread_memory(p->java) : 0;
	m->stages += p->executor ? executor_stages_memory(p->executor) : 0;
	if (p->python) {
		struct python_process_stats ps;

		python_process_stats(p->python, &ps);
		m->python += ps.memory;
	}
	m->address_names += p->symbolizer ? proc_symbolizer_memory(p->symbolizer) : 0;
	return 0;
}

static void measure_memory(const struct recorder *rec, struct record_memory *m)
{
	struct binary_cache_stats bs;
	struct proc_status st;

	*m = (struct record_memory){ 0 };
	if (!proc_status_read(getpid(), &st) && (st.present & PROC_STATUS_VMRSS))
		m->rss_kib = st.vm_rss_kib;
	sample_store_stats(rec->store, &m->store);
	stage_writer_stats(rec->stages, &m->stage_files);
	m->live_jfr_ns = rec->live_jfr_ns;
	process_table_foreach(rec->processes, add_process_memory, m);
	m->address_names += perf_map_names_memory(rec->perf_map_names);
	m->elf_symbols = stack_resolver_memory(rec->resolver, &m->kernel_symbols);
	binary_cache_get_stats(stack_resolver_binaries(rec->resolver), &bs);
	m->symbol_files = bs.held;
	m->symbol_files_dropped = bs.dropped;
	m->queued = fifo_arena_memory(rec->pending) +
		    (rec->cfg.drain ? drain_thread_memory(rec->cfg.drain) : 0);
}

static int debug_jvm_memory(struct process *p, void *ctx)
{
	(void)ctx;
	if (p->java && !p->released)
		java_process_debug_memory(p->java);
	return 0;
}

/* With -v, what the memory holds every minute: how a long recording's
 * memory moves, owner by owner (summary.json has it only at the end). */
static void log_memory(struct recorder *rec, uint64_t now)
{
	struct record_memory m;
	struct mallinfo2 mi = mallinfo2();

	rec->last_memory_log_ns = now;
	measure_memory(rec, &m);
	sp_debug("memory: RSS %llu KiB; heap %zu KiB in use, %zu KiB free in it, %zu KiB mapped; "
		 "store %zu, JIT %zu (names %zu), threads %zu, stages %zu, addresses %zu, "
		 "ELF %zu (%zu binaries, %zu dropped), kernel %zu, queued %zu KiB; "
		 "%llu segments (%llu MiB, closing took %llu ms, longest %llu ms)",
		 (unsigned long long)m.rss_kib, mi.uordblks >> 10, mi.fordblks >> 10,
		 mi.hblkhd >> 10, m.store.memory >> 10, m.jit >> 10, m.jit_names >> 10,
		 m.threads >> 10, m.stages >> 10, m.address_names >> 10, m.elf_symbols >> 10,
		 m.symbol_files, m.symbol_files_dropped, m.kernel_symbols >> 10, m.queued >> 10,
		 (unsigned long long)m.store.segments,
		 (unsigned long long)(m.store.file_bytes >> 20),
		 (unsigned long long)(m.store.close_ns / 1000000),
		 (unsigned long long)(m.store.close_longest_ns / 1000000));
	process_table_foreach_active(rec->processes, debug_jvm_memory, NULL);
}

void recorder_drain(struct recorder *rec, uint64_t now, bool flush_all)
{
	int err;

	if (flush_all || now - rec->last_helper_poll_ns >= HELPER_POLL_NS) {
		struct poll_ctx pc = { rec, now };

		rec->last_helper_poll_ns = now;
		process_table_foreach_active(rec->processes, poll_jvm, &pc);
	}
	/* Naming waits for kernel symbols, taking records does not: a process
	 * that starts and exits meanwhile must still be inspected alive. */
	if (!flush_all && !stack_resolver_kernel_ready(rec->resolver))
		return;
	for (unsigned filed = 0; rec->head &&
	     (flush_all || rec->head->arrival_ns + rec->cfg.resolve_delay_ns <= now); filed++) {
		struct pending_record *pr = rec->head;

		/* A node so busy that naming falls behind still gets back to
		 * the loop (-d, signals) now and then. */
		if (!flush_all && (filed & 255) == 255 && monotonic_ns() - now >= DRAIN_BUDGET_NS)
			break;
		rec->head = pr->next;
		if (!rec->head)
			rec->tail = NULL;
		file_record(rec, pr);
		pr->process->pending--;
		fifo_arena_release_oldest(rec->pending);
	}
	if (!flush_all && now - rec->last_exit_sweep_ns >= EXIT_SWEEP_NS)
		sweep_exited(rec, now);
	if (!flush_all && now - rec->last_thread_sweep_ns >= THREAD_SWEEP_NS)
		sweep_threads(rec, now);
	/* Between batches: a segment due is written now, never inside an add. */
	if (!flush_all && (err = sample_store_tick(rec->store, now)) && !rec->store_error)
		rec->store_error = err;
	if (!flush_all)
		stage_writer_tick(rec->stages);   /* what fails is written at the stop */
	if (!flush_all && now - rec->last_memory_log_ns >= MEMORY_LOG_NS &&
	    sp_log_get_level() >= SP_LOG_DEBUG)
		log_memory(rec, now);
}

void recorder_get_totals(const struct recorder *rec, struct recorder_totals *out)
{
	*out = rec->totals;
}


/* Writes every view of the store as files. NULL when the store could not
 * be read back (said). */
static struct views *write_views(struct recorder *rec)
{
	struct views_settings vs = rec->views;
	char path[PATH_MAX];
	struct store_reader *r;
	struct views *views;
	int err;

	vs.stage_wanted = stage_writer_wanted;
	vs.stage_ctx = rec->stages;
	vs.live_jfr = rec->live_jfr;
	snprintf(path, sizeof(path), "%s/%s", rec->cfg.output_dir, STORE_FILE_NAME);
	if (!(r = store_reader_open(path)))
		return NULL;
	views = views_write(r, &vs);
	err = errno;
	store_reader_close(r);
	errno = err;
	return views;
}

int recorder_finish(struct recorder *rec, const uint64_t counters[SP_CNT_MAX],
		    uint64_t end_monotonic_ns)
{
	struct record_memory memory;
	struct record_summary_input in = {
		.opts = rec->cfg.opts,
		.output_dir = rec->cfg.output_dir,
		.launch_monotonic_ns = rec->cfg.launch_monotonic_ns,
		.start_monotonic_ns = rec->cfg.start_monotonic_ns,
		.start_realtime_ns = rec->cfg.start_realtime_ns,
		.end_monotonic_ns = end_monotonic_ns,
		.counters = counters,
		.bad_records = rec->totals.bad_records,
		.queue_full = rec->totals.queue_full,
		.ring = rec->ring.bytes ? &rec->ring : NULL,
		.processes = rec->processes,
		.resolver_stats = stack_resolver_get_stats(rec->resolver),
		.memory = &memory,
		.kernel = rec->cfg.kernel,
		.otlp = rec->cfg.otlp,
	};
	struct views *views;
	size_t store_memory;
	int err, err2;

	recorder_drain(rec, monotonic_ns(), true);
	if (rec->cfg.read_losses) {
		uint64_t dropped = 0;

		rec->cfg.read_losses(rec->cfg.ctx, &rec->ring, &dropped);
		rec->totals.queue_full = dropped - rec->dropped_at_start;
		in.ring = rec->ring.bytes ? &rec->ring : NULL;
		in.queue_full = rec->totals.queue_full;
	}
	measure_memory(rec, &memory);
	err = sample_store_finish(rec->store);
	store_memory = memory.store.memory;   /* the last segment's, before it closed */
	sample_store_stats(rec->store, &memory.store);
	memory.store.memory = store_memory;
	/* The last segment is queued now: a recording that ends gives it a
	 * while to go (an interval of --rotate does not wait: sampling goes on). */
	if (rec->cfg.otlp && !rec->cfg.opts->rotate_ns)
		record_otlp_drain(rec->cfg.otlp, RECORD_OTLP_FINISH_MS);
	if (!err)
		err = rec->store_error;
	in.store_error = err;
	views = write_views(rec);
	in.views = views;
	if (!views && !err)
		err = errno ? -errno : -EIO;   /* said where it failed */
	if (views && !err)
		err = views_first_error(views);
	err2 = record_summary_write(&in);
	/* The index is made from summary.json: if it cannot be written, the
	 * summary is written again to say so, or removed (a summary that
	 * says all is well would be wrong). */
	if (!err2 && rec->cfg.opts->html && (in.index_error = run_index_write(rec->cfg.output_dir))) {
		err2 = in.index_error;
		if (record_summary_write(&in)) {
			char path[PATH_MAX];

			snprintf(path, sizeof(path), "%s/summary.json", rec->cfg.output_dir);
			unlink(path);
		}
	}
	views_free(views);
	return err ? err : err2;
}

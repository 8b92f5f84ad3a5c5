/* process_table.h - what the recording knows about each sampled process.
 *
 * A process is inspected the first time one of its samples arrives, while
 * it is still alive: its name, its memory map and ELF files (through the
 * proc_symbolizer), whether it is a JVM (and runs the sparkprof helper),
 * and whether it is a Spark executor. What is captured then stays usable
 * after it exits, until every sample of it is named: then the recorder
 * frees its address tables (released) and keeps its entry for the summary.
 */
#ifndef SPARKPROF_PROCESS_TABLE_H
#define SPARKPROF_PROCESS_TABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_symbolizer;
struct java_process;
struct python_process;
struct perf_map;
struct executor;
struct recorder;

/* Each layer's state is made and used by that layer's module; the recorder
 * only holds it. */
struct process {
	pid_t pid;
	char comm[16];              /* the main thread's name */
	char label[48];             /* root frame: "comm-pid" */
	bool retired;               /* the pid ran exec or exited since (process_table_retire) */
	bool exited;                /* seen gone while the recording ran */
	bool released;              /* exited or retired, every record named: tables freed */
	bool awaiting_exec;         /* opened around an exec (recorder.c): not inspected yet */
	struct proc_symbolizer *symbolizer; /* symbols/; NULL when /proc could not be read */
	struct java_process *java;  /* jvm/; NULL unless libjvm.so is mapped */
	struct executor *executor;  /* spark/; NULL unless a Spark executor */
	struct python_process *python; /* python/; NULL unless CPython we can walk */
	struct perf_map *perf_map;  /* not a JVM: the perf map it writes, if any */
	uint64_t perf_map_read_ns;  /* when it was last read */
	pid_t served;               /* a PySpark worker or daemon: its executor's pid */
	bool python_settled;        /* looked at for CPython: found, or never will be */
	uint64_t last_python_check_ns; /* when a python process was last looked at */
	uint64_t served_check_ns;   /* when its executor was last looked for */
	uint64_t python_by[2];      /* samples attributed: sole task, epoch rule */
	struct recorder *recorder;  /* whose it is: callbacks about it get the process */
	uint64_t first_seen_ns;
	uint64_t address_space;     /* proc_address_space_id when inspected; 0: unknown */
	uint64_t last_jvm_check_ns; /* when a "java" process was last checked for libjvm.so */
	uint64_t java_walked_ns;    /* when the stack walker got its HotSpot layout; 0: never */
	uint64_t cpu_samples;
	uint64_t off_cpu_ns;
	uint64_t unknown_user_frames;
	uint64_t last_record_ns;    /* when its newest record arrived */
	uint32_t pending;           /* its records still waiting to be named */
};

struct process_table;

struct process_table *process_table_new(void);
/* Frees the processes; free_fn releases what the owner attached to each. */
void process_table_free(struct process_table *table,
			void (*free_fn)(struct process *p, void *ctx), void *ctx);

/* Returns pid's entry, creating a zeroed one (with pid, comm and label read
 * from /proc, or from fallback_comm when the process is already gone) when
 * new; *created says which. NULL when out of memory. */
struct process *process_table_get(struct process_table *table, pid_t pid,
				  const char *fallback_comm, bool *created);
struct process *process_table_find(struct process_table *table, pid_t pid);
/* Reads p's comm and label again from /proc; kept when it is gone. */
void process_table_rename(struct process *p);

/* pid ran exec or exited: its entry stays valid (and visited) but is no
 * longer found by pid, so the next get() creates a fresh one for the new
 * program (or the process that reuses the pid). */
void process_table_retire(struct process_table *table, pid_t pid);

/* Retired entries that are released (their tables freed) leave the active
 * visits: they stay for process_table_foreach (the summary) only. */
void process_table_settle(struct process_table *table);

/* Visits every entry: the settled, then the retired, then the live in the
 * order they were first seen.  Stops when fn returns non-zero and returns
 * that. */
int process_table_foreach(struct process_table *table,
			  int (*fn)(struct process *p, void *ctx), void *ctx);
/* The same without the settled: what polls and sweeps need to look at. */
int process_table_foreach_active(struct process_table *table,
				 int (*fn)(struct process *p, void *ctx), void *ctx);
size_t process_table_count(const struct process_table *table);

#endif

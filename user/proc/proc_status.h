/* proc_status.h - the fields of /proc/PID/status that sparkprof needs.
 *
 * proc_status_parse() reads a status file from a buffer (it never trusts the
 * buffer: no NUL needed, any length, any garbage); proc_status_read() reads
 * /proc/PID/status and parses it.
 */
#ifndef SPARKPROF_PROC_STATUS_H
#define SPARKPROF_PROC_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Bits of the present mask: which lines were found and well formed. */
enum proc_status_field {
	PROC_STATUS_NAME = 1u << 0,
	PROC_STATUS_TGID = 1u << 1,
	PROC_STATUS_UID = 1u << 2,
	PROC_STATUS_GID = 1u << 3,
	PROC_STATUS_NSTGID = 1u << 4,
	PROC_STATUS_SIGCGT = 1u << 5,
	PROC_STATUS_SIGIGN = 1u << 6,
	PROC_STATUS_SIGBLK = 1u << 7,
	PROC_STATUS_THREADS = 1u << 8,
	PROC_STATUS_PPID = 1u << 9,
	PROC_STATUS_NSPID = 1u << 10,
	PROC_STATUS_VMRSS = 1u << 11,
};

/* How many nested pid namespaces we keep NStgid values for (the kernel
 * allows 32 levels). */
#define PROC_STATUS_MAX_NS_LEVELS 33

struct proc_status {
	unsigned present;		/* enum proc_status_field bits */
	char name[16];			/* comm, NUL-terminated, may be cut */
	pid_t tgid;
	pid_t ppid;			/* 0: no parent in our pid namespace */
	uid_t uid[4];			/* real, effective, saved, filesystem */
	gid_t gid[4];
	/* NStgid: the thread-group id in each pid namespace, outermost (the
	 * reader's) first; the last one is what the process sees itself. */
	pid_t nstgid[PROC_STATUS_MAX_NS_LEVELS];
	unsigned nstgid_levels;
	pid_t nspid[PROC_STATUS_MAX_NS_LEVELS]; /* NSpid: the same for the thread */
	unsigned nspid_levels;
	uint64_t sig_caught;		/* SigCgt: bit n-1 set = signal n caught */
	uint64_t sig_ignored;		/* SigIgn */
	uint64_t sig_blocked;		/* SigBlk (of the thread read) */
	unsigned threads;
	uint64_t vm_rss_kib;		/* VmRSS: resident memory (none for a kernel thread) */
};

/* Parses a status file's text. Returns 0 (see out->present for what was
 * found), or -EINVAL if buf is NULL with a non-zero len. */
int proc_status_parse(const char *buf, size_t len, struct proc_status *out);

/* Reads and parses /proc/PID/status. Returns 0, or -errno (-ENOENT when the
 * process does not exist). */
int proc_status_read(pid_t pid, struct proc_status *out);
/* The same for thread tid of process pid (/proc/PID/task/TID/status). */
int proc_status_read_task(pid_t pid, pid_t tid, struct proc_status *out);

/* The effective uid and gid; the pid the process sees itself as (the last
 * NStgid, or the tgid on kernels without NStgid). */
static inline uid_t proc_status_euid(const struct proc_status *st) { return st->uid[1]; }
static inline gid_t proc_status_egid(const struct proc_status *st) { return st->gid[1]; }
pid_t proc_status_ns_pid(const struct proc_status *st);
/* The id the thread read sees itself as (the last NSpid); -1 without NSpid. */
pid_t proc_status_ns_tid(const struct proc_status *st);

/* Whether signal sig (1..64) has a handler installed. */
bool proc_status_catches(const struct proc_status *st, int sig);

#endif

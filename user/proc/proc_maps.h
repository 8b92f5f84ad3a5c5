/* proc_maps.h - parse the text of /proc/PID/maps into mappings.
 *
 * Line format: "START-END PERMS OFFSET MAJOR:MINOR INODE [PATH]", where PATH
 * runs to the end of the line and may contain spaces; a file deleted after
 * it was mapped ends in " (deleted)".
 */
#ifndef SPARKPROF_PROC_MAPS_H
#define SPARKPROF_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum proc_map_kind {
	PROC_MAP_FILE,     /* backed by a file: PATH starts with '/' */
	PROC_MAP_ANON,     /* no file: empty path, [anon:NAME], [heap], [stack...],
			    * //anon, /dev/zero, /anon_hugepage: JIT code lives here */
	PROC_MAP_VDSO,     /* [vdso] */
	PROC_MAP_SPECIAL,  /* any other [name]: [vvar], [vsyscall], [uprobes], ... */
};

struct proc_map {
	uint64_t start, end;     /* [start, end) */
	uint64_t offset;         /* file offset of start */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	char perms[5];           /* "r-xp" */
	enum proc_map_kind kind;
	bool deleted;            /* path ended in " (deleted)" (stripped from path) */
	const char *path;        /* "" when none; owned by the proc_maps */
};

struct proc_maps {
	struct proc_map *maps;   /* in file order (ascending for real maps files) */
	size_t count;
	size_t bad_lines;        /* malformed lines that were skipped */
	char *strings;           /* internal: the block holding every path */
};

static inline bool proc_map_is_exec(const struct proc_map *m)
{
	return m->perms[2] == 'x';
}

/* Parses buf[0..len); never fails on bad content (bad lines are counted and
 * skipped).  NULL and errno only when out of memory. */
struct proc_maps *proc_maps_parse(const char *buf, size_t len);

/* Reads and parses /proc/PID/maps.  NULL and errno (ESRCH when the process
 * is gone). */
struct proc_maps *proc_maps_read(pid_t pid);

/* The mapping containing addr, or NULL.  Needs maps sorted and disjoint, as
 * the kernel writes them; proc_maps_parse drops lines that break the order. */
const struct proc_map *proc_maps_find(const struct proc_maps *pm, uint64_t addr);

void proc_maps_free(struct proc_maps *pm);

#endif

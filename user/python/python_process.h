/* python_process.h - one CPython process, as the Python walker and the
 * naming of its frames need it.
 *
 * Opening finds the interpreter in the process's maps (a libpython3.X
 * shared object that exports _PyRuntime, else the executable), its version
 * (Py_Version, 3.13's debug offsets, or 3.10's file name) and the main
 * interpreter's address; it then describes the process to the BPF walker
 * (bpf/python_walk.bpf.h). The walker records each Python frame as its code
 * object and instruction; they are named here, "qualname (file.py:line)",
 * by reading the code object out of the process once (its memory is the
 * user's: every read is checked and bounded).
 */
#ifndef SPARKPROF_PYTHON_PROCESS_H
#define SPARKPROF_PYTHON_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/frame.h"
#include "sparkprof_events.h"

struct python_process;

/* pid's CPython. -ENOENT: not CPython (no message); -ENOTSUP: a version or
 * build we cannot walk; -EAGAIN: its interpreter is not set up yet (look
 * again later); another -errno. Each but -ENOENT and -EAGAIN after one
 * sp_warn/sp_debug line naming the pid. */
int python_process_open(pid_t pid, struct python_process **out);
/* Frees the code-object cache and keeps the names handed out: outputs still
 * to be written point into them. */
void python_process_release(struct python_process *pp);
void python_process_free(struct python_process *pp);

/* "3.12" */
const char *python_process_version(const struct python_process *pp);
/* The walker's description (start_time left 0). */
void python_process_walker_info(const struct python_process *pp, struct sp_python_info *out);
/* Whether addr is code of the interpreter itself (libpython or the
 * executable): above the Python frames, native frames there are the eval
 * loop, whose frame-pointer-less stack cannot be followed. */
bool python_process_in_interpreter(void *pp, uint64_t addr);

/* Names a Python frame the walker recorded (SP_USTACK_PYTHON_TAG) as of ts:
 * 1, or 0 when it cannot be read (then the frame reads "[python]"). For
 * struct user_names. */
int python_process_name_frame(void *pp, uint64_t frame, uint64_t ts, struct frame *out);

struct python_process_stats {
	uint64_t frames_named, frames_unnamed;
	uint64_t code_objects;      /* read from the process */
	size_t memory;              /* heap bytes: code cache and names */
};
void python_process_stats(const struct python_process *pp, struct python_process_stats *out);

#endif

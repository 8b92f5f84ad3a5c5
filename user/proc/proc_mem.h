/* proc_mem.h - reading another process's memory (process_vm_readv), with
 * the address range checked first: the addresses come from the process
 * itself (its structures), so any value may arrive.
 */
#ifndef SPARKPROF_PROC_MEM_H
#define SPARKPROF_PROC_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROC_USER_ADDR_END (1ULL << 47) /* x86-64 user space */

/* Copies n bytes at addr of pid. 0, -EFAULT when the range is not user
 * space (0 included) or not all of it is readable, -ESRCH when the process
 * is gone, or another -errno of process_vm_readv. */
int proc_mem_read(pid_t pid, uint64_t addr, void *dst, size_t n);

#endif

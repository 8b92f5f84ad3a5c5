/* proc_mem.c - see proc_mem.h. */
#include <errno.h>
#include <sys/uio.h>

#include "proc/proc_mem.h"

int proc_mem_read(pid_t pid, uint64_t addr, void *dst, size_t n)
{
	struct iovec local = { dst, n }, remote = { (void *)(uintptr_t)addr, n };
	ssize_t got;

	if (n == 0)
		return 0;
	if (!addr || addr >= PROC_USER_ADDR_END || n > PROC_USER_ADDR_END - addr)
		return -EFAULT;
	got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (got == (ssize_t)n)
		return 0;
	return got < 0 ? -errno : -EFAULT;
}

/* test_proc_status.c - the /proc/PID/status parser, on text and on live
 * processes. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc/proc_status.h"
#include "tap.h"

static const char sample[] =
	"Name:\tjava\n"
	"Umask:\t0022\n"
	"State:\tS (sleeping)\n"
	"Tgid:\t4242\n"
	"Ngid:\t0\n"
	"Pid:\t4242\n"
	"PPid:\t1\n"
	"Uid:\t1000\t1001\t1002\t1003\n"
	"Gid:\t2000\t2001\t2002\t2003\n"
	"Groups:\t4 24 27\n"
	"NStgid:\t4242\t77\t1\n"
	"NSpid:\t4242\t77\t1\n"
	"VmRSS:\t  123456 kB\n"
	"Threads:\t23\n"
	"SigBlk:\t0000000000000000\n"
	"SigIgn:\t0000000000001000\n"
	"SigCgt:\t2000000181005ccf\n";

static void test_sample(void)
{
	struct proc_status st;

	CHECK(proc_status_parse(sample, strlen(sample), &st) == 0, "sample parses");
	CHECK_STR(st.name, "java", "name");
	CHECK(st.tgid == 4242, "tgid");
	CHECK((st.present & PROC_STATUS_PPID) && st.ppid == 1, "parent pid");
	CHECK((st.present & PROC_STATUS_VMRSS) && st.vm_rss_kib == 123456, "resident memory");
	CHECK(st.uid[0] == 1000 && proc_status_euid(&st) == 1001 && st.uid[3] == 1003,
	      "uid fields, effective second");
	CHECK(st.gid[0] == 2000 && proc_status_egid(&st) == 2001, "gid fields");
	CHECK(st.nstgid_levels == 3 && st.nstgid[0] == 4242, "three pid namespace levels");
	CHECK(proc_status_ns_pid(&st) == 1, "the innermost pid is the last NStgid");
	CHECK(st.nspid_levels == 3 && proc_status_ns_tid(&st) == 1,
	      "the thread's innermost id is the last NSpid");
	CHECK(st.threads == 23, "threads");
	/* 0x...5ccf: bit 2 (SIGQUIT=3) set */
	CHECK(proc_status_catches(&st, SIGQUIT), "SIGQUIT caught");
	CHECK(!proc_status_catches(&st, SIGUSR1) && proc_status_catches(&st, SIGUSR2),
	      "SIGUSR1 (bit 9) clear, SIGUSR2 (bit 11) set");
	CHECK(st.sig_ignored == 0x1000, "SigIgn");
	CHECK(!proc_status_catches(&st, 0) && !proc_status_catches(&st, 65),
	      "out-of-range signals are not caught");
	CHECK((st.present & (PROC_STATUS_UID | PROC_STATUS_GID | PROC_STATUS_NSTGID |
			     PROC_STATUS_SIGCGT)) ==
	      (PROC_STATUS_UID | PROC_STATUS_GID | PROC_STATUS_NSTGID | PROC_STATUS_SIGCGT),
	      "present mask");
}

static void test_malformed(void)
{
	struct proc_status st;
	const char *nspid_garbage = "NSpid:\t17 x\n", *nspid_absurd = "NSpid:\t99999999999\n";

	CHECK(proc_status_parse(nspid_garbage, strlen(nspid_garbage), &st) == 0 &&
	      proc_status_ns_tid(&st) == -1, "NSpid with garbage is refused");
	CHECK(proc_status_parse(nspid_absurd, strlen(nspid_absurd), &st) == 0 &&
	      proc_status_ns_tid(&st) == -1, "an absurd NSpid is refused");
	CHECK(proc_status_parse("Pid:\t17\n", 8, &st) == 0 && proc_status_ns_tid(&st) == -1,
	      "no NSpid line: -1");
	static const char bad_uid[] = "Uid:\t1000\t1001\n";
	static const char big_uid[] = "Uid:\t99999999999\t1\t1\t1\n";
	static const char bad_sig[] = "SigCgt:\t00000000000000zz\n";
	static const char long_sig[] = "SigCgt:\t00000000000000000\n";
	static const char no_nl[] = "Tgid:\t12";
	static const char zero_ns[] = "NStgid:\t12\t0\n";
	static const char no_nstgid[] = "Tgid:\t99\nUid:\t0\t0\t0\t0\n";
	char many[1024] = "NStgid:";

	CHECK(proc_status_parse(bad_uid, strlen(bad_uid), &st) == 0 &&
	      !(st.present & PROC_STATUS_UID), "a short Uid line is not taken");
	CHECK(proc_status_parse(big_uid, strlen(big_uid), &st) == 0 &&
	      !(st.present & PROC_STATUS_UID), "an out-of-range uid is not taken");
	CHECK(proc_status_parse(bad_sig, strlen(bad_sig), &st) == 0 &&
	      !(st.present & PROC_STATUS_SIGCGT), "a non-hex SigCgt is not taken");
	static const char rss_mb[] = "VmRSS:\t12 MB\n", rss_huge[] = "VmRSS:\t99999999999999999 kB\n";

	CHECK(proc_status_parse(rss_mb, strlen(rss_mb), &st) == 0 &&
	      !(st.present & PROC_STATUS_VMRSS), "VmRSS in a unit other than kB is not taken");
	CHECK(proc_status_parse(rss_huge, strlen(rss_huge), &st) == 0 &&
	      !(st.present & PROC_STATUS_VMRSS), "a VmRSS over 64 bits of bytes is not taken");
	CHECK(proc_status_parse(long_sig, strlen(long_sig), &st) == 0 &&
	      !(st.present & PROC_STATUS_SIGCGT), "a 17-digit SigCgt is not taken");
	CHECK(proc_status_parse(no_nl, strlen(no_nl), &st) == 0 && st.tgid == 12,
	      "a last line without newline is read");
	CHECK(proc_status_parse(no_nl, 6, &st) == 0 && !(st.present & PROC_STATUS_TGID),
	      "a cut line holding no number is not taken");
	CHECK(proc_status_parse(zero_ns, strlen(zero_ns), &st) == 0 &&
	      !(st.present & PROC_STATUS_NSTGID), "pid 0 in NStgid is rejected");
	CHECK(proc_status_parse(no_nstgid, strlen(no_nstgid), &st) == 0 &&
	      proc_status_ns_pid(&st) == 99, "without NStgid the ns pid is the tgid");
	for (int i = 0; i < 40; i++)
		strcat(many, " 5");
	strcat(many, "\n");
	CHECK(proc_status_parse(many, strlen(many), &st) == 0 &&
	      !(st.present & PROC_STATUS_NSTGID), "more levels than the kernel allows: rejected");
	{
		static const char twice[] = "NStgid:\t10\t1\nNStgid:\t\nUid:\t1\t2\t3\t4\n"
					    "Uid:\t7\t8\n";

		proc_status_parse(twice, strlen(twice), &st);
		CHECK(st.nstgid_levels == 2 && proc_status_ns_pid(&st) == 1,
		      "a bad repeated NStgid line leaves the good one");
		CHECK(st.uid[0] == 1 && st.uid[1] == 2, "a bad repeated Uid line leaves the good one");
	}
	CHECK(proc_status_parse(NULL, 5, &st) == -EINVAL, "NULL with a length is refused");
	CHECK(proc_status_parse("", 0, &st) == 0 && st.present == 0, "empty text: nothing found");
}

static void on_quit(int sig)
{
	(void)sig;
}

static void test_live(void)
{
	struct proc_status st;
	int fds[2];
	pid_t child;
	char c;
	bool ready;
	int rc;

	rc = proc_status_read(getpid(), &st);
	CHECK(rc == 0, "reads our own status");
	CHECK(st.tgid == getpid() && proc_status_euid(&st) == geteuid() &&
	      proc_status_egid(&st) == getegid(), "our tgid, euid and egid");
	CHECK(proc_status_ns_pid(&st) == getpid(), "in our own pid namespace the ns pid is the pid");
	CHECK((st.present & PROC_STATUS_VMRSS) && st.vm_rss_kib > 100 && st.vm_rss_kib < 1u << 20,
	      "our resident memory (%llu KiB)", (unsigned long long)st.vm_rss_kib);
	CHECK(!proc_status_catches(&st, SIGQUIT), "we do not catch SIGQUIT");
	rc = proc_status_read(0x7ffffff0, &st);
	CHECK(rc == -ENOENT, "a missing process gives -ENOENT");

	/* A child with a SIGQUIT handler shows it in SigCgt. */
	if (pipe(fds) < 0)
		return;
	fflush(stdout);
	child = fork();
	if (child == 0) {
		signal(SIGQUIT, on_quit);
		if (write(fds[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ready = read(fds[0], &c, 1) == 1;
	CHECK(ready, "child is ready");
	rc = proc_status_read(child, &st);
	CHECK(rc == 0 && proc_status_catches(&st, SIGQUIT),
	      "a process with a SIGQUIT handler catches SIGQUIT");
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(fds[0]);
	close(fds[1]);
}

int main(void)
{
	test_sample();
	test_malformed();
	test_live();
	TAP_DONE();
}

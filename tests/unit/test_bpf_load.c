/* test_bpf_load.c - the verifier's reason, found in real kernels' logs
 * (tests/fuzz/corpus/verifier_log/, recorded in the kernel-matrix VMs) and
 * in made-up ones. Run from the repository's root. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampler/bpf_load.h"
#include "tap.h"

#define LOGS "tests/fuzz/corpus/verifier_log/"

static const char *reason_of(const char *log, size_t len)
{
	static char out[256];

	verifier_reason(log, len, out, sizeof(out));
	return out;
}

static const char *reason_in_file(const char *path)
{
	static char buf[1 << 20];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;

	if (f)
		fclose(f);
	return reason_of(buf, n);
}

int main(void)
{
	const char *made_up =
		"0: R1=ctx(off=0,imm=0) R10=fp0\n"
		"; int f(void *ctx)\n"
		"0: (bf) r6 = r1                       ; R1=ctx(off=0,imm=0) R6_w=ctx(off=0,imm=0)\n"
		"from 12 to 15: R0=scalar() R10=fp0\n"
		"15: (85) call bpf_loop#181\n"
		"unknown func bpf_loop#181\n"
		"processed 16 insns (limit 1000000) max_states_per_insn 0 total_states 1\n";
	const char *trace_only = "0: R1=ctx() R10=fp0\n1: (b7) r0 = 0\n2: (95) exit\n"
				 "R0_w=0\nframe1: R1=1\nprocessed 3 insns\n";
	char small[8], line[300];

	CHECK_STR(reason_in_file(LOGS "linux-6.1-spilled-length.log"),
		  "R2 min value is negative, either use unsigned or 'var &= const'",
		  "Linux 6.1 refusing a length clang spilled before its check");
	CHECK_STR(reason_in_file(LOGS "linux-5.10-func-info.log"),
		  "number of funcs in func_info doesn't match number of subprogs",
		  "Linux 5.10 refusing bpf_loop's callbacks");
	CHECK_STR(reason_of(made_up, strlen(made_up)), "unknown func bpf_loop#181",
		  "the reason after instructions, states and branches");
	CHECK(verifier_reason(trace_only, strlen(trace_only), line, sizeof(line)) == 0 &&
	      !line[0], "a log of traces alone has no reason");
	CHECK(verifier_reason("", 0, line, sizeof(line)) == 0, "an empty log");
	CHECK(verifier_reason("bad thing\n", 10, small, sizeof(small)) == 7 &&
	      !strcmp(small, "bad thi"), "a long reason is cut to the room given");
	CHECK_STR(reason_of("R1 invalid\tmem\x01\n", 15), "R1 invalid?mem?",
		  "control characters do not reach the terminal");
	CHECK_STR(reason_of("first\nsecond\0hidden\n", 20), "second",
		  "the log ends at its first NUL");
	CHECK(verifier_reason("x\n", 2, line, 0) == 0, "no room at all");
	TAP_DONE();
}

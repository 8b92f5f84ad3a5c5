"""A program with a large ELF symbol table, built in a second: a C main that
spins in spin_until for argv[1] seconds, linked with an assembler file of
one-byte functions (compiling that many C functions takes minutes)."""
import os
import subprocess

SPIN = r"""
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) long spin_until(double seconds)
{
	struct timespec a, b;
	long n = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 10000; i++)
			n += i ^ (n >> 3);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < seconds);
	return n;
}

int main(int argc, char **argv)
{
	return spin_until(atof(argv[1])) == 42;
}
"""


def many_symbols_program(folder, name, symbols):
    """Builds folder/name with symbols extra functions and no build-id (so
    that copies of it share no table); returns its path."""
    src, asm, out = (os.path.join(folder, f) for f in ("spin.c", "syms.s", name))
    with open(src, "w") as f:
        f.write(SPIN)
    with open(asm, "w") as f:
        f.write('\t.section .note.GNU-stack,"",@progbits\n\t.text\n')
        for i in range(symbols):
            f.write(f"\t.globl f_{i:06d}\n\t.type f_{i:06d},@function\n"
                    f"f_{i:06d}:\n\tret\n\t.size f_{i:06d},1\n")
    subprocess.run(["gcc", "-O1", "-fno-omit-frame-pointer", "-Wl,--build-id=none", "-o", out,
                    src, asm], check=True)
    return out

/* demangle.h - readable names for C++ (Itanium ABI) symbols.
 *
 * Names are shown the way perf and async-profiler show native frames:
 * demangled, without the parameter list and without the return type that
 * template functions carry ("JavaThread::thread_main_inner",
 * "WeakProcessor::weak_oops_do<G1STWIsAliveClosure, G1KeepAliveClosure>").  The C++
 * runtime's demangler (libstdc++'s __cxa_demangle) is looked up at run time,
 * so the build needs no C++ runtime; without libstdc++ names stay mangled.
 */
#ifndef SPARKPROF_DEMANGLE_H
#define SPARKPROF_DEMANGLE_H

#include <stdbool.h>

/* Whether name looks like a mangled C++ symbol ("_Z..."). */
bool demangle_is_mangled(const char *name);

/* A malloc'd readable form of a mangled name, or NULL (name not mangled,
 * not valid, no demangler available, out of memory). */
char *demangle_symbol(const char *name);

/* Cuts the parameter list (and what follows it: const, [clone .cold]) and
 * a template function's return type off a demangled name, in place:
 * "A::f(int) const" -> "A::f", "void g<int>(int)" -> "g<int>". */
void demangle_cut_arguments(char *name);

#endif

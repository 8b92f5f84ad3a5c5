/* frame.h - one named stack frame, as every symbolizer returns it and every
 * writer (folded, JFR) consumes it.
 *
 * Names are owned by the module that produced them and stay valid until the
 * recording ends; writers copy nothing.
 */
#ifndef SPARKPROF_FRAME_H
#define SPARKPROF_FRAME_H

enum frame_type {
	FRAME_NATIVE = 0,    /* native code in an ELF file (or unknown) */
	FRAME_CPP,           /* native code of the JVM itself (libjvm.so) */
	FRAME_KERNEL,        /* kernel code */
	FRAME_JIT,           /* Java method compiled by the JIT */
	FRAME_INLINED,       /* Java method inlined into a compiled caller */
	FRAME_INTERPRETED,   /* Java method run by the interpreter */
	FRAME_PYTHON,        /* Python function run by CPython: "name (file.py:line)" */
	FRAME_TYPE_MAX,
};

struct frame {
	const char *name;    /* e.g. "org/apache/spark/executor/Executor$TaskRunner.run" */
	enum frame_type type;
};

static inline int frame_type_is_java(enum frame_type t)
{
	return t == FRAME_JIT || t == FRAME_INLINED || t == FRAME_INTERPRETED;
}

#endif

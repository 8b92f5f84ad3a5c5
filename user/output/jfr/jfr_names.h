/* jfr_names.h - turning frame and thread names into JFR symbols.
 *
 * Names come from outside (ELF symbols, perf maps, thread names) and may
 * hold any bytes.  JFR symbols must be UTF-8; every reader decodes them with
 * Java's decoder, which replaces each ill-formed sequence by U+FFFD.  We do
 * the same replacement (Unicode "maximal subpart" rule, as Python's
 * bytes.decode("utf-8", "replace") does) so that every reader, and our
 * tests, see the same text.
 */
#ifndef SPARKPROF_JFR_NAMES_H
#define SPARKPROF_JFR_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#include "output/jfr/jfr_buf.h"

/* True when (s, len) is well-formed UTF-8. */
bool jfr_utf8_valid(const char *s, size_t len);
/* Appends (s, len) to out with every ill-formed sequence replaced by
 * U+FFFD (EF BF BD). */
void jfr_utf8_append(struct jfr_buf *out, const char *s, size_t len);

/* A Java frame name "pkg/Class$Inner.method" split into class and method.
 * The split is at the last '.' before any '(' (a signature may follow the
 * method).  has_class is false when there is no such '.', or one side would
 * be empty ("run", ".run", "Foo."): then method is the whole name. */
struct jfr_java_name {
	bool has_class;
	const char *cls;
	size_t cls_len;
	const char *method;
	size_t method_len;
};
void jfr_split_java_name(const char *name, size_t len, struct jfr_java_name *out);

/* A Python frame name "qualname (file.py:line)" split into the function
 * (method), the file (class) and the line (0: none, as in
 * "qualname (file.py)"). False when name is not of that form. */
struct jfr_python_name {
	const char *function, *file;
	size_t function_len, file_len;
	uint32_t line;
};
bool jfr_split_python_name(const char *name, size_t len, struct jfr_python_name *out);

#endif

/* record_attach.h - `record --attach`: load the sparkprof helper into every
 * JVM the recording profiles that does not have it yet, before sampling
 * starts, so their JIT code and full thread names are known. */
#ifndef SPARKPROF_RECORD_ATTACH_H
#define SPARKPROF_RECORD_ATTACH_H

#include "record/record_options.h"

/* Attaches to the JVMs among opts->pids (all JVMs on the node when none).
 * A JVM that cannot be attached gets a warning naming the cause; the
 * recording goes on. Returns how many JVMs now have the helper loaded by
 * this call. */
int record_attach_jvms(const struct record_options *opts);

#endif

/* sparkprof_helper_log.h - what the JVMTI helper publishes, shared by the
 * helper (tools/jvmti/) and the profiler's reader (user/jvm/jvm_helper_log.c).
 *
 * The helper appends to /tmp/sparkprof-<PID>.log (PID as the JVM sees
 * itself, i.e. inside its PID namespace), goes on in a new file at the same
 * path past a size (see G), and removes it when the JVM exits unless told
 * to keep it.  The file is text, one record per line, every line written
 * with a single write() on an O_APPEND descriptor, so a concurrent reader
 * sees whole lines plus at most one trailing partial line, which it must
 * ignore until its '\n' arrives.  Records are written in timestamp order
 * (the helper stamps them under the lock that serialises the writes), but
 * for a new file's restated part.  All timestamps are CLOCK_MONOTONIC nanoseconds, decimal.
 * Addresses and sizes are hex without 0x.  Fields are separated by one space;
 * a NAME is the rest of the line; in 'I' records several names follow, each
 * separated by one '\t'.  Names are escaped: bytes < 0x20, 0x7f and '\\' are
 * written as "\xHH", so a name never holds a '\t' or '\n' (spaces are kept: thread names
 * have them).
 *
 *   H <version> <pid> <ts> <mode> <jvm>    first line; mode is "start",
 *                                          "attach" or "continued" (see
 *                                          G); jvm is the VM's
 *                                          java.vm.version (rest of line)
 *   L <ts> <id> <start> <size> NAME        compiled method installed
 *   D <ts> <id> <start> <size> NAME        other code blob (stub, interpreter)
 *   N <n> NAME                             method name number <n>, for J
 *                                          records; numbers count up by one
 *                                          in file order, from 1 (in a
 *                                          continued file from its first
 *                                          N); a name may come again under
 *                                          a newer number, and a continued
 *                                          file restates N records
 *   J <id> <start> <end> <n> <n>...        inlined frames of compiled method
 *                                          <id> for PCs [start, end), given
 *                                          as offsets from its start: the
 *                                          numbers of their names (N records
 *                                          before it), innermost first,
 *                                          without the compiled method
 *                                          itself; follows its L record
 *   I <id> <start> <end> NAME\tNAME...     the same with addresses and names
 *                                          (written by older helpers; a J
 *                                          record is about a fifth of its
 *                                          size)
 *   U <ts> <id>                            compiled method <id> unloaded
 *   T <ts> <tid> NAME                      OS thread <tid> (its gettid() in
 *                                          the JVM's namespace) is named NAME
 *                                          from <ts> on (start or rename)
 *   X <ts> <tid>                           thread <tid> ended
 *   S <ts> <tid> idle|busy                 task thread <tid> went idle (parked
 *                                          in ThreadPoolExecutor.getTask) or
 *                                          busy (running a task)
 *   R <ts> <what>                          replay of pre-existing state after
 *                                          an attach is complete ("code",
 *                                          "threads"), or the end of a
 *                                          continued file's restated part
 *                                          ("snapshot")
 *   G <ts>                                 last record of a file: the log
 *                                          goes on in a new file, already
 *                                          renamed to the same path.  That
 *                                          file ("continued" header) first
 *                                          restates what is still true, up
 *                                          to "R <ts> snapshot": N records
 *                                          in use, T (and S idle) of live
 *                                          threads, live L and D records
 *                                          with their J records, copied
 *                                          with their original times and
 *                                          ids (so not in time order).  A
 *                                          reader that read the old file
 *                                          skips that part.
 *   K <ts>                                 heartbeat, every interval: the
 *                                          helper was alive at <ts>
 *
 * ids count L and D records from 1 in file order.  Unknown record letters
 * are skipped by readers, so new kinds can be added without a version bump.
 *
 * Timing caveat: HotSpot posts CompiledMethodLoad/Unload from its
 * ServiceThread, after the fact.  An L's <ts> is later than the install (the
 * profiler names nothing there before <ts>), and a U's <ts> is later than
 * the moment the method stopped running, so the memory may already hold a
 * newer method.  The reader's rule (user/jvm/jvm_helper_log.h) treats the last
 * SPARKPROF_HELPER_REUSE_GUARD_NS before a U as ambiguous when the range is
 * later reused.
 */
#ifndef SPARKPROF_HELPER_LOG_H
#define SPARKPROF_HELPER_LOG_H

#define SPARKPROF_HELPER_LOG_VERSION 1
/* printf format of the log's path inside the JVM's mount namespace. */
#define SPARKPROF_HELPER_LOG_FMT "/tmp/sparkprof-%d.log"
/* The perf map the helper keeps current (rewritten atomically). */
#define SPARKPROF_HELPER_MAP_FMT "/tmp/perf-%d.map"
/* Longest line the helper writes; longer inline chains are cut short. */
#define SPARKPROF_HELPER_MAX_LINE 8192
/* Window before an unload record during which a reused address is ambiguous. */
#define SPARKPROF_HELPER_REUSE_GUARD_NS 100000000ull

#endif

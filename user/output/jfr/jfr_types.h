/* jfr_types.h - the type ids and enum keys of the JFR files sparkprof
 * writes, shared by the metadata, the constant pools and the events.
 *
 * The layout follows shared/docs/jfr-format.md §6-§7 (checked against JDK 17
 * and 25 `jfr`, JMC's parser and async-profiler's converter).  Ids are
 * arbitrary but fixed; FrameType keys are not: async-profiler's converter
 * uses the key itself as its frame type.
 */
#ifndef SPARKPROF_JFR_TYPES_H
#define SPARKPROF_JFR_TYPES_H

enum jfr_type_id {
	JFR_TYPE_METADATA = 0,           /* event type ids 0 and 1 are reserved */
	JFR_TYPE_CONSTANT_POOL = 1,
	JFR_TYPE_BOOLEAN = 4,
	JFR_TYPE_CHAR = 5,
	JFR_TYPE_FLOAT = 6,
	JFR_TYPE_DOUBLE = 7,
	JFR_TYPE_BYTE = 8,
	JFR_TYPE_SHORT = 9,
	JFR_TYPE_INT = 10,
	JFR_TYPE_LONG = 11,
	JFR_TYPE_STRING = 20,
	JFR_TYPE_CLASS = 21,
	JFR_TYPE_THREAD = 22,
	JFR_TYPE_CLASS_LOADER = 23,
	JFR_TYPE_FRAME_TYPE = 24,
	JFR_TYPE_THREAD_STATE = 25,
	JFR_TYPE_STACK_TRACE = 26,
	JFR_TYPE_STACK_FRAME = 27,
	JFR_TYPE_METHOD = 28,
	JFR_TYPE_PACKAGE = 30,
	JFR_TYPE_SYMBOL = 31,
	JFR_EVENT_EXECUTION_SAMPLE = 101,
	JFR_EVENT_WALL_CLOCK_SAMPLE = 103,
	JFR_EVENT_ACTIVE_RECORDING = 107,
	JFR_EVENT_ACTIVE_SETTING = 108,
	JFR_EVENT_PROFILE_LABEL = 120,
	JFR_ANNOTATION_LABEL = 201,
	JFR_ANNOTATION_CATEGORY = 202,
	JFR_ANNOTATION_CONTENT_TYPE = 203,
	JFR_ANNOTATION_TIMESTAMP = 204,
	JFR_ANNOTATION_TIMESPAN = 205,
	JFR_ANNOTATION_DATA_AMOUNT = 206,
	JFR_ANNOTATION_UNSIGNED = 208,
	JFR_ANNOTATION_DESCRIPTION = 211,
};

/* jdk.types.FrameType keys (HotSpot's 0-3, async-profiler's 4-5). Its
 * converter knows keys up to 6 (C1-compiled, which we never write) and
 * fails on a larger one: Python frames take 6, named Python. */
enum jfr_frame_type_key {
	JFR_FRAME_INTERPRETED = 0,
	JFR_FRAME_JIT = 1,
	JFR_FRAME_INLINED = 2,
	JFR_FRAME_NATIVE = 3,
	JFR_FRAME_CPP = 4,
	JFR_FRAME_KERNEL = 5,
	JFR_FRAME_PYTHON = 6,
	JFR_FRAME_TYPE_COUNT,
};

/* jdk.types.ThreadState keys.  async-profiler's converter keeps exactly
 * STATE_DEFAULT for --cpu and every other state for --wall, and matches
 * --state NAME against the text after "STATE_", so each name has its own
 * prefix. */
enum jfr_thread_state_key {
	JFR_STATE_DEFAULT = 0,           /* on-CPU sample */
	JFR_STATE_RUNNABLE = 1,          /* wall sample of a thread on a CPU */
	JFR_STATE_PREEMPTED = 2,         /* runnable, waiting for a CPU */
	JFR_STATE_SLEEPING = 3,          /* interruptible wait */
	JFR_STATE_UNINTERRUPTIBLE = 4,   /* uninterruptible wait (disk I/O) */
	JFR_STATE_OTHER = 5,
	JFR_STATE_COUNT,
};

#endif

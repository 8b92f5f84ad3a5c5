/* jvm_process.h - finding the JVMs on this node and describing them.
 *
 * A process is a JVM when its maps hold libjvm.so (or, while it starts, its
 * executable is a `java` launcher). For each one we report who runs it, its
 * main class, its JDK, whether the sparkprof helper is loaded, and the JVM
 * flags that matter to a profiler. Everything is read from /proc, across
 * mount and pid namespaces (containers).
 *
 * The parsers of outside text (command line, environment, maps, the JDK's
 * `release` file) take a buffer and a length, trust neither, and are fuzzed.
 */
#ifndef SPARKPROF_JVM_PROCESS_H
#define SPARKPROF_JVM_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The basename of the sparkprof JVMTI helper, as it shows in maps. */
#define JVM_HELPER_BASENAME "libsparkprof-agent.so"

/* A boolean -XX flag: not given, or given as on/off (last one wins). */
enum jvm_flag { JVM_FLAG_UNSET = -1, JVM_FLAG_OFF = 0, JVM_FLAG_ON = 1 };

/* The JVM options that matter to sparkprof. */
struct jvm_flags {
	enum jvm_flag preserve_frame_pointer;	 /* -XX:+PreserveFramePointer */
	enum jvm_flag disable_attach;		 /* -XX:+DisableAttachMechanism */
	enum jvm_flag enable_dynamic_agent_loading; /* JDK 21+ */
	bool reduce_signal_usage;		 /* -Xrs */
	/* Options we could not see: an @argfile, -XX:Flags=, -XX:VMOptionsFile=.
	 * The flags above may then be incomplete. */
	bool incomplete;
};

enum jvm_main_kind {
	JVM_MAIN_NONE,		/* none found (e.g. `java -version`) */
	JVM_MAIN_CLASS,		/* a class name */
	JVM_MAIN_JAR,		/* -jar FILE: main is FILE */
	JVM_MAIN_MODULE,	/* -m MODULE[/CLASS] */
	JVM_MAIN_SOURCE,	/* java Prog.java (source-file mode) */
	JVM_MAIN_ARGFILE,	/* the rest came from @FILE, which we do not read */
	JVM_MAIN_OTHER,		/* not a java launcher: main is argv[0] */
};

#define JVM_MAIN_MAX 256

struct jvm_cmdline {
	enum jvm_main_kind main_kind;
	char main[JVM_MAIN_MAX];	/* NUL-terminated, cut to fit */
	bool main_truncated;
	bool java_launcher;		/* argv[0]'s basename is "java" */
	unsigned main_index;		/* argv index of main (0 if none) */
	struct jvm_flags flags;
};

/* Fresh flags: all unset. */
void jvm_flags_init(struct jvm_flags *flags);

/* Applies one JVM option (e.g. "-XX:+PreserveFramePointer") to flags. */
void jvm_flags_apply_option(struct jvm_flags *flags, const char *opt, size_t len);

/* Parses /proc/PID/cmdline (NUL-separated argv). The flags are applied on
 * top of out->flags as given: call jvm_flags_init() first (or apply
 * JAVA_TOOL_OPTIONS first, which the command line overrides). Returns 0, or
 * -EINVAL when buf is empty (kernel threads, zombies). */
int jvm_cmdline_parse(const char *buf, size_t len, struct jvm_cmdline *out);

/* Applies a whitespace-separated option string as the JVM reads
 * JAVA_TOOL_OPTIONS / _JAVA_OPTIONS / JDK_JAVA_OPTIONS (single and double
 * quotes group). */
void jvm_flags_apply_option_string(struct jvm_flags *flags, const char *buf, size_t len);

/* Finds NAME's value in an environ buffer (NUL-separated NAME=value).
 * Returns true and points *val and *vlen into buf. */
bool jvm_environ_get(const char *buf, size_t len, const char *name,
		     const char **val, size_t *vlen);

/* What /proc/PID/maps says about a process. */
struct jvm_maps_info {
	bool has_libjvm;
	char libjvm_path[4096];		/* as the process sees it, "" if cut */
	bool has_library;		/* the library asked about is mapped */
};

/* Scans maps text for libjvm.so and for a library whose basename is
 * library_basename (NULL: none), " (deleted)" or not. */
void jvm_maps_scan(const char *buf, size_t len, const char *library_basename,
		   struct jvm_maps_info *out);

/* Reads JAVA_VERSION="..." from a JDK `release` file into version (cut to
 * fit). Returns the major version (8 for "1.8.0_x", 17 for "17.0.9"), or 0
 * when there is none. */
int jvm_release_parse(const char *buf, size_t len, char *version, size_t version_len);

/* The major version in a Java version string, 0 if it is not one. */
int jvm_version_major(const char *version, size_t len);

/* One JVM on the node. */
struct jvm_info {
	pid_t pid;			/* host pid */
	pid_t ns_pid;			/* the pid it sees itself as */
	uid_t uid;			/* effective */
	gid_t gid;
	char user[64];			/* user name, or the uid in decimal */
	struct jvm_cmdline cmdline;
	struct jvm_flags flags;		/* environment and command line */
	char jdk_home[1024];		/* as the JVM sees it, "" if unknown */
	char jdk_version[64];		/* "17.0.15", "" if unknown */
	int jdk_major;			/* 0 if unknown */
	bool helper_loaded;		/* libsparkprof-agent.so is mapped */
};

/* Describes process pid. Returns 0, -ESRCH when there is no such process,
 * -ENOEXEC when it is not a JVM, or another -errno. */
int jvm_process_inspect(pid_t pid, struct jvm_info *out);

/* Whether a library with this basename is mapped into pid. Returns 1, 0,
 * or -errno (-ESRCH: no such process). */
int jvm_process_has_library(pid_t pid, const char *library_basename);

/* Every JVM on the node, sorted by pid. *out is malloc'ed (free it).
 * Processes that exit while we look are skipped. Returns 0 or -errno. */
int jvm_process_scan(struct jvm_info **out, size_t *count);

#endif

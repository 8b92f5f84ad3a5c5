/* otlp_profiles.h - segments of the sample store as one OTLP profiles
 * request (ExportProfilesServiceRequest of opentelemetry-proto v1.11.0,
 * proto/README.md), encoded by protobuf-c code generated from its .proto
 * files: what `convert DIR --otlp URL` sends, and what the recorder can
 * send each time a segment closes.
 *
 * A batch takes whole segments (their labels and samples, read back with
 * output/store_segment.h) and holds what the request needs, copied: the
 * segments can be freed once added. In the request:
 *  - one ResourceProfiles per process (pid and name: an exec makes another):
 *    host.name, process.pid,
 *    process.executable.name, spark.app.id and spark.executor.id where the
 *    process's samples carry them, and container.id, k8s.pod.name,
 *    k8s.pod.uid, k8s.namespace.name, k8s.node.name when the caller's
 *    resource_of knows them;
 *  - in it one Profile per sample type the recording has: CPU samples
 *    ("samples"/"count", period "cpu"/"nanoseconds" of one sample), wall
 *    time with --wall ("wall"/"nanoseconds": on-CPU samples times the
 *    period, plus off-CPU time) and off-CPU time with --off-cpu
 *    ("off_cpu"/"nanoseconds"), each spanning its segments' sample times;
 *  - samples aggregated by stack and attributes: thread.name, thread.id,
 *    spark.stage.id, spark.stage.attempt, spark.task.id (when known), and
 *    thread.state in the wall and off-CPU profiles;
 *  - the dictionary-based schema: one string, function, location, stack
 *    and attribute table for the request, entry 0 of each the zero value.
 *    A location is one frame: one line of its function, and the attribute
 *    profile.frame.type ("kernel", "native", "jvm", "cpython", as the
 *    semantic conventions name them); the function's file name keeps
 *    sparkprof's finer type ("[jit]", "[inlined]", "[interpreted]",
 *    "[c++]", "[kernel]", "[native]", "[python]"), as pprof files do.
 */
#ifndef SPARKPROF_OTLP_PROFILES_H
#define SPARKPROF_OTLP_PROFILES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "output/store_file.h"
#include "output/store_segment.h"

enum otlp_kind { OTLP_CPU, OTLP_WALL, OTLP_OFF_CPU, OTLP_KINDS };

/* What the caller knows of a process beyond the store's labels; "" for
 * unknown. */
struct otlp_resource_extra {
	char container_id[128];
	char k8s_pod_name[254], k8s_pod_uid[64], k8s_namespace_name[64], k8s_node_name[254];
};

struct otlp_batch_settings {
	const struct store_info *info;   /* the recording's (store_reader_info) */
	/* Fills *out for pid (zeroed before the call); NULL: nothing known. */
	void (*resource_of)(void *ctx, pid_t pid, struct otlp_resource_extra *out);
	void *ctx;
};

/* What a batch holds: samples added (CPU samples and off-CPU intervals)
 * and the sum of each profile's values. */
struct otlp_totals {
	uint64_t segments, samples;
	uint64_t cpu_samples;
	uint64_t values[OTLP_KINDS];     /* CPU: samples; wall, off-CPU: nanoseconds */
};

struct otlp_batch;

/* NULL (errno ENOMEM). settings->info is kept: it must outlive the batch. */
struct otlp_batch *otlp_batch_new(const struct otlp_batch_settings *settings);
void otlp_batch_free(struct otlp_batch *b);

/* Adds a segment's samples (those of kind SAMPLE_TASK carry nothing and
 * are skipped). first_ns and last_ns: its head's sample times. 0, or
 * -ENOMEM / -E2BIG (a table past what the request's int32 indices hold):
 * the batch is then unusable. */
int otlp_batch_add(struct otlp_batch *b, const struct store_labels *labels,
		   const struct store_samples *samples, uint64_t first_ns, uint64_t last_ns);

/* Reads segment i of r and adds it. 0 or -errno, after a message. */
int otlp_batch_add_segment(struct otlp_batch *b, struct store_reader *r, size_t i);

void otlp_batch_totals(const struct otlp_batch *b, struct otlp_totals *out);

/* The request's bytes (malloc'd) in *out. 0 or -ENOMEM. The batch is left
 * as it was: encode, then free it. */
int otlp_batch_encode(const struct otlp_batch *b, uint8_t **out, size_t *len);

#endif

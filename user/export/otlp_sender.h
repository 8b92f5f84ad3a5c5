/* otlp_sender.h - OTLP profiles requests (otlp_profiles.h) POSTed to an
 * OpenTelemetry Collector over HTTP/protobuf (libcurl), from a thread of
 * its own: the caller hands a request over and goes on, never waiting for
 * the network.
 *
 * Requests wait in a queue bounded in bytes; a full queue drops the new
 * request. One in flight at a time, to URL + "/v1development/profiles",
 * gzip'd (Content-Encoding: gzip) by the sender's thread unless no_gzip.
 * A request that fails to connect, times out, or gets HTTP 429, 502, 503
 * or 504 (the retryable answers of OTLP/HTTP) is tried again after a wait
 * that doubles up to a bound (or the server's Retry-After), until
 * give_up_ms after it was queued; any other HTTP error refuses it, dropped
 * at once. The requests behind it wait: they go in order. Each change of
 * state says one line (the first failure and why, sending again, the first
 * refusal with the server's message, the queue filling up, giving up);
 * counters say the rest.
 */
#ifndef SPARKPROF_OTLP_SENDER_H
#define SPARKPROF_OTLP_SENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_writer;

struct otlp_sender_settings {
	/* The Collector's OTLP/HTTP endpoint ("http://127.0.0.1:4318", or
	 * https://); "/v1development/profiles" is added unless there. */
	const char *url;
	const char *const *headers;      /* "Name: value", e.g. "Authorization: Bearer T" */
	size_t nheaders;
	const char *ca_file;             /* TLS: CA bundle for the server; NULL: the system's */
	const char *cert_file, *key_file; /* TLS client certificate and key; NULL: none */
	bool insecure;                   /* TLS without verifying the server */
	bool no_gzip;                    /* send bodies as they are (default: gzip'd, on the thread) */
	/* 0 for each: the default. */
	size_t queue_bytes;              /* unsent requests held (64 MiB) */
	uint64_t timeout_ms;             /* one POST (10 s) */
	uint64_t backoff_ms, backoff_max_ms; /* first wait before a retry, and the longest (0.5 s, 30 s) */
	uint64_t give_up_ms;             /* a request unsent this long after its submit is dropped (5 min) */
};

enum otlp_drop {
	OTLP_DROP_QUEUE_FULL,   /* the queue held queue_bytes already */
	OTLP_DROP_REFUSED,      /* the server answered with an error not to retry */
	OTLP_DROP_GAVE_UP,      /* unsent give_up_ms after its submit */
	OTLP_DROP_SHUTDOWN,     /* still queued when the sender stopped */
	OTLP_DROPS,
};

struct otlp_sender_stats {
	uint64_t batches_sent, samples_sent, bytes_sent;   /* bytes as sent (gzip'd) */
	uint64_t retries;                          /* POSTs that were tried again */
	uint64_t batches_dropped[OTLP_DROPS], samples_dropped[OTLP_DROPS];
	uint64_t rejected_profiles;                /* accepted in part: what the server refused */
	uint64_t queued_batches, queued_bytes;     /* waiting now (the one in flight included) */
	uint64_t queue_peak_bytes;
	long last_http_status;                     /* 0: none yet, or no answer */
	char last_error[256];                      /* "" when the last POST went */
};

struct otlp_sender;

/* Starts the thread. NULL after a message (a bad URL or header, no memory). */
struct otlp_sender *otlp_sender_start(const struct otlp_sender_settings *settings);

/* Queues a request of samples samples: body (malloc'd) is the sender's
 * from then on, in every case. Never waits on the network: 0 when queued,
 * -ENOBUFS when dropped (queue full, counted). */
int otlp_sender_submit(struct otlp_sender *s, uint8_t *body, size_t len, uint64_t samples);

/* Waits until nothing is queued or in flight, at most timeout_ms: true
 * when the queue emptied (sent or dropped). For the end of a recording. */
bool otlp_sender_drain(struct otlp_sender *s, uint64_t timeout_ms);

/* Stops the thread (a POST in flight is cut) and frees the sender; what is
 * still queued is dropped and counted in *final (if given) first. */
void otlp_sender_stop(struct otlp_sender *s, struct otlp_sender_stats *final);

void otlp_sender_stats(struct otlp_sender *s, struct otlp_sender_stats *out);

/* st as a JSON object: the URL, then sent, retried, dropped by reason and
 * still queued (summary.json's "otlp": "sender"). */
void otlp_sender_stats_json(const struct otlp_sender_stats *st, const char *url,
			    struct json_writer *w);

/* Reads a server's answer, outside input: an accepted one's
 * ExportProfilesServiceResponse (rejected profiles and the message of a
 * partial success) when ok, else an error's google.rpc.Status (its
 * message). 0 with *rejected and msg set ("" for none), or -EINVAL when
 * the bytes are not such a message. */
int otlp_response_parse(const void *data, size_t len, bool ok, int64_t *rejected, char *msg,
			size_t size);

#endif

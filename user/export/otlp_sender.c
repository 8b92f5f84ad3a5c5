/* otlp_sender.c - see otlp_sender.h. One mutex guards the queue and the
 * counters; the thread holds it only between POSTs, so a submit waits for
 * a list operation at most, never for the network. */
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "base/json_writer.h"
#include "base/log.h"
#include "export/otlp_sender.h"

#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"
#include "sparkprof/rpc_status.pb-c.h"

#define PROFILES_PATH "/v1development/profiles"

struct request {
	struct request *next;
	uint8_t *body;
	size_t len;
	uint64_t samples;
	uint64_t queued_ns;
	bool gzipped;
};

enum outcome { SENT, RETRY, REFUSED };

struct otlp_sender {
	struct otlp_sender_settings set;
	char *url;
	struct curl_slist *headers, *gzip_headers;   /* the latter with Content-Encoding */
	CURL *curl;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;      /* work queued, or stop */
	pthread_cond_t idle;      /* the queue emptied */
	struct request *head, *tail;
	atomic_bool stopping;
	bool failing, refused_said, full_said, gave_up_said;
	uint64_t backoff_ms;
	struct otlp_sender_stats st;
	/* The POST's answer (the thread's own). */
	char response[4096];
	size_t response_len;
	char curl_error[CURL_ERROR_SIZE];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char *const drop_names[OTLP_DROPS] = {
	"queue_full", "refused", "gave_up", "shutdown",
};

/* Under the lock. */
static void count_drop(struct otlp_sender *s, uint64_t samples, enum otlp_drop why)
{
	s->st.batches_dropped[why]++;
	s->st.samples_dropped[why] += samples;
}

static void drop(struct otlp_sender *s, struct request *r, enum otlp_drop why)
{
	count_drop(s, r->samples, why);
	free(r->body);
	free(r);
}

/* Takes the head off the queue (under the lock). */
static struct request *pop(struct otlp_sender *s)
{
	struct request *r = s->head;

	s->head = r->next;
	if (!s->head)
		s->tail = NULL;
	s->st.queued_batches--;
	s->st.queued_bytes -= r->len;
	if (!s->head)
		pthread_cond_broadcast(&s->idle);
	return r;
}

int otlp_sender_submit(struct otlp_sender *s, uint8_t *body, size_t len, uint64_t samples)
{
	struct request *r = calloc(1, sizeof(*r));
	int err = 0;

	if (r)
		*r = (struct request){ .body = body, .len = len, .samples = samples,
				       .queued_ns = now_ns() };
	else
		free(body);
	pthread_mutex_lock(&s->lock);
	if (!r || s->st.queued_bytes + len > s->set.queue_bytes) {
		if (!s->full_said)
			sp_warn("OTLP export to %s: queue full (%zu bytes unsent): dropping batches",
				s->url, (size_t)s->st.queued_bytes);
		s->full_said = true;
		if (r)
			drop(s, r, OTLP_DROP_QUEUE_FULL);
		else
			count_drop(s, samples, OTLP_DROP_QUEUE_FULL);
		err = -ENOBUFS;
	} else {
		if (s->tail)
			s->tail->next = r;
		else
			s->head = r;
		s->tail = r;
		s->st.queued_batches++;
		s->st.queued_bytes += len;
		if (s->st.queued_bytes > s->st.queue_peak_bytes)
			s->st.queue_peak_bytes = s->st.queued_bytes;
		pthread_cond_signal(&s->wake);
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

/* What one POST came to. */
struct answer {
	enum outcome outcome;
	long status;
	int64_t rejected;
	uint64_t retry_after_ms;
	char error[CURL_ERROR_SIZE];
};

int otlp_response_parse(const void *data, size_t len, bool ok, int64_t *rejected, char *msg,
			size_t size)
{
	*rejected = 0;
	snprintf(msg, size, "%s", "");
	if (ok) {
		Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceResponse *r =
			opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__unpack(NULL, len, data);

		if (!r)
			return -EINVAL;
		if (r->partial_success) {
			*rejected = r->partial_success->rejected_profiles;
			snprintf(msg, size, "%s", r->partial_success->error_message ?
				 r->partial_success->error_message : "");
		}
		opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__free_unpacked(r, NULL);
	} else {
		Sparkprof__RpcStatus *st = sparkprof__rpc_status__unpack(NULL, len, data);

		if (!st)
			return -EINVAL;
		snprintf(msg, size, "%s", st->message ? st->message : "");
		sparkprof__rpc_status__free_unpacked(st, NULL);
	}
	return 0;
}

/* The server's words for a status: its message, or its body if text. */
static void server_message(struct otlp_sender *s, bool ok, struct answer *a)
{
	char msg[sizeof(a->error)];
	int64_t rejected;
	char *type = NULL;

	curl_easy_getinfo(s->curl, CURLINFO_CONTENT_TYPE, &type);
	if (type && strstr(type, "protobuf")) {
		if (!otlp_response_parse(s->response, s->response_len, ok, &rejected, msg,
					 sizeof(msg))) {
			a->rejected = rejected;
			snprintf(a->error, sizeof(a->error), "%s", msg);
		}
	} else if (!ok && s->response_len) {
		snprintf(a->error, sizeof(a->error), "%.*s", (int)s->response_len, s->response);
		a->error[strcspn(a->error, "\r\n")] = '\0';
	}
}

/* r's body gzip'd, in place (outside the lock: the body is the thread's
 * while it is at the queue's head). False when it cannot be (then it goes
 * as it is, without the header). */
static bool gzip_body(struct request *r)
{
	z_stream z = { 0 };
	uLong bound;
	uint8_t *out;
	int rc;

	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return false;
	bound = deflateBound(&z, (uLong)r->len);
	if (!(out = malloc(bound))) {
		deflateEnd(&z);
		return false;
	}
	z.next_in = r->body;
	z.avail_in = (uInt)r->len;
	z.next_out = out;
	z.avail_out = (uInt)bound;
	rc = deflate(&z, Z_FINISH);
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(out);
		return false;
	}
	free(r->body);
	r->body = out;
	r->len = z.total_out;
	return true;
}

static void post(struct otlp_sender *s, const struct request *r, struct answer *a)
{
	CURLcode rc;
	curl_off_t retry_after = 0;

	*a = (struct answer){ .outcome = RETRY };
	s->response_len = 0;
	s->curl_error[0] = '\0';
	curl_easy_setopt(s->curl, CURLOPT_HTTPHEADER, r->gzipped ? s->gzip_headers : s->headers);
	curl_easy_setopt(s->curl, CURLOPT_POSTFIELDS, r->body);
	curl_easy_setopt(s->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->len);
	rc = curl_easy_perform(s->curl);
	if (rc != CURLE_OK) {
		snprintf(a->error, sizeof(a->error), "%s",
			 *s->curl_error ? s->curl_error : curl_easy_strerror(rc));
		return;
	}
	curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &a->status);
	if (a->status >= 200 && a->status < 300) {
		a->outcome = SENT;
		server_message(s, true, a);
		return;
	}
	server_message(s, false, a);
	if (a->status == 429 || a->status == 502 || a->status == 503 || a->status == 504) {
		if (curl_easy_getinfo(s->curl, CURLINFO_RETRY_AFTER, &retry_after) == CURLE_OK &&
		    retry_after > 0)
			a->retry_after_ms = (uint64_t)retry_after * 1000;
		return;
	}
	a->outcome = REFUSED;
}

/* Waits ms, or until the sender stops (under the lock). */
static void wait_ms(struct otlp_sender *s, uint64_t ms)
{
	uint64_t deadline = now_ns() + ms * 1000000ull;
	struct timespec ts = { (time_t)(deadline / 1000000000ull), (long)(deadline % 1000000000ull) };

	while (!atomic_load(&s->stopping) && now_ns() < deadline)
		pthread_cond_timedwait(&s->wake, &s->lock, &ts);
}

static void sent(struct otlp_sender *s, struct request *r, const struct answer *a)
{
	if (s->failing)
		sp_info("OTLP export to %s: sending again", s->url);
	s->failing = false;
	s->full_said = false;
	s->gave_up_said = false;
	s->backoff_ms = s->set.backoff_ms;
	s->st.batches_sent++;
	s->st.samples_sent += r->samples;
	s->st.bytes_sent += r->len;
	if (a->rejected > 0) {
		if (!s->st.rejected_profiles)
			sp_warn("OTLP export to %s: the server rejected %lld profiles%s%s", s->url,
				(long long)a->rejected, *a->error ? ": " : "", a->error);
		s->st.rejected_profiles += (uint64_t)a->rejected;
	}
	pop(s);
	free(r->body);
	free(r);
}

static void refused(struct otlp_sender *s, struct request *r, const struct answer *a)
{
	if (!s->refused_said || a->status != s->st.last_http_status)
		sp_warn("OTLP export to %s: refused with HTTP %ld%s%s: its batches are dropped",
			s->url, a->status, *a->error ? ": " : "", a->error);
	s->refused_said = true;
	pop(s);
	drop(s, r, OTLP_DROP_REFUSED);
}

static void retry(struct otlp_sender *s, struct request *r, const struct answer *a)
{
	uint64_t wait;

	if (!s->failing && a->status)
		sp_warn("OTLP export to %s: HTTP %ld%s%s; retrying, holding up to %zu KiB",
			s->url, a->status, *a->error ? ": " : "", a->error, s->set.queue_bytes >> 10);
	else if (!s->failing)
		sp_warn("OTLP export to %s: %s; retrying, holding up to %zu KiB", s->url, a->error,
			s->set.queue_bytes >> 10);
	s->failing = true;
	if (now_ns() - r->queued_ns >= s->set.give_up_ms * 1000000ull) {
		if (!s->gave_up_said)
			sp_warn("OTLP export to %s: dropping batches unsent after %llu s", s->url,
				(unsigned long long)(s->set.give_up_ms / 1000));
		s->gave_up_said = true;
		pop(s);
		drop(s, r, OTLP_DROP_GAVE_UP);
		return;
	}
	s->st.retries++;
	wait = a->retry_after_ms > s->backoff_ms ? a->retry_after_ms : s->backoff_ms;
	s->backoff_ms = s->backoff_ms * 2 < s->set.backoff_max_ms ? s->backoff_ms * 2
								  : s->set.backoff_max_ms;
	wait_ms(s, wait);
}

/* Gzips r before its first POST; the queue's bytes follow its size (the
 * lock taken for them only). */
static void prepare(struct otlp_sender *s, struct request *r)
{
	size_t before = r->len;

	if (s->set.no_gzip || r->gzipped)
		return;
	r->gzipped = gzip_body(r);
	pthread_mutex_lock(&s->lock);
	s->st.queued_bytes -= before - r->len;
	pthread_mutex_unlock(&s->lock);
}

static void *run(void *arg)
{
	struct otlp_sender *s = arg;
	struct answer a;

	pthread_mutex_lock(&s->lock);
	while (!atomic_load(&s->stopping)) {
		struct request *r = s->head;

		if (!r) {
			pthread_cond_wait(&s->wake, &s->lock);
			continue;
		}
		pthread_mutex_unlock(&s->lock);
		prepare(s, r);
		post(s, r, &a);
		pthread_mutex_lock(&s->lock);
		if (a.outcome == RETRY && atomic_load(&s->stopping))
			break;
		if (a.outcome == SENT)
			sent(s, r, &a);
		else if (a.outcome == REFUSED)
			refused(s, r, &a);   /* compares with the last status: before it changes */
		s->st.last_http_status = a.status;
		snprintf(s->st.last_error, sizeof(s->st.last_error), "%s",
			 a.outcome == SENT ? "" : a.error);
		if (a.outcome == RETRY)
			retry(s, r, &a);     /* waits: the counters say why first */
	}
	while (s->head)
		drop(s, pop(s), OTLP_DROP_SHUTDOWN);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static size_t on_response(char *data, size_t size, size_t n, void *ctx)
{
	struct otlp_sender *s = ctx;
	size_t len = size * n, room = sizeof(s->response) - s->response_len;

	/* The start of an answer says what it is; the rest is not needed. */
	memcpy(s->response + s->response_len, data, len < room ? len : room);
	s->response_len += len < room ? len : room;
	return len;
}

/* Cuts a POST in flight when the sender stops. */
static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct otlp_sender *s = ctx;

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return atomic_load(&s->stopping) ? 1 : 0;
}

static void defaults(struct otlp_sender_settings *set)
{
	if (!set->queue_bytes)
		set->queue_bytes = 64u << 20;
	if (!set->timeout_ms)
		set->timeout_ms = 10000;
	if (!set->backoff_ms)
		set->backoff_ms = 500;
	if (!set->backoff_max_ms)
		set->backoff_max_ms = 30000;
	if (!set->give_up_ms)
		set->give_up_ms = 300000;
}

/* The profiles URL and the headers. 0, -EINVAL or -ENOMEM (with a message). */
static int endpoint(struct otlp_sender *s)
{
	const char *u = s->set.url;
	size_t len = strlen(u), plen = strlen(PROFILES_PATH);
	bool has_path = len >= plen && !strcmp(u + len - plen, PROFILES_PATH);
	struct curl_slist *h;

	if (strncmp(u, "http://", 7) && strncmp(u, "https://", 8)) {
		sp_err("OTLP export: %s: %s (give http:// or https://)", u, strerror(EINVAL));
		return -EINVAL;
	}
	while (!has_path && len && u[len - 1] == '/')
		len--;
	if (asprintf(&s->url, "%.*s%s", (int)len, u, has_path ? "" : PROFILES_PATH) < 0) {
		s->url = NULL;
		return -ENOMEM;
	}
	s->headers = curl_slist_append(NULL, "Content-Type: application/x-protobuf");
	for (size_t i = 0; s->headers && i < s->set.nheaders; i++) {
		if (!strchr(s->set.headers[i], ':')) {
			sp_err("OTLP export: header '%s': %s (give 'Name: value')",
			       s->set.headers[i], strerror(EINVAL));
			return -EINVAL;
		}
		if (!(h = curl_slist_append(s->headers, s->set.headers[i])))
			return -ENOMEM;
		s->headers = h;
	}
	if (!s->headers)
		return -ENOMEM;
	/* The same list and the encoding: curl_slist_append only adds. */
	s->gzip_headers = curl_slist_append(NULL, "Content-Encoding: gzip");
	for (h = s->headers; s->gzip_headers && h; h = h->next)
		if (!curl_slist_append(s->gzip_headers, h->data))
			return -ENOMEM;
	return s->gzip_headers ? 0 : -ENOMEM;
}

static int curl_setup(struct otlp_sender *s)
{
	CURL *c = s->curl = curl_easy_init();
	const struct otlp_sender_settings *set = &s->set;

	if (!c)
		return -ENOMEM;
	curl_easy_setopt(c, CURLOPT_URL, s->url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, s->headers);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);   /* threads: no SIGALRM for timeouts */
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)set->timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(set->timeout_ms < 5000 ? set->timeout_ms : 5000));
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_response);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, s);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, s->curl_error);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "sparkprof");
	if (set->ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, set->ca_file);
	if (set->cert_file)
		curl_easy_setopt(c, CURLOPT_SSLCERT, set->cert_file);
	if (set->key_file)
		curl_easy_setopt(c, CURLOPT_SSLKEY, set->key_file);
	if (set->insecure) {
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	return 0;
}

static void sender_free(struct otlp_sender *s)
{
	if (s->curl)
		curl_easy_cleanup(s->curl);
	curl_slist_free_all(s->headers);
	curl_slist_free_all(s->gzip_headers);
	free(s->url);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->wake);
	pthread_cond_destroy(&s->idle);
	free(s);
	curl_global_cleanup();
}

/* Conditions on the monotonic clock: waits do not jump with the date. */
static int sync_init(struct otlp_sender *s)
{
	pthread_condattr_t attr;
	int err = pthread_condattr_init(&attr);

	if (!err)
		err = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!err)
		err = pthread_cond_init(&s->wake, &attr);
	if (!err)
		err = pthread_cond_init(&s->idle, &attr);
	if (!err)
		err = pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_destroy(&attr);
	return -err;
}

struct otlp_sender *otlp_sender_start(const struct otlp_sender_settings *settings)
{
	struct otlp_sender *s = calloc(1, sizeof(*s));
	int err;

	if (!s) {
		sp_err("OTLP export to %s: %s", settings->url, strerror(ENOMEM));
		return NULL;
	}
	s->set = *settings;
	defaults(&s->set);
	s->backoff_ms = s->set.backoff_ms;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	err = sync_init(s);
	if (!err && !(err = endpoint(s)) && !(err = curl_setup(s)))
		err = -pthread_create(&s->thread, NULL, run, s);
	if (err) {
		if (err != -EINVAL)
			sp_err("OTLP export to %s: %s", settings->url, strerror(-err));
		sender_free(s);
		errno = -err;
		return NULL;
	}
	return s;
}

bool otlp_sender_drain(struct otlp_sender *s, uint64_t timeout_ms)
{
	uint64_t deadline = now_ns() + timeout_ms * 1000000ull;
	struct timespec ts = { (time_t)(deadline / 1000000000ull), (long)(deadline % 1000000000ull) };
	bool empty;

	pthread_mutex_lock(&s->lock);
	while (s->head && now_ns() < deadline)
		pthread_cond_timedwait(&s->idle, &s->lock, &ts);
	empty = !s->head;
	pthread_mutex_unlock(&s->lock);
	return empty;
}

void otlp_sender_stats(struct otlp_sender *s, struct otlp_sender_stats *out)
{
	pthread_mutex_lock(&s->lock);
	*out = s->st;
	pthread_mutex_unlock(&s->lock);
}

void otlp_sender_stop(struct otlp_sender *s, struct otlp_sender_stats *final)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	atomic_store(&s->stopping, true);
	pthread_cond_broadcast(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	if (final)
		*final = s->st;
	sender_free(s);
}

void otlp_sender_stats_json(const struct otlp_sender_stats *st, const char *url,
			    struct json_writer *w)
{
	json_begin_object(w);
	json_key(w, "url");
	json_string(w, url);
	json_key(w, "batches_sent");
	json_uint(w, st->batches_sent);
	json_key(w, "samples_sent");
	json_uint(w, st->samples_sent);
	json_key(w, "bytes_sent");
	json_uint(w, st->bytes_sent);
	json_key(w, "retries");
	json_uint(w, st->retries);
	json_key(w, "rejected_profiles");
	json_uint(w, st->rejected_profiles);
	json_key(w, "queue_peak_bytes");
	json_uint(w, st->queue_peak_bytes);
	json_key(w, "queued_batches");     /* still unsent when counted */
	json_uint(w, st->queued_batches);
	for (int pass = 0; pass < 2; pass++) {
		json_key(w, pass ? "samples_dropped" : "batches_dropped");
		json_begin_object(w);
		for (int d = 0; d < OTLP_DROPS; d++) {
			json_key(w, drop_names[d]);
			json_uint(w, pass ? st->samples_dropped[d] : st->batches_dropped[d]);
		}
		json_end_object(w);
	}
	json_key(w, "last_http_status");
	json_int(w, st->last_http_status);
	json_key(w, "last_error");
	json_string(w, st->last_error);
	json_end_object(w);
}

/* test_otlp_sender.c - export/otlp_sender.h against servers on 127.0.0.1:
 * one that never answers (submits do not wait, the queue's bound drops
 * and counts, a stop cuts the POST in flight), and scripted ones that
 * refuse, ask for a retry, or accept in part. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "export/otlp_sender.h"
#include "tap.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A listening socket on a free port of 127.0.0.1. */
static int listen_local(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)&a, &len))
		return -1;
	*port = ntohs(a.sin_port);
	return fd;
}

static uint8_t *body(size_t n)
{
	return calloc(1, n);
}

/* Scripted answers, one a connection, in order. */
struct script {
	int fd;
	const char *const *answers;
	size_t n;
	size_t authorized;     /* requests with the Authorization header */
};

/* Reads a request whole: its headers, then Content-Length bytes. Whether
 * it had the Authorization header the test gives, and was gzip'd. */
static bool read_request(int c)
{
	char buf[65536];
	size_t got = 0;
	long want = -1;
	char *end;

	while (got < sizeof(buf) - 1) {
		ssize_t n = read(c, buf + got, sizeof(buf) - 1 - got);

		if (n <= 0)
			return false;
		got += (size_t)n;
		buf[got] = '\0';
		if (want < 0 && (end = strstr(buf, "\r\n\r\n"))) {
			char *cl = strcasestr(buf, "Content-Length:");

			want = (long)(end + 4 - buf) + (cl ? strtol(cl + 15, NULL, 10) : 0);
		}
		if (want >= 0 && (long)got >= want)
			break;
	}
	return strstr(buf, "\r\nAuthorization: Bearer token\r\n") &&
	       strstr(buf, "\r\nContent-Encoding: gzip\r\n");
}

static void *serve(void *arg)
{
	struct script *s = arg;

	for (size_t i = 0; i < s->n; i++) {
		int c = accept(s->fd, NULL, NULL);

		if (c < 0)
			break;
		s->authorized += read_request(c);
		if (write(c, s->answers[i], strlen(s->answers[i])) < 0)
			break;
		close(c);
	}
	return NULL;
}

static void never_answers(void)
{
	int port, fd = listen_local(&port);
	char url[64];
	struct otlp_sender_settings set = { .url = url, .queue_bytes = 10000, .timeout_ms = 60000 };
	struct otlp_sender *s;
	struct otlp_sender_stats st;
	double t0, longest = 0, stop_took;
	int queued = 0;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	s = otlp_sender_start(&set);
	CHECK(s != NULL, "a sender starts");
	for (int i = 0; i < 50; i++) {
		double t = now_s();

		queued += otlp_sender_submit(s, body(1000), 1000, 7) == 0;
		if (now_s() - t > longest)
			longest = now_s() - t;
	}
	CHECK(longest < 0.05, "a submit never waits for the network (longest %.3f s)", longest);
	CHECK(queued == 10, "the queue holds its bound: 10 of 50 requests (%d)", queued);
	CHECK(!otlp_sender_drain(s, 300), "a server that never answers: the queue does not drain");
	otlp_sender_stats(s, &st);
	CHECK(st.batches_dropped[OTLP_DROP_QUEUE_FULL] == 40 &&
	      st.samples_dropped[OTLP_DROP_QUEUE_FULL] == 280, "drops past the bound are counted");
	/* The one in flight is gzip'd: it holds less. */
	CHECK(st.queued_batches == 10 && st.queued_bytes > 9000 && st.queued_bytes < 10000,
	      "what waits is counted (%llu bytes)", (unsigned long long)st.queued_bytes);
	t0 = now_s();
	otlp_sender_stop(s, &st);
	stop_took = now_s() - t0;
	CHECK(stop_took < 3, "a stop cuts the POST in flight (%.2f s)", stop_took);
	CHECK(st.batches_dropped[OTLP_DROP_SHUTDOWN] == 10 && st.batches_sent == 0,
	      "what was queued at the stop is dropped and counted");
	close(fd);
}

/* Runs a sender against answers; its counters after the queue drained. */
static size_t scripted(const char *const *answers, size_t n, size_t requests,
		       struct otlp_sender_stats *st)
{
	int port, fd = listen_local(&port);
	struct script sc = { .fd = fd, .answers = answers, .n = n };
	char url[64];
	const char *headers[] = { "Authorization: Bearer token" };
	struct otlp_sender_settings set = { .url = url, .headers = headers, .nheaders = 1,
					    .backoff_ms = 20 };
	struct otlp_sender *s;
	pthread_t t;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", port);
	pthread_create(&t, NULL, serve, &sc);
	s = otlp_sender_start(&set);
	for (size_t i = 0; i < requests; i++)
		otlp_sender_submit(s, body(100), 100, 5);
	CHECK(otlp_sender_drain(s, 10000), "the queue drains");
	otlp_sender_stop(s, st);
	pthread_join(t, NULL);
	close(fd);
	return sc.authorized;
}

#define CLOSE "Connection: close\r\n"

static void refused_retried_accepted(void)
{
	/* google.rpc.Status{code: 3, message: "bad profile"} */
	static const char refuse[] = "HTTP/1.1 400 Bad Request\r\n" CLOSE
		"Content-Type: application/x-protobuf\r\nContent-Length: 15\r\n\r\n"
		"\x08\x03\x12\x0b" "bad profile";
	static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\n" CLOSE
		"Content-Length: 4\r\n\r\nbusy";
	static const char ok[] = "HTTP/1.1 200 OK\r\n" CLOSE
		"Content-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n";
	/* partial_success{rejected_profiles: 2, error_message: "x"} */
	static const char partial[] = "HTTP/1.1 200 OK\r\n" CLOSE
		"Content-Type: application/x-protobuf\r\nContent-Length: 7\r\n\r\n"
		"\x0a\x05\x08\x02\x12\x01x";
	const char *const answers[] = { refuse, busy, busy, ok, partial };
	struct otlp_sender_stats st;

	CHECK(scripted(answers, 5, 3, &st) == 5, "every POST has the extra header, gzip'd");
	CHECK(st.batches_dropped[OTLP_DROP_REFUSED] == 1 && st.samples_dropped[OTLP_DROP_REFUSED] == 5,
	      "HTTP 400 refuses a request: dropped and counted");
	CHECK(st.retries == 2, "HTTP 503 is retried (%llu retries)", (unsigned long long)st.retries);
	CHECK(st.batches_sent == 2 && st.samples_sent == 10 && st.bytes_sent < 100,
	      "the others went, gzip'd (%llu bytes)", (unsigned long long)st.bytes_sent);
	CHECK(st.rejected_profiles == 2, "a partial success counts what the server rejected");
	CHECK(st.last_http_status == 200 && !*st.last_error, "the last POST went");
}

static void refusal_message(void)
{
	static const char refuse[] = "HTTP/1.1 500 Internal Server Error\r\n" CLOSE
		"Content-Type: text/plain\r\nContent-Length: 9\r\n\r\nno space\n";
	const char *const answers[] = { refuse };
	struct otlp_sender_stats st;

	scripted(answers, 1, 1, &st);
	CHECK(st.batches_dropped[OTLP_DROP_REFUSED] == 1 && st.last_http_status == 500,
	      "HTTP 500 refuses a request");
	CHECK_STR(st.last_error, "no space", "a text answer is the refusal's message");
}

static void bad_settings(void)
{
	const char *headers[] = { "no colon" };
	struct otlp_sender_settings set = { .url = "ftp://x" };

	CHECK(otlp_sender_start(&set) == NULL, "a URL that is not http(s) is refused");
	set.url = "http://127.0.0.1:1";
	set.headers = headers;
	set.nheaders = 1;
	CHECK(otlp_sender_start(&set) == NULL, "a header without a colon is refused");
}

int main(void)
{
	sp_log_set_level(SP_LOG_ERROR);
	never_answers();
	refused_retried_accepted();
	refusal_message();
	bad_settings();
	TAP_DONE();
}

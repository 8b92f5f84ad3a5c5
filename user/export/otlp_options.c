/* otlp_options.c - see otlp_options.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "export/otlp_options.h"

/* A positive whole number times scale. 1, or -1 after a message. */
static int number(const char *cmd, const char *what, const char *arg, uint64_t scale,
		  uint64_t *out)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(arg, &end, 10);
	if (errno || *end || end == arg || !n || *arg == '-' || n > UINT64_MAX / scale) {
		sp_err("%s: %s '%s' is not a positive whole number", cmd, what, arg);
		return -1;
	}
	*out = n * scale;
	return 1;
}

int otlp_option(const char *cmd, int opt, const char *arg, struct otlp_options *o)
{
	struct otlp_sender_settings *s = &o->sender;
	uint64_t v = 0;
	int rc;

	switch (opt) {
	case 0x4f00: s->url = arg; return 1;
	case 0x4f01:
		if (s->nheaders == OTLP_MAX_HEADERS) {
			sp_err("%s: at most %d --otlp-header", cmd, OTLP_MAX_HEADERS);
			return -1;
		}
		o->headers[s->nheaders++] = arg;
		s->headers = o->headers;
		return 1;
	case 0x4f02: s->ca_file = arg; return 1;
	case 0x4f03: s->cert_file = arg; return 1;
	case 0x4f04: s->key_file = arg; return 1;
	case 0x4f05: s->insecure = true; return 1;
	case 0x4f06:
		rc = number(cmd, "--otlp-queue-kib", arg, 1024, &v);
		s->queue_bytes = (size_t)v;
		return rc;
	case 0x4f07: return number(cmd, "--otlp-timeout", arg, 1000, &s->timeout_ms);
	case 0x4f08: return number(cmd, "--otlp-give-up", arg, 1000, &s->give_up_ms);
	case 0x4f09: s->no_gzip = true; return 1;
	}
	return 0;
}

int otlp_options_check(const char *cmd, const struct otlp_options *o)
{
	const struct otlp_sender_settings *s = &o->sender;

	if (!s->url) {
		if (s->nheaders || s->ca_file || s->cert_file || s->key_file || s->insecure ||
		    s->queue_bytes || s->timeout_ms || s->give_up_ms || s->no_gzip) {
			sp_err("%s: the --otlp-* options need --otlp URL", cmd);
			return -1;
		}
		return 0;
	}
	if (strncmp(s->url, "http://", 7) && strncmp(s->url, "https://", 8)) {
		sp_err("%s: --otlp '%s' is not an http:// or https:// URL", cmd, s->url);
		return -1;
	}
	for (size_t i = 0; i < s->nheaders; i++)
		if (!strchr(s->headers[i], ':')) {
			sp_err("%s: --otlp-header '%s' is not 'Name: value'", cmd, s->headers[i]);
			return -1;
		}
	return 0;
}

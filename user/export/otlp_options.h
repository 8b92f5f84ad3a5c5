/* otlp_options.h - the command-line options of an OTLP export, shared by
 * `record --otlp URL` and `convert DIR --otlp URL`: where to send and how
 * (export/otlp_sender.h). */
#ifndef SPARKPROF_OTLP_OPTIONS_H
#define SPARKPROF_OTLP_OPTIONS_H

#include <getopt.h>

#include "export/otlp_sender.h"

#define OTLP_MAX_HEADERS 32

struct otlp_options {
	struct otlp_sender_settings sender;     /* sender.url NULL: no export */
	const char *headers[OTLP_MAX_HEADERS];
};

/* getopt_long entries: --otlp URL, --otlp-header 'Name: value' (repeated),
 * --otlp-ca FILE, --otlp-cert FILE, --otlp-key FILE, --otlp-insecure,
 * --otlp-queue-kib N, --otlp-timeout SECS, --otlp-give-up SECS,
 * --otlp-no-gzip. Their
 * values are OTLP_OPT_FIRST and up. */
#define OTLP_OPT_FIRST 0x4f00
#define OTLP_OPTIONS \
	{ "otlp", required_argument, NULL, 0x4f00 }, \
	{ "otlp-header", required_argument, NULL, 0x4f01 }, \
	{ "otlp-ca", required_argument, NULL, 0x4f02 }, \
	{ "otlp-cert", required_argument, NULL, 0x4f03 }, \
	{ "otlp-key", required_argument, NULL, 0x4f04 }, \
	{ "otlp-insecure", no_argument, NULL, 0x4f05 }, \
	{ "otlp-queue-kib", required_argument, NULL, 0x4f06 }, \
	{ "otlp-timeout", required_argument, NULL, 0x4f07 }, \
	{ "otlp-give-up", required_argument, NULL, 0x4f08 }, \
	{ "otlp-no-gzip", no_argument, NULL, 0x4f09 }

/* Their text for a command's --help. */
#define OTLP_HELP \
	"      --otlp URL           send OTLP profiles (HTTP/protobuf) to the Collector at\n" \
	"                           URL (http://HOST:4318, https://...): POST\n" \
	"                           URL/v1development/profiles\n" \
	"      --otlp-header 'Name: value'  an HTTP header (an auth token), repeatable\n" \
	"      --otlp-ca FILE       TLS: CA bundle that signed the Collector's certificate\n" \
	"      --otlp-cert FILE, --otlp-key FILE  TLS client certificate and key\n" \
	"      --otlp-insecure      TLS without verifying the Collector\n" \
	"      --otlp-queue-kib N   unsent requests held while the Collector is away\n" \
	"                           (65536: 64 MiB)\n" \
	"      --otlp-timeout SECS  one POST (10)\n" \
	"      --otlp-give-up SECS  drop a request unsent this long (300)\n" \
	"      --otlp-no-gzip       send requests as they are (default: gzip'd)\n"

/* Takes opt's argument into o. 1 when opt was one of them, 0 when not, -1
 * after a message naming cmd. */
int otlp_option(const char *cmd, int opt, const char *arg, struct otlp_options *o);

/* What only all of them say: an http(s) URL, "Name: value" headers, and
 * no option without --otlp. 0, or -1 after a message naming cmd. */
int otlp_options_check(const char *cmd, const struct otlp_options *o);

#endif

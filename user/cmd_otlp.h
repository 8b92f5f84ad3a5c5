/* cmd_otlp.h - the OTLP export options the commands share (`convert DIR
 * --otlp URL` today; `record --otlp URL` is meant to take the same), and
 * sending a finished recording's store with them. */
#ifndef SPARKPROF_CMD_OTLP_H
#define SPARKPROF_CMD_OTLP_H

#include <getopt.h>

#include "export/otlp_sender.h"
#include "output/store_file.h"

#define CMD_OTLP_MAX_HEADERS 32

struct cmd_otlp {
	struct otlp_sender_settings sender;     /* sender.url NULL: no export */
	const char *headers[CMD_OTLP_MAX_HEADERS];
	uint64_t batch_segments;                /* segments a request (1) */
	const char *stats_path;                 /* --otlp-stats FILE: the counters as JSON */
};

/* Long options: --otlp URL, --otlp-header 'Name: value' (repeated),
 * --otlp-ca FILE, --otlp-cert FILE, --otlp-key FILE, --otlp-insecure,
 * --otlp-queue-kib N, --otlp-timeout SECS, --otlp-give-up SECS,
 * --otlp-batch N, --otlp-stats FILE. */
#define CMD_OTLP_OPTIONS \
	{ "otlp", required_argument, NULL, 0x4f00 }, \
	{ "otlp-header", required_argument, NULL, 0x4f01 }, \
	{ "otlp-ca", required_argument, NULL, 0x4f02 }, \
	{ "otlp-cert", required_argument, NULL, 0x4f03 }, \
	{ "otlp-key", required_argument, NULL, 0x4f04 }, \
	{ "otlp-insecure", no_argument, NULL, 0x4f05 }, \
	{ "otlp-queue-kib", required_argument, NULL, 0x4f06 }, \
	{ "otlp-timeout", required_argument, NULL, 0x4f07 }, \
	{ "otlp-give-up", required_argument, NULL, 0x4f08 }, \
	{ "otlp-batch", required_argument, NULL, 0x4f09 }, \
	{ "otlp-stats", required_argument, NULL, 0x4f0a }

/* The options' text for a command's --help. */
#define CMD_OTLP_HELP \
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
	"      --otlp-batch N       store segments per request (1)\n" \
	"      --otlp-stats FILE    write what was sent, retried and dropped (JSON)\n"

/* Takes opt's argument into o. 1 when opt was one of them, 0 when not, -1
 * after a message naming cmd. */
int cmd_otlp_option(const char *cmd, int opt, const char *arg, struct cmd_otlp *o);

/* Sends r's samples per o and waits until each request went or was
 * dropped; says one line of what went. 0 when every sample went, 1 when
 * some were dropped or could not be read (a message says which). */
int cmd_otlp_send_store(struct store_reader *r, struct cmd_otlp *o);

#endif

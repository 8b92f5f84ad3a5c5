/* cmd_otlp.h - `convert DIR --otlp URL`: a finished recording's store
 * sent with the export's options (export/otlp_options.h) and convert's. */
#ifndef SPARKPROF_CMD_OTLP_H
#define SPARKPROF_CMD_OTLP_H

#include "export/otlp_options.h"
#include "output/store_file.h"

/* convert's: the export's options and its own. */
struct cmd_otlp {
	struct otlp_options export;
	uint64_t batch_segments;                /* --otlp-batch N: segments a request (1) */
	const char *stats_path;                 /* --otlp-stats FILE: the counters as JSON */
};

#define CMD_OTLP_OPTIONS OTLP_OPTIONS, \
	{ "otlp-batch", required_argument, NULL, 0x4f40 }, \
	{ "otlp-stats", required_argument, NULL, 0x4f41 }

#define CMD_OTLP_HELP OTLP_HELP \
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

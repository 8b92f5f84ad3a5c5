/* test_record_options.c - `sparkprof record` command lines. */
#include <stdio.h>
#include <string.h>

#include "record/record_options.h"
#include "tap.h"

static int parse(struct record_options *o, const char *line)
{
	static char buf[1024];
	char *argv[64];
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *tok = strtok(buf, " "); tok && argc < 63; tok = strtok(NULL, " "))
		argv[argc++] = tok;
	argv[argc] = NULL;
	return record_options_parse(o, argc, argv);
}

int main(void)
{
	struct record_options o;
	uint64_t ns;

	CHECK(parse(&o, "record") == 0 && o.frequency_hz == 99 && o.npids == 0 && o.jfr &&
	      o.epoch_interval_ns == 5000000000ULL && !strcmp(o.executors, "*"),
	      "defaults");
	CHECK(parse(&o, "record -p 12,34 -F 999 -d 2.5 -o out") == 0 && o.npids == 2 &&
	      o.pids[1] == 34 && o.frequency_hz == 999 && o.duration_s == 2.5 &&
	      !strcmp(o.output_dir, "out"), "pids, frequency, duration, output");
	CHECK(parse(&o, "record -o out -- prog -x --y") == 0 && o.command &&
	      !strcmp(o.command[0], "prog") && !strcmp(o.command[1], "-x") &&
	      !strcmp(o.command[2], "--y"), "the command keeps its own options");
	CHECK(parse(&o, "record --wall=20ms --min-off-cpu 500us --off-cpu") == 0 && o.wall &&
	      o.off_cpu && o.wall_interval_ns == 20000000ULL && o.min_off_cpu_ns == 500000ULL,
	      "wall and off-CPU settings");
	CHECK(parse(&o, "record --wall") == 0 && o.wall_interval_ns == 10000000ULL,
	      "wall interval default");
	CHECK(parse(&o, "record --executors 1,3,5-8 --app app-1 --attribution epoch "
			"--epoch-interval 2 --threads tasks -t") == 0 &&
	      o.attribution == ATTRIBUTION_EPOCH && o.epoch_interval_ns == 2000000000ULL &&
	      o.threads == THREADS_TASKS && o.per_thread && !strcmp(o.app_id, "app-1"),
	      "Spark settings");
	CHECK(parse(&o, "record --otlp https://c:4318 --otlp-header Authorization:x "
			"--otlp-ca ca.pem --otlp-queue-kib 8 --otlp-give-up 30 --otlp-no-gzip") == 0 &&
	      !strcmp(o.otlp.sender.url, "https://c:4318") && o.otlp.sender.nheaders == 1 &&
	      !strcmp(o.otlp.sender.headers[0], "Authorization:x") &&
	      !strcmp(o.otlp.sender.ca_file, "ca.pem") && o.otlp.sender.queue_bytes == 8192 &&
	      o.otlp.sender.give_up_ms == 30000 && o.otlp.sender.no_gzip,
	      "OTLP export settings");
	CHECK(parse(&o, "record") == 0 && !o.otlp.sender.url, "no OTLP export by default");
	fprintf(stderr, "# the errors below are expected\n");
	CHECK(parse(&o, "record --otlp ftp://c") < 0 && parse(&o, "record --otlp-ca x") < 0 &&
	      parse(&o, "record --otlp http://c --otlp-header nocolon") < 0 &&
	      parse(&o, "record --otlp http://c --otlp-queue-kib 0") < 0,
	      "OTLP: a URL not http(s), an option without --otlp, a header without a colon, "
	      "an empty queue refused");
	CHECK(parse(&o, "record --ring-buffer 64") == 0 && o.ring_buffer_mib == 64,
	      "--ring-buffer in MiB");
	CHECK(parse(&o, "record") == 0 && o.ring_buffer_mib == 0, "ring buffer sized by default");
	CHECK(parse(&o, "record --ring-buffer 0") < 0 && parse(&o, "record --ring-buffer 2048") < 0 &&
	      parse(&o, "record --ring-buffer 8M") < 0 && parse(&o, "record --ring-buffer 0x10") < 0,
	      "--ring-buffer: 0, 2048, 8M and 0x10 refused");
	CHECK(parse(&o, "record") == 0 && o.stack_memory_bytes == 16u << 20,
	      "16 MiB for stacks by default");
	CHECK(parse(&o, "record --stack-memory 64") == 0 && o.stack_memory_bytes == 64u << 20 &&
	      parse(&o, "record --stack-memory 512K") == 0 && o.stack_memory_bytes == 512u << 10 &&
	      parse(&o, "record --stack-memory 2G") == 0 && o.stack_memory_bytes == 2ULL << 30 &&
	      parse(&o, "record --stack-memory 0") == 0 && o.stack_memory_bytes == 0,
	      "--stack-memory in MiB, K, G, or 0 for no limit");
	CHECK(parse(&o, "record --stack-memory 65G") < 0 && parse(&o, "record --stack-memory 1T") < 0 &&
	      parse(&o, "record --stack-memory 5MB") < 0 && parse(&o, "record --stack-memory -1") < 0 &&
	      parse(&o, "record --stack-memory 99999999999999999999") < 0 &&
	      parse(&o, "record --stack-memory K") < 0,
	      "--stack-memory: 65G, 1T, 5MB, -1, 20 digits and a bare K refused");
	CHECK(parse(&o, "record -F 0") < 0, "zero frequency refused");
	CHECK(parse(&o, "record -F 10001") < 0, "too high frequency refused");
	CHECK(parse(&o, "record -p 12,x") < 0, "bad pid list refused");
	CHECK(parse(&o, "record -p 0") < 0, "pid 0 refused");
	CHECK(parse(&o, "record -d 0") < 0, "zero duration refused");
	CHECK(parse(&o, "record --wall=abc") < 0, "bad wall interval refused");
	CHECK(parse(&o, "record --executors 3-1") < 0, "bad executor spec refused");
	CHECK(parse(&o, "record --attribution vote") < 0, "unknown attribution refused");
	CHECK(parse(&o, "record -p 5 -- prog") < 0, "-p with a command refused");
	CHECK(parse(&o, "record stray") < 0, "stray argument refused");
	CHECK(parse(&o, "record --nope") < 0, "unknown option refused");

	CHECK(parse_duration_ns("1.5", 1000000000ULL, &ns) == 0 && ns == 1500000000ULL,
	      "duration in the default unit");
	CHECK(parse_duration_ns("250us", 1, &ns) == 0 && ns == 250000, "microseconds");
	CHECK(parse_duration_ns("2m", 1, &ns) == 0 && ns == 120000000000ULL, "minutes");
	CHECK(parse_duration_ns("-1s", 1, &ns) < 0, "negative duration refused");
	CHECK(parse_duration_ns("5 parsecs", 1, &ns) < 0, "unknown unit refused");
	CHECK(parse_duration_ns("1e30s", 1, &ns) < 0, "overflowing duration refused");
	CHECK(parse_duration_ns("1e9", 1000000000ULL, &ns) < 0, "exponent refused");
	CHECK(parse_duration_ns("0x10", 1000000000ULL, &ns) < 0, "hexadecimal refused");
	CHECK(parse_duration_ns("inf", 1000000000ULL, &ns) < 0, "infinity refused");
	CHECK(parse_duration_ns(".5s", 1, &ns) < 0, "no leading digit refused");
	CHECK(parse_duration_ns("2.s", 1, &ns) == 0 && ns == 2000000000ULL, "2. is two seconds");
	CHECK(parse_duration_ns("2h", 1, &ns) == 0 && ns == 7200000000000ULL, "hours");

	CHECK(parse(&o, "record -a") == 0 && o.rotate_ns == 0 && o.keep == 24,
	      "no rotation by default, keep 24");
	CHECK(parse(&o, "record -a --rotate 10m --keep 12") == 0 &&
	      o.rotate_ns == 600000000000ULL && o.keep == 12, "--rotate 10m --keep 12");
	CHECK(parse(&o, "record --rotate 30") == 0 && o.rotate_ns == 30000000000ULL,
	      "--rotate in seconds by default");
	CHECK(parse(&o, "record --rotate 1500ms") < 0, "--rotate under 2s refused");
	CHECK(parse(&o, "record --rotate 0") < 0, "--rotate 0 refused");
	CHECK(parse(&o, "record --rotate 10x") < 0, "--rotate with an unknown unit refused");
	CHECK(parse(&o, "record --rotate 10m --keep 0") < 0, "--keep 0 refused");
	CHECK(parse(&o, "record --rotate 10m --keep 3x") < 0, "--keep 3x refused");
	CHECK(parse(&o, "record --rotate 10m --keep -1") < 0, "--keep -1 refused");
	CHECK(parse(&o, "record --keep 5") < 0, "--keep without --rotate refused");
	TAP_DONE();
}

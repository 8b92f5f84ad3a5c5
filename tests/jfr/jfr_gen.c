/* jfr_gen.c - test tool: writes a JFR file with sparkprof's JFR writer from
 * a text description, so integration tests can produce files with any
 * content.  Built by tests/jfr/jfrtest.py.
 *
 * Usage: jfr_gen OUT.jfr < description
 *
 * Description, one item per line, strings hex-encoded UTF-8 ("-" = NULL,
 * "" written as "=" for an empty string):
 *   start MONO_NS REALTIME_NS CPU_INTERVAL_NS WALL_INTERVAL_NS
 *   gzip 0|1
 *   chunk_bytes N
 *   label HEXKEY HEXVALUE
 *   sample c|w TS_NS TID PID STATE WEIGHT HEXTHREADNAME NFRAMES {TYPE HEXNAME}...
 * "start", "gzip", "chunk_bytes" and labels come before the first
 * sample.
 * Equal frame names share one pointer, as the symbolizers hand them out.
 * Prints the writer's stats on stdout: "samples N events N chunks N ...".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/jfr/jfr_writer.h"

struct name {
	struct name *next;
	char *s;
};

#define NBUCKETS 65536
static struct name *names[NBUCKETS];

static char *unhex(const char *tok)
{
	size_t n;
	char *s;

	if (!strcmp(tok, "-"))
		return NULL;
	if (!strcmp(tok, "="))
		return strdup("");
	n = strlen(tok) / 2;
	s = malloc(n + 1);
	if (!s)
		exit(2);
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		if (sscanf(tok + 2 * i, "%2x", &v) != 1)
			exit(3);
		s[i] = (char)v;
	}
	s[n] = 0;
	return s;
}

static const char *intern(char *s)
{
	unsigned h = 2166136261u;
	struct name *n;

	if (!s)
		return NULL;
	for (const char *p = s; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	for (n = names[h % NBUCKETS]; n; n = n->next)
		if (!strcmp(n->s, s)) {
			free(s);
			return n->s;
		}
	n = malloc(sizeof(*n));
	if (!n)
		exit(2);
	n->s = s;
	n->next = names[h % NBUCKETS];
	names[h % NBUCKETS] = n;
	return s;
}

static void die(const char *what, long line)
{
	fprintf(stderr, "jfr_gen: line %ld: bad %s\n", line, what);
	exit(1);
}

int main(int argc, char **argv)
{
	struct jfr_recording_info info = { 0 };
	struct jfr_writer_options opts = { 0 };
	struct jfr_label *labels = NULL;
	struct jfr_writer *w = NULL;
	struct frame *frames = NULL;
	struct jfr_writer_stats st;
	size_t nlabels = 0, cap = 0, frames_cap = 0;
	char *line = NULL;
	long lineno = 0;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: jfr_gen OUT.jfr < description\n");
		return 2;
	}
	while (getline(&line, &cap, stdin) > 0) {
		char *save, *tok = strtok_r(line, " \n", &save);

		lineno++;
		if (!tok)
			continue;
		if (!strcmp(tok, "start")) {
			unsigned long long v[4];

			for (int i = 0; i < 4; i++) {
				char *t = strtok_r(NULL, " \n", &save);

				if (!t)
					die("start", lineno);
				v[i] = strtoull(t, NULL, 10);
			}
			info.start_monotonic_ns = v[0];
			info.start_realtime_ns = v[1];
			info.cpu_interval_ns = v[2];
			info.wall_interval_ns = v[3];
		} else if (!strcmp(tok, "gzip")) {
			opts.gzip = atoi(strtok_r(NULL, " \n", &save));
		} else if (!strcmp(tok, "chunk_bytes")) {
			opts.chunk_bytes = strtoull(strtok_r(NULL, " \n", &save), NULL, 10);
		} else if (!strcmp(tok, "label")) {
			char *k = strtok_r(NULL, " \n", &save), *v = strtok_r(NULL, " \n", &save);

			if (!k || !v)
				die("label", lineno);
			labels = realloc(labels, (nlabels + 1) * sizeof(*labels));
			if (!labels)
				return 2;
			labels[nlabels].key = unhex(k);
			labels[nlabels].value = unhex(v);
			nlabels++;
		} else if (!strcmp(tok, "sample")) {
			struct jfr_sample s = { 0 };
			char *t[8];

			for (int i = 0; i < 8; i++)
				if (!(t[i] = strtok_r(NULL, " \n", &save)))
					die("sample", lineno);
			if (!w) {
				info.labels = labels;
				info.nlabels = nlabels;
				w = jfr_writer_open(argv[1], &info, &opts);
				if (!w)
					return 1;
			}
			s.kind = t[0][0] == 'w' ? JFR_SAMPLE_WALL : JFR_SAMPLE_CPU;
			s.timestamp_ns = strtoull(t[1], NULL, 10);
			s.os_tid = strtoul(t[2], NULL, 10);
			s.pid = strtoul(t[3], NULL, 10);
			s.thread_state = atoi(t[4]);
			s.weight = strtoull(t[5], NULL, 10);
			s.thread_name = intern(unhex(t[6]));
			s.nframes = atoi(t[7]);
			if (s.nframes > (int)frames_cap) {
				frames_cap = s.nframes;
				frames = realloc(frames, frames_cap * sizeof(*frames));
				if (!frames)
					return 2;
			}
			for (int i = 0; i < s.nframes; i++) {
				char *ty = strtok_r(NULL, " \n", &save);
				char *nm = strtok_r(NULL, " \n", &save);

				if (!ty || !nm)
					die("frame", lineno);
				frames[i].type = atoi(ty);
				frames[i].name = intern(unhex(nm));
			}
			s.frames = frames;
			ret = jfr_writer_add_sample(w, &s);
			if (ret) {
				fprintf(stderr, "jfr_gen: line %ld: add_sample: %s\n", lineno,
					strerror(-ret));
				jfr_writer_close(w);
				return 1;
			}
		} else if (!strcmp(tok, "idle")) {
			/* The writer goes idle: its chunk is written, its buffers freed. */
			if (w && (ret = jfr_writer_idle(w))) {
				fprintf(stderr, "jfr_gen: line %ld: idle: %s\n", lineno, strerror(-ret));
				jfr_writer_close(w);
				return 1;
			}
		} else {
			die("keyword", lineno);
		}
	}
	if (!w) {
		info.labels = labels;
		info.nlabels = nlabels;
		w = jfr_writer_open(argv[1], &info, &opts);
		if (!w)
			return 1;
	}
	ret = jfr_writer_close_stats(w, &st);
	if (ret) {
		fprintf(stderr, "jfr_gen: close: %s\n", strerror(-ret));
		return 1;
	}
	printf("samples %llu events %llu chunks %llu bytes %llu truncated %llu\n",
	       (unsigned long long)st.samples, (unsigned long long)st.events,
	       (unsigned long long)st.chunks, (unsigned long long)st.bytes,
	       (unsigned long long)st.truncated_stacks);
	free(line);
	free(frames);
	return 0;
}

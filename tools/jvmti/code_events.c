/* code_events.c - L, I, U and D records (see code_events.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jvmti.h>
#include <jvmticmlr.h>

#include "code_events.h"
#include "code_table.h"
#include "diag.h"
#include "method_ids.h"
#include "publish.h"
#include "sparkprof_helper_log.h"

#define MAX_NAME 2048

/* "pkg/Cls.method" as async-profiler names it; NULL when the JVM cannot
 * tell (e.g. the class is being unloaded).  Caller frees. */
static char *method_name(JavaVM *vm, jvmtiEnv *jvmti, jmethodID method)
{
	jclass cls = NULL;
	char *sig = NULL, *name = NULL, *out = NULL;
	if ((*jvmti)->GetMethodDeclaringClass(jvmti, method, &cls) != JVMTI_ERROR_NONE)
		return NULL;
	if ((*jvmti)->GetClassSignature(jvmti, cls, &sig, NULL) == JVMTI_ERROR_NONE &&
	    (*jvmti)->GetMethodName(jvmti, method, &name, NULL, NULL) == JVMTI_ERROR_NONE) {
		const char *c = sig;
		size_t clen = strlen(sig);
		if (clen >= 2 && c[0] == 'L' && c[clen - 1] == ';') {
			c++;
			clen -= 2;
		}
		char raw[MAX_NAME];
		snprintf(raw, sizeof(raw), "%.*s.%s", (int)clen, c, name);
		out = malloc(MAX_NAME);
		if (out)
			escape_name(out, MAX_NAME, raw);
	}
	if (sig)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	if (name)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	/* Local refs of a JVMTI callback are freed when it returns, but the
	 * ServiceThread runs many callbacks in one JNI frame. */
	JNIEnv *jni;
	if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) == JNI_OK)
		(*jni)->DeleteLocalRef(jni, cls);
	return out;
}

struct line_buf {
	char buf[4 * SPARKPROF_HELPER_MAX_LINE];
	size_t len;
};

static void flush_lines(struct publisher *pub, struct line_buf *b)
{
	publisher_write(pub, b->buf, b->len);
	b->len = 0;
}

static void add_line(struct publisher *pub, struct line_buf *b, const char *line, size_t n)
{
	if (b->len + n > sizeof(b->buf))
		flush_lines(pub, b);
	memcpy(b->buf + b->len, line, n);
	b->len += n;
}

/* The number of method's name, writing its N record first if it has
 * none yet; 0 when the JVM cannot name it. */
static uint32_t name_number(struct code_events *ce, jvmtiEnv *jvmti, struct line_buf *b,
			    jmethodID method)
{
	/* A name always fits, so a number is never given without its N
	 * record (the reader takes numbers only in order). */
	_Static_assert(MAX_NAME + 32 < SPARKPROF_HELPER_MAX_LINE, "an N record fits a line");
	char line[SPARKPROF_HELPER_MAX_LINE];
	uint32_t nid = method_ids_find(ce->names, method);
	char *name;

	if (nid)
		return nid;
	name = method_name(ce->vm, jvmti, method);
	if (!name)
		return 0;
	nid = method_ids_add(ce->names, method);
	if (nid) {
		int n = snprintf(line, sizeof(line), "N %" PRIu32 " %s\n", nid, name);

		add_line(ce->pub, b, line, n);
		/* Lines leave b in order and nothing else is written meanwhile. */
		method_ids_set_span(ce->names, nid, (struct log_span){ ce->pub->size + b->len - n,
								       (uint32_t)n });
	}
	free(name);
	return nid;
}

/* One J record: range [start, end) of compiled method id (at code) and
 * chain methods[0..depth-2] (the last is the compiled method itself).
 * Dropped when a method cannot be named. */
static void add_inline_record(struct code_events *ce, jvmtiEnv *jvmti, struct line_buf *b,
			      uint64_t id, uint64_t code, uint64_t start, uint64_t end,
			      const PCStackInfo *pc)
{
	char line[SPARKPROF_HELPER_MAX_LINE];
	int n = snprintf(line, sizeof(line), "J %" PRIu64 " %" PRIx64 " %" PRIx64, id,
			 start - code, end - code);

	for (jint i = 0; i + 1 < pc->numstackframes; i++) {
		uint32_t nid = name_number(ce, jvmti, b, pc->methods[i]);

		if (!nid || (size_t)n + 12 >= sizeof(line))
			return;
		n += snprintf(line + n, sizeof(line) - n, " %" PRIu32, nid);
	}
	line[n++] = '\n';
	add_line(ce->pub, b, line, n);
}

static int same_chain(const PCStackInfo *a, const PCStackInfo *b)
{
	return a->numstackframes == b->numstackframes &&
	       !memcmp(a->methods, b->methods, a->numstackframes * sizeof(jmethodID));
}

/* PcDescs are looked up "approximately": a PC belongs to the first
 * descriptor at or after it, so descriptor i covers (pc[i-1], pc[i]].  Runs
 * of equal chains are merged; chains without inlining are not written. */
static void publish_inline(struct code_events *ce, jvmtiEnv *jvmti, uint64_t id, uint64_t code,
			   uint64_t size, const void *compile_info)
{
	const jvmtiCompiledMethodLoadRecordHeader *h = compile_info;
	while (h && h->kind != JVMTI_CMLR_INLINE_INFO)
		h = h->next;
	if (!h)
		return;
	const jvmtiCompiledMethodLoadInlineRecord *r = (const void *)h;
	struct line_buf *b = malloc(sizeof(*b));
	if (!b)
		return;
	b->len = 0;
	uint64_t run_start = code, prev_end = code;
	const PCStackInfo *run = NULL;
	for (jint i = 0; i < r->numpcs; i++) {
		const PCStackInfo *p = &r->pcinfo[i];
		uint64_t end = (uint64_t)(uintptr_t)p->pc + 1;
		if (end <= prev_end || end > code + size || p->numstackframes <= 0)
			continue;
		if (run && !same_chain(run, p)) {
			if (run->numstackframes > 1)
				add_inline_record(ce, jvmti, b, id, code, run_start, prev_end, run);
			run_start = prev_end;
		}
		if (!run || !same_chain(run, p))
			run = p;
		prev_end = end;
	}
	if (run && run->numstackframes > 1)
		add_inline_record(ce, jvmti, b, id, code, run_start, prev_end, run);
	flush_lines(ce->pub, b);
	free(b);
}

static void publish_code(struct code_events *ce, char kind, uint64_t start, uint64_t size,
			 const void *method, char *name, jvmtiEnv *jvmti, const void *compile_info)
{
	char line[SPARKPROF_HELPER_MAX_LINE];
	pthread_mutex_lock(&ce->pub->lock);
	if (kind == 'D' && code_table_has(ce->code, start, size, name)) {
		/* Replays repeat blobs we already published. */
		pthread_mutex_unlock(&ce->pub->lock);
		free(name);
		return;
	}
	uint64_t id = ce->pub->next_code_id++;
	uint64_t offset = ce->pub->size;
	int n = snprintf(line, sizeof(line), "%c %" PRIu64 " %" PRIu64 " %" PRIx64 " %" PRIx64 " %s\n",
			 kind, agent_now_ns(), id, start, size, name);
	if (n > 0 && (size_t)n < sizeof(line))
		publisher_write(ce->pub, line, n);
	if (ce->inline_frames && compile_info)
		publish_inline(ce, jvmti, id, start, size, compile_info);
	code_table_add(ce->code, start, size, id, method, name,
		       (struct log_span){ offset, (uint32_t)(ce->pub->size - offset) });
	pthread_mutex_unlock(&ce->pub->lock);
}

void code_events_method_load(struct code_events *ce, jvmtiEnv *jvmti, jmethodID method,
			     jint code_size, const void *code_addr, const void *compile_info)
{
	if (code_size <= 0 || !code_addr)
		return;
	uint64_t t0 = agent_cost_start(ce->costs);
	char *name = method_name(ce->vm, jvmti, method);
	if (!name)
		return;
	publish_code(ce, 'L', (uintptr_t)code_addr, (uint64_t)code_size, method, name, jvmti,
		     compile_info);
	agent_cost(ce->costs, COST_CODE, t0);
}

void code_events_method_unload(struct code_events *ce, jmethodID method, const void *code_addr)
{
	char line[96];
	uint64_t t0 = agent_cost_start(ce->costs);
	pthread_mutex_lock(&ce->pub->lock);
	uint64_t id = code_table_remove(ce->code, (uintptr_t)code_addr, method);
	if (id) {
		int n = snprintf(line, sizeof(line), "U %" PRIu64 " %" PRIu64 "\n", agent_now_ns(), id);
		publisher_write(ce->pub, line, n);
	}
	pthread_mutex_unlock(&ce->pub->lock);
	agent_cost(ce->costs, COST_UNLOAD, t0);
}

void code_events_dynamic_code(struct code_events *ce, const char *name, const void *address,
			      jint length)
{
	if (length <= 0 || !address)
		return;
	uint64_t t0 = agent_cost_start(ce->costs);
	char *esc = malloc(MAX_NAME);
	if (!esc)
		return;
	escape_name(esc, MAX_NAME, name ? name : "[stub]");
	publish_code(ce, 'D', (uintptr_t)address, (uint64_t)length, NULL, esc, NULL, NULL);
	agent_cost(ce->costs, COST_CODE, t0);
}

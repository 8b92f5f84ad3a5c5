/* jvm_helper_log.c - reads a JVM helper's log (see jvm_helper_log.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/hex_digit.h"
#include "jvm/jvm_helper_log.h"
#include "proc/proc_root.h"
#include "sparkprof_helper_log.h"

#define READ_CHUNK (256 * 1024)
/* A line longer than this is garbage: the helper writes at most
 * SPARKPROF_HELPER_MAX_LINE. */
#define MAX_LINE (4 * SPARKPROF_HELPER_MAX_LINE)
#define MAX_INLINE_DEPTH 64

struct code_blob {
	uint64_t id;
	uint64_t start, end;
	uint64_t loaded, ended;   /* ended: UINT64_MAX while live */
	const char *name;
	unsigned char is_method; /* L, else D */
	unsigned char implicit_end; /* ended because a newer blob overlapped it */
	unsigned char duplicate; /* same range and name as a live D: ignored */
	size_t inl_first, inl_count; /* into log->inl */
};

struct inline_range {
	uint64_t start, end;
	size_t names_first;  /* into log->inl_names, innermost first */
	unsigned depth;
};

struct thread_event {
	uint64_t ts;
	enum jvm_helper_thread_event_kind kind;
	const char *name;
};

struct thread_hist {
	pid_t tid;           /* 0: free slot */
	struct thread_event *v;
	size_t n, cap;
};

struct intern_chunk {
	struct intern_chunk *next;
	size_t used, cap;
	char data[];
};

struct jvm_helper_log {
	int fd;
	off_t offset;
	char *pending;               /* partial line carried between reads */
	size_t pending_len;
	uint64_t horizon;

	struct code_blob *blobs;     /* in id order */
	size_t nblobs, capblobs;
	size_t *live;                /* indexes of live blobs, sorted by start */
	size_t nlive, caplive;
	size_t *by_start;            /* all non-duplicate blobs, sorted by start */
	uint64_t *max_end;           /* prefix maximum of end over by_start */
	size_t nindexed, capindex;
	int index_dirty;

	struct inline_range *inl;
	size_t ninl, capinl;
	const char **inl_names;
	size_t ninl_names, capinl_names;

	struct thread_hist *threads; /* open addressing on tid */
	size_t nthreads, capthreads;

	/* interned strings */
	struct intern_chunk *chunks;
	const char **strs;           /* open addressing */
	size_t nstrs, capstrs;

	jvm_helper_thread_listener listener;
	void *listener_ctx;
	struct jvm_helper_log_stats stats;
};

/* ---- small helpers ---- */

static int grow(void **v, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 16;
	while (c < need)
		c *= 2;
	void *n = realloc(*v, c * elem);
	if (!n)
		return -1;
	*v = n;
	*cap = c;
	return 0;
}

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static const char *intern(struct jvm_helper_log *log, const char *s, size_t len)
{
	if (log->nstrs * 2 >= log->capstrs) {
		size_t cap = log->capstrs ? log->capstrs * 2 : 1024;
		const char **n = calloc(cap, sizeof(*n));
		if (!n)
			return NULL;
		for (size_t i = 0; i < log->capstrs; i++) {
			if (!log->strs[i])
				continue;
			size_t j = hash_bytes(log->strs[i], strlen(log->strs[i])) & (cap - 1);
			while (n[j])
				j = (j + 1) & (cap - 1);
			n[j] = log->strs[i];
		}
		free(log->strs);
		log->strs = n;
		log->capstrs = cap;
	}
	size_t j = hash_bytes(s, len) & (log->capstrs - 1);
	for (; log->strs[j]; j = (j + 1) & (log->capstrs - 1))
		if (!strncmp(log->strs[j], s, len) && log->strs[j][len] == 0)
			return log->strs[j];
	struct intern_chunk *c = log->chunks;
	if (!c || c->cap - c->used < len + 1) {
		size_t cap = len + 1 > 65536 ? len + 1 : 65536;
		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->next = log->chunks;
		c->used = 0;
		c->cap = cap;
		log->chunks = c;
	}
	char *p = c->data + c->used;
	memcpy(p, s, len);
	p[len] = 0;
	c->used += len + 1;
	log->strs[j] = p;
	log->nstrs++;
	return p;
}

/* Unescapes [s, s+len) ("\xHH") and interns it; NULL if malformed. */
static const char *intern_escaped(struct jvm_helper_log *log, const char *s, size_t len)
{
	char buf[MAX_LINE];
	size_t o = 0;
	if (len == 0 || len >= sizeof(buf))
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] != '\\') {
			buf[o++] = s[i];
			continue;
		}
		if (i + 3 >= len || s[i + 1] != 'x' || hex_digit_value(s[i + 2]) < 0 || hex_digit_value(s[i + 3]) < 0)
			return NULL;
		int v = hex_digit_value(s[i + 2]) * 16 + hex_digit_value(s[i + 3]);
		if (v == 0)
			return NULL;
		buf[o++] = (char)v;
		i += 3;
	}
	return intern(log, buf, o);
}

/* A field cursor over one line (no NUL terminator in the buffer). */
struct cursor {
	const char *p, *end;
};

static int next_field(struct cursor *c, const char **s, size_t *len)
{
	if (c->p >= c->end || *c->p == ' ')
		return -1;
	const char *start = c->p;
	while (c->p < c->end && *c->p != ' ')
		c->p++;
	*s = start;
	*len = c->p - start;
	if (c->p < c->end)
		c->p++;   /* the separator */
	return 0;
}

static int parse_u64(struct cursor *c, int base, uint64_t *out)
{
	const char *s;
	size_t len;
	if (next_field(c, &s, &len) < 0 || len > 20)
		return -1;
	uint64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		int d = hex_digit_value(s[i]);
		if (d < 0 || d >= base)
			return -1;
		if (v > (UINT64_MAX - d) / base)
			return -1;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

/* ---- code blobs ---- */

static struct code_blob *blob_by_id(struct jvm_helper_log *log, uint64_t id)
{
	size_t lo = 0, hi = log->nblobs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (log->blobs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < log->nblobs && log->blobs[lo].id == id ? &log->blobs[lo] : NULL;
}

static size_t live_lower_bound(struct jvm_helper_log *log, uint64_t addr)
{
	size_t lo = 0, hi = log->nlive;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (log->blobs[log->live[mid]].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void live_remove_at(struct jvm_helper_log *log, size_t i)
{
	memmove(&log->live[i], &log->live[i + 1], (log->nlive - i - 1) * sizeof(log->live[0]));
	log->nlive--;
}

static void live_remove_blob(struct jvm_helper_log *log, size_t idx)
{
	size_t i = live_lower_bound(log, log->blobs[idx].start);
	for (; i < log->nlive && log->blobs[log->live[i]].start == log->blobs[idx].start; i++)
		if (log->live[i] == idx) {
			live_remove_at(log, i);
			return;
		}
}

static int add_blob(struct jvm_helper_log *log, int is_method, uint64_t ts, uint64_t id,
		    uint64_t start, uint64_t size, const char *name)
{
	if (size == 0 || start > UINT64_MAX - size)
		return -1;
	if (log->nblobs && log->blobs[log->nblobs - 1].id >= id)
		return -1;
	if (grow((void **)&log->blobs, &log->capblobs, log->nblobs + 1, sizeof(*log->blobs)) ||
	    grow((void **)&log->live, &log->caplive, log->nlive + 1, sizeof(*log->live)))
		return -1;
	struct code_blob b = { .id = id, .start = start, .end = start + size, .loaded = ts,
			       .ended = UINT64_MAX, .name = name, .is_method = is_method };
	size_t idx = log->nblobs;
	size_t i = live_lower_bound(log, start);
	/* A repeat of a live stub (replays) is the same blob, not a reuse. */
	if (!is_method && i < log->nlive) {
		struct code_blob *o = &log->blobs[log->live[i]];
		if (o->start == b.start && o->end == b.end && o->name == name && !o->is_method)
			b.duplicate = 1;
	}
	if (!b.duplicate) {
		/* Live blobs never overlap; a new one ends those it covers. */
		if (i > 0 && log->blobs[log->live[i - 1]].end > start)
			i--;
		while (i < log->nlive && log->blobs[log->live[i]].start < b.end) {
			struct code_blob *o = &log->blobs[log->live[i]];
			if (o->end > start) {
				o->ended = ts;
				o->implicit_end = 1;
				live_remove_at(log, i);
			} else {
				i++;
			}
		}
		memmove(&log->live[i + 1], &log->live[i], (log->nlive - i) * sizeof(log->live[0]));
		log->live[i] = idx;
		log->nlive++;
		log->index_dirty = 1;
	}
	log->blobs[idx] = b;
	log->nblobs++;
	log->stats.code_blobs++;
	return 0;
}

static int unload_blob(struct jvm_helper_log *log, uint64_t ts, uint64_t id)
{
	struct code_blob *b = blob_by_id(log, id);
	if (!b || b->duplicate || b->ended != UINT64_MAX || ts < b->loaded)
		return -1;
	b->ended = ts;
	live_remove_blob(log, b - log->blobs);
	log->stats.unloads++;
	return 0;
}

/* "I id start end NAME\tNAME..." for the most recent blob only. */
static int add_inline(struct jvm_helper_log *log, struct cursor *c)
{
	uint64_t id, start, end;
	if (parse_u64(c, 10, &id) || parse_u64(c, 16, &start) || parse_u64(c, 16, &end))
		return -1;
	if (!log->nblobs || log->blobs[log->nblobs - 1].id != id)
		return -1;
	struct code_blob *b = &log->blobs[log->nblobs - 1];
	if (!b->is_method || start >= end || start < b->start || end > b->end)
		return -1;
	if (b->inl_count) {
		struct inline_range *prev = &log->inl[b->inl_first + b->inl_count - 1];
		if (start < prev->end)
			return -1;
	}
	const char *names[MAX_INLINE_DEPTH];
	unsigned depth = 0;
	const char *p = c->p;
	while (p < c->end) {
		const char *tab = memchr(p, '\t', c->end - p);
		const char *stop = tab ? tab : c->end;
		if (depth == MAX_INLINE_DEPTH)
			return -1;
		names[depth] = intern_escaped(log, p, stop - p);
		if (!names[depth])
			return -1;
		depth++;
		p = tab ? tab + 1 : c->end;
		if (tab && p == c->end)
			return -1;
	}
	if (!depth)
		return -1;
	if (grow((void **)&log->inl, &log->capinl, log->ninl + 1, sizeof(*log->inl)) ||
	    grow((void **)&log->inl_names, &log->capinl_names, log->ninl_names + depth,
		 sizeof(*log->inl_names)))
		return -1;
	if (!b->inl_count)
		b->inl_first = log->ninl;
	log->inl[log->ninl++] = (struct inline_range){ start, end, log->ninl_names, depth };
	memcpy(&log->inl_names[log->ninl_names], names, depth * sizeof(names[0]));
	log->ninl_names += depth;
	b->inl_count++;
	log->stats.inline_ranges++;
	return 0;
}

/* ---- threads ---- */

static struct thread_hist *thread_hist(struct jvm_helper_log *log, pid_t tid, int create)
{
	if (create && log->nthreads * 2 >= log->capthreads) {
		size_t cap = log->capthreads ? log->capthreads * 2 : 256;
		struct thread_hist *n = calloc(cap, sizeof(*n));
		if (!n)
			return NULL;
		for (size_t i = 0; i < log->capthreads; i++) {
			if (!log->threads[i].tid)
				continue;
			size_t j = (size_t)log->threads[i].tid * 2654435761u & (cap - 1);
			while (n[j].tid)
				j = (j + 1) & (cap - 1);
			n[j] = log->threads[i];
		}
		free(log->threads);
		log->threads = n;
		log->capthreads = cap;
	}
	if (!log->capthreads)
		return NULL;
	size_t j = (size_t)tid * 2654435761u & (log->capthreads - 1);
	for (; log->threads[j].tid; j = (j + 1) & (log->capthreads - 1))
		if (log->threads[j].tid == tid)
			return &log->threads[j];
	if (!create)
		return NULL;
	log->threads[j].tid = tid;
	log->nthreads++;
	return &log->threads[j];
}

static int add_thread_event(struct jvm_helper_log *log, pid_t tid, uint64_t ts,
			    enum jvm_helper_thread_event_kind kind, const char *name)
{
	if (tid <= 0)
		return -1;
	struct thread_hist *h = thread_hist(log, tid, 1);
	if (!h || grow((void **)&h->v, &h->cap, h->n + 1, sizeof(*h->v)))
		return -1;
	/* Keep each history sorted even if the file is not. */
	size_t i = h->n;
	while (i > 0 && h->v[i - 1].ts > ts)
		i--;
	memmove(&h->v[i + 1], &h->v[i], (h->n - i) * sizeof(h->v[0]));
	h->v[i] = (struct thread_event){ ts, kind, name };
	h->n++;
	log->stats.thread_events++;
	if (log->listener) {
		struct jvm_helper_thread_event ev = { ts, tid, kind, name };
		log->listener(log->listener_ctx, &ev);
	}
	return 0;
}

/* ---- lines ---- */

static void see_time(struct jvm_helper_log *log, uint64_t ts)
{
	if (ts > log->horizon)
		log->horizon = ts;
}

static int parse_line(struct jvm_helper_log *log, const char *line, size_t len)
{
	if (len < 2 || line[1] != ' ')
		return -1;
	struct cursor c = { line + 2, line + len };
	uint64_t ts, id, start, size, tid;
	const char *s;
	size_t slen;
	switch (line[0]) {
	case 'H': {
		uint64_t version, pid;
		if (parse_u64(&c, 10, &version) || parse_u64(&c, 10, &pid) || parse_u64(&c, 10, &ts) ||
		    next_field(&c, &s, &slen) || log->stats.header_seen)
			return -1;
		log->stats.header_seen = 1;
		log->stats.attached = slen == 6 && !memcmp(s, "attach", 6);
		see_time(log, ts);
		return version == SPARKPROF_HELPER_LOG_VERSION ? 0 : -1;
	}
	case 'L':
	case 'D': {
		if (parse_u64(&c, 10, &ts) || parse_u64(&c, 10, &id) || parse_u64(&c, 16, &start) ||
		    parse_u64(&c, 16, &size))
			return -1;
		const char *name = intern_escaped(log, c.p, c.end - c.p);
		if (!name)
			return -1;
		see_time(log, ts);
		return add_blob(log, line[0] == 'L', ts, id, start, size, name);
	}
	case 'I':
		return add_inline(log, &c);
	case 'U':
		if (parse_u64(&c, 10, &ts) || parse_u64(&c, 10, &id) || c.p != c.end)
			return -1;
		see_time(log, ts);
		return unload_blob(log, ts, id);
	case 'T': {
		if (parse_u64(&c, 10, &ts) || parse_u64(&c, 10, &tid) || tid > INT_MAX)
			return -1;
		const char *name = intern_escaped(log, c.p, c.end - c.p);
		if (!name)
			return -1;
		see_time(log, ts);
		return add_thread_event(log, (pid_t)tid, ts, JVM_THREAD_NAMED, name);
	}
	case 'X':
		if (parse_u64(&c, 10, &ts) || parse_u64(&c, 10, &tid) || tid > INT_MAX || c.p != c.end)
			return -1;
		see_time(log, ts);
		return add_thread_event(log, (pid_t)tid, ts, JVM_THREAD_ENDED, NULL);
	case 'S': {
		if (parse_u64(&c, 10, &ts) || parse_u64(&c, 10, &tid) || tid > INT_MAX ||
		    next_field(&c, &s, &slen) || c.p != c.end)
			return -1;
		int idle = slen == 4 && !memcmp(s, "idle", 4);
		if (!idle && !(slen == 4 && !memcmp(s, "busy", 4)))
			return -1;
		see_time(log, ts);
		return add_thread_event(log, (pid_t)tid, ts, idle ? JVM_THREAD_IDLE : JVM_THREAD_BUSY,
					NULL);
	}
	case 'R':
	case 'K':
		if (parse_u64(&c, 10, &ts))
			return -1;
		see_time(log, ts);
		return 0;
	default:
		return 0;   /* a record kind from a newer helper */
	}
}

size_t jvm_helper_log_feed(struct jvm_helper_log *log, const char *buf, size_t len)
{
	size_t done = 0;
	if (!log || !buf)
		return 0;
	while (done < len) {
		const char *nl = memchr(buf + done, '\n', len - done);
		if (!nl)
			break;
		size_t linelen = nl - (buf + done);
		log->stats.lines++;
		if (linelen > MAX_LINE || parse_line(log, buf + done, linelen) < 0)
			log->stats.malformed++;
		done += linelen + 1;
	}
	return done;
}

/* ---- lookups ---- */

static int cmp_start(const void *a, const void *b, void *ctx)
{
	const struct code_blob *blobs = ctx;
	uint64_t x = blobs[*(const size_t *)a].start, y = blobs[*(const size_t *)b].start;
	return x < y ? -1 : x > y;
}

static int build_index(struct jvm_helper_log *log)
{
	if (!log->index_dirty)
		return 0;
	if (grow((void **)&log->by_start, &log->capindex, log->nblobs, sizeof(*log->by_start)))
		return -1;
	size_t cap = log->capindex;
	void *m = realloc(log->max_end, cap * sizeof(*log->max_end));
	if (!m)
		return -1;
	log->max_end = m;
	size_t n = 0;
	for (size_t i = 0; i < log->nblobs; i++)
		if (!log->blobs[i].duplicate)
			log->by_start[n++] = i;
	qsort_r(log->by_start, n, sizeof(*log->by_start), cmp_start, log->blobs);
	uint64_t mx = 0;
	for (size_t i = 0; i < n; i++) {
		if (log->blobs[log->by_start[i]].end > mx)
			mx = log->blobs[log->by_start[i]].end;
		log->max_end[i] = mx;
	}
	log->nindexed = n;
	log->index_dirty = 0;
	return 0;
}

/* Calls fn for every blob covering addr; stops when fn returns non-zero. */
static int for_each_covering(struct jvm_helper_log *log, uint64_t addr,
			     int (*fn)(struct code_blob *b, void *ctx), void *ctx)
{
	if (build_index(log) < 0)
		return -1;
	size_t lo = 0, hi = log->nindexed;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (log->blobs[log->by_start[mid]].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && log->max_end[i] > addr;) {
		struct code_blob *b = &log->blobs[log->by_start[i]];
		if (b->end > addr && fn(b, ctx))
			return 1;
	}
	return 0;
}

static int stop_at_first(struct code_blob *b, void *ctx)
{
	(void)b;
	(void)ctx;
	return 1;
}

int jvm_helper_log_covers(struct jvm_helper_log *log, uint64_t addr)
{
	return log && for_each_covering(log, addr, stop_at_first, NULL) == 1;
}

struct resolve_ctx {
	uint64_t ts;
	struct code_blob *match;
	int matches;
	uint64_t newest_load;     /* latest load among the blobs covering addr */
};

static int collect(struct code_blob *b, void *ctx)
{
	struct resolve_ctx *r = ctx;
	if (b->loaded > r->newest_load)
		r->newest_load = b->loaded;
	if (b->loaded <= r->ts && r->ts < b->ended) {
		r->match = b;
		r->matches++;
	}
	return 0;
}

static const struct inline_range *inline_at(struct jvm_helper_log *log, const struct code_blob *b,
					    uint64_t addr)
{
	size_t lo = 0, hi = b->inl_count;
	const struct inline_range *v = &log->inl[b->inl_first];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->inl_count && v[lo].start <= addr ? &v[lo] : NULL;
}

int jvm_helper_log_resolve(struct jvm_helper_log *log, uint64_t addr, uint64_t ts,
			   struct frame *out, int max)
{
	if (!log || !out || max <= 0)
		return 0;
	struct resolve_ctx r = { .ts = ts };
	if (for_each_covering(log, addr, collect, &r) < 0 || r.matches != 1)
		return 0;
	struct code_blob *b = r.match;
	if (b->implicit_end)
		return 0;
	/* Reused later: the unload record may trail the reuse. */
	if (b->ended != UINT64_MAX && r.newest_load > b->loaded &&
	    ts + SPARKPROF_HELPER_REUSE_GUARD_NS >= b->ended)
		return 0;
	if (!b->is_method) {
		int interp = !strcmp(b->name, "Interpreter");
		out[0] = (struct frame){ b->name, interp ? FRAME_INTERPRETED : FRAME_NATIVE };
		return 1;
	}
	const struct inline_range *in = inline_at(log, b, addr);
	int depth = in ? (int)in->depth : 0;
	int skip = depth + 1 > max ? depth + 1 - max : 0;   /* drop innermost first */
	int n = 0;
	for (int i = skip; i < depth; i++)
		out[n++] = (struct frame){ log->inl_names[in->names_first + i], FRAME_INLINED };
	out[n++] = (struct frame){ b->name, FRAME_JIT };
	return n;
}

static const struct thread_event *event_at(struct jvm_helper_log *log, pid_t tid, uint64_t ts,
					   int (*want)(enum jvm_helper_thread_event_kind))
{
	struct thread_hist *h = log ? thread_hist(log, tid, 0) : NULL;
	if (!h)
		return NULL;
	size_t lo = 0, hi = h->n;   /* first event after ts */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (h->v[mid].ts <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0)
		if (want(h->v[lo].kind))
			return &h->v[lo];
	return NULL;
}

static int is_name_event(enum jvm_helper_thread_event_kind k)
{
	return k == JVM_THREAD_NAMED || k == JVM_THREAD_ENDED;
}

static int is_state_event(enum jvm_helper_thread_event_kind k)
{
	return k != JVM_THREAD_ENDED;
}

const char *jvm_helper_log_thread_name(struct jvm_helper_log *log, pid_t tid, uint64_t ts)
{
	const struct thread_event *e = event_at(log, tid, ts, is_name_event);
	return e && e->kind == JVM_THREAD_NAMED ? e->name : NULL;
}

int jvm_helper_log_thread_idle(struct jvm_helper_log *log, pid_t tid, uint64_t ts)
{
	if (!jvm_helper_log_thread_name(log, tid, ts))
		return -1;
	const struct thread_event *e = event_at(log, tid, ts, is_state_event);
	if (!e)
		return -1;
	return e->kind == JVM_THREAD_IDLE;
}

void jvm_helper_log_set_thread_listener(struct jvm_helper_log *log,
					jvm_helper_thread_listener fn, void *ctx)
{
	log->listener = fn;
	log->listener_ctx = ctx;
}

const struct jvm_helper_log_stats *jvm_helper_log_get_stats(const struct jvm_helper_log *log)
{
	return &log->stats;
}

uint64_t jvm_helper_log_horizon(const struct jvm_helper_log *log)
{
	return log->horizon;
}

/* ---- files ---- */

struct jvm_helper_log *jvm_helper_log_new(void)
{
	struct jvm_helper_log *log = calloc(1, sizeof(*log));
	if (log)
		log->fd = -1;
	return log;
}

void jvm_helper_log_free(struct jvm_helper_log *log)
{
	if (!log)
		return;
	if (log->fd >= 0)
		close(log->fd);
	free(log->pending);
	free(log->blobs);
	free(log->live);
	free(log->by_start);
	free(log->max_end);
	free(log->inl);
	free(log->inl_names);
	for (size_t i = 0; i < log->capthreads; i++)
		free(log->threads[i].v);
	free(log->threads);
	while (log->chunks) {
		struct intern_chunk *c = log->chunks;
		log->chunks = c->next;
		free(c);
	}
	free(log->strs);
	free(log);
}

int jvm_helper_stat_starttime(const char *buf, size_t len, uint64_t *ticks)
{
	/* comm may hold ')' and spaces: fields start after the last ')'. */
	const char *p = NULL;
	for (size_t i = len; i-- > 0;)
		if (buf[i] == ')') {
			p = buf + i + 1;
			break;
		}
	if (!p)
		return -1;
	const char *end = buf + len;
	/* After ')' come field 3 (state) ... field 22 (starttime). */
	for (int field = 3; field <= 22; field++) {
		while (p < end && *p == ' ')
			p++;
		if (p >= end)
			return -1;
		const char *f = p;
		while (p < end && *p != ' ' && *p != '\n')
			p++;
		if (field == 22) {
			struct cursor c = { f, p };
			return parse_u64(&c, 10, ticks);
		}
	}
	return -1;
}

/* Monotonic time (ns) at which pid started, 0 if unknown. */
static uint64_t process_start_ns(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf));
	close(fd);
	uint64_t ticks;
	long hz = sysconf(_SC_CLK_TCK);
	if (n <= 0 || hz <= 0 || jvm_helper_stat_starttime(buf, n, &ticks) < 0)
		return 0;
	struct timespec boot, mono;
	clock_gettime(CLOCK_BOOTTIME, &boot);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	/* starttime counts from boot; the monotonic clock stops in suspend. */
	int64_t suspended = (int64_t)(boot.tv_sec - mono.tv_sec) * 1000000000ll +
			    (boot.tv_nsec - mono.tv_nsec);
	if (suspended < 0)   /* the two clocks were read a moment apart */
		suspended = 0;
	uint64_t start = ticks * (1000000000ull / hz);
	return start > (uint64_t)suspended ? start - (uint64_t)suspended : 0;
}

struct jvm_helper_log *jvm_helper_log_open(pid_t pid)
{
	int fd = proc_root_open_published(pid, SPARKPROF_HELPER_LOG_FMT);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	/* A log left by an earlier process with this pid: its header was
	 * written before the current process started. */
	char head[256];
	ssize_t n = pread(fd, head, sizeof(head) - 1, 0);
	if (n > 0) {
		head[n] = 0;
		struct jvm_helper_log *probe = jvm_helper_log_new();
		const char *nl = memchr(head, '\n', n);
		if (probe && nl) {
			jvm_helper_log_feed(probe, head, nl - head + 1);
			uint64_t started = process_start_ns(pid);
			/* starttime has clock-tick resolution: allow a second. */
			if (probe->stats.header_seen && started &&
			    probe->horizon + 1000000000ull < started) {
				jvm_helper_log_free(probe);
				close(fd);
				errno = ESTALE;
				return NULL;
			}
		}
		jvm_helper_log_free(probe);
	}
	struct jvm_helper_log *log = jvm_helper_log_new();
	if (!log) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	log->fd = fd;
	return log;
}

int jvm_helper_log_poll(struct jvm_helper_log *log)
{
	if (!log || log->fd < 0)
		return -EBADF;
	uint64_t before = log->stats.lines;
	char *buf = malloc(READ_CHUNK + MAX_LINE);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		/* Start with the partial line kept from the last read. */
		size_t have = log->pending_len;
		if (have)
			memcpy(buf, log->pending, have);
		ssize_t n = pread(log->fd, buf + have, READ_CHUNK, log->offset);
		if (n < 0) {
			int e = errno;
			free(buf);
			return e == EINTR ? (int)(log->stats.lines - before) : -e;
		}
		if (n == 0)
			break;
		log->offset += n;
		size_t total = have + n;
		size_t used = jvm_helper_log_feed(log, buf, total);
		size_t rest = total - used;
		if (rest > MAX_LINE) {
			/* No newline in a line's worth of bytes: skip it. */
			log->stats.malformed++;
			rest = 0;
		}
		char *p = realloc(log->pending, rest ? rest : 1);
		if (!p) {
			free(buf);
			return -ENOMEM;
		}
		log->pending = p;
		memcpy(log->pending, buf + used, rest);
		log->pending_len = rest;
		if ((size_t)n < READ_CHUNK)
			break;
	}
	free(buf);
	return (int)(log->stats.lines - before);
}

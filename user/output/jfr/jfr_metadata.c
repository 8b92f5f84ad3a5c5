/* jfr_metadata.c - see jfr_metadata.h.
 *
 * The types are described by the tables below and serialized as the JFR
 * element tree: root -> metadata -> class* (-> field* -> annotation*,
 * annotation*), and root -> region, which the JDK reader requires.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/jfr/jfr_metadata.h"
#include "output/jfr/jfr_types.h"

struct md_field {
	const char *name;
	int type;
	bool cp;                 /* constantPool="true": the value is a key */
	bool array;              /* dimension="1" */
	const char *label;
	const char *timestamp;   /* @Timestamp(unit) */
	const char *timespan;    /* @Timespan(unit) */
	const char *data_amount; /* @DataAmount(unit) */
	bool is_unsigned;        /* @Unsigned */
};

struct md_class {
	const char *name;
	int id;
	const char *super;
	bool simple;             /* simpleType="true" */
	bool content_type;       /* @ContentType (on unit annotations) */
	const char *label;
	const char *description;
	const char *category[2];
	const struct md_field *fields;
	int nfields;
};

#define FIELDS(a) a, (int)(sizeof(a) / sizeof((a)[0]))
#define EVENT "jdk.jfr.Event"
#define ANNOTATION "java.lang.annotation.Annotation"

static const struct md_field f_value[] = {
	{ .name = "value", .type = JFR_TYPE_STRING },
};
static const struct md_field f_value_array[] = {
	{ .name = "value", .type = JFR_TYPE_STRING, .array = true },
};
static const struct md_field f_class[] = {
	{ .name = "classLoader", .type = JFR_TYPE_CLASS_LOADER, .cp = true, .label = "Class Loader" },
	{ .name = "name", .type = JFR_TYPE_SYMBOL, .cp = true, .label = "Name" },
	{ .name = "package", .type = JFR_TYPE_PACKAGE, .cp = true, .label = "Package" },
	{ .name = "modifiers", .type = JFR_TYPE_INT, .label = "Access Modifiers" },
};
static const struct md_field f_thread[] = {
	{ .name = "osName", .type = JFR_TYPE_STRING, .label = "OS Thread Name" },
	{ .name = "osThreadId", .type = JFR_TYPE_LONG, .label = "OS Thread Id" },
	{ .name = "javaName", .type = JFR_TYPE_STRING, .label = "Java Thread Name" },
	{ .name = "javaThreadId", .type = JFR_TYPE_LONG, .label = "Java Thread Id" },
};
static const struct md_field f_class_loader[] = {
	{ .name = "type", .type = JFR_TYPE_CLASS, .cp = true, .label = "Type" },
	{ .name = "name", .type = JFR_TYPE_SYMBOL, .cp = true, .label = "Name" },
};
static const struct md_field f_frame_type[] = {
	{ .name = "description", .type = JFR_TYPE_STRING, .label = "Description" },
};
static const struct md_field f_thread_state[] = {
	{ .name = "name", .type = JFR_TYPE_STRING, .label = "Name" },
};
static const struct md_field f_stack_trace[] = {
	{ .name = "truncated", .type = JFR_TYPE_BOOLEAN, .label = "Truncated" },
	{ .name = "frames", .type = JFR_TYPE_STACK_FRAME, .array = true, .label = "Stack Frames" },
};
/* Field order of StackFrame and Method is binary order and the converter and
 * JMC read them by position: keep exactly these fields. */
static const struct md_field f_stack_frame[] = {
	{ .name = "method", .type = JFR_TYPE_METHOD, .cp = true, .label = "Java Method" },
	{ .name = "lineNumber", .type = JFR_TYPE_INT, .label = "Line Number" },
	{ .name = "bytecodeIndex", .type = JFR_TYPE_INT, .label = "Bytecode Index" },
	{ .name = "type", .type = JFR_TYPE_FRAME_TYPE, .cp = true, .label = "Frame Type" },
};
static const struct md_field f_method[] = {
	{ .name = "type", .type = JFR_TYPE_CLASS, .cp = true, .label = "Type" },
	{ .name = "name", .type = JFR_TYPE_SYMBOL, .cp = true, .label = "Name" },
	{ .name = "descriptor", .type = JFR_TYPE_SYMBOL, .cp = true, .label = "Descriptor" },
	{ .name = "modifiers", .type = JFR_TYPE_INT, .label = "Access Modifiers" },
	{ .name = "hidden", .type = JFR_TYPE_BOOLEAN, .label = "Hidden" },
};
static const struct md_field f_package[] = {
	{ .name = "name", .type = JFR_TYPE_SYMBOL, .cp = true, .label = "Name" },
};
static const struct md_field f_symbol[] = {
	{ .name = "string", .type = JFR_TYPE_STRING, .label = "String" },
};

#define START_TIME { .name = "startTime", .type = JFR_TYPE_LONG, .label = "Start Time", .timestamp = "TICKS" }
/* The JDK reader expects duration, when present, as the second field. */
#define DURATION { .name = "duration", .type = JFR_TYPE_LONG, .label = "Duration", .timespan = "TICKS" }

/* Sample events: exactly these fields.  async-profiler's converter decodes
 * them by position and does not skip to the event's end, so any extra field
 * (even WallClockSample's optional timeSpan, in jfr-converter 4.2)
 * desynchronizes it. */
static const struct md_field f_execution_sample[] = {
	START_TIME,
	{ .name = "sampledThread", .type = JFR_TYPE_THREAD, .cp = true, .label = "Thread" },
	{ .name = "stackTrace", .type = JFR_TYPE_STACK_TRACE, .cp = true, .label = "Stack Trace" },
	{ .name = "state", .type = JFR_TYPE_THREAD_STATE, .cp = true, .label = "Thread State" },
};
/* The thread field is eventThread: JMC attributes samples to threads through
 * it (it maps sampledThread only for the jdk.* sample types); the converter
 * reads fields by position. */
static const struct md_field f_wall_clock_sample[] = {
	START_TIME,
	{ .name = "eventThread", .type = JFR_TYPE_THREAD, .cp = true, .label = "Thread" },
	{ .name = "stackTrace", .type = JFR_TYPE_STACK_TRACE, .cp = true, .label = "Stack Trace" },
	{ .name = "state", .type = JFR_TYPE_THREAD_STATE, .cp = true, .label = "Thread State" },
	{ .name = "samples", .type = JFR_TYPE_INT, .label = "Samples", .is_unsigned = true },
};
static const struct md_field f_active_recording[] = {
	START_TIME,
	DURATION,
	{ .name = "id", .type = JFR_TYPE_LONG, .label = "Id" },
	{ .name = "name", .type = JFR_TYPE_STRING, .label = "Name" },
	{ .name = "destination", .type = JFR_TYPE_STRING, .label = "Destination" },
	{ .name = "maxAge", .type = JFR_TYPE_LONG, .label = "Max Age", .timespan = "MILLISECONDS" },
	{ .name = "maxSize", .type = JFR_TYPE_LONG, .label = "Max Size", .data_amount = "BYTES" },
	{ .name = "recordingStart", .type = JFR_TYPE_LONG, .label = "Start Time",
	  .timestamp = "MILLISECONDS_SINCE_EPOCH" },
	{ .name = "recordingDuration", .type = JFR_TYPE_LONG, .label = "Recording Duration",
	  .timespan = "MILLISECONDS" },
};
static const struct md_field f_active_setting[] = {
	START_TIME,
	DURATION,
	{ .name = "id", .type = JFR_TYPE_LONG, .label = "Event Id" },
	{ .name = "name", .type = JFR_TYPE_STRING, .label = "Setting Name" },
	{ .name = "value", .type = JFR_TYPE_STRING, .label = "Setting Value" },
};
static const struct md_field f_profile_label[] = {
	START_TIME,
	DURATION,
	{ .name = "name", .type = JFR_TYPE_STRING, .label = "Name" },
	{ .name = "value", .type = JFR_TYPE_STRING, .label = "Value" },
};

static const struct md_class classes[] = {
	{ .name = "boolean", .id = JFR_TYPE_BOOLEAN },
	{ .name = "char", .id = JFR_TYPE_CHAR },
	{ .name = "float", .id = JFR_TYPE_FLOAT },
	{ .name = "double", .id = JFR_TYPE_DOUBLE },
	{ .name = "byte", .id = JFR_TYPE_BYTE },
	{ .name = "short", .id = JFR_TYPE_SHORT },
	{ .name = "int", .id = JFR_TYPE_INT },
	{ .name = "long", .id = JFR_TYPE_LONG },
	{ .name = "java.lang.String", .id = JFR_TYPE_STRING },
	{ .name = "java.lang.Class", .id = JFR_TYPE_CLASS, .label = "Java Class", .fields = FIELDS(f_class) },
	{ .name = "java.lang.Thread", .id = JFR_TYPE_THREAD, .label = "Thread", .fields = FIELDS(f_thread) },
	{ .name = "jdk.types.ClassLoader", .id = JFR_TYPE_CLASS_LOADER, .label = "Java Class Loader",
	  .fields = FIELDS(f_class_loader) },
	{ .name = "jdk.types.FrameType", .id = JFR_TYPE_FRAME_TYPE, .simple = true, .label = "Frame type",
	  .fields = FIELDS(f_frame_type) },
	{ .name = "jdk.types.ThreadState", .id = JFR_TYPE_THREAD_STATE, .simple = true,
	  .label = "Java Thread State", .fields = FIELDS(f_thread_state) },
	{ .name = "jdk.types.StackTrace", .id = JFR_TYPE_STACK_TRACE, .label = "Stacktrace",
	  .fields = FIELDS(f_stack_trace) },
	{ .name = "jdk.types.StackFrame", .id = JFR_TYPE_STACK_FRAME, .fields = FIELDS(f_stack_frame) },
	{ .name = "jdk.types.Method", .id = JFR_TYPE_METHOD, .label = "Java Method", .fields = FIELDS(f_method) },
	{ .name = "jdk.types.Package", .id = JFR_TYPE_PACKAGE, .label = "Package", .fields = FIELDS(f_package) },
	{ .name = "jdk.types.Symbol", .id = JFR_TYPE_SYMBOL, .simple = true, .label = "Symbol",
	  .fields = FIELDS(f_symbol) },
	{ .name = "jdk.ExecutionSample", .id = JFR_EVENT_EXECUTION_SAMPLE, .super = EVENT,
	  .label = "Method Profiling Sample",
	  .category = { "Java Virtual Machine", "Profiling" },
	  .fields = FIELDS(f_execution_sample) },
	{ .name = "profiler.WallClockSample", .id = JFR_EVENT_WALL_CLOCK_SAMPLE, .super = EVENT,
	  .label = "Wall Clock Sample",
	  .description = "Off-CPU time of a thread; samples = time / wall interval",
	  .category = { "Java Virtual Machine", "Profiling" },
	  .fields = FIELDS(f_wall_clock_sample) },
	{ .name = "jdk.ActiveRecording", .id = JFR_EVENT_ACTIVE_RECORDING, .super = EVENT, .label = "Flight Recording",
	  .category = { "Flight Recorder" }, .fields = FIELDS(f_active_recording) },
	{ .name = "jdk.ActiveSetting", .id = JFR_EVENT_ACTIVE_SETTING, .super = EVENT, .label = "Recording Setting",
	  .category = { "Flight Recorder" }, .fields = FIELDS(f_active_setting) },
	{ .name = "spark.ProfileLabel", .id = JFR_EVENT_PROFILE_LABEL, .super = EVENT, .label = "Profile Label",
	  .description = "What this profile is: Spark application, executor, stage, "
			 "host, sparkprof version and settings",
	  .category = { "Spark" }, .fields = FIELDS(f_profile_label) },
	{ .name = "jdk.jfr.Label", .id = JFR_ANNOTATION_LABEL, .super = ANNOTATION, .fields = FIELDS(f_value) },
	{ .name = "jdk.jfr.Description", .id = JFR_ANNOTATION_DESCRIPTION, .super = ANNOTATION, .fields = FIELDS(f_value) },
	{ .name = "jdk.jfr.Category", .id = JFR_ANNOTATION_CATEGORY, .super = ANNOTATION, .fields = FIELDS(f_value_array) },
	{ .name = "jdk.jfr.ContentType", .id = JFR_ANNOTATION_CONTENT_TYPE, .super = ANNOTATION },
	{ .name = "jdk.jfr.Timestamp", .id = JFR_ANNOTATION_TIMESTAMP, .super = ANNOTATION, .content_type = true,
	  .fields = FIELDS(f_value) },
	{ .name = "jdk.jfr.Timespan", .id = JFR_ANNOTATION_TIMESPAN, .super = ANNOTATION, .content_type = true,
	  .fields = FIELDS(f_value) },
	{ .name = "jdk.jfr.DataAmount", .id = JFR_ANNOTATION_DATA_AMOUNT, .super = ANNOTATION, .content_type = true,
	  .fields = FIELDS(f_value) },
	{ .name = "jdk.jfr.Unsigned", .id = JFR_ANNOTATION_UNSIGNED, .super = ANNOTATION, .content_type = true },
};

/* The string table is collected while the tree is serialized; it holds
 * copies, so numbers can be formatted into a scratch buffer. */
struct md_writer {
	char **strings;
	size_t nstrings, cap;
	char number[24];
	struct jfr_buf tree;
	bool failed;
};

static void md_ref(struct md_writer *w, const char *s)
{
	size_t i;

	for (i = 0; i < w->nstrings; i++)
		if (!strcmp(w->strings[i], s))
			break;
	if (i == w->nstrings) {
		char *copy;

		if (w->nstrings == w->cap) {
			size_t cap = w->cap ? w->cap * 2 : 128;
			char **p = realloc(w->strings, cap * sizeof(*p));

			if (!p) {
				w->failed = true;
				return;
			}
			w->strings = p;
			w->cap = cap;
		}
		copy = strdup(s);
		if (!copy) {
			w->failed = true;
			return;
		}
		w->strings[w->nstrings++] = copy;
	}
	jfr_buf_varint(&w->tree, i);
}

static const char *md_number(struct md_writer *w, long v)
{
	snprintf(w->number, sizeof(w->number), "%ld", v);
	return w->number;
}

static void md_element(struct md_writer *w, const char *name, int nattrs)
{
	md_ref(w, name);
	jfr_buf_varint(&w->tree, nattrs);
}

static void md_attr(struct md_writer *w, const char *key, const char *value)
{
	md_ref(w, key);
	md_ref(w, value);
}

static void md_children(struct md_writer *w, int n)
{
	jfr_buf_varint(&w->tree, n);
}

/* An annotation element with no value or one value. */
static void md_annotation(struct md_writer *w, int type, const char *value)
{
	md_element(w, "annotation", value ? 2 : 1);
	md_attr(w, "class", md_number(w, type));
	if (value)
		md_attr(w, "value", value);
	md_children(w, 0);
}

static void md_field(struct md_writer *w, const struct md_field *f)
{
	int nann = !!f->label + !!f->timestamp + !!f->timespan + !!f->data_amount +
		   f->is_unsigned;

	md_element(w, "field", 2 + f->cp + f->array);
	md_attr(w, "name", f->name);
	md_attr(w, "class", md_number(w, f->type));
	if (f->cp)
		md_attr(w, "constantPool", "true");
	if (f->array)
		md_attr(w, "dimension", "1");
	md_children(w, nann);
	if (f->label)
		md_annotation(w, JFR_ANNOTATION_LABEL, f->label);
	if (f->timestamp)
		md_annotation(w, JFR_ANNOTATION_TIMESTAMP, f->timestamp);
	if (f->timespan)
		md_annotation(w, JFR_ANNOTATION_TIMESPAN, f->timespan);
	if (f->data_amount)
		md_annotation(w, JFR_ANNOTATION_DATA_AMOUNT, f->data_amount);
	if (f->is_unsigned)
		md_annotation(w, JFR_ANNOTATION_UNSIGNED, NULL);
}

static void md_class(struct md_writer *w, const struct md_class *c)
{
	int ncat = !!c->category[0] + !!c->category[1];
	int nann = !!c->label + !!c->description + !!ncat + c->content_type;

	md_element(w, "class", 2 + !!c->super + c->simple);
	md_attr(w, "name", c->name);
	md_attr(w, "id", md_number(w, c->id));
	if (c->super)
		md_attr(w, "superType", c->super);
	if (c->simple)
		md_attr(w, "simpleType", "true");
	md_children(w, c->nfields + nann);
	for (int i = 0; i < c->nfields; i++)
		md_field(w, &c->fields[i]);
	if (c->label)
		md_annotation(w, JFR_ANNOTATION_LABEL, c->label);
	if (c->description)
		md_annotation(w, JFR_ANNOTATION_DESCRIPTION, c->description);
	if (ncat) {
		/* An array-valued annotation field becomes value-0, value-1... */
		md_element(w, "annotation", 1 + ncat);
		md_attr(w, "class", md_number(w, JFR_ANNOTATION_CATEGORY));
		md_attr(w, "value-0", c->category[0]);
		if (ncat > 1)
			md_attr(w, "value-1", c->category[1]);
		md_children(w, 0);
	}
	if (c->content_type)
		md_annotation(w, JFR_ANNOTATION_CONTENT_TYPE, NULL);
}

static int build_body(struct jfr_buf *out)
{
	struct md_writer w = { 0 };
	size_t nclasses = sizeof(classes) / sizeof(classes[0]);
	int ret = 0;

	jfr_buf_init(&w.tree);
	md_element(&w, "root", 0);
	md_children(&w, 2);
	md_element(&w, "metadata", 0);
	md_children(&w, (int)nclasses);
	for (size_t i = 0; i < nclasses; i++)
		md_class(&w, &classes[i]);
	/* Without a region element the JDK reader fails (17: index out of
	 * bounds, 25: NoSuchElementException). */
	md_element(&w, "region", 3);
	md_attr(&w, "locale", "en_US");
	md_attr(&w, "gmtOffset", "0");
	md_attr(&w, "dst", "0");
	md_children(&w, 0);

	if (w.failed || w.tree.failed) {
		ret = -ENOMEM;
		goto out;
	}
	jfr_buf_varint(out, JFR_METADATA_ID);
	jfr_buf_varint(out, w.nstrings);
	for (size_t i = 0; i < w.nstrings; i++)
		jfr_buf_cstring(out, w.strings[i]);
	jfr_buf_put(out, w.tree.data, w.tree.len);
	if (out->failed)
		ret = -ENOMEM;
out:
	for (size_t i = 0; i < w.nstrings; i++)
		free(w.strings[i]);
	free(w.strings);
	jfr_buf_free(&w.tree);
	return ret;
}

const struct jfr_buf *jfr_metadata_body(void)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static struct jfr_buf body;
	static bool built;
	bool ok;

	pthread_mutex_lock(&lock);
	if (!built) {
		jfr_buf_init(&body);
		built = build_body(&body) == 0;
		if (!built)
			jfr_buf_free(&body);
	}
	ok = built;
	pthread_mutex_unlock(&lock);
	return ok ? &body : NULL;
}

void jfr_metadata_event(struct jfr_buf *out, const struct jfr_buf *body,
			uint64_t start_ticks)
{
	size_t payload = jfr_varint_len(JFR_TYPE_METADATA) + jfr_varint_len(start_ticks) +
			 jfr_varint_len(0) + body->len;

	jfr_buf_varint(out, jfr_event_size(payload));
	jfr_buf_varint(out, JFR_TYPE_METADATA);
	jfr_buf_varint(out, start_ticks);
	jfr_buf_varint(out, 0);
	jfr_buf_put(out, body->data, body->len);
}

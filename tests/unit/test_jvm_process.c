/* test_jvm_process.c - JVM discovery: command lines, option strings,
 * environments, maps, release files, and inspecting live non-JVMs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jvm/jvm_process.h"
#include "tap.h"

/* Builds a NUL-separated argv image from a NULL-terminated list. */
static size_t argv_image(char *buf, size_t cap, const char *const *args)
{
	size_t n = 0;

	for (; *args; args++) {
		size_t l = strlen(*args) + 1;

		if (n + l > cap)
			break;
		memcpy(buf + n, *args, l);
		n += l;
	}
	return n;
}

static struct jvm_cmdline parse(const char *const *args, int *rc)
{
	char buf[4096];
	struct jvm_cmdline c;
	size_t n = argv_image(buf, sizeof(buf), args);

	jvm_flags_init(&c.flags);
	*rc = jvm_cmdline_parse(buf, n, &c);
	return c;
}

static void test_cmdline(void)
{
	struct jvm_cmdline c;
	int rc;

	{
		const char *a[] = { "/usr/lib/jvm/java-17-openjdk-amd64/bin/java",
			"-cp", "/opt/spark/conf/:/opt/spark/jars/*", "-Xmx1024M",
			"-Dspark.driver.port=40000", "-XX:+PreserveFramePointer",
			"org.apache.spark.executor.CoarseGrainedExecutorBackend",
			"--driver-url", "spark://x", "--executor-id", "1", NULL };
		c = parse(a, &rc);
		CHECK(rc == 0 && c.java_launcher, "a java launcher");
		CHECK(c.main_kind == JVM_MAIN_CLASS, "main is a class");
		CHECK_STR(c.main, "org.apache.spark.executor.CoarseGrainedExecutorBackend",
			  "-cp's value is skipped, the executor backend is main");
		CHECK(c.main_index == 6, "main's argv index");
		CHECK(c.flags.preserve_frame_pointer == JVM_FLAG_ON, "PreserveFramePointer on");
		CHECK(!c.flags.incomplete, "all options seen");
	}
	{
		const char *a[] = { "java", "--class-path", "Main", "--add-opens",
			"java.base/java.lang=ALL-UNNAMED", "-p", "mods", "--module-path",
			"m2", "--add-exports", "a/b=c", "-classpath", "x", "--add-modules",
			"ALL", "-XX:+PreserveFramePointer", "-XX:-PreserveFramePointer",
			"app.Main", "arg", NULL };
		c = parse(a, &rc);
		CHECK_STR(c.main, "app.Main", "every value-taking option skips its value");
		CHECK(c.flags.preserve_frame_pointer == JVM_FLAG_OFF, "the last setting wins");
	}
	{
		const char *a[] = { "java", "-Xmx1g", "-jar", "/opt/app/server.jar", "-x", NULL };
		c = parse(a, &rc);
		CHECK(c.main_kind == JVM_MAIN_JAR, "-jar");
		CHECK_STR(c.main, "/opt/app/server.jar", "-jar's file is main");
	}
	{
		const char *a[] = { "java", "-m", "jdk.compiler/com.sun.tools.javac.Main", NULL };
		c = parse(a, &rc);
		CHECK(c.main_kind == JVM_MAIN_MODULE, "-m");
		CHECK_STR(c.main, "jdk.compiler/com.sun.tools.javac.Main", "-m's module/class");
	}
	{
		const char *a[] = { "java", "--module=mod/pkg.Main", NULL };
		c = parse(a, &rc);
		CHECK(c.main_kind == JVM_MAIN_MODULE, "--module=");
		CHECK_STR(c.main, "mod/pkg.Main", "--module='s value");
	}
	{
		const char *a[] = { "java", "--class-path=foo", "Hello.java", NULL };
		c = parse(a, &rc);
		CHECK(c.main_kind == JVM_MAIN_SOURCE, "source-file mode");
		CHECK_STR(c.main, "Hello.java", "the source file is main");
	}
	{
		const char *a[] = { "java", "-XX:+DisableAttachMechanism", "-Xrs",
			"-XX:-EnableDynamicAgentLoading", "@/tmp/args", "X", NULL };
		c = parse(a, &rc);
		CHECK(c.flags.disable_attach == JVM_FLAG_ON, "DisableAttachMechanism");
		CHECK(c.flags.reduce_signal_usage, "-Xrs");
		CHECK(c.flags.enable_dynamic_agent_loading == JVM_FLAG_OFF,
		      "-EnableDynamicAgentLoading");
		CHECK(c.main_kind == JVM_MAIN_ARGFILE && c.flags.incomplete,
		      "an @argfile is reported as such, flags may be incomplete");
		CHECK_STR(c.main, "@/tmp/args", "the argfile is shown");
	}
	{
		const char *a[] = { "java", "-version", NULL };
		c = parse(a, &rc);
		CHECK(rc == 0 && c.main_kind == JVM_MAIN_NONE && !c.main[0], "no main");
	}
	{
		const char *a[] = { "java", "-cp", NULL };
		c = parse(a, &rc);
		CHECK(rc == 0 && c.main_kind == JVM_MAIN_NONE, "-cp without value: no main");
	}
	{
		const char *a[] = { "/opt/custom/launcher", "-XX:+PreserveFramePointer", "x", NULL };
		c = parse(a, &rc);
		CHECK(!c.java_launcher && c.main_kind == JVM_MAIN_OTHER, "an embedding launcher");
		CHECK_STR(c.main, "/opt/custom/launcher", "its argv[0] is shown");
		CHECK(c.flags.incomplete, "its options are not known to be complete");
	}
	{
		const char *a[] = { "/usr/bin/javac", "Foo", NULL };
		c = parse(a, &rc);
		CHECK(!c.java_launcher, "javac is not the java launcher");
	}
	{
		char big[600];
		const char *a[] = { "java", big, NULL };

		memset(big, 'A', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		c = parse(a, &rc);
		CHECK(c.main_truncated && strlen(c.main) == JVM_MAIN_MAX - 1,
		      "a long main class is cut to fit and says so");
	}
	{
		/* not NUL-terminated at the end, as when a process rewrote argv */
		static const char raw[] = { 'j', 'a', 'v', 'a', 0, 'M', 'a', 'i', 'n' };

		jvm_flags_init(&c.flags);
		rc = jvm_cmdline_parse(raw, sizeof(raw), &c);
		CHECK(rc == 0 && !strcmp(c.main, "Main"), "a last argument without NUL");
	}
	jvm_flags_init(&c.flags);
	rc = jvm_cmdline_parse("", 0, &c);
	CHECK(rc == -EINVAL, "an empty command line (kernel thread, zombie) is refused");
}

static void test_option_strings(void)
{
	struct jvm_flags f;
	static const char env[] = "PATH=/bin\0JAVA_TOOL_OPTIONS=-Xmx1g "
				  "-XX:+PreserveFramePointer\0JAVA_TOOL=no\0"
				  "_JAVA_OPTIONS=-XX:PreserveFramePointer=false";
	const char *v;
	size_t vl;

	jvm_flags_init(&f);
	CHECK(f.preserve_frame_pointer == JVM_FLAG_UNSET && f.disable_attach == JVM_FLAG_UNSET,
	      "fresh flags are unset");
	CHECK(jvm_environ_get(env, sizeof(env) - 1, "JAVA_TOOL_OPTIONS", &v, &vl) &&
	      vl == strlen("-Xmx1g -XX:+PreserveFramePointer"), "finds JAVA_TOOL_OPTIONS");
	CHECK(!jvm_environ_get(env, sizeof(env) - 1, "JAVA", &v, &vl),
	      "a name is matched whole, not as a prefix");
	CHECK(jvm_environ_get(env, sizeof(env) - 1, "_JAVA_OPTIONS", &v, &vl) &&
	      !memcmp(v, "-XX:PreserveFramePointer=false", vl),
	      "finds the last entry without a trailing NUL");
	jvm_environ_get(env, sizeof(env) - 1, "JAVA_TOOL_OPTIONS", &v, &vl);
	jvm_flags_apply_option_string(&f, v, vl);
	CHECK(f.preserve_frame_pointer == JVM_FLAG_ON, "JAVA_TOOL_OPTIONS turns it on");
	jvm_environ_get(env, sizeof(env) - 1, "_JAVA_OPTIONS", &v, &vl);
	jvm_flags_apply_option_string(&f, v, vl);
	CHECK(f.preserve_frame_pointer == JVM_FLAG_OFF, "Name=false turns it off");

	jvm_flags_init(&f);
	jvm_flags_apply_option_string(&f, "  -Dx='a b'\t\"-XX:+DisableAttachMechanism\"  ",
				      strlen("  -Dx='a b'\t\"-XX:+DisableAttachMechanism\"  "));
	CHECK(f.disable_attach == JVM_FLAG_ON, "quotes group and are removed");
	jvm_flags_init(&f);
	jvm_flags_apply_option_string(&f, "'-XX:+PreserveFramePointer",
				      strlen("'-XX:+PreserveFramePointer"));
	CHECK(f.preserve_frame_pointer == JVM_FLAG_UNSET,
	      "an unterminated quote (the JVM refuses it) applies nothing");
	jvm_flags_init(&f);
	jvm_flags_apply_option(&f, "-XX:+PreserveFramePointerX", 26);
	jvm_flags_apply_option(&f, "-XX:PreserveFramePointer=maybe", 30);
	CHECK(f.preserve_frame_pointer == JVM_FLAG_UNSET, "other flags and bad values are ignored");
	jvm_flags_apply_option(&f, "-XX:VMOptionsFile=/x", 20);
	CHECK(f.incomplete, "-XX:VMOptionsFile= makes the flags incomplete");
}

static void test_maps(void)
{
	static const char maps[] =
		"55d0c000-55d0d000 r--p 00000000 08:01 123 /usr/lib/jvm/java-17-openjdk-amd64/bin/java\n"
		"7f00000-7f01000 r-xp 00000000 08:01 456                 "
		"/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so\n"
		"7f02000-7f03000 rw-p 00000000 00:00 0 \n"
		"7f04000-7f05000 r-xp 00000000 00:28 5   /tmp/sparkprof-1-2/libsparkprof-agent.so (deleted)\n"
		"7f06000-7f07000 r-xp 00000000 08:01 9   /opt/my dir/libfoo.so\n"
		"7ffd000-7ffe000 rw-p 00000000 00:00 0   [stack]";
	struct jvm_maps_info m;

	jvm_maps_scan(maps, sizeof(maps) - 1, JVM_HELPER_BASENAME, &m);
	CHECK(m.has_libjvm, "libjvm found");
	CHECK_STR(m.libjvm_path, "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so",
		  "libjvm's path");
	CHECK(m.has_library, "a deleted copy of the helper counts as loaded");
	jvm_maps_scan(maps, sizeof(maps) - 1, "libfoo.so", &m);
	CHECK(m.has_library, "a path with a space");
	jvm_maps_scan(maps, sizeof(maps) - 1, "dir/libfoo.so", &m);
	CHECK(!m.has_library, "basenames are compared whole");
	jvm_maps_scan(maps, 60, "libjvm.so", &m);
	CHECK(!m.has_libjvm, "a cut buffer misses what is not in it");
	jvm_maps_scan("7f-8f r-xp 0 0:0 1 /x/libjvm.so.bak\n", 35, NULL, &m);
	CHECK(!m.has_libjvm, "libjvm.so.bak is not libjvm.so");
}

static void test_release(void)
{
	static const char rel17[] = "IMPLEMENTOR=\"Debian\"\nJAVA_RUNTIME_VERSION=\"17.0.15+6\"\n"
				    "JAVA_VERSION=\"17.0.15\"\nJAVA_VERSION_DATE=\"2025-04-15\"\n";
	static const char rel8[] = "JAVA_VERSION=\"1.8.0_402\"\r\nOS_NAME=\"Linux\"";
	static const char rel25[] = "JAVA_VERSION=25";
	static const char broken[] = "JAVA_VERSION=\"21";
	char v[64], tiny[4];

	CHECK(jvm_release_parse(rel17, sizeof(rel17) - 1, v, sizeof(v)) == 17, "JDK 17");
	CHECK_STR(v, "17.0.15", "its version, not JAVA_RUNTIME_VERSION's");
	CHECK(jvm_release_parse(rel8, sizeof(rel8) - 1, v, sizeof(v)) == 8, "JDK 8 (1.8)");
	CHECK_STR(v, "1.8.0_402", "JDK 8's version");
	CHECK(jvm_release_parse(rel25, sizeof(rel25) - 1, v, sizeof(v)) == 25, "unquoted");
	CHECK(jvm_release_parse(broken, sizeof(broken) - 1, v, sizeof(v)) == 0 && !v[0],
	      "an unterminated quote gives nothing");
	CHECK(jvm_release_parse(rel17, sizeof(rel17) - 1, tiny, sizeof(tiny)) == 17 &&
	      !strcmp(tiny, "17."), "a small buffer is cut, the major still right");
	CHECK(jvm_release_parse("OS=x\n", 5, v, sizeof(v)) == 0, "no JAVA_VERSION");
	CHECK(jvm_version_major("21-ea", 5) == 21, "21-ea");
	CHECK(jvm_version_major("1.7", 3) == 7, "1.7");
	CHECK(jvm_version_major("abc", 3) == 0 && jvm_version_major("0.1", 3) == 0,
	      "not versions");
	CHECK(jvm_version_major("99999999999999", 14) == 0, "absurd numbers are refused");
}

static void test_live(void)
{
	struct jvm_info info;
	int rc;

	rc = jvm_process_inspect(getpid(), &info);
	CHECK(rc == -ENOEXEC, "this test is not a JVM (got %d)", rc);
	rc = jvm_process_inspect(0x7ffffff0, &info);
	CHECK(rc == -ESRCH, "a missing process gives -ESRCH (got %d)", rc);
	rc = jvm_process_has_library(getpid(), "libc.so.6");
	CHECK(rc == 1, "libc is mapped into us");
	rc = jvm_process_has_library(getpid(), JVM_HELPER_BASENAME);
	CHECK(rc == 0, "the helper is not");
}

int main(void)
{
	test_cmdline();
	test_option_strings();
	test_maps();
	test_release();
	test_live();
	TAP_DONE();
}

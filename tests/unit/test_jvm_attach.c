/* test_jvm_attach.c - the attach reply parsers, and refusals that need no
 * JVM (the integration tests attach to real JVMs). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jvm/jvm_attach.h"
#include "tap.h"

static int load_result(const char *reply, int *code, bool *ran)
{
	return jvm_attach_load_result(reply, strlen(reply), code, ran);
}

static void test_replies(void)
{
	struct jvm_attach_reply r;
	int code, rc;
	bool ran;

	rc = jvm_attach_parse_reply("0\nreturn code: 0\n", 17, &r);
	CHECK(rc == 0 && r.status == 0 && r.text_len == 15, "status and text split");
	rc = jvm_attach_parse_reply("-1\n", 3, &r);
	CHECK(rc == 0 && r.status == -1 && r.text_len == 0, "a negative status, no text");
	rc = jvm_attach_parse_reply("13", 2, &r);
	CHECK(rc == 0 && r.status == 13, "a status without newline");
	rc = jvm_attach_parse_reply("", 0, &r);
	CHECK(rc == -EPROTO, "an empty reply is a protocol error");
	rc = jvm_attach_parse_reply("abc\n0\n", 6, &r);
	CHECK(rc == -EPROTO, "a reply not starting with a number is refused");
	rc = jvm_attach_parse_reply("99999999999\n", 12, &r);
	CHECK(rc == -EPROTO, "an out-of-range status is refused");
	rc = jvm_attach_parse_reply("-\n", 2, &r);
	CHECK(rc == -EPROTO, "a lone minus is not a number");

	/* JDK 9-20 and 21+: success */
	rc = load_result("0\nreturn code: 0\n", &code, &ran);
	CHECK(rc == 0 && code == 0 && ran, "agent returned 0");
	/* Agent_OnAttach failed */
	rc = load_result("0\nreturn code: 3\n", &code, &ran);
	CHECK(rc == -EPROTO && code == 3 && ran, "agent returned 3");
	rc = load_result("0\nreturn code: -1\n", &code, &ran);
	CHECK(rc == -EPROTO && code == -1 && ran, "agent returned -1 (it still ran)");
	/* JDK 9-20: the library did not load */
	rc = load_result("-1\n/x.so was not loaded.\n/x.so: file too short\n", &code, &ran);
	CHECK(rc == -EPROTO && code == -1 && !ran, "JDK 17: status -1");
	/* JDK 21+: the library did not load */
	rc = load_result("0\n/x.so was not loaded.\n", &code, &ran);
	CHECK(rc == -EPROTO && !ran, "JDK 21+: status 0 and an error text");
	/* JDK 8: the result alone */
	rc = load_result("0\n0\n", &code, &ran);
	CHECK(rc == 0 && code == 0 && ran, "JDK 8: 0 alone on line 2");
	rc = load_result("0\n100\n", &code, &ran);
	CHECK(rc == -EPROTO && code == 100 && ran, "JDK 8: 100 alone on line 2");
	rc = load_result("0\n", &code, &ran);
	CHECK(rc == -EPROTO && !ran, "status 0 and nothing else is not a success");
	rc = load_result("0\nreturn code: x\n", &code, &ran);
	CHECK(rc == -EPROTO && !ran, "a garbled return code is not a success");
	rc = load_result("0\nreturn code: 0 extra\n", &code, &ran);
	CHECK(rc == -EPROTO && !ran, "trailing junk after the code is not a success");
}

static void test_one_line(void)
{
	char out[64], tiny[8];

	jvm_attach_one_line("  first\nsecond\r\n\nthird\n", 23, out, sizeof(out));
	CHECK_STR(out, "first; second; third", "lines joined with '; '");
	jvm_attach_one_line("a\tb\x01" "c", 5, out, sizeof(out));
	CHECK_STR(out, "a?b?c", "control bytes replaced");
	jvm_attach_one_line("0123456789abc", 13, tiny, sizeof(tiny));
	CHECK_STR(tiny, "0123456", "cut to fit");
	jvm_attach_one_line(NULL, 5, out, sizeof(out));
	CHECK_STR(out, "", "NULL text");
}

static void test_refusals(void)
{
	char err[256];
	int rc;

	rc = jvm_attach_load_agent(0x7ffffff0, "/proc/self/exe", NULL, err, sizeof(err));
	CHECK(rc == -ESRCH, "a missing pid: -ESRCH");
	CHECK(strstr(err, "pid 2147483632: no such process") != NULL, "and says so: %s", err);
	rc = jvm_attach_load_agent(getpid(), "/proc/self/exe", NULL, err, sizeof(err));
	CHECK(rc == -ENOEXEC, "a process that is not a JVM: -ENOEXEC");
	CHECK(strstr(err, "not a JVM") && !strchr(err, '\n'), "and says so in one line: %s", err);
	rc = jvm_attach_load_agent(getpid(), "/nonexistent/agent.so", NULL, err, sizeof(err));
	CHECK(rc == -ENOENT && strstr(err, "/nonexistent/agent.so"),
	      "a missing agent names the file: %s", err);
	rc = jvm_attach_jcmd(getpid(), "VM.version", err, sizeof(err), err, sizeof(err));
	CHECK(rc == -ENOEXEC, "jcmd on a non-JVM: -ENOEXEC");
}

/* jcmd against a real JVM: the default `java` (JDK 17, which the project
 * requires) running a source-file program that idles. */
static void test_jcmd_live(void)
{
	static const char src[] =
		"public class Idle { public static void main(String[] a) throws Exception {"
		" System.out.println(\"ready\"); System.out.flush();"
		" while (true) Thread.sleep(1000); } }\n";
	char dir[] = "/tmp/sparkprof-jcmd-XXXXXX", path[64], out[8192], err[512], line[64];
	int fds[2], rc;
	pid_t jvm;
	FILE *f, *from;
	bool ready;

	if (!mkdtemp(dir))
		return;
	snprintf(path, sizeof(path), "%s/Idle.java", dir);
	f = fopen(path, "w");
	if (!f || fputs(src, f) < 0 || fclose(f) || pipe(fds))
		return;
	fflush(stdout);
	jvm = fork();
	if (jvm == 0) {
		dup2(fds[1], 1);
		execlp("java", "java", path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	from = fdopen(fds[0], "r");
	ready = from && fgets(line, sizeof(line), from) && !strcmp(line, "ready\n");
	CHECK(ready, "a JDK 17 JVM runs Idle.java");
	if (ready) {
		rc = jvm_attach_jcmd(jvm, "VM.version", out, sizeof(out), err, sizeof(err));
		CHECK(rc == 0 && strstr(out, "JDK 17"), "jcmd VM.version names JDK 17");
		rc = jvm_attach_jcmd(jvm, "No.such.command", out, sizeof(out), err, sizeof(err));
		CHECK(rc == -EPROTO && strstr(err, "Unknown diagnostic command") &&
		      !strchr(err, '\n'), "an unknown command fails in one line: %s", err);
		rc = kill(jvm, 0);
		CHECK(rc == 0, "the JVM is still alive");
	}
	kill(jvm, SIGKILL);
	waitpid(jvm, NULL, 0);
	if (from)
		fclose(from);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	test_replies();
	test_one_line();
	test_refusals();
	test_jcmd_live();
	TAP_DONE();
}

/* test_kernel_features.c - the probes on this machine's kernel (which has
 * everything sparkprof uses), and how a reduced kernel is described. The
 * kernels that lack parts are probed in VMs (tests/integration/test_kernels.py). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_writer.h"
#include "sampler/kernel_features.h"
#include "tap.h"

static const char *json_of(const struct kernel_features *kf)
{
	static char buf[4096];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	struct json_writer w;

	json_init(&w, f);
	kernel_features_write_json(kf, &w);
	fclose(f);
	return buf;
}

static void test_this_kernel(void)
{
	struct kernel_features kf;
	char line[1024];

	unsetenv("SPARKPROF_ASSUME_FEATURES");
	CHECK(kernel_features_probe(&kf) == 0, "the probes run as root");
	for (int f = 0; f < KERNEL_FEATURES; f++)
		CHECK(kf.has[f], "this kernel (%s) has %s", kf.release, kernel_feature_key(f));
	CHECK(!kernel_features_describe(&kf, true, line, sizeof(line)) &&
	      strstr(line, ": every feature"), "nothing reduced: %s", line);
	CHECK(strstr(json_of(&kf), "\"mode\": \"full\"") && strstr(json_of(&kf), "\"reduced\": []"),
	      "%s", json_of(&kf));
}

static void test_reduced(void)
{
	struct kernel_features kf = { .release = "5.15.0-91-generic" };
	char line[1024], tiny[12];

	kf.has[KERNEL_OFF_CPU] = true;
	CHECK(kernel_features_describe(&kf, false, line, sizeof(line)), "reduced");
	CHECK(strncmp(line, "Linux 5.15.0-91-generic, reduced: hotspot_walk (Java stacks by frame "
		      "pointers alone", 70) == 0, "%s", line);
	CHECK(!strstr(line, "seed_blocked_threads") && !strstr(line, "switch_state"),
	      "without off-CPU profiles, their parts are not mentioned");
	kernel_features_describe(&kf, true, line, sizeof(line));
	CHECK(strstr(line, "; seed_blocked_threads (") && strstr(line, "; switch_state ("),
	      "with them, they are: %s", line);
	kf.has[KERNEL_OFF_CPU] = false;
	kernel_features_describe(&kf, true, line, sizeof(line));
	CHECK(strstr(line, "off_cpu (no --wall or --off-cpu; needs BPF task storage") &&
	      !strstr(line, "seed_blocked_threads"), "no off-CPU at all: %s", line);
	CHECK(strstr(json_of(&kf), "\"mode\": \"reduced\"") &&
	      strstr(json_of(&kf), "\"feature\": \"switch_state\""), "the summary lists all four");
	kernel_features_describe(&kf, true, tiny, sizeof(tiny));
	CHECK(!strcmp(tiny, "Linux 5.15."), "cut to the room given: '%s'", tiny);
}

static void test_assumed(void)
{
	struct kernel_features kf;

	setenv("SPARKPROF_ASSUME_FEATURES", "all", 1);
	CHECK(kernel_features_probe(&kf) == 0 && kernel_features_full(&kf),
	      "SPARKPROF_ASSUME_FEATURES=all claims every feature");
	unsetenv("SPARKPROF_ASSUME_FEATURES");
}

int main(void)
{
	test_this_kernel();
	test_reduced();
	test_assumed();
	TAP_DONE();
}

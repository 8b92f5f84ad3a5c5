/* probe_agent.c - a tiny real JVMTI agent for the attach tests.
 *
 * Options: "marker=PATH[,rc=N]". On load (at start or by attach) it asks the
 * JVM for a JVMTI environment and the java.vm.version property, writes
 * "loaded pid=P via=attach|start java.vm.version=V options=O" to PATH, and
 * returns N (default 0) so the tests can make Agent_OnAttach fail.
 */
#include <jni.h>
#include <jvmti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int probe(JavaVM *vm, const char *options, const char *via)
{
	char marker[4096] = "";
	const char *m, *rc;
	jvmtiEnv *jvmti = NULL;
	char *version = NULL;
	FILE *f;
	int result = 0;

	if (!options)
		options = "";
	m = strstr(options, "marker=");
	if (m) {
		size_t n = strcspn(m + 7, ",");

		if (n >= sizeof(marker))
			n = sizeof(marker) - 1;
		memcpy(marker, m + 7, n);
		marker[n] = '\0';
	}
	rc = strstr(options, "rc=");
	if (rc)
		result = atoi(rc + 3);
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK || !jvmti)
		return 99;
	if ((*jvmti)->GetSystemProperty(jvmti, "java.vm.version", &version) != JVMTI_ERROR_NONE)
		version = NULL;
	if (marker[0]) {
		f = fopen(marker, "w");
		if (f) {
			fprintf(f, "loaded pid=%d via=%s java.vm.version=%s options=%s\n", (int)getpid(),
				via, version ? version : "?", options);
			fclose(f);
		}
	}
	if (version)
		(*jvmti)->Deallocate(jvmti, (unsigned char *)version);
	return result;
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	return probe(vm, options, "attach");
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	return probe(vm, options, "start");
}

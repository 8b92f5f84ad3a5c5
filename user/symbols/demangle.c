/* demangle.c - see demangle.h. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/demangle.h"

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

/* Resolved once per process: the C++ runtime is the same for every caller. */
static pthread_once_t demangler_once = PTHREAD_ONCE_INIT;
static cxa_demangle_fn cxa_demangle;

static void find_demangler(void)
{
	void *lib;

	/* Already loaded (a C++ program, a sanitizer runtime)? */
	cxa_demangle = (cxa_demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (cxa_demangle)
		return;
	lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
	if (lib)
		cxa_demangle = (cxa_demangle_fn)dlsym(lib, "__cxa_demangle");
	/* The library stays loaded for the life of the process on purpose. */
}

bool demangle_is_mangled(const char *name)
{
	return name && name[0] == '_' && name[1] == 'Z';
}

/* Template functions demangle with their return type first ("void
 * A::f<int>"): drop it, as perf does.  Names with operators are left alone,
 * since "operator<" and "operator new" defeat the bracket counting. */
static void cut_return_type(char *name)
{
	size_t cut = 0;
	int depth = 0;

	if (strstr(name, "operator"))
		return;
	for (size_t i = 0; name[i]; i++) {
		char c = name[i];

		if (c == '<' || c == '(' || c == '{' || c == '[')
			depth++;
		else if (c == '>' || c == ')' || c == '}' || c == ']')
			depth--;
		else if (c == ' ' && depth == 0)
			cut = i + 1;
	}
	if (cut && depth == 0)
		memmove(name, name + cut, strlen(name + cut) + 1);
}

void demangle_cut_arguments(char *name)
{
	size_t len = strlen(name);
	char *close = NULL;
	int depth = 0;

	/* The parameter list is the last top-level "(...)" in the name; what
	 * follows it are qualifiers and clone suffixes. */
	for (size_t i = len; i-- > 0;) {
		if (name[i] == ')') {
			if (!close)
				close = name + i;
			depth++;
		} else if (name[i] == '(' && close) {
			if (--depth == 0) {
				if (i > 0) {
					name[i] = '\0';
					cut_return_type(name);
				}
				return;
			}
		} else if (!close && name[i] == ']') {
			/* Skip " [clone .cold]" suffixes to reach the parameters. */
			while (i > 0 && name[i] != '[')
				i--;
		}
	}
}

char *demangle_symbol(const char *name)
{
	const char *at;
	char *mangled, *out, *joined;
	int status = 0;

	if (!demangle_is_mangled(name))
		return NULL;
	pthread_once(&demangler_once, find_demangler);
	if (!cxa_demangle)
		return NULL;
	/* "_ZN...@plt": demangle the part before the suffix, keep the suffix. */
	at = strchr(name, '@');
	mangled = at ? strndup(name, (size_t)(at - name)) : strdup(name);
	if (!mangled)
		return NULL;
	out = cxa_demangle(mangled, NULL, NULL, &status);
	free(mangled);
	if (status != 0 || !out) {
		free(out);
		return NULL;
	}
	demangle_cut_arguments(out);
	if (!at)
		return out;
	if (asprintf(&joined, "%s%s", out, at) < 0)
		joined = NULL;
	free(out);
	return joined;
}

/* jvm_process.c - see jvm_process.h. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "jvm/jvm_process.h"
#include "proc/file_slurp.h"
#include "proc/proc_root.h"
#include "proc/proc_status.h"

#define CMDLINE_MAX (1024 * 1024)
#define ENVIRON_MAX (1024 * 1024)
#define MAPS_MAX (64 * 1024 * 1024)
#define RELEASE_MAX (64 * 1024)
/* JVM options longer than this are not flags we look for. */
#define OPTION_MAX 256

void jvm_flags_init(struct jvm_flags *flags)
{
	flags->preserve_frame_pointer = JVM_FLAG_UNSET;
	flags->disable_attach = JVM_FLAG_UNSET;
	flags->enable_dynamic_agent_loading = JVM_FLAG_UNSET;
	flags->reduce_signal_usage = false;
	flags->incomplete = false;
}

static bool has_prefix(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !memcmp(s, prefix, n);
}

static bool equals(const char *s, size_t len, const char *word)
{
	return strlen(word) == len && !memcmp(s, word, len);
}

/* -XX:+Name, -XX:-Name, -XX:Name=true|false for one boolean flag. */
static void apply_bool_flag(const char *opt, size_t len, const char *name, enum jvm_flag *flag)
{
	size_t n = strlen(name);
	const char *p;

	if (!has_prefix(opt, len, "-XX:"))
		return;
	p = opt + 4;
	len -= 4;
	if (len == n + 1 && (p[0] == '+' || p[0] == '-') && !memcmp(p + 1, name, n)) {
		*flag = p[0] == '+' ? JVM_FLAG_ON : JVM_FLAG_OFF;
	} else if (len > n && !memcmp(p, name, n) && p[n] == '=') {
		if (equals(p + n + 1, len - n - 1, "true"))
			*flag = JVM_FLAG_ON;
		else if (equals(p + n + 1, len - n - 1, "false"))
			*flag = JVM_FLAG_OFF;
	}
}

void jvm_flags_apply_option(struct jvm_flags *flags, const char *opt, size_t len)
{
	if (!opt)
		return;
	if (equals(opt, len, "-Xrs")) {
		flags->reduce_signal_usage = true;
		return;
	}
	if (has_prefix(opt, len, "-XX:Flags=") || has_prefix(opt, len, "-XX:VMOptionsFile=")) {
		flags->incomplete = true;
		return;
	}
	apply_bool_flag(opt, len, "PreserveFramePointer", &flags->preserve_frame_pointer);
	apply_bool_flag(opt, len, "DisableAttachMechanism", &flags->disable_attach);
	apply_bool_flag(opt, len, "EnableDynamicAgentLoading",
			&flags->enable_dynamic_agent_loading);
}

void jvm_flags_apply_option_string(struct jvm_flags *flags, const char *buf, size_t len)
{
	char tok[OPTION_MAX];
	size_t n = 0;
	bool in_token = false, too_long = false;
	char quote = 0;

	if (!buf)
		return;
	for (size_t i = 0; i <= len; i++) {
		char c = i < len ? buf[i] : ' ';

		if (i == len && quote) /* unterminated quote: the JVM refuses it */
			break;
		if (!quote && isspace((unsigned char)c)) {
			if (in_token && !too_long)
				jvm_flags_apply_option(flags, tok, n);
			in_token = too_long = false;
			n = 0;
			continue;
		}
		in_token = true;
		if (!quote && (c == '\'' || c == '"')) {
			quote = c;
			continue;
		}
		if (quote && c == quote) {
			quote = 0;
			continue;
		}
		if (n < sizeof(tok))
			tok[n++] = c;
		else
			too_long = true;
	}
}

bool jvm_environ_get(const char *buf, size_t len, const char *name,
		     const char **val, size_t *vlen)
{
	size_t n = strlen(name);
	const char *p = buf, *end = buf + len;

	if (!buf)
		return false;
	while (p < end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		const char *e = nul ? nul : end;

		if ((size_t)(e - p) > n && !memcmp(p, name, n) && p[n] == '=') {
			*val = p + n + 1;
			*vlen = (size_t)(e - p) - n - 1;
			return true;
		}
		p = nul ? nul + 1 : end;
	}
	return false;
}

/* Launcher options whose value is the next argument. */
static bool option_takes_value(const char *opt, size_t len)
{
	static const char *const with_value[] = {
		"-cp", "-classpath", "--class-path", "-p", "--module-path",
		"--upgrade-module-path", "--add-modules", "--enable-native-access",
		"--limit-modules", "--add-reads", "--add-exports", "--add-opens",
		"--patch-module", "--source", "-d", "--describe-module",
	};

	for (size_t i = 0; i < sizeof(with_value) / sizeof(with_value[0]); i++)
		if (equals(opt, len, with_value[i]))
			return true;
	return false;
}

static void set_main(struct jvm_cmdline *out, enum jvm_main_kind kind, const char *s,
		     size_t len, unsigned index)
{
	size_t n = len;

	if (n >= sizeof(out->main)) {
		n = sizeof(out->main) - 1;
		out->main_truncated = true;
	}
	memcpy(out->main, s, n);
	out->main[n] = '\0';
	out->main_kind = kind;
	out->main_index = index;
}

/* The next NUL-separated argument: [*p, *tok_end), *p moves past it. */
static bool next_arg(const char **p, const char *end, const char **tok, size_t *tok_len)
{
	const char *nul;

	if (*p >= end)
		return false;
	nul = memchr(*p, '\0', (size_t)(end - *p));
	*tok = *p;
	*tok_len = (size_t)((nul ? nul : end) - *p);
	*p = nul ? nul + 1 : end;
	return true;
}

int jvm_cmdline_parse(const char *buf, size_t len, struct jvm_cmdline *out)
{
	const char *p = buf, *end = buf + len, *tok, *base;
	size_t tok_len;
	unsigned index = 0;

	out->main_kind = JVM_MAIN_NONE;
	out->main[0] = '\0';
	out->main_truncated = false;
	out->java_launcher = false;
	out->main_index = 0;
	if (!buf || !next_arg(&p, end, &tok, &tok_len) || !tok_len)
		return -EINVAL;

	base = tok;
	for (size_t i = 0; i < tok_len; i++)
		if (tok[i] == '/')
			base = tok + i + 1;
	out->java_launcher = equals(base, (size_t)(tok + tok_len - base), "java");
	if (!out->java_launcher) {
		/* An embedding launcher: its arguments are its own, so we
		 * only pick up what look like JVM flags and say we may have
		 * missed some. */
		set_main(out, JVM_MAIN_OTHER, tok, tok_len, 0);
		while (next_arg(&p, end, &tok, &tok_len))
			jvm_flags_apply_option(&out->flags, tok, tok_len);
		out->flags.incomplete = true;
		return 0;
	}

	while (next_arg(&p, end, &tok, &tok_len)) {
		index++;
		if (!tok_len)
			continue;
		if (tok[0] == '@') {
			/* The launcher expands @argfiles; we do not read them,
			 * so say what we saw and stop. */
			set_main(out, JVM_MAIN_ARGFILE, tok, tok_len, index);
			out->flags.incomplete = true;
			return 0;
		}
		if (equals(tok, tok_len, "-jar") || equals(tok, tok_len, "-m") ||
		    equals(tok, tok_len, "--module")) {
			enum jvm_main_kind kind = tok[1] == 'j' ? JVM_MAIN_JAR : JVM_MAIN_MODULE;

			if (next_arg(&p, end, &tok, &tok_len))
				set_main(out, kind, tok, tok_len, index + 1);
			return 0;
		}
		if (has_prefix(tok, tok_len, "--module=")) {
			set_main(out, JVM_MAIN_MODULE, tok + 9, tok_len - 9, index);
			return 0;
		}
		if (tok[0] == '-') {
			if (option_takes_value(tok, tok_len)) {
				if (!next_arg(&p, end, &tok, &tok_len))
					return 0;
				index++;
			} else {
				jvm_flags_apply_option(&out->flags, tok, tok_len);
			}
			continue;
		}
		set_main(out, tok_len > 5 && equals(tok + tok_len - 5, 5, ".java") ?
			 JVM_MAIN_SOURCE : JVM_MAIN_CLASS, tok, tok_len, index);
		return 0;
	}
	return 0;
}

/* The basename of a maps path, without a " (deleted)" suffix. */
static void path_basename(const char *path, size_t len, const char **base, size_t *base_len)
{
	static const char deleted[] = " (deleted)";
	size_t dl = sizeof(deleted) - 1;
	const char *slash;

	if (len >= dl && !memcmp(path + len - dl, deleted, dl))
		len -= dl;
	slash = memrchr(path, '/', len);
	*base = slash ? slash + 1 : path;
	*base_len = (size_t)(path + len - *base);
}

void jvm_maps_scan(const char *buf, size_t len, const char *library_basename,
		   struct jvm_maps_info *out)
{
	const char *p = buf, *end = buf + len;

	memset(out, 0, sizeof(*out));
	if (!buf)
		return;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *q = p, *base;
		size_t base_len;

		/* address perms offset dev inode, then the path */
		for (int field = 0; field < 5 && q < le; field++) {
			while (q < le && *q != ' ')
				q++;
			while (q < le && *q == ' ')
				q++;
		}
		if (q < le && *q == '/') {
			path_basename(q, (size_t)(le - q), &base, &base_len);
			if (!out->has_libjvm && equals(base, base_len, "libjvm.so")) {
				size_t n = (size_t)(base + base_len - q);

				out->has_libjvm = true;
				if (n < sizeof(out->libjvm_path)) {
					memcpy(out->libjvm_path, q, n);
					out->libjvm_path[n] = '\0';
				}
			}
			if (library_basename && equals(base, base_len, library_basename))
				out->has_library = true;
		}
		p = nl ? nl + 1 : end;
	}
}

int jvm_version_major(const char *v, size_t len)
{
	size_t i = 0;
	int major = 0;

	if (!v)
		return 0;
	while (i < len && v[i] >= '0' && v[i] <= '9' && major < 1000)
		major = major * 10 + (v[i++] - '0');
	if (major == 1 && i < len && v[i] == '.') {
		/* "1.8.0_362": the old scheme puts the major second */
		major = 0;
		i++;
		while (i < len && v[i] >= '0' && v[i] <= '9' && major < 1000)
			major = major * 10 + (v[i++] - '0');
	}
	return major > 0 && major < 1000 ? major : 0;
}

int jvm_release_parse(const char *buf, size_t len, char *version, size_t version_len)
{
	const char *p = buf, *end = buf + len;

	if (version_len)
		version[0] = '\0';
	if (!buf)
		return 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;

		if (has_prefix(p, (size_t)(le - p), "JAVA_VERSION=")) {
			const char *v = p + 13;
			size_t n;

			if (v < le && *v == '"') {
				const char *close = memchr(v + 1, '"', (size_t)(le - v - 1));

				if (!close)
					return 0;
				v++;
				n = (size_t)(close - v);
			} else {
				n = (size_t)(le - v);
				while (n && (v[n - 1] == '\r' || v[n - 1] == ' '))
					n--;
			}
			if (version_len) {
				size_t c = n < version_len - 1 ? n : version_len - 1;

				memcpy(version, v, c);
				version[c] = '\0';
			}
			return jvm_version_major(v, n);
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}

/* Reads a file inside pid's root directory, resolving symlinks as the
 * process would (an absolute link in a container stays in the container). */
static int read_in_root(pid_t pid, const char *path, size_t max, char **buf, size_t *len)
{
	int fd = proc_root_open(pid, path, O_RDONLY), err;
	struct stat st;

	if (fd < 0)
		return fd;
	err = fstat(fd, &st) ? -errno : S_ISREG(st.st_mode) ? 0 : -EPERM;
	if (!err)
		err = fd_read_prefix(fd, max, buf, len);
	close(fd);
	return err;
}

static int read_proc(pid_t pid, const char *what, size_t max, char **buf, size_t *len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	return file_read_prefix(path, max, buf, len);
}

/* Finds the JDK's `release` file above dir (lib/server, jre/lib/amd64/server
 * ...) and reads the version from it. */
static void find_jdk(pid_t pid, const char *dir, struct jvm_info *out)
{
	char home[sizeof(out->jdk_home)], path[sizeof(out->jdk_home) + 16];

	if (snprintf(home, sizeof(home), "%s", dir) >= (int)sizeof(home))
		return;
	for (int up = 0; up < 5; up++) {
		char *slash = strrchr(home, '/');
		char *buf;
		size_t len;

		if (!slash || slash == home)
			return;
		*slash = '\0';
		snprintf(path, sizeof(path), "%s/release", home);
		if (read_in_root(pid, path, RELEASE_MAX, &buf, &len) == 0) {
			out->jdk_major = jvm_release_parse(buf, len, out->jdk_version,
							   sizeof(out->jdk_version));
			free(buf);
			snprintf(out->jdk_home, sizeof(out->jdk_home), "%s", home);
			return;
		}
	}
}

static void user_name(uid_t uid, char *out, size_t len)
{
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res)
		snprintf(out, len, "%s", pw.pw_name);
	else
		snprintf(out, len, "%u", (unsigned)uid);
}

static void apply_env_option(const char *env, size_t env_len, const char *name,
			     struct jvm_flags *flags)
{
	const char *val;
	size_t vlen;

	if (jvm_environ_get(env, env_len, name, &val, &vlen))
		jvm_flags_apply_option_string(flags, val, vlen);
}

int jvm_process_inspect(pid_t pid, struct jvm_info *out)
{
	struct proc_status st;
	struct jvm_maps_info maps;
	char exe[PATH_MAX], link[64], *buf = NULL, *env = NULL;
	size_t len = 0, env_len = 0;
	ssize_t n;
	int err;
	bool java_exe;

	memset(out, 0, sizeof(*out));
	err = proc_status_read(pid, &st);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	if (!(st.present & PROC_STATUS_UID) || !(st.present & PROC_STATUS_GID))
		return -EPROTO;
	if (st.present & PROC_STATUS_TGID)
		pid = st.tgid; /* a thread id names its process */
	out->pid = pid;
	out->ns_pid = proc_status_ns_pid(&st);
	out->uid = proc_status_euid(&st);
	out->gid = proc_status_egid(&st);

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	java_exe = n > 5 && !strcmp(exe + n - 5, "/java");

	err = read_proc(pid, "maps", MAPS_MAX, &buf, &len);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	jvm_maps_scan(buf, len, JVM_HELPER_BASENAME, &maps);
	free(buf);
	if (!maps.has_libjvm && !java_exe)
		return -ENOEXEC;
	out->helper_loaded = maps.has_library;

	err = read_proc(pid, "cmdline", CMDLINE_MAX, &buf, &len);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	if (read_proc(pid, "environ", ENVIRON_MAX, &env, &env_len))
		env = NULL;
	/* The JVM reads JAVA_TOOL_OPTIONS first, then the command line (the
	 * launcher puts JDK_JAVA_OPTIONS in front of it), then _JAVA_OPTIONS;
	 * the last setting of a flag wins. */
	jvm_flags_init(&out->cmdline.flags);
	apply_env_option(env, env_len, "JAVA_TOOL_OPTIONS", &out->cmdline.flags);
	apply_env_option(env, env_len, "JDK_JAVA_OPTIONS", &out->cmdline.flags);
	err = jvm_cmdline_parse(buf, len, &out->cmdline);
	free(buf);
	apply_env_option(env, env_len, "_JAVA_OPTIONS", &out->cmdline.flags);
	free(env);
	if (err)
		return -ESRCH; /* an empty command line: the process is exiting */
	out->flags = out->cmdline.flags;

	if (maps.has_libjvm && maps.libjvm_path[0]) {
		char *slash = strrchr(maps.libjvm_path, '/');

		*slash = '\0';
		find_jdk(pid, maps.libjvm_path, out);
	} else if (java_exe) {
		exe[n - 5] = '\0'; /* .../bin */
		find_jdk(pid, exe, out);
	}
	user_name(out->uid, out->user, sizeof(out->user));
	return 0;
}

int jvm_process_has_library(pid_t pid, const char *library_basename)
{
	struct jvm_maps_info maps;
	char *buf;
	size_t len;
	int err = read_proc(pid, "maps", MAPS_MAX, &buf, &len);

	if (err)
		return err == -ENOENT ? -ESRCH : err;
	jvm_maps_scan(buf, len, library_basename, &maps);
	free(buf);
	return maps.has_library;
}

static int by_pid(const void *a, const void *b)
{
	const struct jvm_info *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

int jvm_process_scan(struct jvm_info **out, size_t *count)
{
	DIR *proc = opendir("/proc");
	struct jvm_info *list = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;

	if (!proc)
		return -errno;
	while ((de = readdir(proc))) {
		char *endp;
		long pid = strtol(de->d_name, &endp, 10);

		if (*endp || pid <= 0 || pid > INT_MAX || pid == getpid())
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct jvm_info *bigger = realloc(list, ncap * sizeof(*list));

			if (!bigger) {
				free(list);
				closedir(proc);
				return -ENOMEM;
			}
			list = bigger;
			cap = ncap;
		}
		/* Processes that vanish or are not JVMs are simply skipped. */
		if (jvm_process_inspect((pid_t)pid, &list[n]) == 0)
			n++;
	}
	closedir(proc);
	qsort(list, n, sizeof(*list), by_pid);
	*out = list;
	*count = n;
	return 0;
}

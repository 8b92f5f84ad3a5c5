/* cpu_list.c - see cpu_list.h. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "sampler/cpu_list.h"

static int parse_number(const char *buf, size_t len, size_t *pos, int *out)
{
	long value = 0;
	size_t start = *pos;

	while (*pos < len && buf[*pos] >= '0' && buf[*pos] <= '9') {
		value = value * 10 + (buf[*pos] - '0');
		if (value >= CPU_LIST_MAX)
			return -E2BIG;
		(*pos)++;
	}
	if (*pos == start)
		return -EINVAL;
	*out = (int)value;
	return 0;
}

int cpu_list_parse(const char *buf, size_t len, int *cpus, int max)
{
	size_t pos = 0;
	int count = 0, last = -1;

	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' ' || buf[len - 1] == '\0'))
		len--;
	if (!len)
		return -EINVAL;
	while (pos < len) {
		int first, end, err;

		err = parse_number(buf, len, &pos, &first);
		if (err)
			return err;
		end = first;
		if (pos < len && buf[pos] == '-') {
			pos++;
			err = parse_number(buf, len, &pos, &end);
			if (err)
				return err;
		}
		/* Ranges must ascend and not overlap: anything else is not the
		 * kernel's format. */
		if (end < first || first <= last)
			return -EINVAL;
		for (int cpu = first; cpu <= end; cpu++) {
			if (count >= max)
				return -E2BIG;
			cpus[count++] = cpu;
		}
		last = end;
		if (pos < len) {
			if (buf[pos] != ',')
				return -EINVAL;
			pos++;
			if (pos == len)
				return -EINVAL;
		}
	}
	return count;
}

int cpu_list_online(int *cpus, int max)
{
	char buf[4096];
	ssize_t n;
	int fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	if (n < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	close(fd);
	return cpu_list_parse(buf, (size_t)n, cpus, max);
}

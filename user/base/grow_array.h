/* grow_array.h - room for one more element in a malloc'd array, by
 * doubling, for the stores that grow one record at a time. */
#ifndef SPARKPROF_GROW_ARRAY_H
#define SPARKPROF_GROW_ARRAY_H

#include <errno.h>
#include <stdlib.h>

/* Makes *v (of *cap elements of elem bytes) hold at least need elements.
 * 0, or -ENOMEM with *v and *cap unchanged. */
static inline int grow_array(void **v, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 16;
	while (c < need)
		c *= 2;
	void *n = realloc(*v, c * elem);
	if (!n)
		return -ENOMEM;
	*v = n;
	*cap = c;
	return 0;
}

/* Gives back most of *v's room when it holds under a quarter of it (after a
 * store dropped what it no longer needs); keeps it on failure. */
static inline void shrink_array(void **v, size_t *cap, size_t n, size_t elem)
{
	size_t c = n < 8 ? 16 : 2 * n;

	if (*cap <= 4 * n || *cap <= c)
		return;
	void *p = realloc(*v, c * elem);
	if (p) {
		*v = p;
		*cap = c;
	}
}

#endif

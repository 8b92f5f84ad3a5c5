/* hex_digit.h - the value of one hexadecimal digit, for the parsers of
 * /proc files and helper logs. */
#ifndef SPARKPROF_HEX_DIGIT_H
#define SPARKPROF_HEX_DIGIT_H

/* 0..15, or -1 when c is not a hex digit. */
static inline int hex_digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif

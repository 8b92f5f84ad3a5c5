/* page_assets.c - see page_assets.h. The files are included by the
 * assembler; the Makefile rebuilds this object when one of them changes. */
#include <errno.h>
#include <string.h>

#include "output/page_assets.h"

#define EMBED(sym, file)                                                        \
	__asm__(".section .rodata\n"                                            \
		".global " #sym "\n"                                            \
		".balign 16\n" #sym ":\n"                                       \
		".incbin \"user/output/web/" file "\"\n"                        \
		".global " #sym "_end\n" #sym "_end:\n"                         \
		".byte 0\n"                                                     \
		".previous\n");                                                 \
	extern const char sym[], sym##_end[]

EMBED(sp_asset_flame_html, "flame.html");
EMBED(sp_asset_flame_css, "flame.css");
EMBED(sp_asset_flame_js, "flame.js");
EMBED(sp_asset_index_html, "index.html");
EMBED(sp_asset_index_js, "index.js");
EMBED(sp_asset_report_html, "report.html");
EMBED(sp_asset_report_js, "report.js");

const char *page_asset(enum page_asset a, size_t *len)
{
	static const struct { const char *start, *end; } assets[ASSET_MAX] = {
		[ASSET_FLAME_HTML] = { sp_asset_flame_html, sp_asset_flame_html_end },
		[ASSET_FLAME_CSS] = { sp_asset_flame_css, sp_asset_flame_css_end },
		[ASSET_FLAME_JS] = { sp_asset_flame_js, sp_asset_flame_js_end },
		[ASSET_INDEX_HTML] = { sp_asset_index_html, sp_asset_index_html_end },
		[ASSET_INDEX_JS] = { sp_asset_index_js, sp_asset_index_js_end },
		[ASSET_REPORT_HTML] = { sp_asset_report_html, sp_asset_report_html_end },
		[ASSET_REPORT_JS] = { sp_asset_report_js, sp_asset_report_js_end },
	};

	if ((unsigned)a >= ASSET_MAX) {
		*len = 0;
		return "";
	}
	*len = (size_t)(assets[a].end - assets[a].start);
	return assets[a].start;
}

void page_write_html_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*s, out);
		}
	}
}

static int write_asset(FILE *out, enum page_asset a)
{
	size_t len;
	const char *text = page_asset(a, &len);

	return fwrite(text, 1, len, out) == len ? 0 : -EIO;
}

int page_write_template(FILE *out, enum page_asset template, page_marker_fn fn, void *ctx)
{
	size_t len, pos = 0;
	const char *t = page_asset(template, &len);

	while (pos < len) {
		const char *at = memchr(t + pos, '@', len - pos);
		size_t n = 1;
		char marker[16];
		int err = 1;

		if (!at) {
			fwrite(t + pos, 1, len - pos, out);
			break;
		}
		fwrite(t + pos, 1, (size_t)(at - (t + pos)), out);
		pos = (size_t)(at - t);
		while (pos + n < len && n < sizeof(marker) && t[pos + n] >= 'A' && t[pos + n] <= 'Z')
			n++;
		if (n > 1 && n < sizeof(marker) && pos + n < len && t[pos + n] == '@') {
			memcpy(marker, t + pos + 1, n - 1);
			marker[n - 1] = '\0';
			err = fn ? fn(out, marker, ctx) : 1;
			if (err > 0 && !strcmp(marker, "CSS"))
				err = write_asset(out, ASSET_FLAME_CSS);
			else if (err > 0 && !strcmp(marker, "JS"))
				err = write_asset(out, ASSET_FLAME_JS);
			if (err < 0)
				return err;
			if (!err) {
				pos += n + 1;
				continue;
			}
		}
		fputc('@', out); /* not a marker: copy it */
		pos++;
	}
	return ferror(out) ? -EIO : 0;
}

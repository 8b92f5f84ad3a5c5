/* page_assets.h - the HTML, CSS and JS of the flame graph, run index and
 * application report pages. They live as files in user/output/web/ and are embedded into the
 * binary when it is built (.incbin), so a page needs nothing at run time.
 *
 * Templates hold markers that the writers replace: @TITLE@ (HTML text),
 * @CSS@, @JS@ and @DATA@ (a JavaScript object literal).
 */
#ifndef SPARKPROF_PAGE_ASSETS_H
#define SPARKPROF_PAGE_ASSETS_H

#include <stddef.h>
#include <stdio.h>

enum page_asset {
	ASSET_FLAME_HTML,
	ASSET_FLAME_CSS,
	ASSET_FLAME_JS,
	ASSET_INDEX_HTML,
	ASSET_INDEX_JS,
	ASSET_REPORT_HTML,
	ASSET_REPORT_JS,
	ASSET_MAX,
};

const char *page_asset(enum page_asset a, size_t *len);

/* Callback that writes the text of one marker ("TITLE", "DATA", ...). */
typedef int (*page_marker_fn)(FILE *out, const char *marker, void *ctx);

/* Copies template to out, replacing "@NAME@" markers (NAME: capital
 * letters) through fn; @CSS@ and @JS@ of the flame page are filled here
 * unless fn handles them. 0 or -EIO. */
int page_write_template(FILE *out, enum page_asset template, page_marker_fn fn, void *ctx);

/* Writes s with &, <, >, " escaped (HTML text and attribute values). */
void page_write_html_text(FILE *out, const char *s);

#endif

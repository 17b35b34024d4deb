/* visible.c -- unit tests of cli_visible(): stored text made safe for
 * the operator's terminal. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"

#include "../tap.h"

static void
vis(const char *in, const char *want, const char *name)
{
	char *got = cli_visible(in, 1);

	is_str(got, want, name);
	free(got);
}

int
main(void)
{
	char *raw;

	vis("plain text", "plain text", "plain text is unchanged");
	vis("two\nlines\tand a tab", "two\nlines\tand a tab", "newline and tab are kept");
	vis("\033]0;title\007\033[2J", "\\x1b]0;title\\x07\\x1b[2J", "ESC and BEL become \\x1b and \\x07");
	vis("a\rb\bc\177d", "a\\x0db\\x08c\\x7fd", "CR, backspace and DEL are shown");
	vis("csi \xc2\x9b"
	    "31m",
	    "csi \\u009b31m", "a C1 control (U+009B) becomes \\u009b");
	vis("caf\xc3\xa9 \xe2\x82\xac \xc2\xa0", "caf\xc3\xa9 \xe2\x82\xac \xc2\xa0",
	    "other UTF-8 (U+00A0 too) is kept");
	vis("", "", "the empty string");
	vis(NULL, "", "NULL is the empty string");
	raw = xmalloc(1001);
	memset(raw, '\033', 1000);
	raw[1000] = '\0';
	{
		char *v = cli_visible(raw, 1);

		is_int((long long)strlen(v), 4000, "1000 ESC bytes become 4000 visible characters");
		free(v);
	}
	free(raw);
	raw = cli_visible("\033[31m", 0);
	is_str(raw, "\033[31m", "not a terminal: the bytes as stored");
	free(raw);
	return done();
}

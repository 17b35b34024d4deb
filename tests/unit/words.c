/* words.c -- unit tests of words_split, the shell-like splitting of
 * `exec =` lines. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "words.h"

#include "../tap.h"

/* Splits s and checks the exact argv: count and every word.  The
 * expected words follow name and end with NULL. */
static void
splits(const char *name, const char *s, ...)
{
	char err[ERRSZ] = "";
	char **v = words_split(s, err);
	const char *want[32];
	size_t nwant = 0, i;
	int same;
	va_list ap;

	va_start(ap, s);
	while (nwant < ARRAY_LEN(want) && (want[nwant] = va_arg(ap, const char *)) != NULL)
		nwant++;
	va_end(ap);
	if (v == NULL) {
		ok(0, "%s: split", name);
		printf("#   input: [%s]\n#   error: %s\n", s, err);
		return;
	}
	same = strv_len(v) == nwant;
	for (i = 0; same && i < nwant; i++)
		same = strcmp(v[i], want[i]) == 0;
	ok(same, "%s", name);
	is_int((long long)strv_len(v), (long long)nwant, "word count");
	if (!same) {
		printf("#   input: [%s]\n#   got %zu words:", s, strv_len(v));
		for (i = 0; v[i] != NULL; i++)
			printf(" [%s]", v[i]);
		printf("\n#   want %zu words:", nwant);
		for (i = 0; i < nwant; i++)
			printf(" [%s]", want[i]);
		printf("\n");
	}
	ok(v[strv_len(v)] == NULL, "%s: argv is NULL-terminated", name);
	strv_free(v);
}

/* Checks that s is refused and that the message contains what. */
static void
refuses(const char *name, const char *s, const char *what)
{
	char err[ERRSZ] = "";
	char **v = words_split(s, err);

	ok(v == NULL, "%s: refused", name);
	ok(strstr(err, what) != NULL, "%s: error mentions '%s'", name, what);
	if (strstr(err, what) == NULL)
		printf("#   error: %s\n", err);
	strv_free(v);
}

static void
test_plain(void)
{
	splits("one word", "/bin/true", "/bin/true", NULL);
	splits("plain words", "php artisan queue:work", "php", "artisan", "queue:work", NULL);
	splits("several blanks and tabs", "  a \t\t b   c\t", "a", "b", "c", NULL);
	splits("newline separates", "a\nb", "a", "b", NULL);
	splits("punctuation kept", "x --opt=1 -v a=b;c|d>e", "x", "--opt=1", "-v", "a=b;c|d>e", NULL);
	splits("no expansion", "echo $HOME ~ *.txt $(id)", "echo", "$HOME", "~", "*.txt", "$(id)", NULL);
}

static void
test_single_quotes(void)
{
	splits("single quotes keep blanks", "echo 'a  b\tc'", "echo", "a  b\tc", NULL);
	splits("single quotes keep backslash and $", "x 'a\\b $HOME \\' y", "x", "a\\b $HOME \\", "y", NULL);
	splits("double quote inside single", "x 'say \"hi\"'", "x", "say \"hi\"", NULL);
	splits("empty single-quoted word", "x '' y", "x", "", "y", NULL);
	splits("only an empty word", "''", "", NULL);
}

static void
test_double_quotes(void)
{
	splits("double quotes keep blanks", "echo \"a  b\"", "echo", "a  b", NULL);
	splits("escaped double quote", "x \"a\\\"b\"", "x", "a\"b", NULL);
	splits("escaped backslash", "x \"a\\\\b\"", "x", "a\\b", NULL);
	splits("escaped dollar", "x \"\\$HOME\"", "x", "$HOME", NULL);
	splits("escaped backquote", "x \"\\`id\\`\"", "x", "`id`", NULL);
	splits("other backslashes kept", "x \"a\\nb\\tc\\'\"", "x", "a\\nb\\tc\\'", NULL);
	splits("single quote inside double", "x \"it's\"", "x", "it's", NULL);
	splits("dollar not expanded", "x \"$HOME\"", "x", "$HOME", NULL);
	splits("empty double-quoted word", "x \"\" y", "x", "", "y", NULL);
}

static void
test_backslash_and_joining(void)
{
	splits("backslash-blank joins", "a\\ b c", "a b", "c", NULL);
	splits("backslash keeps a quote", "\\'x\\\"", "'x\"", NULL);
	splits("backslash keeps a backslash", "a\\\\b", "a\\b", NULL);
	splits("backslash before a letter", "\\n", "n", NULL);
	splits("adjacent quoted parts join", "a'b'\"c\"", "abc", NULL);
	splits("quoted parts with blanks join", "--name='two words'\"  more\"x", "--name=two words  morex",
	    NULL);
	splits("empty quotes glued to a word", "a''b \"\"c", "ab", "c", NULL);
	splits("two empty words", "'' \"\"", "", "", NULL);
}

static void
test_errors(void)
{
	refuses("unterminated single quote", "echo 'abc", "unterminated single quote");
	refuses("unterminated double quote", "echo \"abc", "unterminated double quote");
	refuses("escaped closing double quote", "echo \"abc\\\"", "unterminated double quote");
	refuses("trailing backslash", "echo abc\\", "trailing backslash");
	refuses("empty string", "", "empty");
	refuses("only blanks", " \t \n ", "empty");
}

/* The words are fresh copies: the input can go away. */
static void
test_copies(void)
{
	char line[] = "prog 'a b' c";
	char err[ERRSZ];
	char **v = words_split(line, err);

	memset(line, 'z', sizeof line - 1);
	if (v == NULL) {
		ok(0, "split for the copy test");
		return;
	}
	is_str(v[0], "prog", "first word survives the input");
	is_str(v[1], "a b", "second word survives the input");
	is_str(v[2], "c", "third word survives the input");
	strv_free(v);
}

int
main(void)
{
	test_plain();
	test_single_quotes();
	test_double_quotes();
	test_backslash_and_joining();
	test_errors();
	test_copies();
	return done();
}

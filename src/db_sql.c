/* db_sql.c -- the SQL formatting language.
 *
 * Everything jobq says to the server goes through db_exec/db_query with a
 * small printf-like language that quotes values itself, so no caller ever
 * pastes a string into SQL:
 *
 *   %s  SQL text, pasted as is (table names, fragments we wrote)
 *   %q  a string value, quoted and escaped; NULL pointer -> NULL
 *   %b  a string value given as (const char *, size_t), may hold any byte
 *   %d  int          %u  unsigned
 *   %I  int64_t      %U  uint64_t
 *   %%  a percent sign */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include "db_int.h"

/* Appends s[0..len) to b as a quoted SQL string, escaped. */
static void
add_quoted(struct buf *b, const char *s, size_t len)
{
	size_t i;

	buf_reserve(b, len + 2);
	buf_addc(b, '\'');
	for (i = 0; i < len; i++) {
		switch (s[i]) {
		case '\0':
			buf_adds(b, "\\0");
			break;
		case '\n':
			buf_adds(b, "\\n");
			break;
		case '\r':
			buf_adds(b, "\\r");
			break;
		case '\\':
			buf_adds(b, "\\\\");
			break;
		case '\'':
			buf_adds(b, "\\'");
			break;
		case '"':
			buf_adds(b, "\\\"");
			break;
		case '\032':
			buf_adds(b, "\\Z");
			break;
		default:
			buf_addc(b, s[i]);
		}
	}
	buf_addc(b, '\'');
}

/* Bytes that s[0..len) takes inside the quotes of a %q or %b value:
 * what a statement that carries it grows by. */
size_t
db_quoted_len(const char *s, size_t len)
{
	size_t i, n = len;

	for (i = 0; i < len; i++)
		switch (s[i]) { /* the bytes add_quoted escapes */
		case '\0':
		case '\n':
		case '\r':
		case '\\':
		case '\'':
		case '"':
		case '\032':
			n++;
		}
	return n;
}

/* Escaping by hand is exact for utf8mb4 and ASCII (no multi-byte
 * character contains a quote or a backslash byte) and works on a closed
 * connection.  The session never sets NO_BACKSLASH_ESCAPES. */
void
db_sql_va(struct buf *b, const char *fmt, va_list ap)
{
	const char *p;

	for (p = fmt; *p != '\0'; p++) {
		const char *s;

		if (*p != '%') {
			buf_addc(b, *p);
			continue;
		}
		switch (*++p) {
		case 's':
			buf_adds(b, va_arg(ap, const char *));
			break;
		case 'q':
			s = va_arg(ap, const char *);
			if (s == NULL)
				buf_adds(b, "NULL");
			else
				add_quoted(b, s, strlen(s));
			break;
		case 'b':
			s = va_arg(ap, const char *);
			add_quoted(b, s, va_arg(ap, size_t));
			break;
		case 'd':
			buf_printf(b, "%d", va_arg(ap, int));
			break;
		case 'u':
			buf_printf(b, "%u", va_arg(ap, unsigned));
			break;
		case 'I':
			buf_printf(b, "%lld", (long long)va_arg(ap, int64_t));
			break;
		case 'U':
			buf_printf(b, "%llu", (unsigned long long)va_arg(ap, uint64_t));
			break;
		case '%':
			buf_addc(b, '%');
			break;
		default:
			fatal("db: bad conversion '%%%c' in \"%s\"", *p, fmt);
		}
	}
}

/* Appends formatted SQL to b (see the top of this file). */
void
db_sql(struct db *db, struct buf *b, const char *fmt, ...)
{
	va_list ap;

	(void)db;
	va_start(ap, fmt);
	db_sql_va(b, fmt, ap);
	va_end(ap);
}

/* s when it is all ASCII, else NULL.  For a value compared with one of
 * the ASCII columns (queue, type, names): the server refuses a literal
 * it cannot convert to the column's character set ("Illegal mix of
 * collations", an error) where it should find no row; %q makes SQL NULL
 * of NULL, which equals nothing. */
const char *
db_ascii(const char *s)
{
	const char *p;

	for (p = s; p != NULL && *p != '\0'; p++)
		if ((unsigned char)*p >= 0x80)
			return NULL;
	return s;
}

/* The length of the statement sql starts with, up to its ';' or the end
 * of len: a ';' in a quoted string or name or in a comment is not one. */
size_t
db_stmt_len(const char *sql, size_t len)
{
	size_t i = 0;
	char q;

	while (i < len && sql[i] != ';') {
		q = sql[i++];
		if (q == '\'' || q == '"' || q == '`') {
			while (i < len && sql[i] != q)
				i += q != '`' && sql[i] == '\\' ? 2 : 1;
			i++; /* a doubled quote reopens the string: the loop goes on */
		} else if (q == '/' && i < len && sql[i] == '*') {
			while (i + 1 < len && !(sql[i] == '*' && sql[i + 1] == '/'))
				i++;
			i += 2;
		} else if (q == '#' || (q == '-' && i + 1 < len && sql[i] == '-' && sql[i + 1] == ' ')) {
			while (i < len && sql[i] != '\n')
				i++;
		}
	}
	return i < len ? i : len;
}

/* db_res.c -- the rows of a query's result, and its columns as numbers.
 *
 * A result holds every row (read at once by db_query); its columns are
 * strings, NULL for SQL NULL. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <strings.h>

#include "db_int.h"

/* How many rows the result holds. */
size_t
db_res_rows(const struct db_res *r)
{
	return (size_t)mysql_num_rows(r->res);
}

/* The next row (NULL fields are NULL pointers), or NULL after the last. */
char **
db_res_next(struct db_res *r)
{
	return mysql_fetch_row(r->res);
}

/* Reads the rows again from the first. */
void
db_res_rewind(struct db_res *r)
{
	mysql_data_seek(r->res, 0);
}

/* Index of the column called name, or -1. */
int
db_res_column(struct db_res *r, const char *name)
{
	unsigned i, n = mysql_num_fields(r->res);
	MYSQL_FIELD *f = mysql_fetch_fields(r->res);

	for (i = 0; i < n; i++)
		if (strcasecmp(f[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* The byte lengths of the current row's columns (for binary values). */
const unsigned long *
db_res_lengths(struct db_res *r)
{
	return mysql_fetch_lengths(r->res);
}

/* One column of a result row read as a number.  SQL NULL, or text that
 * is not a whole number, gives dflt: a column may be NULL wherever the
 * schema does not forbid it, and a computed one (SUM over no rows,
 * TIMESTAMPDIFF of a zero date) even where it does, so readers never
 * hand a column to strtoull unchecked. */
uint64_t
db_col_u64(const char *v, uint64_t dflt)
{
	char *end;
	uint64_t x;

	if (v == NULL || *v == '\0' || *v == '-')
		return dflt;
	errno = 0;
	x = strtoull(v, &end, 10);
	return errno != 0 || (*end != '\0' && *end != '.') ? dflt : x;
}

/* As db_col_u64, for a signed column. */
int64_t
db_col_i64(const char *v, int64_t dflt)
{
	char *end;
	int64_t x;

	if (v == NULL || *v == '\0')
		return dflt;
	errno = 0;
	x = strtoll(v, &end, 10);
	return errno != 0 || (*end != '\0' && *end != '.') ? dflt : x;
}

/* Frees r (NULL: nothing). */
void
db_res_free(struct db_res *r)
{
	if (r == NULL)
		return;
	mysql_free_result(r->res);
	free(r);
}

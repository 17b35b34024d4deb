/* sql_split.c -- unit tests of db_stmt_len (db_sql.c): where a statement
 * ends, for the Galera path that sends a transaction's statements one at
 * a time (db_exec.c). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "db.h"
#include "util.h"

#include "../tap.h"

/* The statements of sql, each cut where db_stmt_len says, joined with
 * '|'. */
static void
pieces_are(const char *sql, const char *want)
{
	char got[512] = "";
	size_t off = 0, len = strlen(sql), n;

	while (off < len) {
		n = db_stmt_len(sql + off, len - off);
		snprintf(got + strlen(got), sizeof got - strlen(got), "%s%.*s", off ? "|" : "", (int)n, sql + off);
		off += n + 1;
	}
	is_str(got, want, sql);
}

int
main(void)
{
	pieces_are("START TRANSACTION;SELECT 1;COMMIT", "START TRANSACTION|SELECT 1|COMMIT");
	pieces_are("SELECT 1", "SELECT 1");
	pieces_are("INSERT INTO t VALUES ('a;b');COMMIT", "INSERT INTO t VALUES ('a;b')|COMMIT");
	pieces_are("SELECT 'it''s; here';SELECT 2", "SELECT 'it''s; here'|SELECT 2");
	pieces_are("SELECT 'back\\'slash;';SELECT 2", "SELECT 'back\\'slash;'|SELECT 2");
	pieces_are("SELECT \"x;\\\"y\";SELECT 2", "SELECT \"x;\\\"y\"|SELECT 2");
	pieces_are("SELECT `a;b\\`;SELECT 2", "SELECT `a;b\\`|SELECT 2");
	pieces_are("SELECT /* a; b */ 1;SELECT 2", "SELECT /* a; b */ 1|SELECT 2");
	pieces_are("SELECT 1 -- a; b\n;SELECT 2", "SELECT 1 -- a; b\n|SELECT 2");
	pieces_are("SELECT 1 # a; b\n;SELECT 2", "SELECT 1 # a; b\n|SELECT 2");
	pieces_are("SELECT 1--2;SELECT 2", "SELECT 1--2|SELECT 2");
	pieces_are("SELECT 'open;", "SELECT 'open;");
	pieces_are("SELECT 'tail\\", "SELECT 'tail\\");
	is_int((long long)db_stmt_len("", 0), 0, "an empty string is an empty statement");
	is_int((long long)db_stmt_len(";x", 2), 0, "a ';' first ends an empty statement");
	return done();
}

/* galera-split-writer.c -- does a transaction that a Galera applier
 * aborts leave statements behind?  Built and run by
 * contrib/galera-split-check, not by make.
 *
 *   galera-split-writer SOCKET writer N          transactions, one packet each
 *   galera-split-writer SOCKET writer-split N    the same, one statement a round trip
 *   galera-split-writer SOCKET rival N           single-row updates of the same rows
 *
 * A writer runs N transactions, attempt i: it changes the rows the rival
 * changes (so that appliers abort it), logs four rows (steps 1 to 4)
 * and deletes row i of items, then commits.  It prints "C i" for an
 * attempt whose COMMIT succeeded, "F i errno" for one that failed (then
 * rolled back).  The script then counts rows a failed attempt left and
 * committed attempts that are not whole. */
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MYSQL *
connect_to(const char *sock)
{
	MYSQL *m = mysql_init(NULL);

	if (m == NULL ||
	    mysql_real_connect(m, NULL, "root", NULL, "splitcheck", 0, sock, CLIENT_MULTI_STATEMENTS) == NULL) {
		fprintf(stderr, "galera-split-writer: %s: %s\n", sock, m ? mysql_error(m) : "out of memory");
		exit(1);
	}
	/* As jobq's sessions: no rerun by the server, read committed. */
	if (mysql_query(m, "SET SESSION wsrep_retry_autocommit = 0") != 0 ||
	    mysql_query(m, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED") != 0) {
		fprintf(stderr, "galera-split-writer: %s\n", mysql_error(m));
		exit(1);
	}
	return m;
}

/* Runs the statements of sql in one round trip, reading every result;
 * returns 0, or the error of the first that failed (the rest did not
 * run). */
static unsigned
run(MYSQL *m, const char *sql)
{
	int st;

	if (mysql_query(m, sql) != 0)
		return mysql_errno(m);
	do {
		MYSQL_RES *r = mysql_store_result(m);

		if (r != NULL)
			mysql_free_result(r);
		if ((st = mysql_next_result(m)) > 0)
			return mysql_errno(m);
	} while (st == 0);
	return 0;
}

/* run, one statement (up to a ';': the statements hold no other) at a
 * time. */
static unsigned
run_split(MYSQL *m, char *sql)
{
	char *p = sql, *semi;
	unsigned e = 0;

	while (e == 0 && p != NULL && *p != '\0') {
		if ((semi = strchr(p, ';')) != NULL)
			*semi = '\0';
		e = run(m, p);
		p = semi != NULL ? semi + 1 : NULL;
	}
	return e;
}

static void
writer(MYSQL *m, int n, int split)
{
	char sql[2048];
	unsigned e;
	int i;

	for (i = 1; i <= n; i++) {
		snprintf(sql, sizeof sql,
		    "START TRANSACTION;"
		    "UPDATE hot SET v = v + 1 WHERE id = 1;"
		    "INSERT INTO log (attempt, step) VALUES (%d, 1);"
		    "UPDATE hot SET v = v + 1 WHERE id = 2;"
		    "INSERT INTO log (attempt, step) (SELECT %d, 2 FROM hot WHERE id = 3 FOR UPDATE)"
		    " UNION ALL (SELECT %d, 3 FROM hot WHERE id = 4 FOR UPDATE);"
		    "DELETE FROM items WHERE id = %d;"
		    "UPDATE hot SET v = v + 1 WHERE id = 3;"
		    "INSERT INTO log (attempt, step) VALUES (%d, 4);"
		    "UPDATE hot SET v = v + 1 WHERE id = 4;"
		    "COMMIT",
		    i, i, i, i, i);
		e = split ? run_split(m, sql) : run(m, sql);
		if (e != 0) {
			if (run(m, "ROLLBACK") != 0) { /* as jobq does: never reuse it */
				mysql_close(m);
				m = connect_to(getenv("SOCK"));
			}
			printf("F %d %u\n", i, e);
		} else {
			printf("C %d\n", i);
		}
	}
}

int
main(int argc, char **argv)
{
	MYSQL *m;
	char sql[128];
	int n, i;

	if (argc != 4 || (n = atoi(argv[3])) <= 0) {
		fprintf(stderr, "usage: galera-split-writer SOCKET writer|writer-split|rival N\n");
		return 64;
	}
	setenv("SOCK", argv[1], 1);
	m = connect_to(argv[1]);
	if (strcmp(argv[2], "rival") == 0) {
		for (i = 0; i < n; i++) {
			snprintf(sql, sizeof sql, "UPDATE hot SET v = v + 1 WHERE id = %d", 1 + i % 4);
			run(m, sql);
		}
	} else {
		writer(m, n, strcmp(argv[2], "writer-split") == 0);
	}
	mysql_close(m);
	return 0;
}

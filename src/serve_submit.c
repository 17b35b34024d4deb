/* serve_submit.c -- one submit, one result: the submit ids of the
 * dashboard's forms that create things (POST /api/enqueue), below their
 * handlers (serve_enqueue.c).
 *
 * A form sends a random id, made when it is drawn and renewed after a
 * success.  The handler claims (user, id) in jobq_submits as the first
 * statement of the transaction that creates the jobs and writes what it
 * made there before COMMIT.  A second request with the same id, however
 * close behind, meets the primary key: while the first is open its
 * INSERT waits for the row lock, then fails with a duplicate key once
 * the first commits (or goes ahead if the first rolled back).  So the
 * jobs and the record of them commit together or not at all, and a
 * double click, a resend after a lost answer or a retried fetch cannot
 * make a second set of jobs.  The key is the user, not the session: a
 * form resent after logging in again is still the same submit.
 *
 * A request without an id (the API's scripts, older pages) is not
 * tracked: one request, one set of jobs, as before. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "serve_submit.h"

#define SUBMIT_ID_MAX 64
#define ER_DUP_ENTRY_ 1062

/* Reads "submit_id" of a request body: *id NULL when there is none.
 * 0, or -1 with *msg set when it is not 1 to 64 letters, digits, '-'
 * or '_' (a UUID fits). */
int
serve_submit_id(cJSON *in, const char **id, const char **msg)
{
	cJSON *v = cJSON_GetObjectItem(in, "submit_id");
	size_t n;

	*id = NULL;
	if (v == NULL || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsString(v) || (n = strlen(v->valuestring)) == 0 || n > SUBMIT_ID_MAX ||
	    strspn(v->valuestring,
	        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != n) {
		*msg = "submit_id: 1 to 64 letters, digits, '-' or '_' (a UUID)";
		return -1;
	}
	*id = v->valuestring;
	return 0;
}

/* Drops a few submit records older than a day, each time a submit
 * comes: a repeat arrives within seconds, and the table stays as small
 * as a day of submits.  A failure only leaves them for the next time. */
void
serve_submit_prune(struct req *r)
{
	char err[ERRSZ];

	if (db_exec(r->db, err, "DELETE FROM jobq_submits WHERE at < UTC_TIMESTAMP(6) - INTERVAL 1 DAY LIMIT 20") !=
	    DB_OK)
		log_warn("serve: prune old submit ids: %s", err);
}

/* Appends the claim of id by r's user: the statement that must come
 * right after START TRANSACTION (serve_submit_repeated relies on it). */
void
serve_submit_claim_sql(struct req *r, struct buf *sql, const char *id)
{
	db_sql(r->db, sql, "INSERT INTO jobq_submits (username, submit_id) VALUES (%q, %q);", r->user->name, id);
}

/* Appends the record of what the submit made: count jobs, the first
 * @jobq_first, all of them @jobq_ids (their ids in order, separated by
 * commas: they need not follow one another), which the caller's SQL has
 * set.  Before COMMIT. */
void
serve_submit_done_sql(struct req *r, struct buf *sql, const char *id, uint64_t count)
{
	db_sql(r->db, sql,
	    "UPDATE jobq_submits SET first_id = @jobq_first, job_count = %U, job_ids = @jobq_ids"
	    " WHERE username = %q AND submit_id = %q;",
	    count, r->user->name, id);
}

/* Frees what serve_submit_repeated put in a, and empties it. */
void
serve_submit_answer_clear(struct submit_answer *a)
{
	free(a->ids);
	memset(a, 0, sizeof *a);
}

/* The ids of a record's job_ids (text: NULL in a record from before
 * schema 29): an array of count, or NULL when they are not all there. */
static uint64_t *
parse_ids(const char *text, uint64_t count)
{
	uint64_t *ids, i = 0;
	const char *p = text;
	char *end;

	if (text == NULL || count == 0)
		return NULL;
	ids = xcalloc(count, sizeof *ids);
	while (i < count && *p >= '0' && *p <= '9') {
		ids[i++] = strtoull(p, &end, 10);
		p = *end == ',' ? end + 1 : end;
	}
	if (i < count || *p != '\0') {
		free(ids);
		return NULL;
	}
	return ids;
}

/* Whether the transaction that ended with rc failed on its claim (the
 * statement after START TRANSACTION) because id was submitted before;
 * then fills a with that submit's result, its ids among it (the caller
 * frees them: serve_submit_answer_clear).  1: repeated, a filled; 0: rc
 * is the transaction's own outcome; -1: the lookup failed (err). */
int
serve_submit_repeated(struct req *r, int rc, const char *id, struct submit_answer *a, char *err)
{
	struct db_res *res;
	char **row;
	int qrc;

	if (rc != DB_EFAIL || db_errno(r->db) != ER_DUP_ENTRY_ || db_statements_done(r->db) != 1)
		return 0;
	res = db_query(r->db, &qrc, err,
	    "SELECT first_id, job_count, job_ids FROM jobq_submits WHERE username = %q AND submit_id = %q",
	    r->user->name, id);
	if (res == NULL)
		return -1;
	if ((row = db_res_next(res)) == NULL) {
		/* pruned between the two statements: a day-old id */
		db_res_free(res);
		errf(err, "submit %s: its record went before it could be read", id);
		return -1;
	}
	serve_submit_answer_clear(a);
	a->first_id = db_col_u64(row[0], 0);
	a->count = db_col_u64(row[1], 0);
	a->ids = parse_ids(row[2], a->count);
	db_res_free(res);
	return 1;
}

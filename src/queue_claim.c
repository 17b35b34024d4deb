/* queue_claim.c -- the claim both modes share, and the jobs it reads.
 *
 * A claim (struct claim) is one reservation statement's worth of jobs
 * from one queue: the mode files (queue_claim_skip.c,
 * queue_claim_update.c) fill it from the rows they claimed, through
 * queue_claim_rows, which reads each row NULL-safe into a struct job. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "queue_reserve_int.h"

/* Frees a job from queue_reserve (NULL: nothing). */
void
job_free(struct job *j)
{
	if (j == NULL)
		return;
	free(j->queue);
	free(j->type);
	free(j->payload);
	free(j->checkpoint);
	free(j->checkpoint_save);
	free(j);
}

/* Reads one claimed row.  Only the columns the schema makes NOT NULL
 * are read as they are; the rest may be NULL in a row another program
 * wrote.  add_attempt: the row holds the attempts before this claim;
 * the count saturates at ATTEMPTS_MAX as the claim's SQL does. */
static struct job *
job_from_row(char **row, const unsigned long *len, int add_attempt)
{
	struct job *j = xcalloc(1, sizeof *j);
	uint64_t attempts = db_col_u64(row[5], 0);

	if (attempts > ATTEMPTS_MAX)
		attempts = ATTEMPTS_MAX;
	j->id = db_col_u64(row[0], 0);
	j->queue = xstrdup_or_empty(row[1]);
	j->type = xstrdup_or_empty(row[2]);
	j->payload = row[3] ? xstrndup(row[3], len[3]) : xstrdup("");
	j->payload_len = row[3] ? len[3] : 0;
	j->priority = (int)db_col_i64(row[4], 0);
	j->attempt = (unsigned)attempts + (add_attempt && attempts < ATTEMPTS_MAX ? 1 : 0);
	j->max_attempts = (unsigned)db_col_u64(row[6], 0);
	j->age_ms = db_col_i64(row[7], 0);
	if (row[8] != NULL && strlen(row[8]) > 11)
		snprintf(j->created_at, sizeof j->created_at, "%.10sT%.15sZ", row[8], row[8] + 11);
	j->wait_ms = row[9] != NULL ? db_col_i64(row[9], 0) : -1;
	if (row[9] != NULL && j->wait_ms < 0)
		j->wait_ms = 0; /* claimed within the millisecond it fell due */
	j->expires_ms = row[10] != NULL ? db_col_i64(row[10], 0) : INT64_MAX;
	snprintf(j->cancel_by, sizeof j->cancel_by, "%s", row[11] ? row[11] : "");
	j->checkpoint = row[12] ? xstrndup(row[12], len[12]) : NULL;
	snprintf(j->traceparent, sizeof j->traceparent, "%s", row[13] ? row[13] : "");
	j->waiters = row[14] != NULL ? (int)db_col_i64(row[14], 0) : 0;
	j->waited = (db_col_u64(row[15], 0) & 1) != 0;
	j->early = (db_col_u64(row[15], 0) & 2) != 0;
	j->group_id = db_col_u64(row[16], 0);
	snprintf(j->reserved_at, sizeof j->reserved_at, "%s", row[17] ? row[17] : "");
	return j;
}

/* Why job j, as reserved, cannot be given to a handler: NULL when it
 * can.  Rows written by other programs need not keep what `jobq
 * enqueue` promises handlers (DESIGN.md section 3): a payload that is
 * JSON, an attempt count that can still count.  Such a job is
 * dead-lettered at once, with this reason, rather than run or left to
 * loop. */
const char *
job_defect(const struct job *j, char *why, size_t whylen)
{
	const char *end = NULL;
	cJSON *json;

	if (j->attempt >= ATTEMPTS_MAX) {
		snprintf(why, whylen, "attempts counter at its limit (%u): the row was changed outside jobq",
		    j->attempt);
		return why;
	}
	if (memchr(j->payload, '\0', j->payload_len) != NULL) {
		snprintf(why, whylen, "payload is not valid JSON (it holds a NUL byte)");
		return why;
	}
	json = cJSON_ParseWithLengthOpts(j->payload, j->payload_len, &end, 0);
	if (json != NULL)
		while (end < j->payload + j->payload_len && strchr(" \t\r\n", *end) != NULL)
			end++;
	cJSON_Delete(json);
	if (json == NULL || end != j->payload + j->payload_len) {
		snprintf(why, whylen, "payload is not valid JSON (at byte %zu of %zu)",
		    end != NULL && end >= j->payload ? (size_t)(end - j->payload) : (size_t)0,
		    j->payload_len);
		return why;
	}
	return NULL;
}

/* Frees the jobs cl holds, for a claim that failed or starts again. */
void
queue_claim_drop(struct claim *cl)
{
	size_t i;

	for (i = 0; i < cl->n; i++)
		job_free(cl->jobs[i]);
	cl->n = 0;
}

/* Adds the claimed rows of r to cl's jobs, each with cl's token.
 * add_attempt: as for job_from_row. */
int
queue_claim_rows(struct claim *cl, struct db_res *r, int add_attempt)
{
	char **row;

	while ((row = db_res_next(r)) != NULL) {
		struct job *j = job_from_row(row, db_res_lengths(r), add_attempt);

		memcpy(j->token, cl->token, sizeof j->token);
		j->charged = 1; /* the claim says which it left for later */
		cl->jobs[cl->n++] = j;
	}
	return DB_OK;
}

/* Whether a job the claim took early still waits: its release, or the
 * cancel mark of a dead dependency (deps.c, which asks for no lease),
 * may have come between the claim's COMMIT and the statement below. */
#define STILL_EARLY "waiting_on > 0 AND cancel_by IS NULL"

/* Puts back to wait the early jobs cl took (job.early: written waiting
 * for other jobs, waiting_on > 0, yet due -- plain SQL that left out
 * available_at = DEPS_NEVER), which must not run before the jobs they
 * wait for end: each gets its available_at as its wait_until when it
 * had none (so that its release makes it due when it was meant to be),
 * available_at DEPS_NEVER, out of every claim's reach, its lease
 * cleared and the attempt the claim charged refunded.  One conditional
 * statement, fenced by the claim's token.  A row released or marked for
 * cancelling meanwhile (STILL_EARLY no longer holds) only loses its
 * lease and gets its attempt back, keeping the available_at its release
 * or mark set: a claim then runs or ends it, never charged twice.
 * (wait_until is assigned first, from available_at as it was: MariaDB
 * assigns a single-table UPDATE's columns left to right.)  The jobs
 * leave cl's either way: one whose statement failed returns when its
 * lease expires.  parked (if not NULL) gets their ids.  Each such row costs
 * one claim once, never a read per claim; a claim with none costs
 * nothing here. */
int
queue_claim_park(struct db *db, struct claim *cl, struct buf *parked, char *err)
{
	struct buf sql, ids, charged;
	size_t i, k = 0;
	int rc;

	buf_init(&ids);
	buf_init(&charged);
	buf_adds(&charged, "0");
	for (i = 0; i < cl->n; i++) {
		struct job *j = cl->jobs[i];

		if (!j->early) {
			cl->jobs[k++] = j;
			continue;
		}
		buf_printf(&ids, "%s%llu", ids.len ? "," : "", (unsigned long long)j->id);
		if (j->charged)
			buf_printf(&charged, ",%llu", (unsigned long long)j->id);
		job_free(j);
	}
	cl->n = k;
	if (ids.len == 0) {
		buf_free(&ids);
		buf_free(&charged);
		return DB_OK;
	}
	buf_init(&sql);
	db_sql(db, &sql,
	    "UPDATE jobs SET wait_until = IF(" STILL_EARLY ", COALESCE(wait_until, available_at), wait_until),"
	    " available_at = IF(" STILL_EARLY ", " DEPS_NEVER ", available_at),"
	    " attempts = IF(id IN (%s) AND attempts > 0, attempts - 1, attempts), reserved_at = NULL,"
	    " reserved_by = NULL, lease_token = NULL, lease_expires_at = NULL"
	    " WHERE lease_token = %q AND id IN (%s)",
	    charged.data, cl->token, ids.data);
	rc = db_exec_buf(db, &sql, err);
	if (parked != NULL)
		buf_printf(parked, "%s%s", parked->len ? "," : "", ids.data);
	buf_free(&sql);
	buf_free(&ids);
	buf_free(&charged);
	return rc;
}

/* Appends the statement that reads back the jobs an outcome handed off
 * to this worker (struct handoff): those whose lease carries token,
 * charged their attempt by the hand-off.  queue_write sends it inside
 * the outcome's own transaction, before its COMMIT, so the read costs
 * no round trip of its own and fails, when it does, with the outcome.
 * The index is forced: with its statistics stale (a table just filled,
 * then emptied by a chain of jobs) the server would read the rows in
 * id order through the primary key, every row of the table, to save
 * sorting the few the token names (seen in a chain of 1,000 jobs: 999
 * rows examined for one). */
void
queue_handoff_sql(struct db *db, struct buf *sql, const char *token)
{
	db_sql(db, sql, "SELECT " JOB_COLUMNS "reserved_at FROM jobs FORCE INDEX (jobs_lease) WHERE lease_token = %q"
	                " ORDER BY id;",
	    token);
}

/* The jobs of rows, as queue_handoff_sql read them, each with token:
 * *jobs is a new array (free each with job_free, then the array). */
void
queue_handoff_rows(struct db_res *rows, const char *token, struct job ***jobs, size_t *n)
{
	struct claim cl;

	memset(&cl, 0, sizeof cl);
	snprintf(cl.token, sizeof cl.token, "%s", token);
	cl.jobs = xcalloc(db_res_rows(rows) + 1, sizeof *cl.jobs);
	queue_claim_rows(&cl, rows, 0);
	*jobs = cl.jobs;
	*n = cl.n;
}

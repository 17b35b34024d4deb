/* queue_explain.c -- jobq check --explain: one reservation, explained.
 *
 * Builds the statements a worker would run (queue_due.c, the claim
 * modes and queue_limits.c build them, so what is examined is exactly
 * what workers run),
 * EXPLAINs them and measures the rows the server read, changing
 * nothing. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "queue_reserve_int.h"

static const char *const read_counters[] = {
	"Handler_read_first",
	"Handler_read_key",
	"Handler_read_last",
	"Handler_read_next",
	"Handler_read_prev",
	"Handler_read_rnd",
	"Handler_read_rnd_next",
};

/* Sum of this session's Handler_read_* counters (SHOW STATUS does not
 * count itself). */
static int
rows_read(struct db *db, uint64_t *sum, char *err)
{
	struct db_res *r;
	char **row;
	size_t i;
	int rc;

	*sum = 0;
	if ((r = db_query(db, &rc, err, "SHOW SESSION STATUS LIKE 'Handler_read%%'")) == NULL)
		return rc;
	while ((row = db_res_next(r)) != NULL)
		for (i = 0; i < ARRAY_LEN(read_counters); i++)
			if (row[0] != NULL && strcmp(row[0], read_counters[i]) == 0)
				*sum += db_col_u64(row[1], 0);
	db_res_free(r);
	return DB_OK;
}

/* Appends item to the "; "-separated list unless it is there already. */
static void
add_distinct(char *list, size_t size, const char *item)
{
	size_t n = strlen(list);

	if (*item == '\0' || strstr(list, item) != NULL)
		return;
	snprintf(list + n, size - n, "%s%s", n ? "; " : "", item);
}

/* How explain_one turns EXPLAIN's rows (one per subquery) into steps. */
enum step_kind {
	STEP_EACH,  /* each row a step of its own */
	STEP_DIVES, /* one step, type "dives", rows the number of subqueries */
	STEP_MERGED /* one step, the distinct access types, keys and extras */
};

/* EXPLAINs stmt as kind says; rows for a UNION's result (no table
 * access of its own) are left out. */
static int
explain_one(struct db *db, const char *label, const struct buf *stmt, enum step_kind kind,
    struct explain_report *x, char *err)
{
	struct explain_step *s = NULL;
	struct buf sql;
	struct db_res *r;
	char **row;
	int rc, type, key, rows, extra, table, n = 0;

	buf_init(&sql);
	buf_printf(&sql, "EXPLAIN %s", stmt->data);
	r = db_query_buf(db, &sql, &rc, err);
	buf_free(&sql);
	if (r == NULL)
		return rc;
	type = db_res_column(r, "type");
	key = db_res_column(r, "key");
	rows = db_res_column(r, "rows");
	extra = db_res_column(r, "Extra");
	table = db_res_column(r, "table");
	while ((row = db_res_next(r)) != NULL) {
		if (table >= 0 && row[table] != NULL && strncmp(row[table], "<union", 6) == 0)
			continue;
		if (s == NULL || kind == STEP_EACH) {
			if (x->nsteps == ARRAY_LEN(x->steps))
				break;
			s = &x->steps[x->nsteps++];
			memset(s, 0, sizeof *s);
			snprintf(s->query, sizeof s->query, "%s", label);
		}
		n++;
		if (kind != STEP_EACH) {
			if (kind == STEP_DIVES)
				snprintf(s->type, sizeof s->type, "dives");
			else if (type >= 0 && row[type] != NULL)
				add_distinct(s->type, sizeof s->type, row[type]);
			snprintf(s->rows, sizeof s->rows, "%d", n);
			if (key >= 0 && row[key] != NULL)
				add_distinct(s->key, sizeof s->key, row[key]);
			if (extra >= 0 && row[extra] != NULL)
				add_distinct(s->extra, sizeof s->extra, row[extra]);
			continue;
		}
		snprintf(s->type, sizeof s->type, "%s", type >= 0 && row[type] ? row[type] : "");
		snprintf(s->key, sizeof s->key, "%s", key >= 0 && row[key] ? row[key] : "");
		snprintf(s->rows, sizeof s->rows, "%s", rows >= 0 && row[rows] ? row[rows] : "");
		snprintf(s->extra, sizeof s->extra, "%s", extra >= 0 && row[extra] ? row[extra] : "");
	}
	db_res_free(r);
	return DB_OK;
}

/* Runs stmt inside a transaction that is rolled back, and counts the
 * rows the server read for it and how many rows it returned or changed. */
static int
measure(struct db *db, const struct buf *stmt, int returns_rows, uint64_t *read, uint64_t *got, char *err)
{
	uint64_t before, after;
	struct db_res *r;
	int rc;

	if ((rc = db_begin(db, err)) != DB_OK)
		return rc;
	if ((rc = rows_read(db, &before, err)) != DB_OK)
		goto out;
	if (returns_rows) {
		if ((r = db_query_buf(db, stmt, &rc, err)) == NULL)
			goto out;
		*got = db_res_rows(r);
		db_res_free(r);
	} else {
		if ((rc = db_exec_buf(db, stmt, err)) != DB_OK)
			goto out;
		*got = db_affected(db);
	}
	if ((rc = rows_read(db, &after, err)) == DB_OK)
		*read = after - before;
out:
	db_rollback(db);
	return rc;
}

/* The scan and walk of queue_reserve for the first served queue with
 * anything due, explained, with the index entries they read. */
static int
explain_due(struct db *db, const struct reserve_req *req, struct due **due, size_t *qi,
    struct explain_report *x, char *err)
{
	unsigned scan = req->limit + DUE_SLACK;
	uint64_t before, after;
	struct buf stmt;
	int rc;

	*due = NULL;
	buf_init(&stmt);
	queue_due_scan_sql(db, &stmt, req->queues, scan);
	if (req->queues[0] != NULL && (rc = explain_one(db, "due scan", &stmt, STEP_MERGED, x, err)) != DB_OK)
		goto out;
	if ((rc = rows_read(db, &before, err)) != DB_OK ||
	    (rc = queue_due_scan(db, req->queues, req->limit, due, err)) != DB_OK)
		goto out;
	for (*qi = 0; req->queues[*qi] != NULL && (*due)[*qi].n == 0; (*qi)++)
		;
	if (req->queues[*qi] != NULL && queue_due_needs_walk(&(*due)[*qi], scan)) {
		x->walked = 1;
		buf_reset(&stmt);
		queue_due_walk_sql(db, &stmt, req->queues[*qi], NULL);
		if ((rc = explain_one(db, "due groups", &stmt, STEP_DIVES, x, err)) != DB_OK ||
		    (rc = queue_due_complete(db, req->queues[*qi], scan, &(*due)[*qi], err)) != DB_OK)
			goto out;
	}
	if ((rc = rows_read(db, &after, err)) == DB_OK)
		x->due_rows_read = after - before;
out:
	buf_free(&stmt);
	return rc;
}

/* Under flow limits (a type with max_running or rate of its own), the
 * read of each group of types' first due jobs that shares a claim out
 * among them in the queue's order (queue_limits.c), explained and
 * measured, with the number of groups that have due jobs; nothing when
 * no type has a limit, as a worker then sends no such read. */
static int
explain_order(struct db *db, const struct claim *cl, struct explain_report *x, char *err)
{
	uint64_t read = 0, got = 0;
	struct buf stmt;
	int rc = DB_OK;

	buf_init(&stmt);
	queue_limits_order_sql(db, cl, &stmt);
	if (stmt.len > 0 && (rc = explain_one(db, "order", &stmt, STEP_MERGED, x, err)) == DB_OK &&
	    (rc = measure(db, &stmt, 1, &read, &got, err)) == DB_OK &&
	    (rc = queue_limits_order_groups(db, cl, &x->order_groups, err)) == DB_OK) {
		x->ordered = 1;
		x->order_rows_read = read;
	}
	buf_free(&stmt);
	return rc;
}

/* Explains and measures one reservation as a worker would make it for
 * req, changing nothing: the plan of each statement (key, type, Extra)
 * and how many rows the server read to find the due priorities and to
 * claim how many jobs. */
int
queue_explain(struct db *db, const struct reserve_req *req, struct explain_report *x, char *err)
{
	struct buf stmt, prio;
	struct claim cl;
	struct due *due = NULL;
	size_t qi = 0;
	uint64_t read = 0, got = 0;
	int rc;

	memset(x, 0, sizeof *x);
	memset(&cl, 0, sizeof cl);
	buf_init(&stmt);
	buf_init(&prio);
	if ((rc = explain_due(db, req, &due, &qi, x, err)) != DB_OK)
		goto out;
	if (req->queues[qi] == NULL || due[qi].n == 0) {
		x->nothing_due = 1;
		goto out;
	}
	x->due_groups = due[qi].n;
	queue_due_list(&due[qi], &prio);
	cl.req = req;
	cl.limit = req->limit;
	snprintf(cl.token, sizeof cl.token, "%032d", 0);
	cl.only = "";
	cl.queue = req->queues[qi];
	cl.priorities = prio.data;
	snprintf(x->queue, sizeof x->queue, "%s", cl.queue);
	snprintf(x->priorities, sizeof x->priorities, "%s", prio.data);
	if (req->mode == RESERVE_UPDATE)
		queue_claim_update_sql(db, &stmt, &cl);
	else
		queue_claim_skip_sql(db, &stmt, &cl);
	if ((rc = explain_one(db, "claim", &stmt, STEP_EACH, x, err)) == DB_OK &&
	    (rc = measure(db, &stmt, req->mode != RESERVE_UPDATE, &read, &got, err)) == DB_OK) {
		x->claim_rows_read = read;
		x->claimed = got;
	}
	if (rc == DB_OK)
		rc = explain_order(db, &cl, x, err);
out:
	queue_due_free(due, strv_len(req->queues));
	buf_free(&stmt);
	buf_free(&prio);
	return rc;
}

/* stats_rollup.c -- folds the runs workers write into jobq_run_stats, a
 * chunk at a time, in id order.
 *
 * Workers never touch the statistics: a counter row every worker bumps
 * in its outcome transaction would be a lock they all queue on.  `jobq
 * serve` reads the new job_runs rows instead, after the fact, by id.
 * An id is taken when a run's row is inserted and becomes visible when
 * its transaction commits, so a reader that went by MAX(id) alone could
 * pass over a row that commits a moment later with a smaller id.  The
 * roll-up therefore reads up to an id it saw at least STATS_LAG_MS ago
 * (seen_id), and reads with a locking read, which waits for a run row
 * below it whose transaction is still open (chunk_read).
 *
 * Each step is one transaction that locks the state row, reads at most
 * a chunk of runs, adds their counts to the buckets and moves rolled_id
 * on: every run is counted once, with any number of `jobq serve`
 * processes (they take turns through the row lock, or on Galera one of
 * two that raced is refused at certification and rolled back whole). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "stats.h"

/* One bucket cell being summed: (range, at, queue, type, kind, bin). */
struct cell {
	int64_t at;
	uint64_t n;
	int q, t; /* index into agg.names; -1: all */
	unsigned r, kind, bin;
};

/* The cells of one chunk: an open-addressing table, and the queue and
 * type names its cells refer to. */
struct agg {
	struct cell *cells;
	size_t cap, used;
	char **names;
	size_t nnames;
};

static int
name_index(struct agg *a, const char *name)
{
	size_t i;

	for (i = 0; i < a->nnames; i++)
		if (strcmp(a->names[i], name) == 0)
			return (int)i;
	a->names = xrealloc(a->names, (a->nnames + 1) * sizeof *a->names);
	a->names[a->nnames] = xstrdup(name);
	return (int)a->nnames++;
}

static uint64_t
cell_hash(const struct cell *c)
{
	uint64_t h = (uint64_t)c->at * 0x9e3779b97f4a7c15u;

	h ^= ((uint64_t)(unsigned)(c->q + 1) << 40) ^ ((uint64_t)(unsigned)(c->t + 1) << 20);
	h ^= ((uint64_t)c->r << 60) ^ ((uint64_t)c->kind << 56) ^ c->bin;
	h *= 0xff51afd7ed558ccdu;
	return h ^ (h >> 32);
}

static int
cell_same(const struct cell *a, const struct cell *b)
{
	return a->at == b->at && a->q == b->q && a->t == b->t && a->r == b->r && a->kind == b->kind &&
	       a->bin == b->bin;
}

static void agg_put(struct agg *a, const struct cell *c);

/* Doubles the table (it is kept at most half full). */
static void
agg_grow(struct agg *a)
{
	struct cell *old = a->cells;
	size_t i, cap = a->cap;

	a->cap = cap ? cap * 2 : 1024;
	a->cells = xcalloc(a->cap, sizeof *a->cells);
	a->used = 0;
	for (i = 0; i < cap; i++)
		if (old[i].n > 0)
			agg_put(a, &old[i]);
	free(old);
}

/* Adds c->n to c's cell. */
static void
agg_put(struct agg *a, const struct cell *c)
{
	size_t i;

	if (2 * (a->used + 1) > a->cap)
		agg_grow(a);
	for (i = cell_hash(c) & (a->cap - 1); a->cells[i].n > 0; i = (i + 1) & (a->cap - 1))
		if (cell_same(&a->cells[i], c)) {
			a->cells[i].n += c->n;
			return;
		}
	a->cells[i] = *c;
	a->used++;
}

static void
agg_free(struct agg *a)
{
	size_t i;

	for (i = 0; i < a->nnames; i++)
		free(a->names[i]);
	free(a->names);
	free(a->cells);
	memset(a, 0, sizeof *a);
}

/* Counts one run (a row of the chunk query: id, queue, type, outcome,
 * end in Unix s, duration_ms, wait_ms) in every range, in the four
 * scopes (its queue and type, each alone, all), by outcome and in the
 * run-time and wait histograms.  A run whose lease was lost has no
 * outcome of its own (the worker that took the job over writes it, and
 * its run is counted then): it is timed, not counted as a retry, as the
 * overview's chart and the workers' jobq_runs_total tell it apart. */
static void
agg_run(struct agg *a, char **row)
{
	size_t nr, r;
	const struct stats_range *ranges = stats_ranges(&nr);
	int q = name_index(a, row[1] ? row[1] : ""), t = name_index(a, row[2] ? row[2] : "");
	int64_t end = db_col_i64(row[4], 0);
	unsigned outcome = row[3] == NULL            ? STATS_RETRY
	                   : strcmp(row[3], "done") == 0 ? STATS_DONE
	                   : strcmp(row[3], "dead") == 0 ? STATS_DEAD
	                                                 : STATS_RETRY; /* retry, interrupted */
	int counted = row[3] == NULL || strcmp(row[3], "lost") != 0;
	unsigned run_bin = stats_bin(db_col_i64(row[5], 0));
	unsigned wait_bin = row[6] != NULL ? stats_bin(db_col_i64(row[6], 0)) : 0;
	int scope;

	/* A job cancelled or expired is no run of a handler's to chart
	 * (most never started): the charts count what handlers did. */
	if (row[3] != NULL && (strcmp(row[3], "cancelled") == 0 || strcmp(row[3], "expired") == 0))
		return;

	for (r = 0; r < nr; r++)
		for (scope = 0; scope < 4; scope++) {
			struct cell c = { .at = end - end % ranges[r].res, .n = 1, .r = (unsigned)r };

			c.q = scope & 1 ? -1 : q;
			c.t = scope & 2 ? -1 : t;
			c.kind = outcome;
			if (counted)
				agg_put(a, &c);
			c.kind = STATS_RUN;
			c.bin = run_bin;
			agg_put(a, &c);
			if (row[6] == NULL)
				continue;
			c.kind = STATS_WAIT;
			c.bin = wait_bin;
			agg_put(a, &c);
		}
}

/* Adds the cells to jobq_run_stats, 500 rows a statement. */
static int
agg_write(struct db *db, const struct agg *a, char *err)
{
	const struct stats_range *ranges;
	struct buf sql;
	size_t i, nr, rows = 0;
	int rc = DB_OK;

	ranges = stats_ranges(&nr);
	buf_init(&sql);
	for (i = 0; i < a->cap && rc == DB_OK; i++) {
		const struct cell *c = &a->cells[i];

		if (c->n == 0)
			continue;
		if (rows == 0)
			buf_adds(&sql, "INSERT INTO jobq_run_stats (res, queue, type, at, kind, bin, n) VALUES ");
		db_sql(db, &sql, "%s(%u, %q, %q, %I, %u, %u, %U)", rows ? "," : "", ranges[c->r].res,
		    c->q < 0 ? "" : a->names[c->q], c->t < 0 ? "" : a->names[c->t], c->at, c->kind, c->bin,
		    c->n);
		if (++rows == 500) {
			buf_adds(&sql, " ON DUPLICATE KEY UPDATE n = n + VALUES(n)");
			rc = db_exec_buf(db, &sql, err);
			buf_reset(&sql);
			rows = 0;
		}
	}
	if (rc == DB_OK && rows > 0) {
		buf_adds(&sql, " ON DUPLICATE KEY UPDATE n = n + VALUES(n)");
		rc = db_exec_buf(db, &sql, err);
	}
	buf_free(&sql);
	return rc;
}

/* The first roll-up starts with the runs of the last eight days (a
 * week and the buckets kept beyond it): from the smallest id among the
 * runs that started since, which the started_at index answers without
 * reading a row (an id is taken when a run ends, so the run that started
 * first need not have it).  It has seen nothing yet. */
static int
state_start(struct db *db, char *err)
{
	return db_exec(db, err,
	    "INSERT IGNORE INTO jobq_run_stats_state (id, rolled_id, seen_id, seen_at)"
	    " SELECT 1, x, x, UTC_TIMESTAMP(6) FROM (SELECT COALESCE((SELECT MIN(id) - 1 FROM job_runs"
	    " WHERE started_at >= UTC_TIMESTAMP(6) - INTERVAL 8 DAY), (SELECT MAX(id) FROM job_runs), 0)"
	    " AS x) AS first");
}

struct state {
	uint64_t rolled, seen;
	int64_t seen_age_ms;
};

/* Reads and locks the state row; *found 0 when there is none yet. */
static int
state_lock(struct db *db, struct state *st, int *found, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	r = db_query(db, &rc, err,
	    "SELECT rolled_id, seen_id, TIMESTAMPDIFF(MICROSECOND, seen_at, UTC_TIMESTAMP(6)) DIV 1000"
	    " FROM jobq_run_stats_state WHERE id = 1 FOR UPDATE");
	if (r == NULL)
		return rc;
	*found = (row = db_res_next(r)) != NULL;
	if (*found) {
		st->rolled = db_col_u64(row[0], 0);
		st->seen = db_col_u64(row[1], 0);
		st->seen_age_ms = db_col_i64(row[2], 0);
	}
	db_res_free(r);
	return DB_OK;
}

/* Reads the runs after st->rolled up to st->seen (at most chunk) into
 * a, and sets *last to the id the roll-up got to.  The read locks the
 * rows (shared; the session is READ COMMITTED, so no gap is locked and
 * no worker's insert waits): a run row inserted below seen whose
 * transaction is still open (an outcome waiting on a lock after its run
 * row, up to the worker's wait limit of 1 to 10 s, longer than
 * STATS_LAG_MS) is waited for, and counted once committed, rather than
 * passed over by a snapshot that cannot see it and never read again. */
static int
chunk_read(struct db *db, const struct state *st, unsigned chunk, struct agg *a, uint64_t *last, char *err)
{
	struct db_res *r;
	char **row;
	size_t n = 0;
	int rc;

	r = db_query(db, &rc, err,
	    "SELECT id, queue, type, outcome,"
	    " UNIX_TIMESTAMP(started_at + INTERVAL duration_ms * 1000 MICROSECOND) DIV 1, duration_ms, wait_ms"
	    " FROM job_runs WHERE id > %U AND id <= %U ORDER BY id LIMIT %u LOCK IN SHARE MODE",
	    st->rolled, st->seen, chunk);
	if (r == NULL)
		return rc;
	*last = st->seen;
	while ((row = db_res_next(r)) != NULL) {
		agg_run(a, row);
		if (++n == chunk)
			*last = db_col_u64(row[0], st->seen);
	}
	db_res_free(r);
	return DB_OK;
}

/* One step of the roll-up, its own transaction: folds at most chunk
 * runs into the buckets, or, when every run it may read is in, notes
 * the newest id to read once STATS_LAG_MS has passed.  *more is 1 when
 * another step has runs to read at once. */
int
stats_rollup(struct db *db, unsigned chunk, int *more, char *err)
{
	struct agg a = { 0 };
	struct state st;
	uint64_t last = 0;
	int rc, found;

	*more = 0;
	if ((rc = db_begin(db, err)) != DB_OK)
		return rc;
	if ((rc = state_lock(db, &st, &found, err)) != DB_OK)
		goto out;
	if (!found) {
		db_rollback(db);
		*more = 1;
		return state_start(db, err);
	}
	if (st.rolled >= st.seen || st.seen_age_ms < STATS_LAG_MS) {
		if (st.rolled >= st.seen && st.seen_age_ms >= STATS_LAG_MS)
			rc = db_exec(db, err,
			    "UPDATE jobq_run_stats_state SET seen_id = GREATEST(seen_id, (SELECT"
			    " COALESCE(MAX(id), 0) FROM job_runs)), seen_at = UTC_TIMESTAMP(6) WHERE id = 1");
		goto out;
	}
	if ((rc = chunk_read(db, &st, chunk, &a, &last, err)) == DB_OK &&
	    (rc = agg_write(db, &a, err)) == DB_OK)
		rc = db_exec(db, err, "UPDATE jobq_run_stats_state SET rolled_id = %U WHERE id = 1", last);
	*more = rc == DB_OK && last < st.seen;
out:
	agg_free(&a);
	if (rc == DB_OK && (rc = db_commit(db, err)) == DB_OK)
		return DB_OK;
	db_rollback(db);
	*more = 0;
	return rc;
}

/* groups.c -- groups of jobs with callbacks (groups.h,
 * sql/023-groups.sql).
 *
 * A group's row counts its jobs (total) and how those that ended ended.
 * Every transaction that ends a job of a group adds one to the count of
 * its end (groups_ended_sql), under the same fence as the statement that
 * ended the job, so a job is counted once however many workers raced for
 * it or died holding it.  That UPDATE locks the group's row until the
 * transaction commits: of two transactions ending the group's last two
 * jobs, the second reads what the first wrote, so exactly one of them
 * sees the group complete and enqueues its callbacks
 * (groups_settle_sql), in the transaction that ended its last job.
 *
 * Jobs that belong to no group cost nothing here: the callers append
 * these statements only for a job whose group_id the claim read. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groups.h"
#include "queue_states.h"
#include "utf8.h"

/* A group that may complete now: nobody is adding jobs to it, every job
 * of it ended, and its callbacks were not enqueued yet. */
#define COMPLETE "ended_at IS NULL AND holds = 0 AND done + dead + cancelled + expired >= total"

/* The callbacks' payload, in the order the documentation shows it. */
#define PAYLOAD                                                                                \
	"CONCAT('{\"group\": ', id, ', \"name\": ', JSON_QUOTE(name), ', \"total\": ', total," \
	" ', \"done\": ', done, ', \"dead\": ', dead, ', \"cancelled\": ', cancelled,"         \
	" ', \"expired\": ', expired, '}')"

/* Whether byte i of s (n bytes) starts a control character: C0, DEL,
 * or C1 (U+0080 to U+009F, 0xc2 0x80 to 0xc2 0x9f in UTF-8), which a
 * terminal may take for the start of an escape sequence. */
static int
control_at(const char *s, size_t n, size_t i)
{
	unsigned char c = (unsigned char)s[i], next = i + 1 < n ? (unsigned char)s[i + 1] : 0;

	return c < 0x20 || c == 0x7f || (c == 0xc2 && next >= 0x80 && next < 0xa0);
}

/* Whether name can name a group: 1 to GROUPS_NAME_MAX characters of
 * UTF-8 without control characters (C0, DEL or C1), not all digits
 * (`jobq group show` reads those as an id), not ending in a space (the
 * column's collation pads with spaces: "a " would be taken for group
 * "a").  -1 with err (one line) when not. */
int
groups_name_check(const char *name, char *err)
{
	size_t n = strlen(name), i, chars = 0;

	for (i = 0; i < n; i++) {
		if (control_at(name, n, i)) {
			errf(err, "group name: control character at byte %zu", i);
			return -1;
		}
		chars += ((unsigned char)name[i] & 0xc0) != 0x80;
	}
	if (n == 0 || utf8_valid_prefix(name, n) != n) {
		errf(err, "group name: expected 1 to %d characters of UTF-8", GROUPS_NAME_MAX);
		return -1;
	}
	if (chars > GROUPS_NAME_MAX) {
		errf(err, "group name: %zu characters, more than %d", chars, GROUPS_NAME_MAX);
		return -1;
	}
	if (name[n - 1] == ' ') {
		errf(err, "group name: '%s' ends with a space", name);
		return -1;
	}
	if (strspn(name, "0123456789") == n) {
		errf(err, "group name: '%s' is all digits, which `jobq group show` reads as an id", name);
		return -1;
	}
	return 0;
}

/* Whether the callback a group has (have, NULL when none) agrees with
 * the one asked for (want, NULL: whatever it has). */
static int
same_callback(const char *have, const char *want)
{
	return want == NULL || (have != NULL && strcmp(have, want) == 0);
}

/* Finds the group g names, or creates it with g's callbacks; *id gets
 * its id.  GROUPS_ECLOSED when it has completed (jobs can no longer
 * join it), GROUPS_EDIFFER when it exists with other callbacks than g
 * asks for; err says which, in one line. */
int
groups_open(struct db *db, const struct group_spec *g, uint64_t *id, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	rc = db_exec(db, err,
	    "INSERT INTO jobq_groups (name, on_complete, complete_queue, on_success, success_queue)"
	    " VALUES (%q, %q, %q, %q, %q) ON DUPLICATE KEY UPDATE id = id",
	    g->name, g->on_complete, g->complete_queue, g->on_success, g->success_queue);
	if (rc != DB_OK)
		return rc;
	r = db_query(db, &rc, err,
	    "SELECT id, on_complete, on_success, ended_at IS NOT NULL, complete_job FROM jobq_groups"
	    " WHERE name = %q",
	    g->name);
	if (r == NULL)
		return rc;
	if ((row = db_res_next(r)) == NULL) {
		errf(err, "group '%s' vanished as it was opened", g->name);
		rc = DB_EFAIL;
	} else if (row[3] != NULL && row[3][0] == '1') {
		errf(err, "group '%s' has completed (callback job %s); no job can join it now", g->name,
		    row[4] != NULL ? row[4] : "none");
		rc = GROUPS_ECLOSED;
	} else if (!same_callback(row[1], g->on_complete) || !same_callback(row[2], g->on_success)) {
		errf(err, "group '%s' exists with --on-complete %s and --on-success %s", g->name,
		    row[1] != NULL ? row[1] : "(none)", row[2] != NULL ? row[2] : "(none)");
		rc = GROUPS_EDIFFER;
	} else
		*id = db_col_u64(row[0], 0);
	db_res_free(r);
	return rc;
}

/* groups_open outside any transaction (each statement commits on its
 * own), rerun while it loses a deadlock: on a Galera cluster two
 * batches opening one new group through two nodes write the same row,
 * and the one that loses certification gets error 1213 (jobq's sessions
 * turn off the server's own rerun, db_galera.c); rerun, it finds the
 * group the other made. */
int
groups_open_alone(struct db *db, const struct group_spec *g, uint64_t *id, char *err)
{
	int rc, attempt = 0;

	do
		rc = groups_open(db, g, id, err);
	while (db_retry_after(rc, ++attempt));
	return rc;
}

/* Removes group id if no job ever joined it and no batch holds it open:
 * what a bulk enqueue that wrote nothing leaves (groups_open commits the
 * group before its first chunk), so that running it again, with other
 * callbacks if need be, finds no stale group.  A batch that opened the
 * same group at that moment finds it gone at its first chunk, which
 * then fails as for a completed group: said, not lost. */
int
groups_drop_empty(struct db *db, uint64_t id, char *err)
{
	return db_exec(db, err, "DELETE FROM jobq_groups WHERE id = %U AND total = 0 AND holds = 0 AND ended_at IS NULL",
	    id);
}

/* Appends the statement that adds n jobs to group id, in the
 * transaction that inserts them; it changes no row when the group has
 * completed (the caller checks its count and rolls back).  hold: the
 * caller will add more in later transactions, and the group must not
 * complete before it is through; release: this is the last of them
 * (then groups_settle_sql follows, as every job may have ended). */
void
groups_add_sql(struct db *db, struct buf *sql, uint64_t id, uint64_t n, int hold, int release)
{
	db_sql(db, sql, "UPDATE jobq_groups SET total = total + %U%s WHERE id = %U AND ended_at IS NULL;", n,
	    hold && !release       ? ", holds = holds + 1"
	        : release && !hold ? ", holds = holds - 1"
	                           : "",
	    id);
}

/* Appends the statements by which a follow-up joins group g, in its
 * parent's outcome transaction, while guard (SQL) holds: the group is
 * made with g's callbacks if no group has its name (an existing one
 * keeps its own), counted one job more if it is open, and @jobq_fg gets
 * its id for the follow-up's group_id, or NULL when it has completed
 * (the follow-up is then enqueued in no group).  Returns how many. */
size_t
groups_join_sql(struct db *db, struct buf *sql, const struct group_spec *g, const char *guard)
{
	db_sql(db, sql,
	    "INSERT INTO jobq_groups (name, on_complete, complete_queue, on_success, success_queue)"
	    " SELECT %q, %q, %q, %q, %q FROM DUAL WHERE %s ON DUPLICATE KEY UPDATE id = id;"
	    "UPDATE jobq_groups SET total = total + 1 WHERE name = %q AND ended_at IS NULL AND %s;"
	    "SET @jobq_fg = IF(ROW_COUNT() > 0, (SELECT id FROM jobq_groups WHERE name = %q), NULL);",
	    g->name, g->on_complete, g->complete_queue, g->on_success, g->success_queue, guard, g->name, guard,
	    g->name);
	return 3;
}

/* Appends the statements that enqueue the callbacks of group gid (SQL:
 * an id, or a variable holding one) if it is complete and guard (SQL)
 * holds, and mark it ended; returns how many.  The caller holds the
 * group's row locked (groups_ended_sql's or groups_add_sql's UPDATE). */
size_t
groups_settle_sql(struct db *db, struct buf *sql, const char *gid, const char *guard)
{
	db_sql(db, sql,
	    "INSERT INTO jobs (queue, type, payload) SELECT complete_queue, on_complete, " PAYLOAD
	    " FROM jobq_groups WHERE id = %s AND %s AND on_complete IS NOT NULL AND " COMPLETE ";"
	    "SET @jobq_gc = IF(ROW_COUNT() > 0, LAST_INSERT_ID(), NULL);"
	    "INSERT INTO jobs (queue, type, payload) SELECT success_queue, on_success, " PAYLOAD
	    " FROM jobq_groups WHERE id = %s AND %s AND on_success IS NOT NULL AND done = total AND " COMPLETE
	    ";"
	    "SET @jobq_gs = IF(ROW_COUNT() > 0, LAST_INSERT_ID(), NULL);"
	    "UPDATE jobq_groups SET ended_at = UTC_TIMESTAMP(6), complete_job = @jobq_gc, success_job ="
	    " @jobq_gs WHERE id = %s AND %s AND " COMPLETE ";",
	    gid, guard, gid, guard, gid, guard);
	return 5;
}

/* The counts of jobq_groups, one per way a job ends. */
static const char *const ends[] = { "done", "dead", "cancelled", "expired" };

/* ends' index of how; a caller's bug when none. */
static size_t
end_index(const char *how)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(ends) && strcmp(ends[i], how) != 0; i++)
		;
	if (i == ARRAY_LEN(ends))
		fatal("groups: no count for a job that ended '%s'", how);
	return i;
}

/* Appends the statements that count one job of group gid (SQL: an id,
 * or a variable holding one) as ended how ("done", "dead", "cancelled"
 * or "expired"), and enqueue the group's callbacks if that was its last;
 * each runs only while guard (SQL) holds, so that the caller ties them to
 * the statement that ended the job.  Returns how many. */
size_t
groups_ended_sql(struct db *db, struct buf *sql, const char *gid, const char *how, const char *guard)
{
	const char *c = ends[end_index(how)];

	db_sql(db, sql, "UPDATE jobq_groups SET %s = %s + 1 WHERE id = %s AND %s;", c, c, gid, guard);
	return 1 + groups_settle_sql(db, sql, gid, guard);
}

/* Writes into out the session variable that tallies, in one
 * transaction, the jobs of group gid that ended how. */
void
groups_tally_var(char *out, size_t len, uint64_t gid, const char *how)
{
	snprintf(out, len, "@jobq_g%llu_%s", (unsigned long long)gid, ends[end_index(how)]);
}

/* Appends one statement that zeroes the tallies of the n groups in gid;
 * it goes first in the transaction, so that one run again after a
 * deadlock counts from zero.  Returns 1. */
size_t
groups_tally_reset_sql(struct db *db, struct buf *sql, const uint64_t *gid, size_t n)
{
	char var[64];
	size_t i, e;

	buf_adds(sql, "SET ");
	for (i = 0; i < n; i++)
		for (e = 0; e < ARRAY_LEN(ends); e++) {
			groups_tally_var(var, sizeof var, gid[i], ends[e]);
			db_sql(db, sql, "%s%s = 0", i + e > 0 ? ", " : "", var);
		}
	buf_adds(sql, ";");
	return 1;
}

/* Appends the statements that add group gid's tallies to its counts and
 * enqueue its callbacks if that completed it: what groups_ended_sql does
 * for one job, once for all the jobs of the group that one transaction
 * ended (an outcome's own statement added each to its tally, iff its
 * fence held).  A transaction that ended none of them changes nothing.
 * Returns how many. */
size_t
groups_tally_sql(struct db *db, struct buf *sql, uint64_t gid)
{
	char var[ARRAY_LEN(ends)][64], id[24], guard[300];
	size_t e;

	for (e = 0; e < ARRAY_LEN(ends); e++)
		groups_tally_var(var[e], sizeof var[e], gid, ends[e]);
	snprintf(id, sizeof id, "%llu", (unsigned long long)gid);
	snprintf(guard, sizeof guard, "%s + %s + %s + %s > 0", var[0], var[1], var[2], var[3]);
	db_sql(db, sql,
	    "UPDATE jobq_groups SET done = done + %s, dead = dead + %s, cancelled = cancelled + %s,"
	    " expired = expired + %s WHERE id = %s AND %s;",
	    var[0], var[1], var[2], var[3], id, guard);
	return 1 + groups_settle_sql(db, sql, id, guard);
}

/* Copies v (NULL: "") into out. */
static void
copy(char *out, size_t len, const char *v)
{
	snprintf(out, len, "%s", v != NULL ? v : "");
}

/* Whether a job JOB_STATE_OF says is in state was forgotten from the
 * dead letter: it says "dead" only of a job in neither table whose runs
 * end dead (one still dead-lettered is "failed"), the job jobq show
 * calls forgotten (runs_job_view). */
static int
forgotten(const char *state)
{
	return strcmp(state, "dead") == 0;
}

/* Fills v's counts of queued jobs by state (served by jobs_group) and
 * the states of its callback jobs. */
static int
find_states(struct db *db, struct group_view *v, char *err)
{
	static const char *const states[] = QUEUED_STATES;
	struct db_res *r;
	char **row;
	size_t i;
	int rc;

	r = db_query(db, &rc, err,
	    "SELECT " STATE_OF_ROW ", COUNT(*) FROM jobs WHERE group_id = %U GROUP BY 1", v->id);
	if (r == NULL)
		return rc;
	while ((row = db_res_next(r)) != NULL)
		for (i = 0; i < ARRAY_LEN(states); i++)
			if (row[0] != NULL && strcmp(row[0], states[i]) == 0)
				v->queued[i] = db_col_u64(row[1], 0);
	db_res_free(r);
	r = db_query(db, &rc, err,
	    "SELECT " JOB_STATE_OF("complete_job") ", " JOB_STATE_OF("success_job") " FROM jobq_groups"
	                                                                            " WHERE id = %U",
	    v->id);
	if (r == NULL)
		return rc;
	if ((row = db_res_next(r)) != NULL) {
		copy(v->complete_state, sizeof v->complete_state, v->complete_job ? row[0] : NULL);
		copy(v->success_state, sizeof v->success_state, v->success_job ? row[1] : NULL);
		v->complete_forgotten = forgotten(v->complete_state);
		v->success_forgotten = forgotten(v->success_state);
	}
	db_res_free(r);
	return DB_OK;
}

/* Reads the group id_or_name names (an id when it is all digits) into
 * *v, with its queued jobs by state and its callbacks' states; *found 0
 * when there is none. */
static int
groups_find(struct db *db, const char *id_or_name, struct group_view *v, int *found, char *err)
{
	int by_id = id_or_name[0] != '\0' && strspn(id_or_name, "0123456789") == strlen(id_or_name);
	struct db_res *r;
	char **row;
	int rc;

	memset(v, 0, sizeof *v);
	*found = 0;
	r = db_query(db, &rc, err,
	    "SELECT id, name, on_complete, on_success, total, holds, done, dead, cancelled, expired,"
	    " complete_job, success_job, created_at, ended_at FROM jobq_groups"
	    " WHERE %s = %q",
	    by_id ? "id" : "name", id_or_name);
	if (r == NULL)
		return rc;
	if ((row = db_res_next(r)) != NULL) {
		uint64_t *n[] = { &v->total, &v->holds, &v->done, &v->dead, &v->cancelled, &v->expired,
			&v->complete_job, &v->success_job };
		size_t i;

		*found = 1;
		v->id = db_col_u64(row[0], 0);
		copy(v->name, sizeof v->name, row[1]);
		copy(v->on_complete, sizeof v->on_complete, row[2]);
		copy(v->on_success, sizeof v->on_success, row[3]);
		for (i = 0; i < ARRAY_LEN(n); i++)
			*n[i] = db_col_u64(row[4 + i], 0);
		copy(v->created_at, sizeof v->created_at, row[12]);
		copy(v->ended_at, sizeof v->ended_at, row[13]);
	}
	db_res_free(r);
	return *found ? find_states(db, v, err) : DB_OK;
}

/* Fills *w with up to max waiting jobs of group id, by id, each with the
 * jobs it still waits for (those not ended: still in jobs), by id; free
 * with groups_waiting_free.  One row a link, grouped here: a list built
 * by GROUP_CONCAT would be cut at group_concat_max_len (1,024 bytes on
 * MySQL), silently. */
static int
groups_waiting(struct db *db, uint64_t id, unsigned max, struct group_wait **w, size_t *n, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	*w = NULL;
	*n = 0;
	r = db_query(db, &rc, err,
	    "SELECT g.id, d.after_id FROM (SELECT j.id FROM jobs j WHERE j.group_id = %U AND " IS_WAITING
	    " AND EXISTS (SELECT 1 FROM jobq_deps d JOIN jobs a ON a.id = d.after_id WHERE d.job_id = j.id)"
	    " ORDER BY j.id LIMIT %u) g JOIN jobq_deps d ON d.job_id = g.id JOIN jobs a ON a.id = d.after_id"
	    " ORDER BY g.id, d.after_id",
	    id, max);
	if (r == NULL)
		return rc;
	*w = xcalloc(db_res_rows(r) + 1, sizeof **w);
	while ((row = db_res_next(r)) != NULL) {
		uint64_t job = db_col_u64(row[0], 0);
		struct group_wait *g;

		if (*n == 0 || (*w)[*n - 1].id != job)
			(*w)[(*n)++].id = job;
		g = &(*w)[*n - 1];
		if ((g->nafter & (g->nafter - 1)) == 0) /* 0, 1, 2, 4...: full */
			g->after = xrealloc(g->after, (g->nafter ? 2 * g->nafter : 1) * sizeof *g->after);
		g->after[g->nafter++] = db_col_u64(row[1], 0);
	}
	db_res_free(r);
	return DB_OK;
}

/* What `jobq group show` and the dashboard's group page show: the group
 * id_or_name names (groups_find: *found 0 when there is none) and up to
 * max of its waiting jobs (groups_waiting, into *w and *n; free with
 * groups_waiting_free).  All of it is read in one snapshot (a read-only
 * transaction): its jobs that ended and those still queued add up to its
 * total, and its callbacks are enqueued exactly when it has ended, even
 * while its last job ends. */
int
groups_show(struct db *db, const char *id_or_name, unsigned max, struct group_view *v, int *found,
    struct group_wait **w, size_t *n, char *err)
{
	int rc;

	*w = NULL;
	*n = 0;
	*found = 0;
	if ((rc = db_begin_read(db, err)) != DB_OK)
		return rc;
	if ((rc = groups_find(db, id_or_name, v, found, err)) == DB_OK && *found)
		rc = groups_waiting(db, v->id, max, w, n, err);
	if (rc == DB_OK)
		rc = db_commit(db, err);
	else
		db_rollback(db);
	return rc;
}

void
groups_waiting_free(struct group_wait *w, size_t n)
{
	while (n-- > 0)
		free(w[n].after);
	free(w);
}

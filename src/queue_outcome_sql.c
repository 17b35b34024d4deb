/* queue_outcome_sql.c -- the statements of one outcome (queue_write,
 * queue_outcome.c): the fenced change of the job's row, what its end
 * brings about (follow-ups, the jobs that wait for it), and its run
 * row.  Every statement is fenced by the lease token the reservation
 * stamped: a worker that lost its lease changes nothing but the run
 * row, which says "lost". */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "deps.h"
#include "groups.h"
#include "queue.h"
#include "queue_follow.h"
#include "queue_outcome_int.h"
#include "queue_states.h"
#include "trace.h"

const char *
queue_outcome_name(enum outcome_write k)
{
	static const char *const names[] = { "done", "retry", "dead", "interrupted", "cancelled", "expired" };

	return names[k];
}

#define RUN_COLUMNS                                                                                          \
	"job_id, queue, type, attempt, worker, started_at, duration_ms, outcome, exit_status, output, error,"    \
	" result, enqueued_at, payload, follow_ups, trace_id, span_id, wait_ms"

/* Appends the values of o's run-history row, comma-separated; its
 * outcome is the one intended, or with fenced (SQL, see run_sql) the
 * one intended iff fenced > 0, else "lost". */
static void
run_values(struct db *db, struct buf *sql, const struct outcome *o, const struct values *v, const char *fenced)
{
	const struct job *j = o->job;
	const struct run_record *run = o->run;
	char enqueued[32]; /* created_at as a DATETIME: no T, no Z */
	char trace_id[TRACE_ID_LEN + 1], span_id[SPAN_ID_LEN + 1]; /* the run's, or NULL */
	const char *c = j->created_at;
	/* A row another program wrote may hold a zero date ('0000-00-00',
	 * '2026-00-10'), which job_runs (strict mode) refuses: kept as NULL. */
	int zero = strlen(c) < 10 || strncmp(c, "0000", 4) == 0 || strncmp(c + 5, "00", 2) == 0 ||
	           strncmp(c + 8, "00", 2) == 0;

	snprintf(enqueued, sizeof enqueued, "%.10s %.15s", c, strlen(c) > 11 ? c + 11 : "00:00:00");
	db_sql(db, sql, "%U, %q, %q, %u, %q, %q, %I, ", j->id, j->queue, j->type, queue_run_attempt(o), run->worker,
	    j->reserved_at, run->duration_ms);
	if (fenced != NULL)
		buf_printf(sql, "IF(%s > 0, ", fenced);
	db_sql(db, sql, fenced != NULL ? "%q, 'lost')" : "%q", queue_outcome_name(o->kind));
	db_sql(db, sql, ", %q, %q, %q, %q, %q, %q, %s, ", v->run_exit, v->text[T_OUTPUT], v->text[T_ERROR],
	    run->result, zero ? NULL : enqueued, v->payload,
	    o->kind == OUT_DONE && o->nfollow > 0 ? "@jobq_follow" : "NULL");
	trace_ids(j->run_trace, trace_id, span_id);
	db_sql(db, sql, "%q, %q, ", trace_id[0] ? trace_id : NULL, span_id[0] ? span_id : NULL);
	if (j->wait_ms >= 0)
		db_sql(db, sql, "%I", j->wait_ms);
	else
		buf_adds(sql, "NULL");
}

/* Appends the run-history row of o; its outcome is the one intended
 * when the fenced statement said so (fenced: ROW_COUNT() right after
 * that statement, or the variable it was saved in), else "lost".  It is
 * a plain INSERT ... VALUES: the INSERT ... SELECT that could leave the
 * row out cost a plain job about 15% of the server's CPU (an A/B of the
 * two forms, contrib/bench --ab-db), so the rare lean outcome whose job
 * gained a waiter writes "lost" here and its full rewrite replaces that
 * row (piece_sql).  Plain outcomes, several to a transaction, are
 * bundled instead (bundle_sql). */
static void
run_sql(struct db *db, struct buf *sql, const struct outcome *o, const struct values *v, const char *fenced)
{
	buf_adds(sql, "INSERT INTO job_runs (" RUN_COLUMNS ") VALUES (");
	run_values(db, sql, o, v, fenced);
	buf_adds(sql, ");");
}

/* 1 when o's attempt is not counted in the row yet (a job reserved
 * ahead whose charge had not gone out, job.charged) and it ran or is
 * dead-lettered unrun (an unknown type: the attempt it was given is
 * counted, whether it was claimed to start at once or ahead): the
 * outcome's statement counts it, setting the count to the attempt's
 * number rather than adding one, so that a rewrite after a lost answer
 * cannot count it twice. */
static int
charge_due(const struct outcome *o)
{
	return !o->job->charged && (o->run != NULL || o->kind == OUT_DEAD);
}

/* The attempts a dead-letter row of o counts when the outcome's
 * statement sets them (charge_due, attempt_unmade): the attempt's
 * number, or for a job buried unrun with its attempts used up, the
 * attempts made before the claim that buried it. */
static unsigned
dead_attempts(const struct outcome *o)
{
	unsigned a = o->job->attempt;

	return o->attempt_unmade && a > 0 ? a - 1 : a;
}

/* Appends the fenced statements of one outcome; returns how many there
 * are (the last of them decides "lost").  alone: what else the fence
 * asks of has_waiters ("" or " AND has_waiters = N": piece_sql). */
static size_t
outcome_sql(struct db *db, struct buf *sql, const struct outcome *o, const struct values *v, const char *alone)
{
	const struct job *j = o->job;

	switch (o->kind) {
	case OUT_DONE:
	case OUT_CANCEL:
	case OUT_EXPIRE:
		db_sql(db, sql, "DELETE FROM jobs WHERE id = %U AND lease_token = %q%s;", j->id, j->token, alone);
		return 1;
	case OUT_RETRY:
		db_sql(db, sql,
		    "UPDATE jobs SET attempts = IF(%d, %u, attempts),"
		    " available_at = UTC_TIMESTAMP(6) + INTERVAL %I MICROSECOND, last_error = "
		    "%q, progress = NULL, progress_note = NULL, checkpoint = COALESCE(%q, checkpoint),"
		    " reserved_at = NULL, reserved_by = NULL, lease_token = NULL, lease_expires_at = NULL"
		    " WHERE id = %U AND lease_token = %q;",
		    charge_due(o), j->attempt, o->delay_ms * 1000, v->text[T_LAST_ERROR], o->checkpoint, j->id,
		    j->token);
		return 1;
	case OUT_DEAD:
		/* Copy, then delete under the same fence: both change a row or
		 * neither does.  The copy reads the row locked: a worker's
		 * session is READ COMMITTED, where a plain INSERT ... SELECT
		 * reads the last committed row without waiting, and would copy
		 * it past a fence (has_waiters) that a transaction still open
		 * is about to make fail, leaving the copy behind. */
		db_sql(db, sql,
		    "INSERT INTO failed_jobs (id, queue, type, payload, priority, attempts, max_attempts, "
		    "exception,"
		    " exit_status, reason, created_at, failed_at, unique_key, traceparent, checkpoint)"
		    " SELECT id, queue, type, payload, priority, IF(%d, %u, attempts),"
		    " max_attempts, %q, %q, %q, created_at,"
		    " UTC_TIMESTAMP(6), unique_key, traceparent, COALESCE(%q, checkpoint) FROM jobs"
		    " WHERE id = %U AND lease_token = %q%s FOR UPDATE;"
		    "DELETE FROM jobs WHERE id = %U AND lease_token = %q%s;",
		    charge_due(o) || o->attempt_unmade, dead_attempts(o), v->text[T_EXCEPTION],
		    v->exit_status, v->reason, o->checkpoint, j->id, j->token, alone, j->id, j->token, alone);
		return 2;
	default:
		/* Interrupted by the operator (second SIGTERM) or never
		 * started: back to the queue, due now, attempt refunded (when
		 * it was charged), keeping the checkpoint an interrupted
		 * handler wrote as it was stopped: the next attempt resumes
		 * from there. */
		db_sql(db, sql,
		    "UPDATE jobs SET attempts = IF(%d AND attempts > 0, attempts - 1, attempts), available_at = "
		    "UTC_TIMESTAMP(6), progress = NULL, progress_note = NULL, checkpoint = COALESCE(%q, checkpoint),"
		    " reserved_at = NULL, reserved_by = NULL, lease_token = NULL, lease_expires_at = NULL"
		    " WHERE id = %U AND lease_token = %q;",
		    j->charged, o->checkpoint, j->id, j->token);
		return 1;
	}
}

/* Moves the dead-letter row that holds job j's id aside, so that j can
 * be dead-lettered under its own id; returns the number of statements,
 * the last being the move.
 *
 * The clash comes from job ids that started again (TRUNCATE jobs, a
 * restored dump): the older row is evidence a person has not dealt with
 * yet, so it is neither overwritten nor dropped.  It gets an id no job
 * will ever get, taken from the jobs table's own counter -- first pushed
 * past every dead-letter id (a placeholder row with the id after the
 * largest one bumps it), then drawn with a placeholder insert -- and its
 * reason says what it was.  The placeholders sit in queue '' (no worker
 * serves it) and are deleted in the same transaction, so nobody ever
 * sees them; pushing the counter also ends the clashes for the jobs that
 * follow.  The move only happens while j is still ours. */
static size_t
clash_sql(struct db *db, struct buf *sql, const struct job *j)
{
	db_sql(db, sql,
	    "SET @jobq_past = (SELECT COALESCE(MAX(id), 0) + 1 FROM failed_jobs);"
	    "INSERT INTO jobs (id, queue, type, payload) SELECT @jobq_past, '', '', '' FROM DUAL"
	    " WHERE NOT EXISTS (SELECT 1 FROM jobs WHERE id = @jobq_past);"
	    "DELETE FROM jobs WHERE id = @jobq_past AND queue = '' AND type = '' AND payload = '';"
	    "INSERT INTO jobs (queue, type, payload) VALUES ('', '', '');"
	    "SET @jobq_moved = LAST_INSERT_ID();"
	    "DELETE FROM jobs WHERE id = @jobq_moved;"
	    "UPDATE failed_jobs SET id = @jobq_moved, reason = LEFT(CONCAT('was dead job %U until its id was"
	    " reused by a newer job; ', reason), 255)"
	    " WHERE id = %U AND EXISTS (SELECT 1 FROM jobs WHERE id = %U AND lease_token = %q);",
	    j->id, j->id, j->id, j->token);
	return 7;
}

/* Appends the statements that enqueue o's follow-ups; returns how many.
 * The follow-ups exist iff the done outcome does: inserted only when
 * the fenced DELETE took the row (@jobq_fence, set by the caller), in
 * its transaction.  One INSERT each,
 * so that LAST_INSERT_ID() names each one's id (a multi-row insert's ids
 * need not be consecutive, on Galera they are not): @jobq_follow
 * collects them, and the done run keeps the list (job_runs.follow_ups),
 * which is how `jobq show` and the job page link a job to its
 * follow-ups.  A follow-up that names a group joins it (or makes it)
 * first (groups.c). */
static size_t
follow_sql(struct db *db, struct buf *sql, const struct outcome *o)
{
	size_t i, n = 0;

	for (i = 0; i < o->nfollow; i++) {
		if (o->follow[i].group != NULL)
			n += groups_join_sql(db, sql, o->follow[i].group, "@jobq_fence > 0");
		queue_enqueue_sql(db, sql, &o->follow[i], 1, "@jobq_fence > 0");
		buf_adds(sql, ";SET @jobq_follow = IF(@jobq_fence > 0, CONCAT_WS(',', @jobq_follow, "
		              "LAST_INSERT_ID()), NULL);");
	}
	return n + 2 * o->nfollow;
}

/* How o ends its job, for the jobs that wait for it (deps.c); NULL when
 * the job stays in the queue (a retry, an interrupted run). */
static const char *
ended_as(enum outcome_write k)
{
	return k == OUT_DONE  ? "done"
	    : k == OUT_DEAD   ? "dead"
	    : k == OUT_CANCEL ? "cancelled"
	    : k == OUT_EXPIRE ? "expired"
	                      : NULL;
}

/* Whether o ends its job dead, cancelled or expired while jobs wait for
 * it: that end marks the waiters of policy all for cancelling
 * (deps.c), and o's transaction ends them, and theirs down the graph
 * (final_cascade, queue_outcome.c), so that none is left due, counted
 * ready, until a claim or the sweep takes it.  A done end, which every
 * link of a chain takes, is never one of these. */
int
piece_cascades(const struct outcome *o)
{
	return ended_as(o->kind) != NULL && o->kind != OUT_DONE && (o->job->waiters != 0 || o->gained_waiter);
}

/* Appends the statement that keeps the fence's count in @jobq_fence for
 * the statements after it.  A job of a group is tallied there too, iff
 * the fence held: its group's counts are written once per transaction,
 * for all its jobs the transaction ended (queue_outcome.c), not by five
 * statements per job; m->group_id says which group. */
static void
fence_sql(struct db *db, struct buf *sql, const struct outcome *o, const char *how, struct member *m)
{
	const struct job *j = o->job;
	/* Follow-ups that wait were written before (queue_follow.c), and
	 * @jobq_follow names them. */
	const char *follow = follow_waits(o) ? "" : ", @jobq_follow = NULL";
	char var[64];

	if (j->group_id == 0) {
		buf_printf(sql, "SET @jobq_fence = ROW_COUNT()%s;", follow);
		return;
	}
	/* Every expression of a SET reads the variables as they were
	 * before it, so the tally reads ROW_COUNT() too, not @jobq_fence. */
	groups_tally_var(var, sizeof var, j->group_id, how);
	db_sql(db, sql, "SET @jobq_fence = ROW_COUNT()%s, %s = %s + (ROW_COUNT() > 0);", follow, var, var);
	m->group_id = j->group_id;
}

/* Appends the hand-off's SET clause for the table named t ("" or
 * "j."): the job released (due when it was meant to be, or now) and
 * reserved for the worker as a claim would reserve it (its attempt
 * counted, the lease stamped with the hand-off's token); with may (SQL),
 * reserved only where may holds.  A job plain SQL wrote without
 * wait_until gets it as now, as deps.c's release gives it (its end then
 * drops its rows of jobq_deps); the values read from wait_until are the
 * same before and after that, so the order of the assignments does not
 * matter. */
static void
handoff_set(struct db *db, struct buf *sql, const struct handoff *h, const char *t, const char *may)
{
	const char *open = "", *and = "", *shut = "";

	if (may != NULL)
		open = "IF(", and = ", ", shut = ", NULL)";
	else
		may = "";
	buf_printf(sql,
	    " SET %savailable_at = GREATEST(COALESCE(%swait_until, UTC_TIMESTAMP(6)), UTC_TIMESTAMP(6)),"
	    " %swaiting_on = 0, %swait_until = COALESCE(%swait_until, UTC_TIMESTAMP(6)),"
	    " %sattempts = %sattempts + (%sattempts < 4294967295%s%s),",
	    t, t, t, t, t, t, t, t, *may ? " AND " : "", may);
	buf_printf(sql, " %sreserved_at = %s%s%sUTC_TIMESTAMP(6)%s,", t, open, may, and, shut);
	db_sql(db, sql, " %sreserved_by = %s%s%s%q%s,", t, open, may, and, h->worker, shut);
	db_sql(db, sql, " %slease_token = %s%s%s%q%s,", t, open, may, and, h->token, shut);
	db_sql(db, sql, " %slease_expires_at = %s%s%sUTC_TIMESTAMP(6) + INTERVAL %I MICROSECOND%s", t, open, may,
	    and, h->ttl_ms * 1000, shut);
}

/* Appends the hand-off (struct handoff): the first job that waits for
 * o's job, when this end releases it (its count is 1 and the policy
 * lets it run), it may run now, it is in a queue the worker serves and
 * that queue is not paused, is released and reserved for the worker in
 * one statement (handoff_set), iff the outcome's fence held.  It runs
 * before the release of the other waiters, which then finds it
 * released: so its row and index entries are written once, not once to
 * make it due and again to lease it.  One primary-key read of jobq_deps
 * and one of jobs: the index is forced, as a server that counts few
 * rows due in the queue (a chain of waiting jobs: none is due) would
 * read the id's row through the claim's index instead, every entry of
 * the queue.
 *
 * one: the job has one waiter (WAITERS_ONE), and this statement is its
 * release too, joined as the release is (deps.c): the waiter is released
 * whether or not it may run now, and only the lease columns depend on
 * that; the caller leaves the release statement out (DEPS_RELEASED).
 * One statement fewer per waiter in a chain or in pairs. */
static void
handoff_sql(struct db *db, struct buf *sql, const struct outcome *o, int one)
{
	const struct handoff *h = o->handoff;
	struct buf may;

	buf_init(&may);
	if (one) {
		db_sql(db, &may,
		    "COALESCE(j.wait_until, UTC_TIMESTAMP(6)) <= UTC_TIMESTAMP(6) AND j.queue IN (%s)"
		    " AND p.queue IS NULL",
		    h->queues);
		buf_adds(sql, "UPDATE jobs j JOIN jobq_deps d ON d.job_id = j.id"
		              " LEFT JOIN jobq_paused p ON p.queue = j.queue");
		handoff_set(db, sql, h, "j.", may.data);
		db_sql(db, sql,
		    " WHERE d.after_id = %U AND @jobq_fence > 0 AND j.waiting_on = 1 AND (%d OR j.after_any = 1)"
		    " AND j.lease_token IS NULL;",
		    o->job->id, o->kind == OUT_DONE);
	} else {
		buf_adds(sql, "UPDATE jobs FORCE INDEX (PRIMARY)");
		handoff_set(db, sql, h, "", NULL);
		db_sql(db, sql,
		    " WHERE id = (SELECT d.job_id FROM jobq_deps d WHERE d.after_id = %U ORDER BY d.job_id LIMIT 1)"
		    " AND @jobq_fence > 0 AND waiting_on = 1 AND (%d OR after_any = 1) AND lease_token IS NULL"
		    " AND COALESCE(wait_until, UTC_TIMESTAMP(6)) <= UTC_TIMESTAMP(6) AND queue IN (%s)"
		    " AND NOT EXISTS (SELECT 1 FROM jobq_paused p WHERE p.queue = jobs.queue);",
		    o->job->id, o->kind == OUT_DONE, h->queues);
	}
	buf_free(&may);
}

/* What an outcome's fence asks of has_waiters (piece_sql): that it is
 * still what the claim read, when the outcome leaves statements out for
 * it. */
static const char *
waiters_fence(int lean, int sole, int waiters)
{
	if (lean)
		return " AND has_waiters = 0";
	if (!sole)
		return "";
	return waiters == WAITERS_ONE ? " AND has_waiters = 3" : " AND has_waiters = 2";
}

/* Appends every statement of one outcome; *m gets where its results
 * will be, counted from base.
 *
 * An outcome that ends a job nothing waited for when it was claimed is
 * lean: it leaves out the release of the jobs that wait for it (three
 * multi-table statements, about as dear as the rest of the outcome),
 * and asks in its fence that still none does.  A job that gained a
 * waiter while it ran (the enqueue locked its row to set has_waiters)
 * fails that fence while it is still ours.  group_run cannot tell that
 * from a lost lease, so any lean outcome whose fence failed is sent
 * again in full (gained_waiter), and that rewrite first deletes the
 * "lost" run row its lean form wrote (this worker's, of this attempt):
 * in the same transaction as the row that replaces it.  A worker killed
 * between the two leaves the "lost" row, which is then the truth: its
 * outcome was never written, and the job runs again once the lease
 * expires.  An outcome without a run row (a job never started: its
 * type unknown, its attempts used up) is lean the same way: a waiter it
 * gained must be cancelled with it, not left waiting for good.
 *
 * An outcome that ends a job each of whose waiters waited for it alone
 * when it was claimed (has_waiters WAITERS_SOLE or WAITERS_ONE) is sole:
 * it leaves out taking down counts above 1 (DEPS_SOLE) and asks in its
 * fence that has_waiters is still what the claim read.  With one waiter
 * (WAITERS_ONE), the hand-off is its release too, and the release
 * statement is left out.  A job that gained a waiter while it ran fails
 * that fence, and is written again in full as a lean one is. */
size_t
piece_sql(struct db *db, struct buf *sql, const struct outcome *o, const struct values *v, int clash,
    size_t base, struct member *m)
{
	const char *fenced = "ROW_COUNT()";
	const struct job *j = o->job;
	int waiters = j->waiters || o->gained_waiter;
	int lean = ended_as(o->kind) != NULL && !waiters;
	int sole = ended_as(o->kind) != NULL && v->with_run &&
	    (j->waiters == WAITERS_SOLE || j->waiters == WAITERS_ONE) && !o->gained_waiter;
	unsigned parts = (waiters ? DEPS_WAITERS : 0) | (sole ? DEPS_SOLE : 0) | (j->waited ? DEPS_OWN : 0);
	size_t n = 0;

	m->renumber = 0;
	m->handoff = 0;
	m->group_id = 0;
	m->lean = lean || sole;
	if (o->gained_waiter && o->run != NULL) {
		db_sql(db, sql,
		    "DELETE FROM job_runs WHERE job_id = %U AND attempt = %u AND worker = %q AND outcome = 'lost';", j->id,
		    queue_run_attempt(o), o->run->worker);
		n++;
	}
	if (clash) {
		n += clash_sql(db, sql, o->job);
		m->renumber = base + n - 1;
	}
	n += outcome_sql(db, sql, o, v, waiters_fence(lean, sole, j->waiters));
	m->fence = base + n - 1;
	/* What the job's end brings about happens iff the fenced statement
	 * ended it: its follow-ups, and the release of the jobs that wait
	 * for it.  When it brings nothing about, the run row reads the
	 * fence's count itself: one statement less for a plain job. */
	if (ended_as(o->kind) != NULL &&
	    ((o->kind == OUT_DONE && o->nfollow > 0) || parts != 0 || j->group_id != 0)) {
		fence_sql(db, sql, o, ended_as(o->kind), m);
		n++;
		fenced = "@jobq_fence";
		if (o->kind == OUT_DONE && !follow_waits(o))
			n += follow_sql(db, sql, o);
		n += deps_ended_sql(db, sql, j->id, ended_as(o->kind), "@jobq_fence > 0", parts & DEPS_OWN);
		if (o->handoff != NULL && (parts & DEPS_WAITERS)) {
			handoff_sql(db, sql, o, sole && j->waiters == WAITERS_ONE);
			m->handoff = base + n++;
			if (sole && j->waiters == WAITERS_ONE)
				parts |= DEPS_RELEASED;
		}
		n += deps_ended_sql(db, sql, j->id, ended_as(o->kind), "@jobq_fence > 0", parts & ~DEPS_OWN);
	}
	if (v->with_run) {
		run_sql(db, sql, o, v, fenced);
		n++;
	}
	return n;
}

/* Whether o, in the values v, is plain: a job nothing waits for, ending
 * (done with no follow-ups, cancelled or expired; a job of a group only
 * done) with its run row, with no dead-letter to move aside.  Its own
 * statements would be the fenced DELETE, the run row and, for a job of
 * a group or one that waited for others, the tally and the drop of its
 * own dependency rows; the plain outcomes of one transaction are bundled
 * instead, by group (bundle_sql): a few statements for all of them. */
int
piece_plain(const struct outcome *o, const struct values *v, int clash)
{
	const struct job *j = o->job;
	int ends = o->kind == OUT_DONE ? o->nfollow == 0
	                               : (o->kind == OUT_CANCEL || o->kind == OUT_EXPIRE) && j->group_id == 0;

	return ends && v->with_run && !clash && !o->gained_waiter && !j->waiters;
}

/* Appends plain outcome o's part of its bundle: to row, its run row as
 * one branch of the bundle's INSERT ... SELECT, read (and locked) from
 * the job's row iff the fence holds; to del, its fence, one term of the
 * bundle's DELETE.  The bundle joins the branches with UNION ALL and the
 * terms with OR (bundle_sql). */
void
bundle_add_sql(struct db *db, struct buf *row, struct buf *del, const struct outcome *o, const struct values *v)
{
	const struct job *j = o->job;

	buf_adds(row, "(SELECT ");
	run_values(db, row, o, v, NULL);
	db_sql(db, row, " FROM jobs WHERE id = %U AND lease_token = %q AND has_waiters = 0 FOR UPDATE)", j->id,
	    j->token);
	db_sql(db, del, "id = %U AND lease_token = %q", j->id, j->token);
}

/* Appends the statements of bundle b (joined from bundle_add_sql's
 * parts); returns how many: 2, one more when its jobs are of a group,
 * one more when some waited for other jobs.
 *
 * The run rows go first, each read from its job's row under the
 * outcome's fence and locked FOR UPDATE; the DELETE then ends the same
 * rows.  No other row can pass the DELETE's fence in between: a lease
 * token is never given back to a row, and has_waiters never returns to
 * 0 (sql/022).  So both statements count the same rows, and a job whose
 * fence failed (a lost lease, or a waiter gained while it ran) has
 * neither its run row nor its end written: bundle_settle finds which
 * by their run rows, and they are written again in full.  What the DELETE counted
 * is added to the group's tally of done jobs (its members of a group
 * all ended done), and the jobs it ended drop their own dependency rows
 * (deps_gone_sql).  One multi-row INSERT and one DELETE for a
 * transaction's plain jobs, where each job had its own two, cost the
 * server about 40% less per outcome (measured with eight to a
 * transaction, README "Plain outcomes bundled"). */
size_t
bundle_sql(struct buf *sql, const struct bundle *b)
{
	size_t n = 2;

	buf_adds(sql, "INSERT INTO job_runs (" RUN_COLUMNS ") ");
	buf_add(sql, b->rows.data, b->rows.len);
	buf_adds(sql, ";DELETE FROM jobs WHERE has_waiters = 0 AND (");
	buf_add(sql, b->dels.data, b->dels.len);
	buf_adds(sql, ");");
	if (b->group_id != 0) {
		char var[64];

		groups_tally_var(var, sizeof var, b->group_id, "done");
		buf_printf(sql, "SET %s = %s + ROW_COUNT();", var, var);
		n++;
	}
	if (b->own.len > 0)
		n += deps_gone_sql(sql, &b->own);
	return n;
}

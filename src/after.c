/* after.c -- enqueueing jobs that wait for other jobs (after.h).
 *
 * All the jobs of one call commit in one transaction, one INSERT each
 * (LAST_INSERT_ID() names each one's id: a multi-row insert's ids need
 * not be consecutive), so a graph is written whole or not at all, and a
 * job can only name jobs enqueued before it: no cycle can be written.
 *
 * The race with a job that ends as it is named: the jobs named are
 * locked first (SELECT ... FOR UPDATE), so the transaction that ends one
 * either committed before -- it is no longer in jobs, and the dead
 * letter or its last run says how it ended -- or waits for this one and
 * then finds the new rows of jobq_deps to release (deps.c).  Only the
 * jobs still in jobs are counted in waiting_on.  A job that already
 * ended done counts as done; one that ended dead, cancelled or expired
 * finalizes the new job at once as cancelled (policy all), in this
 * transaction, with the reason naming it. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "after.h"
#include "ended.h"
#include "final.h"
#include "groups.h"
#include "park.h"
#include "queue_states.h"

/* What one transaction knows of the jobs named. */
struct tx {
	struct ended *k; /* the jobs named, sorted by id */
	size_t nk;
	const char *who; /* the worker of a cancelled job's run row */
	char **reason;    /* per job: why it was finalized at once, or NULL */
	uint64_t *cause;  /* per job: the job that reason names */
	const char **how; /* per job: how that one ended */
	uint64_t **all;   /* per job finalized at once: every job it names */
	size_t *nall;
};

/* The distinct ids the jobs name, sorted, into t. */
static void
collect(const struct after_job *jobs, size_t n, struct tx *t)
{
	size_t i, j, m = 0;

	for (i = 0; i < n; i++)
		m += jobs[i].nids;
	t->k = xcalloc(m + 1, sizeof *t->k);
	for (i = 0; i < n; i++)
		for (j = 0; j < jobs[i].nids; j++)
			t->k[t->nk++].id = jobs[i].ids[j];
	ended_sort(t->k, &t->nk);
}

/* Locks the jobs named that are still in jobs and learns how each other
 * one ended; AFTER_EUNKNOWN (err says which, and each of the n jobs that
 * names it is marked unknown) when one is unknown. */
static int
lookup(struct db *db, struct tx *t, struct after_job *jobs, size_t n, int unknown_ends, char *err)
{
	size_t i, j, k;
	int rc = DB_OK;

	/* A Galera node applies what others committed a moment later: a job
	 * enqueued through another node just now must not look unknown
	 * here, so the lookup reads causally (every session of jobq reads
	 * committed, so each read sees what its wait caught up with). */
	rc = db_causal(db, 1, err);
	if (rc == DB_OK)
		rc = ended_lookup(db, t->k, t->nk, err);
	if (rc != DB_EGONE) {
		char ignored[ERRSZ];
		int back = db_causal(db, 0, rc == DB_OK ? err : ignored);

		rc = rc == DB_OK ? back : rc;
	}

	for (i = 0; rc == DB_OK && i < t->nk; i++)
		if (!t->k[i].found && unknown_ends) {
			t->k[i].found = 1;
			t->k[i].how = AFTER_NOT_KNOWN;
		} else if (!t->k[i].found) {
			errf(err, "job %llu is not known (never enqueued, or its history was pruned)",
			    (unsigned long long)t->k[i].id);
			for (j = 0; j < n; j++)
				for (k = 0; k < jobs[j].nids; k++)
					jobs[j].unknown |= jobs[j].ids[k] == t->k[i].id;
			return AFTER_EUNKNOWN;
		}
	return rc;
}

/* Whether x occurs in v[0..n). */
static int
seen_u64(const uint64_t *v, size_t n, uint64_t x)
{
	while (n-- > 0)
		if (v[n] == x)
			return 1;
	return 0;
}

/* How many of job i's dependencies have not ended, and (policy all)
 * why it cannot run, into t->reason[i] (NULL: it can), naming the job
 * (t->cause[i]) and how it ended (t->how[i]).  Fills deps with the ids
 * it waits for, all with every id it names.  A job named twice counts
 * once. */
static unsigned
pending(struct tx *t, const struct after_job *jobs, size_t i, const uint64_t *ids, uint64_t *deps,
    size_t *ndeps, uint64_t *all, size_t *nall)
{
	const struct after_job *a = &jobs[i];
	const char *how;
	uint64_t id;
	size_t j;

	t->reason[i] = NULL;
	*ndeps = *nall = 0;
	for (j = 0; j < a->nids + a->nrefs; j++) {
		id = j < a->nids ? a->ids[j] : ids[a->refs[j - a->nids]];
		if (seen_u64(all, *nall, id))
			continue;
		all[(*nall)++] = id;
		if (j < a->nids)
			how = ended_find(t->k, t->nk, id)->how;
		else
			how = t->reason[a->refs[j - a->nids]] != NULL ? "cancelled" : NULL;
		if (how == NULL)
			deps[(*ndeps)++] = id;
		else if (strcmp(how, "done") != 0 && !a->after_any && t->reason[i] == NULL) {
			t->reason[i] = xasprintf("dependency %llu (%s)", (unsigned long long)id, how);
			t->cause[i] = id;
			t->how[i] = how;
		}
	}
	return (unsigned)*ndeps;
}

/* Finalizes job i (id) at once as cancelled, for its reason (final.c),
 * parked under the job it names should a retry be able to re-open it
 * (park.c, with every job it names); its group counts it: e.group_id,
 * or for a follow-up that joined a group by name the one its row got
 * (@jobq_fg as it joined, groups_join_sql: NULL when that group had
 * completed), read into @jobq_fc before the row goes. */
static int
finalize(struct db *db, const struct tx *t, size_t i, uint64_t id, const struct enqueue_item *e, char *err)
{
	char g[24];
	struct buf sql, cond;
	int rc;

	buf_init(&sql);
	buf_init(&cond);
	park_job_sql(db, &sql, id, t->cause[i], t->how[i], t->all[i], t->nall[i]);
	db_sql(db, &sql, "UPDATE jobs SET cancel_by = %q, cancel_at = UTC_TIMESTAMP(6) WHERE id = %U;", t->reason[i],
	    id);
	if (e->group_id == 0 && e->group != NULL)
		db_sql(db, &sql, "SET @jobq_fc = (SELECT group_id FROM jobs WHERE id = %U);", id);
	db_sql(db, &cond, "id = %U", id);
	final_sql(db, &sql, t->who, cond.data);
	snprintf(g, sizeof g, "%llu", (unsigned long long)e->group_id);
	if (e->group_id != 0)
		groups_ended_sql(db, &sql, g, "cancelled", "1 = 1");
	else if (e->group != NULL)
		groups_ended_sql(db, &sql, "@jobq_fc", "cancelled", "@jobq_fc IS NOT NULL");
	if (sql.len > 0 && sql.data[sql.len - 1] == ';')
		sql.data[--sql.len] = '\0'; /* one statement after another, none empty */
	rc = db_exec_buf(db, &sql, err);
	buf_free(&sql);
	buf_free(&cond);
	return rc;
}

/* Links job id to the n jobs in deps it waits for, none ended yet. */
static int
link_deps(struct db *db, uint64_t id, const uint64_t *deps, size_t n, char *err)
{
	struct buf sql, list;
	size_t j;
	int rc;

	buf_init(&sql);
	buf_init(&list);
	for (j = 0; j < n; j++)
		buf_printf(&list, "%s%llu", j ? ", " : "", (unsigned long long)deps[j]);
	buf_adds(&sql, "INSERT INTO jobq_deps (after_id, job_id) VALUES ");
	for (j = 0; j < n; j++)
		buf_printf(&sql, "%s(%llu, %llu)", j ? ", " : "", (unsigned long long)deps[j], (unsigned long long)id);
	/* The jobs waited for learn it (sql/022-waiters.sql): their rows
	 * are locked (lookup), or new in this transaction. */
	buf_printf(&sql, ";%s%s)", WAITERS_SET(n), list.data);
	/* On Galera a lock a read takes is the node's own, and an UPDATE
	 * that leaves a row as it was does not write it: a job already
	 * waited for would not be in this transaction's write set, and the
	 * transaction that ends it on another node, having released its
	 * waiters before this one's rows reached it, would commit beside
	 * this one and leave the job waiting for good.  Each row is changed
	 * and changed back, so that one of the two fails certification. */
	if (db_galera(db))
		buf_printf(&sql,
		    ";UPDATE jobs SET has_waiters = has_waiters + 8 WHERE id IN (%s)"
		    ";UPDATE jobs SET has_waiters = has_waiters - 8 WHERE id IN (%s)",
		    list.data, list.data);
	rc = db_exec_buf(db, &sql, err);
	buf_free(&sql);
	buf_free(&list);
	return rc;
}

/* Inserts job i, then links what it waits for; one to be finalized at
 * once keeps every job it names in t for finalize. */
static int
insert_job(struct db *db, struct tx *t, struct after_job *jobs, size_t i, uint64_t *ids, char *err)
{
	struct after_job *a = &jobs[i];
	uint64_t *deps = xcalloc(a->nids + a->nrefs + 1, sizeof *deps);
	uint64_t *all = xcalloc(a->nids + a->nrefs + 1, sizeof *all);
	size_t ndeps, nall;
	struct buf sql;
	int rc;

	a->e.waiting_on = pending(t, jobs, i, ids, deps, &ndeps, all, &nall);
	if (t->reason[i] != NULL)
		a->e.waiting_on = 0;
	a->e.after_any = a->after_any;
	buf_init(&sql);
	rc = DB_OK;
	if (a->e.group != NULL && a->e.group_id == 0) {
		/* A follow-up joins its group by name first (@jobq_fg). */
		groups_join_sql(db, &sql, a->e.group, "1 = 1");
		sql.data[--sql.len] = '\0';
		rc = db_exec_buf(db, &sql, err);
		buf_reset(&sql);
	}
	if (rc == DB_OK)
		queue_enqueue_sql(db, &sql, &a->e, 1, NULL);
	if (rc == DB_OK && (rc = db_exec_buf(db, &sql, err)) == DB_OK)
		ids[i] = db_insert_id(db);
	buf_free(&sql);
	if (t->reason[i] != NULL) {
		t->all[i] = all;
		t->nall[i] = nall;
		all = NULL;
	} else if (rc == DB_OK && ndeps > 0)
		rc = link_deps(db, ids[i], deps, ndeps, err);
	free(deps);
	free(all);
	return rc;
}

static void
tx_free(struct tx *t, size_t n)
{
	size_t i;

	for (i = 0; t->reason != NULL && i < n; i++) {
		free(t->reason[i]);
		free(t->all[i]);
	}
	free(t->reason);
	free(t->all);
	free(t->nall);
	free(t->cause);
	free(t->how);
	free(t->k);
	memset(t, 0, sizeof *t);
}

/* Counts the n jobs in the group they join (all join the same one, or
 * none), first thing in the transaction: GROUPS_ECLOSED when the group
 * has completed. */
static int
join_group(struct db *db, const struct after_job *jobs, size_t n, char *err)
{
	struct buf sql;
	uint64_t gid = n > 0 ? jobs[0].e.group_id : 0;
	int rc;

	if (gid == 0)
		return DB_OK;
	buf_init(&sql);
	groups_add_sql(db, &sql, gid, n, 0, 0);
	sql.data[--sql.len] = '\0';
	rc = db_exec_buf(db, &sql, err);
	buf_free(&sql);
	if (rc == DB_OK && db_affected(db) != 1) {
		errf(err, "group %llu has completed (its callbacks are enqueued); no job can join it now",
		    (unsigned long long)gid);
		rc = GROUPS_ECLOSED;
	}
	return rc;
}

/* Inside the caller's transaction: inserts the n jobs, each waiting
 * for the jobs it names, and links them (what after_enqueue promises,
 * without the transaction).  worker: NULL for `jobq enqueue`; else the
 * worker whose job's follow-ups these are, which the run row of one
 * cancelled at once names, and then an id no table knows counts as a
 * job that ended as AFTER_NOT_KNOWN (a job of policy all is finalized
 * naming it) rather than refusing the call (the outcome is decided). */
int
after_insert(struct db *db, struct after_job *jobs, size_t n, const char *worker, uint64_t *ids, char *err)
{
	struct tx t;
	size_t i;
	int rc = DB_OK, unknown_ends = worker != NULL;

	memset(&t, 0, sizeof t);
	t.who = worker != NULL ? worker : "jobq enqueue";
	collect(jobs, n, &t);
	t.reason = xcalloc(n + 1, sizeof *t.reason);
	t.cause = xcalloc(n + 1, sizeof *t.cause);
	t.how = xcalloc(n + 1, sizeof *t.how);
	t.all = xcalloc(n + 1, sizeof *t.all);
	t.nall = xcalloc(n + 1, sizeof *t.nall);
	if (t.nk > 0)
		rc = lookup(db, &t, jobs, n, unknown_ends, err);
	for (i = 0; rc == DB_OK && i < n; i++) {
		rc = insert_job(db, &t, jobs, i, ids, err);
		snprintf(jobs[i].cancelled, sizeof jobs[i].cancelled, "%s", t.reason[i] ? t.reason[i] : "");
	}
	/* Only once every job has joined its group is any of them counted
	 * ended: follow-ups join their group one by one, and one finalized
	 * before a later one joined could complete the group early -- its
	 * callback counting too few jobs, the later ones left in no group. */
	for (i = 0; rc == DB_OK && i < n; i++)
		if (t.reason[i] != NULL)
			rc = finalize(db, &t, i, ids[i], &jobs[i].e, err);
	tx_free(&t, n);
	return rc;
}

/* Inside the caller's open transaction: what after_enqueue does, its
 * group opened (or found) and joined first.  The caller commits on
 * DB_OK and rolls back otherwise (the dashboard adds its audit rows to
 * the same transaction first, serve_enqueue.c). */
int
after_enqueue_in_tx(
    struct db *db, struct after_job *jobs, size_t n, const struct group_spec *group, uint64_t *ids, char *err)
{
	uint64_t gid = 0;
	size_t i;
	int rc = DB_OK;

	if (group != NULL && (rc = groups_open(db, group, &gid, err)) == DB_OK)
		for (i = 0; i < n; i++)
			jobs[i].e.group_id = gid;
	if (rc == DB_OK)
		rc = join_group(db, jobs, n, err);
	if (rc == DB_OK)
		rc = after_insert(db, jobs, n, NULL, ids, err);
	return rc;
}

/* One try of after_enqueue's transaction. */
static int
enqueue_tx(struct db *db, struct after_job *jobs, size_t n, const struct group_spec *group, int dry,
    uint64_t *ids, char *err)
{
	int rc;

	if ((rc = db_begin(db, err)) != DB_OK)
		return rc;
	rc = after_enqueue_in_tx(db, jobs, n, group, ids, err);
	if (rc == DB_OK && !dry)
		rc = db_commit(db, err);
	if (rc != DB_OK || dry)
		db_rollback(db);
	return rc;
}

/* Enqueues the n jobs in one transaction (rerun whole on a deadlock),
 * each waiting for the jobs it names (jobs[i].refs only earlier ones:
 * the caller checks that); ids[i] gets job i's id.  A job whose
 * dependencies all ended done, or (policy any) ended at all, is inserted
 * ready; one of policy all with a dependency that ended otherwise is
 * finalized at once as cancelled.  Jobs that join a group (e.group_id)
 * all join the same one; with group, the one it names, found or made
 * in the same transaction (so that a refused input leaves no group
 * behind), whatever e.group_id says.  Returns DB_OK, a DB_* code,
 * AFTER_EUNKNOWN with err naming the unknown job, or GROUPS_ECLOSED or
 * GROUPS_EDIFFER (groups_open); nothing is written unless DB_OK.  dry:
 * the same, rolled back at the end: nothing is written, and the answer
 * is the one a real run would have had then. */
int
after_enqueue(struct db *db, struct after_job *jobs, size_t n, const struct group_spec *group, int dry,
    uint64_t *ids, char *err)
{
	int rc, attempt = 0;

	do
		rc = enqueue_tx(db, jobs, n, group, dry, ids, err);
	while (db_retry_after(rc, ++attempt));
	return rc;
}

/* queue_lease.c -- the heartbeat: extending the leases of held jobs.
 *
 * A worker holds its jobs by their lease (lease_token, lease_expires_at);
 * it extends them every heartbeat, and each extension carries the
 * progress and the checkpoint the handler reported since the last one. */
#include "config.h"

#include <stdlib.h>

#include "queue.h"

/* Heartbeat: the leases of jobs[0..n) run ttl_ms from now, those that
 * are still ours; lost[i] says which are not.  One round trip, one
 * statement per job, each committed on its own: when one fails (its row
 * locked elsewhere past the wait limit) those before it stand, lost[i]
 * saying which, and those from it on are not run: lost[i] = -1.  A job
 * with progress_new gets its progress written in the same fenced
 * statement, one with checkpoint_new its checkpoint (and the flags
 * cleared once it went through). */
int
queue_extend(struct db *db, struct job *const *jobs, size_t n, int64_t ttl_ms, int *lost, char *err)
{
	struct buf sql;
	uint64_t *affected = xcalloc(n + 1, sizeof *affected);
	size_t i;
	int rc;

	buf_init(&sql);
	for (i = 0; i < n; i++) {
		db_sql(db, &sql, "%sUPDATE jobs SET lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL %I MICROSECOND",
		    i ? ";" : "", ttl_ms * 1000);
		if (jobs[i]->progress_new && jobs[i]->progress < 0)
			buf_adds(&sql, ", progress = NULL, progress_note = NULL");
		else if (jobs[i]->progress_new)
			db_sql(db, &sql, ", progress = %d, progress_note = %q", jobs[i]->progress,
			    jobs[i]->progress_note[0] ? jobs[i]->progress_note : NULL);
		if (jobs[i]->checkpoint_new)
			db_sql(db, &sql, ", checkpoint = %q", jobs[i]->checkpoint_save);
		db_sql(db, &sql, " WHERE id = %U AND lease_token = %q", jobs[i]->id, jobs[i]->token);
	}
	rc = n > 0 ? db_exec_many(db, &sql, affected, n, err) : DB_OK;
	for (i = 0; i < n; i++) {
		lost[i] = rc != DB_OK && i >= db_statements_done(db) ? -1 : affected[i] == 0;
		if (lost[i] == 0)
			jobs[i]->progress_new = jobs[i]->checkpoint_new = 0;
	}
	free(affected);
	buf_free(&sql);
	return rc;
}

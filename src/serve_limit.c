/* serve_limit.c -- the login rate limit of `jobq serve`, below the login
 * handler (serve_login.c), kept in jobq_login_failures so that several
 * servers share it.
 *
 * Every attempt that will be hashed is first written there (reserved),
 * then counted: an attempt counts before its password is checked, so
 * concurrent wrong logins cannot slip past the limit while the first ones
 * are still being hashed.  A correct password takes its row back.
 *
 * Two limits, so that nobody can lock an owner out:
 * - per address: an address with login_rate_max failures in the window
 *   is refused, whatever the name;
 * - per name: once a name has login_rate_max failures in the window, only
 *   addresses with no failure of their own may try it.  An attacker
 *   spread over many addresses gets one guess per address and window; the
 *   owner, from an address that has not failed, still logs in.
 * An IPv6 address counts as its /64 (serve_proxy.c: limit_address): one
 * host has all of it, so one address of it is no more than one host.
 * Rows older than the window are pruned as attempts come, and only
 * attempts that reach the hasher write a row, so the table holds at most
 * what the hasher can check in one window. */
#include "config.h"

#include <stdlib.h>

#include "serve_limit.h"

/* Counts the window's rows of the address and of the name (this
 * attempt's included) and how long until the oldest of each leaves it. */
static int
count(struct req *r, const char *name, int64_t *n_addr, int64_t *n_name, int64_t *wait_addr,
    int64_t *wait_name, char *err)
{
	int64_t us = r->srv->conf->serve.login_rate_window_ms * 1000;
	struct db_res *res;
	char **row;
	int rc;

	res = db_query(r->db, &rc, err,
	    "SELECT COUNT(*), TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(6), MIN(at) + INTERVAL %I MICROSECOND)"
	    " FROM jobq_login_failures WHERE address = %q AND at > UTC_TIMESTAMP(6) - INTERVAL %I MICROSECOND"
	    " UNION ALL SELECT COUNT(*), TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(6), MIN(at) + INTERVAL %I"
	    " MICROSECOND) FROM jobq_login_failures WHERE username = %q"
	    " AND at > UTC_TIMESTAMP(6) - INTERVAL %I MICROSECOND",
	    us, r->limit_addr, us, us, name, us);
	if (res == NULL)
		return rc;
	*n_addr = *n_name = *wait_addr = *wait_name = 0;
	if ((row = db_res_next(res)) != NULL) {
		*n_addr = db_col_i64(row[0], 0);
		*wait_addr = db_col_i64(row[1], 0) + 1;
	}
	if ((row = db_res_next(res)) != NULL) {
		*n_name = db_col_i64(row[0], 0);
		*wait_name = db_col_i64(row[1], 0) + 1;
	}
	db_res_free(res);
	return DB_OK;
}

/* Reserves an attempt of name from r->limit_addr.  DB_OK with *id the reserved
 * row and *retry_s 0 when it may be checked; DB_OK with *retry_s > 0 (and
 * nothing reserved) when a limit refuses it; else a db_rc.
 *
 * Why the count is right under concurrency: each attempt inserts (and
 * commits) its row before it counts, and a refused one deletes its row
 * only after counting.  Of any set of attempts that pass, the last to
 * commit counts every other one's row, so no more than login_rate_max
 * pass; at worst a refused row still in place refuses one more. */
int
serve_limit_reserve(struct req *r, const char *name, uint64_t *id, int64_t *retry_s, char *err)
{
	int64_t max = r->srv->conf->serve.login_rate_max,
	        us = r->srv->conf->serve.login_rate_window_ms * 1000;
	int64_t n_addr = 0, n_name = 0, wait_addr = 0, wait_name = 0;
	int rc;

	*id = 0;
	*retry_s = 0;
	/* Rows out of the window count for nothing: a few go each time. */
	db_exec(r->db, err,
	    "DELETE FROM jobq_login_failures WHERE at < UTC_TIMESTAMP(6) - INTERVAL %I MICROSECOND LIMIT 20",
	    us);
	if ((rc = db_exec(r->db, err, "INSERT INTO jobq_login_failures (username, address) VALUES (%q, %q)",
	         name, r->limit_addr)) != DB_OK)
		return rc;
	*id = db_insert_id(r->db);
	if ((rc = count(r, name, &n_addr, &n_name, &wait_addr, &wait_name, err)) != DB_OK) {
		serve_limit_release(r, *id);
		*id = 0;
		return rc;
	}
	if (n_addr > max)
		*retry_s = wait_addr;
	else if (n_name > max && n_addr > 1)
		*retry_s = wait_name < wait_addr ? wait_name : wait_addr;
	if (*retry_s > 0) {
		serve_limit_release(r, *id);
		*id = 0;
	}
	return DB_OK;
}

/* Takes a reserved attempt back (a correct password, or one refused
 * before it was checked).  A failure only leaves the attempt counted. */
void
serve_limit_release(struct req *r, uint64_t id)
{
	char err[ERRSZ];

	if (id != 0)
		db_exec(r->db, err, "DELETE FROM jobq_login_failures WHERE id = %U", id);
}

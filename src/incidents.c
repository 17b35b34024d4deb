/* incidents.c -- jobq_alerts: the watchdogs' incidents (sql/020-alerts.sql).
 * Every SQL statement on that table is here.
 *
 * An incident is opened by an INSERT and cleared by an UPDATE, each of
 * which changes the row for one caller only: the unique key (kind, name,
 * open_key) turns a second INSERT for an incident already open into a
 * duplicate key, and the UPDATE is conditional on the row still being
 * open.  *won tells the caller that it was the one, and so the one to
 * deliver the alert: once per incident raised, once cleared, however
 * many workers race.
 *
 * An answer can be lost after the server applied the write (the
 * connection went): *won is then INCIDENT_UNSURE, and the caller asks
 * incidents_took, once connected again, whether its write took.  The
 * row names who wrote it (raised_by, cleared_by: a worker's id, unique
 * to its process), which is the key the caller chose: the open row of
 * (kind, name) raised by the caller, or the row it meant to clear,
 * cleared by it.  A worker that dies between the write and the
 * delivery loses that delivery (the incident stays listed): at most
 * once, never twice. */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "incidents.h"

#define ER_DUP_ENTRY_ 1062
#define COLUMNS                                                                                         \
	"id, kind, name, reason, raised_at, COALESCE(cleared_at, ''), open_key IS NOT NULL, raised_by," \
	" COALESCE(cleared_by, '')"

static void
from_row(struct incident *x, char **row)
{
	memset(x, 0, sizeof *x);
	x->id = strtoull(row[0], NULL, 10);
	snprintf(x->kind, sizeof x->kind, "%s", row[1]);
	snprintf(x->name, sizeof x->name, "%s", row[2]);
	x->reason = xstrdup(row[3]);
	snprintf(x->raised_at, sizeof x->raised_at, "%.19s", row[4]);
	snprintf(x->cleared_at, sizeof x->cleared_at, "%.19s", row[5]);
	x->open = strcmp(row[6], "1") == 0;
	snprintf(x->raised_by, sizeof x->raised_by, "%s", row[7]);
	snprintf(x->cleared_by, sizeof x->cleared_by, "%s", row[8]);
}

/* Reads incident id into x; DB_EFAIL when it is gone. */
static int
get(struct db *db, uint64_t id, struct incident *x, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	if ((r = db_query(db, &rc, err, "SELECT " COLUMNS " FROM jobq_alerts WHERE id = %U", id)) == NULL)
		return rc;
	if ((row = db_res_next(r)) != NULL)
		from_row(x, row);
	else {
		errf(err, "incident %llu went away", (unsigned long long)id);
		rc = DB_EFAIL;
	}
	db_res_free(r);
	return rc;
}

/* Reads the open incident (kind, name) into x; *found 0 when none is
 * open. */
static int
get_open(struct db *db, const char *kind, const char *name, struct incident *x, int *found, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	*found = 0;
	r = db_query(db, &rc, err,
	    "SELECT " COLUMNS " FROM jobq_alerts WHERE kind = %q AND name = %q AND open_key = 1", kind, name);
	if (r == NULL)
		return rc;
	if ((row = db_res_next(r)) != NULL) {
		from_row(x, row);
		*found = 1;
	}
	db_res_free(r);
	return DB_OK;
}

/* Opens the incident (kind, name) unless one is open; *won 1 and x
 * filled (incidents_free-able: x->reason is allocated) when this call
 * opened it.  by must be unique to the caller's process (see the top of
 * the file).  *won INCIDENT_UNSURE, with the failure's code, when the
 * INSERT was sent but its answer, or the read-back's, was lost: it may
 * have taken (incidents_took). */
int
incidents_open(struct db *db, const char *kind, const char *name, const char *reason, const char *by,
    struct incident *x, int *won, char *err)
{
	int rc;

	*won = 0;
	rc = db_exec(db, err,
	    "INSERT INTO jobq_alerts (kind, name, open_key, reason, raised_at, raised_by)"
	    " VALUES (%q, %q, 1, LEFT(%q, 1024), UTC_TIMESTAMP(6), LEFT(%q, 160))",
	    kind, name, reason, by);
	if (rc != DB_OK && db_errno(db) == ER_DUP_ENTRY_)
		return DB_OK;
	if (rc == DB_OK)
		rc = get(db, db_insert_id(db), x, err);
	*won = rc == DB_OK ? 1 : rc == DB_EFAIL ? 0 : INCIDENT_UNSURE;
	return rc;
}

/* Clears the open incident (kind, name), if there is one; *won 1 and x
 * filled when this call cleared it.  *won INCIDENT_UNSURE, x->id the
 * incident's, when the UPDATE was sent but its answer, or the
 * read-back's, was lost (incidents_took). */
int
incidents_clear(
    struct db *db, const char *kind, const char *name, const char *by, struct incident *x, int *won, char *err)
{
	uint64_t id;
	int rc, found;

	*won = 0;
	if ((rc = get_open(db, kind, name, x, &found, err)) != DB_OK || !found)
		return rc;
	id = x->id;
	free(x->reason);
	memset(x, 0, sizeof *x);
	x->id = id;
	rc = db_exec(db, err,
	    "UPDATE jobq_alerts SET open_key = NULL, cleared_at = UTC_TIMESTAMP(6), cleared_by = LEFT(%q, 160)"
	    " WHERE id = %U AND open_key = 1",
	    by, id);
	if (rc == DB_OK && db_affected(db) != 1)
		return rc;
	if (rc == DB_OK && (rc = get(db, id, x, err)) == DB_OK)
		*won = 1;
	else if (rc != DB_EFAIL)
		*won = INCIDENT_UNSURE;
	x->id = id;
	return rc;
}

/* After INCIDENT_UNSURE: whether the write of by took.  id 0 asks about
 * incidents_open of (kind, name): it took when the open incident is the
 * one by raised (by had seen none open before it wrote, and no other
 * process writes its name).  Otherwise it asks about incidents_clear of
 * incident id: it took when by cleared it.  *took 1 and x filled (as
 * by the write that took) when it did.  An incident raised by by and
 * cleared by another before this is asked is not found: its clear was
 * delivered, its raise is lost. */
int
incidents_took(struct db *db, const char *kind, const char *name, uint64_t id, const char *by,
    struct incident *x, int *took, char *err)
{
	int rc, found = 1;

	*took = 0;
	memset(x, 0, sizeof *x);
	if (id == 0)
		rc = get_open(db, kind, name, x, &found, err);
	else if ((rc = get(db, id, x, err)) == DB_EFAIL)
		return DB_OK; /* gone (pruned?): nothing to deliver */
	if (rc != DB_OK || !found)
		return rc;
	if (id == 0)
		*took = strcmp(x->raised_by, by) == 0;
	else
		*took = !x->open && strcmp(x->cleared_by, by) == 0;
	return DB_OK;
}

/* Appends the rows of sql's result to *out. */
static int
append(struct db *db, struct buf *sql, struct incident **out, size_t *n, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	if ((r = db_query_buf(db, sql, &rc, err)) == NULL)
		return rc;
	while ((row = db_res_next(r)) != NULL) {
		*out = xrealloc(*out, (*n + 1) * sizeof **out);
		from_row(&(*out)[(*n)++], row);
	}
	db_res_free(r);
	return DB_OK;
}

/* The open incidents, oldest first, then those cleared in the last
 * cleared_hours (0: none), newest first, at most 100 of them.  Both
 * read the key (open_key, cleared_at). */
int
incidents_list(struct db *db, int cleared_hours, struct incident **out, size_t *n, char *err)
{
	struct buf sql;
	int rc;

	*out = NULL;
	*n = 0;
	buf_init(&sql);
	db_sql(db, &sql, "SELECT " COLUMNS " FROM jobq_alerts WHERE open_key = 1 ORDER BY id LIMIT 1000");
	rc = append(db, &sql, out, n, err);
	buf_free(&sql);
	if (rc != DB_OK || cleared_hours <= 0)
		return rc;
	buf_init(&sql);
	db_sql(db, &sql,
	    "SELECT " COLUMNS " FROM jobq_alerts WHERE open_key IS NULL"
	    " AND cleared_at > UTC_TIMESTAMP(6) - INTERVAL %d HOUR ORDER BY cleared_at DESC LIMIT 100",
	    cleared_hours);
	rc = append(db, &sql, out, n, err);
	buf_free(&sql);
	return rc;
}

/* The open incident (kind, name) in v, or NULL. */
const struct incident *
incidents_find(const struct incident *v, size_t n, const char *kind, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].open && strcmp(v[i].kind, kind) == 0 && strcmp(v[i].name, name) == 0)
			return &v[i];
	return NULL;
}

void
incidents_free(struct incident *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].reason);
	free(v);
}

/* "2024-01-02T03:04:05Z" for a DATETIME text, null for "". */
static void
add_time(cJSON *o, const char *key, const char *t)
{
	char iso[40];

	if (t[0] == '\0') {
		cJSON_AddNullToObject(o, key);
		return;
	}
	snprintf(iso, sizeof iso, "%.10sT%.8sZ", t, strlen(t) > 11 ? t + 11 : "");
	cJSON_AddStringToObject(o, key, iso);
}

/* The incident as on_alert reads it on stdin and the dashboard lists
 * it: event ("raised", "cleared"; NULL: none, for the list), id, kind,
 * name, reason, raised_at, cleared_at (ISO 8601 UTC or null), open. */
char *
incident_json(const struct incident *x, const char *event)
{
	cJSON *o = cJSON_CreateObject();
	char *s;

	if (event != NULL)
		cJSON_AddStringToObject(o, "event", event);
	cJSON_AddNumberToObject(o, "id", (double)x->id);
	cJSON_AddStringToObject(o, "kind", x->kind);
	cJSON_AddStringToObject(o, "name", x->name);
	cJSON_AddStringToObject(o, "reason", x->reason ? x->reason : "");
	add_time(o, "raised_at", x->raised_at);
	add_time(o, "cleared_at", x->cleared_at);
	cJSON_AddBoolToObject(o, "open", x->open);
	if ((s = cJSON_PrintUnformatted(o)) == NULL)
		fatal("cJSON_PrintUnformatted: out of memory");
	cJSON_Delete(o);
	return s;
}

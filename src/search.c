/* search.c -- the job history: one list over the three places a job can
 * be.  A queued job is a row of jobs, a dead one a row of failed_jobs
 * (same id), and a done one only its runs: the run that made it done
 * (outcome 'done', one per job) keeps its queue, type, payload and
 * enqueue time (sql/013).  A job is in exactly one of them at a time,
 * so their union has each id once.
 *
 * Each place answers with its own keyset range scan by id (id > after,
 * ORDER BY id LIMIT n: the primary key of jobs and failed_jobs, the
 * (job_id, id) index of job_runs), and the union keeps the lowest n: a
 * page costs at most three short scans, at the millionth row as at the
 * first, when the filters match often.  A filter that matches rarely
 * (a payload text, a type of a few jobs) scans further; see the README
 * for the figures. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "queue_states.h"
#include "search.h"

static const char *const states[] = { "ready", "delayed", "reserved", "stale", "queued", "done", "dead" };

int
search_state_valid(const char *state)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(states); i++)
		if (strcmp(states[i], state) == 0)
			return 1;
	return 0;
}

/* The filters every place shares, on its own column names: created (the
 * enqueue time), payload and id; ids up to upto when it is not 0. */
static void
common_where(struct db *db, struct buf *w, const struct search_filter *f, uint64_t upto, const char *id,
    const char *created)
{
	db_sql(db, w, "%s > %U", id, f->after_id);
	if (upto != 0)
		db_sql(db, w, " AND %s <= %U", id, upto);
	if (f->queue != NULL)
		db_sql(db, w, " AND queue = %q", db_ascii(f->queue));
	if (f->type != NULL)
		db_sql(db, w, " AND type = %q", db_ascii(f->type));
	if (f->text != NULL)
		db_sql(db, w, " AND LOCATE(%q, payload) > 0", f->text);
	if (f->since != NULL)
		db_sql(db, w, " AND %s >= %q", created, f->since);
	if (f->until != NULL)
		db_sql(db, w, " AND %s < %q", created, f->until);
}

static int
wants(const struct search_filter *f, const char *place)
{
	if (f->state == NULL)
		return 1;
	if (strcmp(place, "done") == 0 || strcmp(place, "dead") == 0)
		return strcmp(f->state, place) == 0;
	return strcmp(f->state, "done") != 0 && strcmp(f->state, "dead") != 0;
}

/* The queued jobs' part of the union. */
static void
part_jobs(struct db *db, struct buf *q, const struct search_filter *f, uint64_t upto)
{
	static const struct {
		const char *state, *cond;
	} conds[] = { { "ready", IS_READY }, { "delayed", IS_DELAYED }, { "reserved", IS_RESERVED },
		{ "stale", IS_STALE } };
	size_t i;

	buf_adds(q, "(SELECT id, " STATE_OF_ROW ", queue, type, attempts, created_at, NULL FROM jobs WHERE ");
	common_where(db, q, f, upto, "id", "created_at");
	if (f->unique_key != NULL)
		db_sql(db, q, " AND unique_key = %q", f->unique_key);
	for (i = 0; f->state != NULL && i < ARRAY_LEN(conds); i++)
		if (strcmp(conds[i].state, f->state) == 0)
			db_sql(db, q, " AND (%s)", conds[i].cond);
	db_sql(db, q, " ORDER BY id LIMIT %u)", f->limit);
}

/* The dead jobs' part. */
static void
part_dead(struct db *db, struct buf *q, const struct search_filter *f, uint64_t upto)
{
	buf_adds(q, "(SELECT id, 'dead', queue, type, attempts, created_at, failed_at FROM failed_jobs WHERE ");
	common_where(db, q, f, upto, "id", "created_at");
	if (f->unique_key != NULL)
		db_sql(db, q, " AND unique_key = %q", f->unique_key);
	db_sql(db, q, " ORDER BY id LIMIT %u)", f->limit);
}

/* The done jobs' part: their done runs. */
static void
part_done(struct db *db, struct buf *q, const struct search_filter *f, uint64_t upto)
{
	buf_adds(q, "(SELECT job_id, 'done', queue, type, attempt, enqueued_at,"
	            " started_at + INTERVAL duration_ms * 1000 MICROSECOND FROM job_runs WHERE outcome = 'done' AND ");
	common_where(db, q, f, upto, "job_id", "enqueued_at");
	if (f->unique_key != NULL)
		buf_adds(q, " AND FALSE");
	db_sql(db, q, " ORDER BY job_id LIMIT %u)", f->limit);
}

/* Where a text search's window ends: the lowest id at which a place the
 * filter wants has had SEARCH_TEXT_WINDOW rows above f->after_id (index
 * scans, the runs' without reading their rows), or 0 when none has that
 * many: the rest of every place is within the bound. */
static int
window_end(struct db *db, const struct search_filter *f, uint64_t *end, char *err)
{
	static const struct {
		const char *place, *sql;
	} scans[] = {
		{ "queued", "(SELECT id FROM jobs WHERE id > %U ORDER BY id LIMIT %u, 1)" },
		{ "dead", "(SELECT id FROM failed_jobs WHERE id > %U ORDER BY id LIMIT %u, 1)" },
		{ "done", "(SELECT job_id FROM job_runs WHERE job_id > %U ORDER BY job_id LIMIT %u, 1)" },
	};
	struct buf q;
	struct db_res *r;
	char **row;
	size_t i;
	int rc;

	buf_init(&q);
	buf_adds(&q, "SELECT LEAST(");
	for (i = 0; i < ARRAY_LEN(scans); i++) {
		buf_adds(&q, i > 0 ? ", COALESCE(" : "COALESCE(");
		if (wants(f, scans[i].place))
			db_sql(db, &q, scans[i].sql, f->after_id, SEARCH_TEXT_WINDOW - 1);
		else
			buf_adds(&q, "NULL");
		buf_adds(&q, ", 18446744073709551615)");
	}
	buf_adds(&q, ")");
	r = db_query(db, &rc, err, "%s", q.data);
	buf_free(&q);
	if (r == NULL)
		return rc;
	row = db_res_next(r);
	*end = row != NULL && row[0] != NULL ? strtoull(row[0], NULL, 10) : 0;
	if (*end == UINT64_MAX)
		*end = 0;
	db_res_free(r);
	return DB_OK;
}

/* Up to f->limit rows with ids above f->after_id, lowest id first. */
static int
query_rows(struct db *db, const struct search_filter *f, uint64_t upto, struct search_page *p, char *err)
{
	struct buf q;
	struct db_res *r;
	char **row;
	int rc, parts = 0;

	buf_init(&q);
	if (wants(f, "queued")) {
		part_jobs(db, &q, f, upto);
		parts++;
	}
	if (wants(f, "dead")) {
		buf_adds(&q, parts++ > 0 ? " UNION ALL " : "");
		part_dead(db, &q, f, upto);
	}
	if (wants(f, "done")) {
		buf_adds(&q, parts++ > 0 ? " UNION ALL " : "");
		part_done(db, &q, f, upto);
	}
	db_sql(db, &q, " ORDER BY 1 LIMIT %u", f->limit);
	r = db_query(db, &rc, err, "%s", q.data);
	buf_free(&q);
	if (r == NULL)
		return rc;
	p->rows = xcalloc(db_res_rows(r) + 1, sizeof *p->rows);
	while ((row = db_res_next(r)) != NULL) {
		struct search_row *j = &p->rows[p->n++];

		j->id = strtoull(row[0], NULL, 10);
		j->state = xstrdup(row[1]);
		j->queue = xstrdup(row[2]);
		j->type = xstrdup(row[3]);
		j->attempts = (unsigned)strtoul(row[4], NULL, 10);
		j->created_at = xstrdup_or_null(row[5]);
		j->ended_at = xstrdup_or_null(row[6]);
	}
	db_res_free(r);
	return DB_OK;
}

/* One page of the jobs the filter finds in every place the state
 * allows; a text search reads one window of ids and says where the next
 * page goes on when the window ended before the page was full. */
int
search_jobs(struct db *db, const struct search_filter *f, struct search_page *p, char *err)
{
	uint64_t end = 0;
	int rc;

	memset(p, 0, sizeof *p);
	if (f->text != NULL && (rc = window_end(db, f, &end, err)) != DB_OK)
		return rc;
	if ((rc = query_rows(db, f, end, p, err)) != DB_OK)
		return rc;
	if (p->n == f->limit)
		p->next_after = p->rows[p->n - 1].id;
	else if (end != 0)
		p->next_after = p->searched_to = end;
	return DB_OK;
}

void
search_page_free(struct search_page *p)
{
	size_t i;

	for (i = 0; i < p->n; i++) {
		free(p->rows[i].state);
		free(p->rows[i].queue);
		free(p->rows[i].type);
		free(p->rows[i].created_at);
		free(p->rows[i].ended_at);
	}
	free(p->rows);
	memset(p, 0, sizeof *p);
}

/* stats.c -- the charts' ranges and histogram bins, and a chart read
 * from jobq_run_stats (sql/018), which stats_rollup.c keeps.
 *
 * A chart of one queue and type (either may be all) over one range is
 * one primary-key range of the table: at most nbuckets * (3 + 2 * the
 * bins in use) rows, whatever the number of runs behind them, so the
 * dashboard draws a week of ten million runs as fast as an hour of ten. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "stats.h"

/* Each range keeps two buckets more than it draws: the bucket being
 * filled and the one a chart that starts mid-bucket still shows. */
static const struct stats_range ranges[] = {
	{ "1h", 60, 60 },
	{ "24h", 900, 96 },
	{ "7d", 7200, 84 },
};
#define NRANGES (sizeof ranges / sizeof ranges[0])
#define NBINS 256

const struct stats_range *
stats_range_find(const char *name)
{
	size_t i;

	for (i = 0; i < NRANGES; i++)
		if (strcmp(ranges[i].name, name) == 0)
			return &ranges[i];
	return NULL;
}

/* The ranges in order, for the roll-up: *n is how many. */
const struct stats_range *
stats_ranges(size_t *n)
{
	*n = NRANGES;
	return ranges;
}

/* The histogram bin of a time in ms: 0 below 1 ms, then four bins a
 * doubling (each 19% wider than the last), so that a percentile read
 * from the bins is within 9% of the true one from 1 ms to years. */
unsigned
stats_bin(int64_t ms)
{
	unsigned e = 0, q;
	double frac;

	if (ms < 1)
		return 0;
	while (e < 62 && ((int64_t)1 << (e + 1)) <= ms)
		e++;
	frac = (double)ms / (double)((int64_t)1 << e);
	q = (frac >= 1.189207115) + (frac >= 1.414213562) + (frac >= 1.681792831);
	return 1 + 4 * e + q;
}

/* The time a bin stands for: its geometric middle. */
double
stats_bin_ms(unsigned bin)
{
	static const double mid[4] = { 1.090507733, 1.296839555, 1.542210825, 1.834008086 };

	if (bin == 0)
		return 0;
	bin--;
	return (double)((int64_t)1 << (bin / 4 > 62 ? 62 : bin / 4)) * mid[bin % 4];
}

/* The p50 and p95 of histogram h (-1 when it is empty). */
static void
percentiles(const uint64_t *h, double *p50, double *p95)
{
	uint64_t total = 0, seen = 0, r50, r95;
	unsigned b;

	*p50 = *p95 = -1;
	for (b = 0; b < NBINS; b++)
		total += h[b];
	if (total == 0)
		return;
	r50 = (total + 1) / 2;
	r95 = total - total / 20; /* ceil(0.95 * total) */
	for (b = 0; b < NBINS; b++) {
		seen += h[b];
		if (*p50 < 0 && seen >= r50)
			*p50 = stats_bin_ms(b);
		if (seen >= r95) {
			*p95 = stats_bin_ms(b);
			return;
		}
	}
}

static void
series_alloc(struct stats_series *s, const struct stats_range *range)
{
	int k;

	memset(s, 0, sizeof *s);
	s->range = range;
	for (k = 0; k < 3; k++)
		s->count[k] = xcalloc(range->nbuckets, sizeof *s->count[k]);
	for (k = 0; k < 2; k++) {
		unsigned i;

		s->p50[k] = xcalloc(range->nbuckets, sizeof *s->p50[k]);
		s->p95[k] = xcalloc(range->nbuckets, sizeof *s->p95[k]);
		for (i = 0; i < range->nbuckets; i++)
			s->p50[k][i] = s->p95[k][i] = -1;
		s->tot_p50[k] = s->tot_p95[k] = -1;
	}
}

void
stats_series_free(struct stats_series *s)
{
	int k;

	for (k = 0; k < 3; k++)
		free(s->count[k]);
	for (k = 0; k < 2; k++) {
		free(s->p50[k]);
		free(s->p95[k]);
	}
	memset(s, 0, sizeof *s);
}

/* The database's time and how many runs the roll-up has still to read
 * (from the ids: a few more than the runs when ids were skipped). */
static int
series_clock(struct db *db, struct stats_series *s, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	r = db_query(db, &rc, err,
	    "SELECT UNIX_TIMESTAMP() DIV 1, (SELECT CAST(COALESCE(MAX(id), 0) AS SIGNED) FROM job_runs)"
	    " - (SELECT CAST(rolled_id AS SIGNED) FROM jobq_run_stats_state WHERE id = 1)");
	if (r == NULL)
		return rc;
	if ((row = db_res_next(r)) != NULL) {
		s->now = db_col_i64(row[0], 0);
		s->behind = row[1] != NULL ? db_col_i64(row[1], 0) : -1;
		if (s->behind < -1)
			s->behind = 0;
	}
	db_res_free(r);
	return DB_OK;
}

/* The histograms being read: per bucket and in all, [0] wait, [1] run. */
struct hists {
	uint64_t cur[2][NBINS];
	uint64_t all[2][NBINS];
	int64_t cur_at; /* the bucket cur holds; -1: none */
};

static void
hists_flush(struct hists *h, struct stats_series *s)
{
	int k;

	if (h->cur_at < 0)
		return;
	for (k = 0; k < 2; k++) {
		int64_t i = (h->cur_at - s->start) / s->range->res;

		percentiles(h->cur[k], &s->p50[k][i], &s->p95[k][i]);
		memset(h->cur[k], 0, sizeof h->cur[k]);
	}
	h->cur_at = -1;
}

/* Adds one row (at, kind, bin, n) of the table to s and h. */
static void
series_add(struct stats_series *s, struct hists *h, char **row)
{
	int64_t at = db_col_i64(row[0], 0);
	unsigned kind = (unsigned)db_col_u64(row[1], 0), bin = (unsigned)db_col_u64(row[2], 0);
	uint64_t n = db_col_u64(row[3], 0);
	int64_t i = (at - s->start) / s->range->res;

	if (i < 0 || i >= (int64_t)s->range->nbuckets || bin >= NBINS || kind >= STATS_KINDS)
		return;
	if (at != h->cur_at) {
		hists_flush(h, s);
		h->cur_at = at;
	}
	if (kind < 3) {
		s->count[kind][i] += n;
		s->tot_count[kind] += n;
	} else {
		h->cur[kind - 3][bin] += n;
		h->all[kind - 3][bin] += n;
	}
}

/* The chart of queue and type ("" or NULL: all of them) over range, the
 * last bucket the one now is in. */
int
stats_series(struct db *db, const struct stats_range *range, const char *queue, const char *type,
    struct stats_series *s, char *err)
{
	struct hists *h;
	struct db_res *r;
	char **row;
	int rc, k;

	series_alloc(s, range);
	if ((rc = series_clock(db, s, err)) != DB_OK)
		return rc;
	s->start = s->now - s->now % range->res - (int64_t)(range->nbuckets - 1) * range->res;
	r = db_query(db, &rc, err,
	    "SELECT at, kind, bin, n FROM jobq_run_stats WHERE res = %u AND queue = %q AND type = %q"
	    " AND at >= %I ORDER BY at, kind, bin",
	    range->res, queue ? queue : "", type ? type : "", s->start);
	if (r == NULL)
		return rc;
	h = xcalloc(1, sizeof *h);
	h->cur_at = -1;
	while ((row = db_res_next(r)) != NULL)
		series_add(s, h, row);
	hists_flush(h, s);
	for (k = 0; k < 2; k++)
		percentiles(h->all[k], &s->tot_p50[k], &s->tot_p95[k]);
	free(h);
	db_res_free(r);
	return DB_OK;
}

/* Deletes the buckets every range has let go of (each keeps two more
 * than it draws), at most 10,000 rows a range a call. */
int
stats_prune(struct db *db, uint64_t *removed, char *err)
{
	size_t i;
	int rc;

	*removed = 0;
	for (i = 0; i < NRANGES; i++) {
		rc = db_exec(db, err,
		    "DELETE FROM jobq_run_stats WHERE res = %u AND at < UNIX_TIMESTAMP() - %u LIMIT 10000",
		    ranges[i].res, ranges[i].res * (ranges[i].nbuckets + 2));
		if (rc != DB_OK)
			return rc;
		*removed += db_affected(db);
	}
	return DB_OK;
}

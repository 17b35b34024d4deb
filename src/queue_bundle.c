/* queue_bundle.c -- the bundles of one transaction of outcomes
 * (queue_outcome.c): its plain outcomes (piece_plain), one bundle for
 * each group they end jobs of (and one for jobs of none), each sent as
 * a few statements for all its members (bundle_sql), and what became of
 * each member once the transaction ended. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queue_outcome_int.h"

/* What a bundle adds beyond its members' parts: the column list and the
 * statements' words (bundle_sql); and for each member, a separator and
 * its id in the list of jobs that waited. */
#define BUNDLE_FIXED 512
#define BUNDLE_EACH 40

/* Adds a plain outcome's parts (bundle_add_sql) to the bundle of group
 * gid (0: none) among the nb of *b, which it makes if there is none
 * yet; own is the job's id if it waited for other jobs, else 0.
 * Returns 1 + the bundle's index (struct member). */
size_t
bundle_join(
    struct bundle **b, size_t *nb, uint64_t gid, const struct buf *row, const struct buf *del, uint64_t own)
{
	struct bundle *x;
	size_t i;

	for (i = 0; i < *nb && (*b)[i].group_id != gid; i++)
		;
	if (i == *nb) {
		*b = xrealloc(*b, (*nb + 1) * sizeof **b);
		x = &(*b)[(*nb)++];
		memset(x, 0, sizeof *x);
		x->group_id = gid;
		buf_init(&x->rows);
		buf_init(&x->dels);
		buf_init(&x->own);
	}
	x = &(*b)[i];
	if (x->n++ > 0) {
		buf_adds(&x->rows, " UNION ALL ");
		buf_adds(&x->dels, " OR ");
	}
	buf_add(&x->rows, row->data, row->len);
	buf_add(&x->dels, del->data, del->len);
	if (own != 0)
		buf_printf(&x->own, "%s%llu", x->own.len > 0 ? "," : "", (unsigned long long)own);
	return i + 1;
}

/* The most bytes the nb bundles of b will send. */
size_t
bundles_len(const struct bundle *b, size_t nb)
{
	size_t i, n = 0;

	for (i = 0; i < nb; i++)
		n += b[i].rows.len + b[i].dels.len + b[i].own.len + BUNDLE_FIXED + BUNDLE_EACH * b[i].n;
	return n;
}

/* The most bytes one more plain outcome, whose parts take len, adds to
 * bundles_len (a bundle of its own, at worst). */
size_t
bundle_len_one(size_t len)
{
	return len + BUNDLE_FIXED + BUNDLE_EACH;
}

/* Appends the statements of the nb bundles of b, the first of them
 * statement number at of their transaction; returns how many. */
size_t
bundles_sql(struct buf *sql, struct bundle *b, size_t nb, size_t at)
{
	size_t i, n = 0;

	for (i = 0; i < nb; i++) {
		b[i].at = at + n;
		n += bundle_sql(sql, &b[i]);
	}
	return n;
}

/* Settles the n members m of one transaction that are in its nb bundles
 * b (member.bundle), the transaction having ended with rc and counted
 * affected rows; returns rc.  When a bundle's INSERT and DELETE each
 * counted every member, every one is written.  Otherwise some fence
 * failed (bundle_sql): each is looked up by its run row
 * (queue_outcome_applied, one read each, after the COMMIT); one the
 * bundle did not write is sent again in full (OUTS_PENDING,
 * gained_waiter), which tells a gained waiter from a lost lease as it
 * does for a lean outcome.  A lookup that fails leaves the rest
 * OUTS_FAILED and returns DB_EGONE whatever it failed with: the bundle
 * may have been applied, and the next write asks first. */
int
bundle_settle(struct db *db, const struct bundle *b, size_t nb, const struct member *m, size_t n,
    struct outcome *o, int rc, const uint64_t *affected, char *err)
{
	int lrc = DB_OK;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct bundle *x = m[i].bundle > 0 && m[i].bundle <= nb ? &b[m[i].bundle - 1] : NULL;
		struct outcome *out = &o[m[i].out];

		if (x == NULL || rc == DB_EFAIL)
			continue;
		if (rc != DB_OK) {
			out->state = OUTS_FAILED;
		} else if (affected[x->at] == x->n && affected[x->at + 1] == x->n) {
			out->state = OUTS_WRITTEN;
		} else {
			out->state = OUTS_PENDING;
			if (lrc == DB_OK)
				lrc = queue_outcome_applied(db, out, err);
			if (lrc != DB_OK)
				out->state = OUTS_FAILED;
			else if (out->state == OUTS_PENDING)
				out->gained_waiter = 1;
		}
	}
	return lrc != DB_OK ? DB_EGONE : rc;
}

void
bundles_free(struct bundle *b, size_t nb)
{
	size_t i;

	for (i = 0; i < nb; i++) {
		buf_free(&b[i].rows);
		buf_free(&b[i].dels);
		buf_free(&b[i].own);
	}
	free(b);
}

/* queue_outcome_int.h -- what the two halves of queue_write share:
 * the statements of one outcome (queue_outcome_sql.c) and their
 * fitting, grouping and sending (queue_outcome.c). */
#ifndef JOBQ_QUEUE_OUTCOME_INT_H
#define JOBQ_QUEUE_OUTCOME_INT_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "queue.h"
#include "util.h"

/* How much of an outcome is written: all of it; without the handler's
 * texts (a note in their place); without the run row; without either. */
enum form { FORM_FULL, FORM_PLAIN, FORM_NORUN, FORM_BARE };

enum { T_LAST_ERROR, T_EXCEPTION, T_OUTPUT, T_ERROR, NTEXTS };

/* The values one outcome writes in one form. */
struct values {
	const char *text[NTEXTS]; /* NULL: that column gets NULL / is not written */
	char *owned[NTEXTS];      /* cut copies of texts, freed with the values */
	const char *exit_status, *reason, *run_exit;
	const char *payload; /* kept with the run of a done job, or NULL */
	char *clipped[3];    /* clipped copies of those three */
	int with_run;
	int cut;
};

/* Where, among the statements of a group, one outcome's results are. */
struct member {
	size_t out;        /* index in the caller's array */
	size_t fence;      /* the statement whose count says "still ours" */
	size_t renumber;   /* the statement that moved an older dead-letter, or 0: none */
	int lean;          /* a lean or sole outcome (piece_sql): a failed fence may be a gained waiter */
	size_t handoff;    /* the statement that hands a released job off, or 0: none */
	uint64_t group_id; /* the group whose tally it adds to (fence_sql, bundle_sql), or 0: none */
	size_t bundle;     /* 1 + its bundle's index (bundle_sql: fence and run row are there), or 0 */
};

/* The plain outcomes (piece_plain) of one transaction that end jobs of
 * one group, or of none: their statements, bundled (bundle_sql). */
struct bundle {
	uint64_t group_id; /* the group whose tally they add to, or 0 */
	struct buf rows;   /* their run rows, branches of one INSERT ... SELECT */
	struct buf dels;   /* their fences, terms of one DELETE */
	struct buf own;    /* the ids of those that waited for other jobs */
	size_t n;
	size_t at; /* its INSERT's place among the transaction's statements */
};

size_t piece_sql(struct db *db, struct buf *sql, const struct outcome *o, const struct values *v, int clash,
    size_t base, struct member *m);

int piece_cascades(const struct outcome *o);
int piece_plain(const struct outcome *o, const struct values *v, int clash);
void bundle_add_sql(struct db *db, struct buf *rows, struct buf *dels, const struct outcome *o, const struct values *v);
size_t bundle_sql(struct buf *sql, const struct bundle *b);

/* queue_bundle.c */
size_t bundle_join(struct bundle **b, size_t *nb, uint64_t gid, const struct buf *row, const struct buf *del,
    uint64_t own);
size_t bundles_len(const struct bundle *b, size_t nb);
size_t bundle_len_one(size_t len);
size_t bundles_sql(struct buf *sql, struct bundle *b, size_t nb, size_t at);
int bundle_settle(struct db *db, const struct bundle *b, size_t nb, const struct member *m, size_t n,
    struct outcome *o, int rc, const uint64_t *affected, char *err);
void bundles_free(struct bundle *b, size_t nb);

#endif

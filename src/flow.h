/* flow.h -- flow control in the database: unique jobs, max_running and
 * rate limits checked at claim time, paused queues. */
#ifndef JOBQ_FLOW_H
#define JOBQ_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "db.h"
#include "queue.h"

/* What governs one claim: a type's max_running and rate, a queue's
 * max_running.  Zero fields are no limit. */
struct flow_gate {
	const char *type; /* NULL: the claim is of a whole queue */
	unsigned type_max;
	unsigned rate_count;
	int64_t rate_window_ms;
	const char *queue;
	unsigned queue_max;
};

int flow_type_limited(const struct handler *h);
int flow_governed(const struct conf *c, const char *queue);
int flow_gate_for(const struct conf *c, const char *queue, const char *type, struct flow_gate *g);
int flow_gate_open(struct db *db, const struct flow_gate *g, struct buf *sql, unsigned *allowed, char *err);
void flow_gate_charge_sql(struct db *db, struct buf *sql, const struct flow_gate *g, const char *token);

int flow_pause(struct db *db, const char *queue, int pause, int *changed, char *err);
int flow_paused_list(struct db *db, char ***queues, char *err);
void flow_paused_sql(struct db *db, struct buf *sql, const char *queue);

/* What became of a unique enqueue. */
struct flow_unique {
	uint64_t id;   /* the new job's id, or the holder's */
	int refused;   /* the key was taken: id is the job that holds it */
	int in_window; /* refused by --unique-for's window, the holder may be done */
	int lapsed;    /* the holder is past its expires_at, unstarted: it ends expired */
};

/* jobs.unique_key holds 255 characters */
#define FLOW_UNIQUE_KEY_MAX 255

int flow_unique_key_check(const char *key, char *err);
int flow_enqueue_unique(
    struct db *db, const struct enqueue_item *it, int64_t unique_for_ms, struct flow_unique *u, char *err);
int flow_unique_in_tx(
    struct db *db, const struct enqueue_item *it, int64_t unique_for_ms, struct flow_unique *u, char *err);
int flow_unique_settle(struct db *db, const struct enqueue_item *it, int64_t unique_for_ms,
    const struct flow_unique *u, int rc, char *err);

/* Whether a refusal of flow_unique_in_tx is the answer: a live holder
 * that may still start.  Otherwise the caller rolls back and lets
 * flow_unique_settle try again. */
static inline int
flow_unique_stands(const struct flow_unique *u)
{
	return u->refused && u->id != 0 && !u->lapsed;
}

#endif

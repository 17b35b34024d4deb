/* serve_enqueue_flow.h -- the jobs of POST /api/enqueue that need more
 * than their INSERT: a unique key, jobs to wait for, a group
 * (serve_enqueue_flow.c). */
#ifndef JOBQ_SERVE_ENQUEUE_FLOW_H
#define JOBQ_SERVE_ENQUEUE_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "groups.h"
#include "queue.h"
#include "serve_http.h"
#include "serve_submit.h"

/* What a request asks beyond the job: `jobq enqueue --unique-key K
 * --unique-for D`, `--after`/`--after-any`, `--batch --group NAME
 * --on-complete T --on-success T`. */
struct enq_flow {
	const char *unique_key; /* NULL: none */
	int64_t unique_for_ms;  /* 0: none */
	const uint64_t *after;  /* the jobs each job waits for */
	size_t nafter;
	int after_any;
	struct group_spec group; /* name NULL: none (the strings are the request's) */
};

/* One enqueue to write: n jobs (items), each with its audit row. */
struct enq_write {
	const struct enq_flow *f;
	const struct enqueue_item *items;
	size_t n;
	const char *detail;    /* of the audit rows */
	const char *submit_id; /* NULL: not tracked */
};

/* What became of it. */
struct enq_flow_out {
	uint64_t first;  /* the first job's id, or (refused) the key's holder */
	uint64_t *ids;   /* each job's id, in order; NULL: none; freed by the caller */
	int refused;     /* the unique key was taken: nothing was enqueued */
	int in_window;   /* refused by a unique_for window */
	unsigned waiting_on; /* of the jobs named in after, those not ended yet */
	char cancelled[128]; /* why the jobs were cancelled as they were enqueued, or "" */
	int repeated;    /* the submit id was used before: a holds its answer */
	struct submit_answer a;
};

/* serve_enqueue_flow's answers for a request whose data the database
 * refuses (err names the field), beside the DB_* codes. */
#define ENQ_FLOW_EUNKNOWN 1 /* "after" names a job no table knows: 400 */
#define ENQ_FLOW_EGROUP 3   /* the group has completed, or has other callbacks: 409 */

int serve_enqueue_flow_read(const struct conf *c, cJSON *in, double count, struct enq_flow *f, char *why);
int serve_enqueue_flow_used(const struct enq_flow *f);
int serve_enqueue_flow(struct req *r, const struct enq_write *w, struct enq_flow_out *o, char *err);

#endif

/* serve_submit.h -- one submit of a dashboard form, one result: the
 * submit ids that make a repeated POST enqueue nothing (serve_submit.c). */
#ifndef JOBQ_SERVE_SUBMIT_H
#define JOBQ_SERVE_SUBMIT_H

#include <stdint.h>

#include "serve_http.h"

/* What the first request of a submit id made. */
struct submit_answer {
	uint64_t first_id;
	uint64_t count;
	uint64_t *ids; /* every job's id, in order (count of them); NULL: not
	                * recorded (a record from before schema 29); freed by
	                * serve_submit_answer_clear */
};

int serve_submit_id(cJSON *in, const char **id, const char **msg);
void serve_submit_prune(struct req *r);
void serve_submit_claim_sql(struct req *r, struct buf *sql, const char *id);
void serve_submit_done_sql(struct req *r, struct buf *sql, const char *id, uint64_t count);
void serve_submit_answer_clear(struct submit_answer *a);
int serve_submit_repeated(struct req *r, int rc, const char *id, struct submit_answer *a, char *err);

#endif

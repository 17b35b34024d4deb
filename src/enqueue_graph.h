/* enqueue_graph.h -- `jobq enqueue --batch` input whose lines wait for
 * other jobs ("after", "ref", "after_policy"). */
#ifndef JOBQ_ENQUEUE_GRAPH_H
#define JOBQ_ENQUEUE_GRAPH_H

#include <stdint.h>

#include "batch.h"
#include "db.h"

struct graph;

struct graph *graph_new(void);
void graph_free(struct graph *g);
int graph_check(struct graph *g, const struct batch_job *job, char *err);
void graph_bad_line(struct graph *g, const char *line, size_t len);
int graph_used(const struct graph *g);
void graph_add(struct graph *g, struct batch_job *job, size_t line);
struct group_spec;
#define GRAPH_WHY_LEN 128 /* after_job's cancelled */
int graph_commit(struct graph *g, struct db *db, const struct group_spec *group, int dry, uint64_t *ids,
    char (*why)[GRAPH_WHY_LEN], char *err);
size_t graph_line(const struct graph *g, size_t i);
size_t graph_jobs(const struct graph *g, const struct batch_job **jobs);

#endif

/* enqueue_graph.c -- a `jobq enqueue --batch` input whose lines wait for
 * other jobs (enqueue_graph.h).
 *
 * A line names the jobs it waits for by id (jobs enqueued before) or by
 * the "ref" of an earlier line of the same input.  Pass 1 refuses a ref
 * that no earlier line defines (a later line's, or none), with the line
 * number, and a ref defined twice: so the input cannot describe a cycle.
 * Pass 2 keeps every job in memory and commits them all in one
 * transaction (after.c), refs turned into the ids the rows got. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "after.h"
#include "enqueue_graph.h"
#include "nameset.h"

/* The refs defined so far, each with the index of its job among the
 * input's jobs (nameset.c; the names are the graph's: names holds
 * them), then, for pass 2, the jobs held (the index of the first is
 * its job), and the jobs of pass 2. */
struct graph {
	struct nameset *refs;
	char **names;
	size_t n;     /* refs defined */
	size_t njobs;        /* jobs seen by pass 1 */
	int used;            /* some line has "after" or "ref" */
	struct batch_job *jobs;
	size_t *line; /* of each job of pass 2, for the database's refusals */
	size_t nheld;
};

struct graph *
graph_new(void)
{
	struct graph *g = xcalloc(1, sizeof *g);

	g->refs = nameset_new();
	return g;
}

void
graph_free(struct graph *g)
{
	size_t i;

	if (g == NULL)
		return;
	nameset_free(g->refs);
	for (i = 0; i < g->n; i++)
		free(g->names[i]);
	for (i = 0; i < g->nheld; i++)
		batch_job_clear(&g->jobs[i]);
	free(g->names);
	free(g->jobs);
	free(g->line);
	free(g);
}

/* Records ref, which g takes, as defined by job index, unless an
 * earlier line defined it: then frees it and returns -1. */
static int
define(struct graph *g, char *ref, size_t index)
{
	if (nameset_get(g->refs, ref) != NAMESET_NONE) {
		free(ref);
		return -1;
	}
	g->names = xgrow(g->names, g->n, 1, sizeof *g->names);
	g->names[g->n++] = ref;
	nameset_add(g->refs, ref, index);
	return 0;
}

/* Pass 1: checks that each ref job waits for is defined by an earlier
 * line, then records job's own ref (a line refused for a bad "after"
 * still defines it, so that the lines waiting for it are judged on
 * their own).  -1 with err on a bad ref (the caller adds the line
 * number). */
int
graph_check(struct graph *g, const struct batch_job *job, char *err)
{
	size_t i;
	int rc = 0;

	g->used |= job->ref != NULL || job->nafter_ids > 0 || job->nafter_refs > 0;
	for (i = 0; i < job->nafter_refs && rc == 0; i++)
		if (nameset_get(g->refs, job->after_refs[i]) == NAMESET_NONE) {
			errf(err,
			    "\"after\": ref '%s' is not defined on an earlier line (a job can only wait for "
			    "jobs"
			    " of earlier lines, or enqueued before, by id)",
			    job->after_refs[i]);
			rc = -1;
		}
	if (job->ref != NULL && define(g, xstrdup(job->ref), g->njobs) < 0) {
		if (rc == 0)
			errf(err, "\"ref\": '%s' is defined twice", job->ref);
		rc = -1;
	}
	g->njobs++;
	return rc;
}

/* Pass 1, for a line refused before graph_check saw it: records the ref
 * it defines (batch_line_ref), if any and new, so that the lines that
 * wait for it are judged on their own.  Nothing is written after a bad
 * line, so its index is never resolved. */
void
graph_bad_line(struct graph *g, const char *line, size_t len)
{
	char *ref = batch_line_ref(line, len);

	g->njobs++;
	if (ref != NULL)
		(void)define(g, ref, g->njobs - 1); /* a second definition: the first stands */
}

/* Whether some line of the input waits for a job or names itself. */
int
graph_used(const struct graph *g)
{
	return g->used;
}

/* Pass 2: keeps job (moved in: *job is left empty), in input order. */
void
graph_add(struct graph *g, struct batch_job *job, size_t line)
{
	g->jobs = xgrow(g->jobs, g->nheld, 1, sizeof *g->jobs);
	g->line = xgrow(g->line, g->nheld, 1, sizeof *g->line);
	g->line[g->nheld] = line;
	g->jobs[g->nheld++] = *job;
	memset(job, 0, sizeof *job);
}

/* The jobs graph_add kept. */
size_t
graph_jobs(const struct graph *g, const struct batch_job **jobs)
{
	*jobs = g->jobs;
	return g->nheld;
}

/* The input line of the i-th job graph_add kept. */
size_t
graph_line(const struct graph *g, size_t i)
{
	return g->line[i];
}

/* Commits the jobs graph_add kept in one transaction, each joining the
 * group that group names (NULL: none), made in it if need be; ids[i]
 * gets the id of the i-th, and why[i] why it was cancelled as it was
 * enqueued ("dependency 12 (dead)") or "".  dry: rolled back instead.
 * Returns as after_enqueue does. */
int
graph_commit(struct graph *g, struct db *db, const struct group_spec *group, int dry, uint64_t *ids,
    char (*why)[GRAPH_WHY_LEN], char *err)
{
	struct after_job *a = xcalloc(g->nheld + 1, sizeof *a);
	size_t **refs = xcalloc(g->nheld + 1, sizeof *refs);
	size_t i, j;
	int rc;

	for (i = 0; i < g->nheld; i++) {
		const struct batch_job *b = &g->jobs[i];

		a[i].e = b->e;
		a[i].ids = b->after_ids;
		a[i].nids = b->nafter_ids;
		a[i].after_any = b->after_any;
		refs[i] = xcalloc(b->nafter_refs + 1, sizeof *refs[i]);
		for (j = 0; j < b->nafter_refs; j++)
			refs[i][j] = nameset_get(g->refs, b->after_refs[j]); /* pass 1 checked it is earlier */
		a[i].refs = refs[i];
		a[i].nrefs = b->nafter_refs;
	}
	rc = after_enqueue(db, a, g->nheld, group, dry, ids, err);
	for (i = 0; rc == DB_OK && i < g->nheld; i++)
		snprintf(why[i], GRAPH_WHY_LEN, "%s", a[i].cancelled);
	for (i = 0; rc == AFTER_EUNKNOWN && i < g->nheld; i++)
		if (a[i].unknown) {
			char e2[ERRSZ];

			snprintf(e2, sizeof e2, "%s", err);
			errf(err, "line %zu: \"after\": %s", g->line[i], e2);
			break;
		}
	for (i = 0; i < g->nheld; i++)
		free(refs[i]);
	free(refs);
	free(a);
	return rc;
}

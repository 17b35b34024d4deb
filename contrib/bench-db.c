/* bench-db.c -- the database-only ceiling for contrib/bench: jobq's own
 * claim and outcome code (queue_reserve, queue_write: the same SQL, the
 * same transactions, the run row included) with no handler at all.
 * Linked against src/libjobq.a; the product has no handler-less mode.
 *
 *   bench-db CONFIG PROCS BATCH QUEUE [chain]
 *
 * Starts PROCS processes, each with its own connection, each claiming up
 * to BATCH jobs of QUEUE at a time and writing them done, until nothing
 * is due; prints the jobs per second of all of them together.
 *
 * With chain, each process claims one job and then follows the jobs its
 * outcomes hand off to it (queue.h: struct handoff), as a worker does
 * with a chain of jobs that wait each for the one before: what one link
 * costs the database, its outcome, release, hand-off and read-back in
 * one transaction. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "db.h"
#include "queue.h"
#include "util.h"

/* Writes jobs[0..n) done, each handing off what it releases to h (NULL:
 * none) under a new token; frees them and returns n. */
static long
complete(struct db *db, struct job **jobs, size_t n, struct handoff *h, const char *id)
{
	struct run_record run = { .worker = id, .exit_status = "exit 0", .output = "", .error = "" };
	struct outcome *o = calloc(n, sizeof *o);
	char err[ERRSZ];
	size_t i;

	if (h != NULL)
		random_hex(h->token, LEASE_TOKEN_LEN / 2);
	for (i = 0; i < n; i++)
		o[i] = (struct outcome){ .job = jobs[i], .kind = OUT_DONE, .run = &run, .handoff = h };
	if (queue_write(db, o, n, NULL, 0, err) != DB_OK) {
		fprintf(stderr, "bench-db: write: %s\n", err);
		exit(1);
	}
	for (i = 0; i < n; i++)
		job_free(jobs[i]);
	free(jobs);
	free(o);
	return (long)n;
}

/* Claims and completes jobs until none is due; returns how many.  With
 * chain, what the outcomes hand off is completed next, without a claim. */
static long
drain(const struct conf *c, unsigned batch, const char *queue, const char *id, int chain)
{
	char *queues[] = { (char *)queue, NULL }, err[ERRSZ];
	struct reserve_req req = { .queues = queues, .limit = batch, .charge = batch, .ttl_ms = 60000, .worker = id,
		.mode = c->worker.reserve_mode };
	struct db *db = db_new(&c->db);
	struct handoff h = { .worker = id, .ttl_ms = 60000 };
	char quoted[128];
	long done = 0;

	snprintf(quoted, sizeof quoted, "'%s'", queue); /* a queue name has no quote */
	h.queues = quoted;
	if (db_connect(db, 1, err) != DB_OK ||
	    (req.mode == RESERVE_AUTO && queue_probe(db, &req.mode, err) != DB_OK)) {
		fprintf(stderr, "bench-db: %s\n", err);
		exit(1);
	}
	for (;;) {
		struct job **jobs;
		size_t n;

		if (queue_reserve(db, &req, &jobs, &n, err) != DB_OK) {
			fprintf(stderr, "bench-db: reserve: %s\n", err);
			exit(1);
		}
		if (n == 0)
			break;
		done += complete(db, jobs, n, chain ? &h : NULL, id);
		while (h.njobs > 0) {
			jobs = h.jobs, n = h.njobs;
			h.jobs = NULL, h.njobs = 0;
			done += complete(db, jobs, n, &h, id);
		}
	}
	db_free(db);
	return done;
}

int
main(int argc, char **argv)
{
	struct buf errors, warnings;
	struct timespec t0, t1;
	struct conf *c;
	long procs, batch, total = 0, n;
	int fds[2], i, status, chain;
	FILE *in;

	chain = argc == 6 && strcmp(argv[5], "chain") == 0;
	if ((argc != 5 && !chain) || (procs = atol(argv[2])) <= 0 || (batch = atol(argv[3])) <= 0 ||
	    strchr(argv[4], '\'') != NULL) {
		fprintf(stderr, "usage: bench-db CONFIG PROCS BATCH QUEUE [chain]\n");
		return 64;
	}
	buf_init(&errors);
	buf_init(&warnings);
	if ((c = conf_load(argv[1], 0, &errors, &warnings)) == NULL) {
		fputs(errors.data, stderr);
		return 78;
	}
	if (pipe(fds) < 0) {
		fprintf(stderr, "bench-db: pipe: %s\n", strerror(errno));
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < procs; i++) {
		char id[64];
		pid_t pid = fork();

		if (pid < 0) {
			fprintf(stderr, "bench-db: fork: %s\n", strerror(errno));
			return 1;
		}
		if (pid == 0) {
			close(fds[0]);
			snprintf(id, sizeof id, "bench-db:%d", i);
			dprintf(fds[1], "%ld\n", drain(c, (unsigned)batch, argv[4], id, chain));
			_exit(0);
		}
	}
	close(fds[1]);
	in = fdopen(fds[0], "r");
	while (fscanf(in, "%ld", &n) == 1)
		total += n;
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			return 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.0f %ld\n",
	    (double)total / ((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9),
	    total);
	conf_free(c);
	buf_free(&errors);
	buf_free(&warnings);
	return 0;
}

/* bench-db.c -- the database-only ceiling for contrib/bench: jobq's own
 * claim and outcome code (queue_reserve, queue_write: the same SQL, the
 * same transactions, the run row included) with no handler at all.
 * Linked against src/libjobq.a; the product has no handler-less mode.
 *
 *   bench-db CONFIG PROCS BATCH QUEUE
 *
 * Starts PROCS processes, each with its own connection, each claiming up
 * to BATCH jobs of QUEUE at a time and writing them done, until nothing
 * is due; prints the jobs per second of all of them together. */
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

/* Claims and completes jobs until none is due; returns how many. */
static long
drain(const struct conf *c, unsigned batch, const char *queue, const char *id)
{
	char *queues[] = { (char *)queue, NULL }, err[ERRSZ];
	struct reserve_req req = { .queues = queues, .limit = batch, .charge = batch, .ttl_ms = 60000, .worker = id,
		.mode = c->worker.reserve_mode };
	struct db *db = db_new(&c->db);
	long done = 0;

	if (db_connect(db, 1, err) != DB_OK ||
	    (req.mode == RESERVE_AUTO && queue_probe(db, &req.mode, err) != DB_OK)) {
		fprintf(stderr, "bench-db: %s\n", err);
		exit(1);
	}
	for (;;) {
		struct run_record run = { id, 0, "exit 0", "", "" };
		struct outcome *o;
		struct job **jobs;
		size_t n, i;

		if (queue_reserve(db, &req, &jobs, &n, err) != DB_OK) {
			fprintf(stderr, "bench-db: reserve: %s\n", err);
			exit(1);
		}
		if (n == 0)
			break;
		o = calloc(n, sizeof *o);
		for (i = 0; i < n; i++)
			o[i] = (struct outcome){ .job = jobs[i], .kind = OUT_DONE, .run = &run };
		if (queue_write(db, o, n, NULL, 0, err) != DB_OK) {
			fprintf(stderr, "bench-db: write: %s\n", err);
			exit(1);
		}
		for (i = 0; i < n; i++)
			job_free(jobs[i]);
		free(jobs);
		free(o);
		done += (long)n;
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
	int fds[2], i, status;
	FILE *in;

	if (argc != 5 || (procs = atol(argv[2])) <= 0 || (batch = atol(argv[3])) <= 0) {
		fprintf(stderr, "usage: bench-db CONFIG PROCS BATCH QUEUE\n");
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
			dprintf(fds[1], "%ld\n", drain(c, (unsigned)batch, argv[4], id));
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

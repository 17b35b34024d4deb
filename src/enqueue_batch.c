/* enqueue_batch.c -- `jobq enqueue --batch`: the streaming, resumable
 * two-pass driver below cmd_enqueue.c.
 *
 * Every line is checked by batch.c (the same checks a single job gets)
 * and each chunk is committed with the batch's progress row by
 * queue_batch.c; this file reads the input, runs the two passes and
 * reports.
 *
 * A batch is streamed twice, with memory bounded by three chunks whatever
 * the input's size.  Pass 1 checks every line, reporting each bad one,
 * and hashes the input; stdin that cannot be rewound (a pipe) is spooled
 * to an unlinked temporary file on the way.  Only if every line is good
 * does pass 2 read the input again and insert it in chunks, each chunk
 * read and checked while the writers (batch_writers.c: two threads, one
 * connection each) write the two before it: the server's work is four
 * fifths of a batch's time, and one connection's statements run on one
 * of its cores.  Each chunk commits in one transaction with the batch's
 * progress row (queue_batch.c), in input order, so after a lost
 * connection the count printed is the exact count committed, and
 * re-running with the batch key the error names adds exactly the lines
 * that are missing.
 *
 * Why not one transaction for the whole batch: a million-row transaction
 * keeps every job invisible to workers until the end, holds its undo on
 * the server, loses all the work when the connection drops (and its
 * rollback can take longer than the insert), and can exceed a Galera
 * cluster's write-set limit.  Checking first gives the all-or-nothing
 * that matters (bad data writes nothing); the progress row makes the
 * chunks exactly-once across failures. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "after.h"
#include "batch_reader.h"
#include "batch_writers.h"
#include "cli.h"
#include "duration.h"
#include "enqueue_batch.h"
#include "enqueue_graph.h"
#include "groups.h"
#include "queue.h"
#include "wakeup.h"

/* Lines per chunk (one transaction).  Two chunks written at once insert
 * side by side at the right-hand end of every index of jobs, and the
 * pages where they meet split in half: with 2,000-line chunks the
 * secondary indexes came out 35-60% larger than with one writer, and the
 * server did that much more work.  Five times the lines meet five times
 * less often (A/B in the README, "Bulk enqueue, profiled"). */
#define CHUNK_ROWS 10000
#define CHUNK_BYTES (4 * 1024 * 1024)
#define MAX_REPORTED 100 /* bad lines reported one by one; the rest are counted */

/* ---- a batch ---- */

/* Set by SIGINT, SIGTERM or SIGHUP: pass 2 stops after the chunks it is
 * writing and reports what is committed, rather than dying mid-chunk
 * without saying which key resumes. */
static volatile sig_atomic_t stop_signal;

/* Only notes the signal: write_all stops between chunks. */
static void
on_signal(int sig)
{
	stop_signal = sig;
}

/* From here on SIGINT, SIGTERM and SIGHUP set stop_signal. */
static void
catch_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART; /* the statement in flight completes */
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < ARRAY_LEN(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* A chunk of pass 2: the jobs of one transaction, read and checked
 * again, and the items and progress its writer takes (batch_writers.c).
 * One more than the writers take turns, so that the next is read while
 * the server writes the ones before it. */
struct chunk {
	struct batch_job jobs[CHUNK_ROWS];
	struct enqueue_item items[CHUNK_ROWS];
	struct batch_piece piece;
	int out;       /* handed to a writer and not taken back */
	size_t n, bytes;
	uint64_t last; /* input line of its last job, or at the end the input's last line */
	int full;      /* nothing more goes in: CHUNK_ROWS, the byte limit, the end, a bad line */
	int end;       /* the input ended in it */
	int rc;        /* DB_EFAIL when a line failed (err says which) */
	char err[ERRSZ];
};

/* One run of a batch: its key, its progress and the chunks of pass 2. */
struct batch_run {
	const struct batch_ctx *ctx;
	struct db *db;
	const char *key;
	int dry_run;
	struct batch_progress p;  /* committed */
	struct batch_progress to; /* handed to the writers */
	struct reader *r;         /* pass 2's input */
	struct chunk *chunk[BATCH_WRITERS_MAX + 1];
	struct chunk *out[BATCH_WRITERS_MAX]; /* handed out, oldest first */
	size_t nout;
	struct batch_writers *w; /* NULL on a dry run */
	unsigned long lost;      /* the session of a chunk whose connection was lost, or 0 */
	struct db *more[BATCH_WRITERS_MAX - 1]; /* the other writers' connections */
	struct batch_job carry;  /* read but past a full chunk's byte limit */
	uint64_t carry_line;     /* its input line, 0 if none */
	size_t max_bytes;
	uint64_t added; /* jobs this run committed (or, dry, printed) */
	uint64_t gid;   /* the group every job joins (--group), or 0 */
};

/* Mixes the command line's defaults into the input's hash: resuming a
 * batch with other --queue, --priority, --expires-in, --traceparent,
 * --on-complete... would give its second half other jobs than its
 * first.  The options added to it later (expiry, trace context, the
 * group's callbacks) go in only when given, so that a batch started
 * without them by an older jobq still resumes. */
static uint64_t
defaults_hash(uint64_t h, const struct batch_ctx *ctx)
{
	const struct group_spec *g = ctx->group;
	char *d = xasprintf("%s|%lld|%s|%d|%u|%s", ctx->queue ? ctx->queue : "", (long long)ctx->delay_ms,
	    ctx->at ? ctx->at : "", ctx->priority, ctx->max_attempts, g != NULL ? g->name : "");
	char *more = xasprintf("%s|%s|%lld|%s|%s|%s", d, ctx->expires_at ? ctx->expires_at : "",
	    (long long)ctx->expires_in_ms, ctx->traceparent ? ctx->traceparent : "",
	    g != NULL && g->on_complete ? g->on_complete : "",
	    g != NULL && g->on_success ? g->on_success : "");
	const char *p;

	/* "||0|||" (after d): none of the later options was given */
	if (strcmp(more + strlen(d), "||0|||") == 0)
		more[strlen(d)] = '\0';
	for (p = more; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	free(d);
	free(more);
	return h;
}

/* The database's time (DESIGN 5) that pass 1 holds each "expires_at" (made
 * UTC by batch.c, as the server writes it) to, like "expires_in": 0, but
 * for the lines an earlier run of key committed; else the exit status. */
static int
expiry_ref(struct db *db, const char *key, char *now, size_t len, uint64_t *committed)
{
	struct batch_progress p;
	char err[ERRSZ];
	int rc, found = 0;

	if ((rc = queue_db_now(db, now, len, err)) == DB_OK && key != NULL &&
	    (rc = queue_batch_get(db, key, &p, &found, err)) == DB_OK && found)
		*committed = p.lines_done;
	if (rc == DB_OK)
		return 0;
	cli_error("enqueue: %s (nothing was written)", err);
	return rc == DB_EGONE ? EX_UNAVAILABLE : EXIT_FAIL;
}

/* Pass 1: checks every line, reporting the bad ones; counts lines and
 * jobs and hashes the input into *p.  Returns the number of bad lines. */
static uint64_t
check_all(struct reader *r, const struct batch_ctx *ctx, const char *now, uint64_t committed,
    struct batch_progress *p, struct graph *g)
{
	struct batch_job job;
	char err[ERRSZ];
	uint64_t bad = 0;

	while (reader_line(r)) {
		size_t l;
		const char *s = reader_trimmed(r, &l);

		if (r->too_long)
			errf(err, "longer than %zu bytes", r->max);
		else if (l == 0)
			continue;
		else if (batch_line_parse(s, l, ctx, &job, err) == 0) {
			int ok = graph_check(g, &job, err) == 0;

			if (ok && job.expires_at != NULL && r->lineno > committed && strcmp(job.expires_at, now) <= 0)
				ok = 0, errf(err, "\"expires_at\": %s UTC is in the past (the database's time: %s); the job "
				    "would expire as it is enqueued", job.expires_at, now);
			if (ok && r->lineno > committed)
				ok = enqueue_expiry_check(&job.e, now, err) == 0;

			batch_job_clear(&job);
			if (ok) {
				p->jobs_total++;
				continue;
			}
		} else
			graph_bad_line(g, s, l);
		if (++bad <= MAX_REPORTED)
			cli_error("enqueue: line %llu: %s", (unsigned long long)r->lineno, err);
	}
	p->lines_total = r->lineno;
	snprintf(
	    p->input_hash, sizeof p->input_hash, "%016llx", (unsigned long long)defaults_hash(r->hash, ctx));
	if (bad > MAX_REPORTED)
		cli_error("enqueue: ... and %llu more bad lines", (unsigned long long)(bad - MAX_REPORTED));
	return bad;
}

/* A dry run's line for one job, with the defaults filled in. */
static void
print_job(uint64_t line, const struct enqueue_item *e)
{
	char d[48];

	if (e->at != NULL)
		snprintf(d, sizeof d, "at %s", e->at);
	else
		duration_format(e->delay_ms, d, sizeof d);
	printf("line %llu: %s queue=%s priority=%d %s%s payload=%s\n", (unsigned long long)line, e->type,
	    e->queue, e->priority, e->at ? "" : "delay=", d, e->payload);
}

/* Reads input lines into c until it is full (see struct chunk): the
 * lines after what is committed, checked again, each printed as it is
 * read on a dry run. */
static void
fill_chunk(struct batch_run *b, struct chunk *c)
{
	struct reader *r = b->r;

	if (!c->full && b->carry_line != 0) {
		c->jobs[c->n++] = b->carry;
		c->bytes += b->carry.sql_len;
		c->last = b->carry_line;
		b->carry_line = 0;
	}
	while (!c->full && c->n < CHUNK_ROWS) {
		struct batch_job *job = &c->jobs[c->n];
		size_t l;
		const char *s;

		if (!reader_line(r)) {
			if (r->error) {
				errf(c->err, "reading the input again: %s", strerror(r->error));
				c->rc = DB_EFAIL;
			}
			c->end = 1; /* and it reaches the last line, blank ones included */
			c->last = r->lineno;
			break;
		}
		if (r->lineno <= b->p.lines_done)
			continue; /* committed by an earlier run of this batch */
		s = reader_trimmed(r, &l);
		if (l == 0)
			continue;
		if (r->too_long || batch_line_parse(s, l, b->ctx, job, c->err) < 0) {
			errf(c->err, "line %llu changed since it was checked", (unsigned long long)r->lineno);
			c->rc = DB_EFAIL;
			break;
		}
		if (b->dry_run)
			print_job(r->lineno, &job->e);
		if (c->n > 0 && c->bytes + job->sql_len > b->max_bytes) {
			b->carry = *job; /* the next chunk's first */
			b->carry_line = r->lineno;
			memset(job, 0, sizeof *job);
			c->full = 1;
			break;
		}
		c->bytes += job->sql_len;
		c->n++;
		c->last = r->lineno;
	}
	c->full |= c->n == CHUNK_ROWS || c->end || c->rc != DB_OK;
}

/* Empties c for the next turn. */
static void
chunk_clear(struct chunk *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		batch_job_clear(&c->jobs[i]);
	c->n = c->bytes = 0;
	c->last = 0;
	c->full = c->end = c->rc = 0;
	c->err[0] = '\0';
}

/* Hands chunk c (input lines after b->to.lines_done through c->last)
 * to its writer, or on a dry run counts it as written. */
static void
hand_out(struct batch_run *b, struct chunk *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		c->items[i] = c->jobs[i].e; /* its strings are on the heap: a copy is safe */
		c->items[i].group_id = b->gid;
	}
	c->piece.p = b->to;
	c->piece.to_line = c->last;
	c->piece.items = c->items;
	c->piece.n = c->n;
	b->to.lines_done = c->last;
	b->to.jobs_done += c->n;
	if (b->dry_run) {
		b->p = b->to;
		b->added += c->n;
		return;
	}
	c->out = 1;
	b->out[b->nout++] = c;
	batch_writers_submit(b->w, &c->piece);
}

/* Takes back the oldest chunk out once it has settled: DB_OK when it
 * committed (the batch's progress moves past it and the workers are
 * woken), else its error in err. */
static int
take_back(struct batch_run *b, char *err)
{
	struct chunk *c = b->out[0];
	struct batch_piece *piece = batch_writers_settled(b->w);

	if (piece != &c->piece)
		fatal("enqueue_batch: the writers settled chunks out of order");
	memmove(b->out, b->out + 1, --b->nout * sizeof *b->out);
	c->out = 0;
	if (piece->rc != DB_OK) {
		snprintf(err, ERRSZ, "%s", piece->err);
		if (piece->rc == DB_EGONE && b->lost == 0) /* the first: only it may have committed */
			b->lost = piece->session;
		return piece->rc;
	}
	b->p = piece->p;
	b->added += piece->n;
	wakeup_enqueued(b->ctx->conf, piece->items, piece->n);
	return DB_OK;
}

/* A chunk no writer has, emptied. */
static struct chunk *
free_chunk(struct batch_run *b)
{
	size_t i;

	for (i = 0; i < ARRAY_LEN(b->chunk) && b->chunk[i]->out; i++)
		;
	chunk_clear(b->chunk[i]);
	return b->chunk[i];
}

/* Pass 2: reads the checked input again from line p.lines_done + 1 and
 * hands it to the writers chunk by chunk, reading each chunk while the
 * ones before it are written; then takes back every chunk out.  Returns
 * the failure that comes first in the input: a chunk's, or else what
 * stopped the reading (a changed line, a signal), which is then said
 * here if a chunk before it failed too. */
static int
write_all(struct batch_run *b, char *err)
{
	size_t writers = b->w != NULL ? batch_writers_count(b->w) : 1;
	struct chunk *c = free_chunk(b);
	char chunk_err[ERRSZ];
	int rc = DB_OK, reading = 0;

	fill_chunk(b, c);
	for (;;) {
		if (b->nout == writers && (rc = take_back(b, err)) != DB_OK)
			break;
		reading = 1;
		if ((rc = c->rc) != DB_OK) {
			snprintf(err, ERRSZ, "%s", c->err);
			break;
		}
		if (stop_signal) {
			errf(err, "stopped by %s", signal_name(stop_signal));
			rc = DB_EFAIL;
			break;
		}
		reading = 0;
		/* the last chunk, even empty, moves the batch to its last line */
		if (c->n > 0 || (c->end && b->to.lines_done < c->last))
			hand_out(b, c);
		if (c->end)
			break;
		c = free_chunk(b);
		fill_chunk(b, c);
	}
	while (b->nout > 0) {
		int rc2 = take_back(b, chunk_err);

		if (rc2 != DB_OK && (rc == DB_OK || reading)) { /* the chunks out come first */
			if (reading)
				cli_error("enqueue: %s", err);
			snprintf(err, ERRSZ, "%s", chunk_err);
			rc = rc2;
			reading = 0;
		}
	}
	return rc;
}

/* After a failed chunk: reads back what is committed (reconnecting if
 * the connection was lost) and says it, with the key that resumes. */
static int
report_failure(struct batch_run *b, int rc, const char *err)
{
	char err2[ERRSZ];
	unsigned long long total = b->p.jobs_total;
	int exact = 0, found = 0, i;

	cli_error("enqueue: %s", err);
	for (i = 0; i < 3 && !exact && !b->dry_run; i++) {
		if (i > 0)
			sleep(1);
		/* a lost chunk's session must have ended first: it may still be
		 * committing what the progress row is to say */
		if ((db_connected(b->db) || db_connect(b->db, 1, err2) == DB_OK) &&
		    (b->lost == 0 || db_session_gone(b->db, b->lost, 10000)) &&
		    queue_batch_get(b->db, b->key, &b->p, &found, err2) == DB_OK && found)
			exact = 1;
	}
	if (exact && b->p.jobs_done == total && total > 0) {
		/* The last chunk's COMMIT went through; only its answer was lost. */
		cli_error("enqueue: all %llu jobs are committed (batch %s); nothing is left to add", total, b->key);
		return 0;
	}
	if (exact && b->p.jobs_done == 0) {
		cli_error("enqueue: nothing was written; run again (with --batch-key %s or without)", b->key);
		if (b->gid != 0 && groups_drop_empty(b->db, b->gid, err2) != DB_OK)
			cli_error("enqueue: group %llu, opened for this batch, is left empty: %s",
			    (unsigned long long)b->gid, err2);
	}
	else if (exact)
		cli_error("enqueue: %llu of %llu jobs are committed (input lines 1-%llu of batch %s); run again with "
		          "--batch-key %s and the same input to add the other %llu",
		    (unsigned long long)b->p.jobs_done, total, (unsigned long long)b->p.lines_done, b->key,
		    b->key, total - (unsigned long long)b->p.jobs_done);
	else
		cli_error(
		    "enqueue: at least %llu of %llu jobs are committed (input lines 1-%llu of batch %s), and the "
		    "next chunk may be (its COMMIT got no answer); run again with --batch-key %s and the "
		    "same input: it adds exactly the jobs that are missing",
		    (unsigned long long)b->p.jobs_done, total, (unsigned long long)b->p.lines_done, b->key,
		    b->key);
	return rc == DB_EGONE ? EX_UNAVAILABLE : EXIT_FAIL;
}

/* Finds or starts the batch row and checks it belongs to this input;
 * dry runs only look. */
static int
open_batch(struct batch_run *b)
{
	struct batch_progress old;
	char err[ERRSZ];
	int rc, same = 1, found = 0;

	if (b->dry_run) {
		rc = queue_batch_get(b->db, b->key, &old, &found, err);
		if (rc == DB_OK && found) {
			same = strcmp(old.input_hash, b->p.input_hash) == 0 &&
			    old.lines_total == b->p.lines_total && old.jobs_total == b->p.jobs_total;
			b->p.lines_done = old.lines_done;
			b->p.jobs_done = old.jobs_done;
		}
	} else
		rc = queue_batch_open(b->db, b->key, &b->p, &same, err);
	if (rc != DB_OK) {
		cli_error("enqueue: %s (nothing was written)", err);
		return rc == DB_EGONE ? EX_UNAVAILABLE : EXIT_FAIL;
	}
	/* queue_batch_open says only whether it is the same batch: the
	 * numbers of the one the key holds are read for the message */
	if (!same && !b->dry_run && (queue_batch_get(b->db, b->key, &old, &found, err) != DB_OK || !found))
		memset(&old, 0, sizeof old);
	if (!same) {
		cli_error("enqueue: batch key '%s' was used with other input or options (%llu lines, %llu jobs then); "
		          "nothing was written",
		    b->key, (unsigned long long)old.lines_total, (unsigned long long)old.jobs_total);
		return EX_DATAERR;
	}
	if (b->p.lines_done > 0)
		fprintf(stderr, "jobq: enqueue: batch %s: lines 1-%llu (%llu jobs) were committed before; %s\n",
		    b->key, (unsigned long long)b->p.lines_done, (unsigned long long)b->p.jobs_done,
		    b->p.lines_done == b->p.lines_total ? "the batch is complete" : "going on from there");
	return 0;
}

/* Gives back the key of a batch refused before its first chunk (a
 * group that has completed, or has other callbacks): "nothing was
 * written" holds for jobq_batches too, and the key stays usable. */
static void
unopen_batch(struct batch_run *b)
{
	char err[ERRSZ];

	if (!b->dry_run && b->p.lines_done == 0 && queue_batch_drop(b->db, b->key, err) != DB_OK)
		cli_error("enqueue: batch %s: its key could not be given back: %s", b->key, err);
}

/* Finds or makes the group of --group (groups.c) before any job of a
 * real run is written, unless every line is written already; a dry run
 * does the same in a transaction it rolls back, so that it refuses what
 * the real run would.  Returns the exit status, having said what is
 * wrong. */
static int
open_group(struct batch_run *b)
{
	char err[ERRSZ];
	int rc;

	if (b->ctx->group == NULL || b->p.lines_done == b->p.lines_total)
		return 0;
	if (!b->dry_run)
		rc = groups_open_alone(b->db, b->ctx->group, &b->gid, err);
	else if ((rc = db_begin(b->db, err)) == DB_OK) {
		rc = groups_open(b->db, b->ctx->group, &b->gid, err);
		db_rollback(b->db);
	}
	if (rc == DB_OK)
		return 0;
	cli_error("enqueue: %s (nothing was written)", err);
	return rc == GROUPS_ECLOSED || rc == GROUPS_EDIFFER ? EX_DATAERR
	    : rc == DB_EGONE                                ? EX_UNAVAILABLE
	                                                    : EXIT_FAIL;
}

/* Starts the writers of a real run (batch_writers.c): two, each on its
 * own connection, when more than one chunk is left; else one, on the
 * connection pass 1 used.  A second connection that cannot be made (the
 * server's max_connections, say) leaves one writer, and so does one that
 * reached another server: on another node of a Galera cluster a chunk
 * might not yet see the progress row the chunk before it committed. */
static void
start_writers(struct batch_run *b)
{
	struct db *db[BATCH_WRITERS_MAX] = { b->db };
	char err[ERRSZ];
	size_t n = 1;

	if (b->p.jobs_total - b->p.jobs_done > CHUNK_ROWS)
		for (; n < BATCH_WRITERS_MAX; n++) {
			db[n] = db_new(&b->ctx->conf->db);
			if (db_connect(db[n], 1, err) != DB_OK || strcmp(db_target(db[n]), db_target(b->db)) != 0) {
				db_free(db[n]);
				break;
			}
			db_cancel_abandoned(db[n], 1); /* as cli_connect's */
			b->more[n - 1] = db[n];
		}
	b->w = batch_writers_start(db, n, b->key, b->gid); /* may start fewer */
}

/* Pass 2 and its report. */
static int
write_batch(struct batch_run *b, struct reader *r)
{
	char err[ERRSZ];
	size_t i;
	int rc;

	if ((rc = open_batch(b)) != 0)
		return rc;
	if ((rc = open_group(b)) != 0)
		return unopen_batch(b), rc;
	b->max_bytes = db_max_packet(b->db) - BATCH_SQL_OVERHEAD;
	if (b->max_bytes > CHUNK_BYTES)
		b->max_bytes = CHUNK_BYTES;
	if (!b->dry_run) {
		catch_signals();
		if (isatty(STDERR_FILENO))
			fprintf(stderr, "jobq: enqueue: batch %s: writing %llu jobs\n", b->key,
			    (unsigned long long)(b->p.jobs_total - b->p.jobs_done));
		start_writers(b);
	}
	b->r = r;
	b->to = b->p;
	for (i = 0; i < ARRAY_LEN(b->chunk); i++)
		b->chunk[i] = xcalloc(1, sizeof *b->chunk[i]);
	rc = write_all(b, err);
	batch_writers_stop(b->w);
	for (i = 0; i < ARRAY_LEN(b->more); i++)
		db_free(b->more[i]);
	for (i = 0; i < ARRAY_LEN(b->chunk); i++) {
		chunk_clear(b->chunk[i]);
		free(b->chunk[i]);
	}
	if (b->carry_line != 0)
		batch_job_clear(&b->carry);
	if (rc == GROUPS_ECLOSED) { /* at the first chunk: nothing is written */
		cli_error("enqueue: %s (nothing was written)", err);
		unopen_batch(b);
		return EX_DATAERR;
	}
	if (rc != DB_OK)
		return report_failure(b, rc, err);
	if (b->dry_run)
		printf("would enqueue %llu job%s (dry run: nothing written)\n", (unsigned long long)b->added,
		    b->added == 1 ? "" : "s");
	else
		printf("enqueued %llu job%s (batch %s)\n", (unsigned long long)b->added,
		    b->added == 1 ? "" : "s", b->key);
	return 0;
}

/* Says which jobs of a graph were cancelled as they were enqueued (a
 * dependency had ended dead, cancelled or expired), as `jobq enqueue
 * --after` does for one: an id alone reads as a job that will run.
 * Returns how many. */
static size_t
say_cancelled(const struct graph *g, size_t n, const uint64_t *ids, char (*why)[GRAPH_WHY_LEN], int dry)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (why[i][0] == '\0')
			continue;
		k++;
		if (dry)
			printf("line %zu: would be cancelled at once by %s\n", graph_line(g, i), why[i]);
		else
			fprintf(stderr, "jobq: enqueue: line %zu: job %llu was cancelled at once by %s\n",
			    graph_line(g, i), (unsigned long long)ids[i], why[i]);
	}
	return k;
}

/* Pass 2 of an input whose lines wait for other jobs: every job in
 * memory, committed in one transaction (enqueue_graph.c), its id printed
 * one per line in input order; or, dry, printed.  No batch row: one
 * transaction needs no resuming. */
static int
write_graph(struct batch_run *b, struct reader *r, struct graph *g)
{
	struct batch_job job;
	const struct batch_job *jobs;
	char err[ERRSZ], (*why)[GRAPH_WHY_LEN];
	uint64_t *ids;
	size_t i, n, k;
	int rc;

	while (reader_line(r)) {
		size_t l;
		const char *s = reader_trimmed(r, &l);

		if (l == 0)
			continue;
		if (r->too_long || batch_line_parse(s, l, b->ctx, &job, err) < 0) {
			cli_error("enqueue: line %llu changed since it was checked (nothing was written)",
			    (unsigned long long)r->lineno);
			return EXIT_FAIL;
		}
		if (b->dry_run)
			print_job(r->lineno, &job.e);
		graph_add(g, &job, (size_t)r->lineno);
	}
	n = graph_jobs(g, &jobs);
	ids = xcalloc(n + 1, sizeof *ids);
	why = xcalloc(n + 1, sizeof *why);
	/* A dry run writes the graph as a real one would, and rolls back:
	 * what the database refuses (an unknown job in "after", a group
	 * that has completed) it refuses too. */
	if ((rc = graph_commit(g, b->db, b->ctx->group, b->dry_run, ids, why, err)) == DB_OK && b->dry_run) {
		say_cancelled(g, n, ids, why, 1);
		printf("would enqueue %zu job%s in one transaction (dry run: nothing written)\n", n,
		    n == 1 ? "" : "s");
	} else if (rc == DB_OK) {
		for (i = 0; i < n; i++)
			printf("%llu\n", (unsigned long long)ids[i]);
		if ((k = say_cancelled(g, n, ids, why, 0)) > 0)
			printf("enqueued %zu job%s in one transaction, %zu cancelled at once\n", n,
			    n == 1 ? "" : "s", k);
		else
			printf("enqueued %zu job%s in one transaction\n", n, n == 1 ? "" : "s");
		for (i = 0; i < n; i++)
			wakeup_enqueued(b->ctx->conf, &jobs[i].e, 1);
	} else
		cli_error("enqueue: %s (%s)", err, cli_unwritten(b->db));
	free(ids);
	free(why);
	return rc == DB_OK                                                            ? 0
	    : rc == AFTER_EUNKNOWN || rc == GROUPS_ECLOSED || rc == GROUPS_EDIFFER ? EX_DATAERR
	    : rc == DB_EGONE       ? EX_UNAVAILABLE
	                           : EXIT_FAIL;
}

/* A fresh key: the local time for people to recognise, and randomness
 * so that two runs never share one. */
static void
new_key(char *out, size_t outlen)
{
	char hex[17];
	time_t now = time(NULL);
	struct tm tm;

	random_hex(hex, 8);
	gmtime_r(&now, &tm);
	snprintf(out, outlen, "%04d%02d%02dT%02d%02d%02d-%.8s", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
	    tm.tm_hour, tm.tm_min, tm.tm_sec, hex);
}

/* Checks every line of stdin, then (if all are good) writes them in
 * chunks under key (--batch-key; NULL: a new one), or with dry_run
 * prints them; returns the exit status, having said on stderr what went
 * wrong and what is committed. */
int
enqueue_batch_run(const struct batch_ctx *ctx, struct db *db, const char *key, int dry_run)
{
	struct batch_run b;
	struct reader r;
	struct graph *g;
	FILE *spool, *in;
	off_t start = 0;
	uint64_t bad = 0, committed = 0;
	char fresh[64], now[40];
	int rc;

	memset(&b, 0, sizeof b);
	b.ctx = ctx;
	b.db = db;
	new_key(fresh, sizeof fresh);
	b.key = key != NULL ? key : fresh;
	b.dry_run = dry_run;
	if ((rc = reader_spool_open(&spool, &start)) != 0)
		return rc;
	g = graph_new();
	reader_init(&r, stdin, spool, batch_line_max(ctx));
	if ((rc = expiry_ref(db, key, now, sizeof now, &committed)) == 0)
		bad = check_all(&r, ctx, now, committed, &b.p, g);
	if (rc != 0) {
		/* said */
	} else if (r.error) {
		/* Input that cannot be read is 66, as for a single job's;
		 * a spool that cannot be written is this host's trouble. */
		cli_error("enqueue: %s: %s (nothing was written)",
		    r.read_error ? "reading the input" : "spooling the input", strerror(r.error));
		rc = r.read_error ? EX_NOINPUT : EXIT_FAIL;
	} else if (bad > 0) {
		cli_error(
		    "enqueue: %llu bad line%s; nothing was enqueued", (unsigned long long)bad, bad == 1 ? "" : "s");
		rc = EX_DATAERR;
	} else if (key != NULL && graph_used(g)) {
		/* A graph is one transaction with no progress row: the key
		 * would make a run again look safe, and it is not. */
		cli_error("enqueue: --batch-key does not apply to an input with \"after\" or \"ref\" (it is "
		          "committed whole, in one transaction); nothing was written");
		rc = EX_USAGE;
	} else if (b.p.jobs_total == 0)
		printf(dry_run ? "would enqueue 0 jobs (dry run: nothing written)\n" : "enqueued 0 jobs\n");
	else if ((rc = reader_rewind(spool, start, &in)) == 0) {
		reader_free(&r);
		reader_init(&r, in, NULL, batch_line_max(ctx));
		rc = graph_used(g) ? write_graph(&b, &r, g) : write_batch(&b, &r);
	}
	graph_free(g);
	reader_free(&r);
	if (spool != NULL)
		fclose(spool);
	return rc;
}

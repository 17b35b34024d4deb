/* cmd_enqueue.c -- `jobq enqueue`: one job, or many with --batch.
 *
 * Every job is checked by batch.c (type and queue whitelisted, payload
 * JSON and UTF-8 within max_payload, times within years 0001-9999 in UTC,
 * its INSERT within the server's packet) before anything is written;
 * --dry-run runs the very same checks.
 *
 * This file is the command: it turns the options into the defaults every
 * job gets (struct batch_ctx), then writes one job here or hands stdin to
 * the batch driver, enqueue_batch.c (two passes, resumable chunks). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "after.h"
#include "batch.h"
#include "cli.h"
#include "duration.h"
#include "enqueue_batch.h"
#include "flow.h"
#include "isotime.h"
#include "queue.h"
#include "trace.h"
#include "wakeup.h"

#define KEY_MAX 64
/* The most jobs --after may name. */
#define AFTER_MAX 1000

/* --after or --after-any: the jobs the one job waits for. */
struct after_opt {
	uint64_t *ids;
	size_t n;
	int any;
};

/* The option as it was given, for the messages about it. */
#define AFTER_NAME(a) ((a)->any ? "--after-any" : "--after")

static void
usage(void)
{
	printf("Usage: jobq enqueue [options] TYPE [PAYLOAD|-]\n"
	       "       jobq enqueue --batch [--dry-run] [--batch-key KEY] [options] < jobs.jsonl\n"
	       "Add a job of TYPE with a JSON PAYLOAD (read from stdin when absent or '-');\n"
	       "prints its id.\n\n"
	       "  -q, --queue NAME       queue (default: the handler's queue)\n"
	       "  -d, --delay DURATION   run no earlier than DURATION from now (90, 90s, 5m, 2h...)\n"
	       "      --at TIME          run no earlier than TIME (ISO 8601; UTC unless it has an offset;\n"
	       "                         years 0001-9999 once in UTC)\n"
	       "      --expires-in DURATION, --expires-at TIME\n"
	       "                         never start it after then (from now; TIME as for --at): it\n"
	       "                         ends as 'expired' (handlers may set a default: expire_after)\n"
	       "  -p, --priority N       smaller runs first (default 0; -32768..32767)\n"
	       "      --max-attempts N   this job's attempt limit (default: the handler's)\n"
	       "      --batch            read one job per line on stdin:\n"
	       "                         {\"type\": ..., \"payload\": ..., \"queue\": ..., \"delay\": ...,\n"
	       "                          \"at\": ..., \"priority\": ..., \"max_attempts\": ...,\n"
	       "                          \"traceparent\": ..., \"expires_in\": ..., \"expires_at\": ...,\n"
	       "                          \"ref\": NAME, \"after\": [ID or earlier line's ref...],\n"
	       "                          \"after_policy\": \"all\"|\"any\"};\n"
	       "                         only type is required, the options above give the defaults.\n"
	       "                         Every line is checked before any is written; a bad line\n"
	       "                         anywhere writes nothing.  Input from a pipe is spooled to a\n"
	       "                         temporary file in $TMPDIR (or /tmp) while it is checked.\n"
	       "                         An input with \"after\" or \"ref\" is one transaction: the\n"
	       "                         ids are printed one per line (no --batch-key)\n"
	       "  -k, --batch-key KEY    with --batch: name the batch (1-64 of A-Z a-z 0-9 . _ : -;\n"
	       "                         default: a new random key).  Jobs are committed in chunks\n"
	       "                         together with the batch's progress, so if the run stops\n"
	       "                         half-way, running again with the same KEY, input and options\n"
	       "                         adds exactly the jobs not yet committed (and nothing when\n"
	       "                         the batch is complete; completed keys are kept 30 days).\n"
	       "                         A lost connection, SIGINT or SIGTERM print the count\n"
	       "                         committed and the key; scripts should give a KEY of their\n"
	       "                         own so that even a killed run can be resumed.\n"
	       "  -n, --dry-run          with --batch: check (exactly as a real run does, including\n"
	       "                         the server's packet limit) and print what would be enqueued\n"
	       "  -u, --unique-key KEY   refuse this job while another job with KEY is queued or\n"
	       "                         running: print that job's id instead, with a note on\n"
	       "                         stderr, and exit 0 (KEY: 1-255 bytes of UTF-8)\n"
	       "      --unique-for DURATION  with --unique-key: also refuse KEY for DURATION after\n"
	       "                         this job was enqueued, even once it is done\n"
	       "      --traceparent TP   the job's W3C trace context, 00-<trace id>-<parent id>-<flags>\n"
	       "                         (default: $TRACEPARENT when set); each run of the job gets\n"
	       "                         TRACEPARENT with this trace id and a span id of its own\n"
	       "      --after ID[,ID...] wait until every job listed is done, then become ready; should\n"
	       "                         one end dead, cancelled or expired, this job is cancelled\n"
	       "                         (the reason names that job) and never runs\n"
	       "      --after-any ID[,ID...]  wait until every job listed has ended, however it ended\n"
	       "      --group NAME       with --batch: every job joins group NAME (1-128 characters,\n"
	       "                         not all digits), made on first use; see `jobq group`\n"
	       "      --on-complete TYPE with --group: once every job of the group has ended, enqueue\n"
	       "                         one TYPE job with {\"group\": ID, \"name\": NAME, \"total\": N,\n"
	       "                         \"done\": N, \"dead\": N, \"cancelled\": N, \"expired\": N}\n"
	       "      --on-success TYPE  with --group: the same, only when every job ended done\n\n"
	       "Exit status: 0 enqueued (or refused by --unique-key), 64 usage, 65 bad input\n"
	       "(nothing written), 66 the payload on stdin cannot be read (nothing written),\n"
	       "69 database unavailable (a batch says how much was committed),\n"
	       "78 configuration error.\n");
}

/* ---- a single job ---- */

/* The one job of a unique key (flow.c): its id, or the id of the job
 * that holds the key. */
static int
insert_unique(struct db *db, const struct batch_job *job, int64_t unique_for_ms)
{
	struct flow_unique u;
	char err[ERRSZ];
	int rc = flow_enqueue_unique(db, &job->e, unique_for_ms, &u, err);

	if (rc != DB_OK) {
		cli_error("enqueue: %s (%s)", err, cli_unwritten(db));
		return rc == DB_EGONE ? EX_UNAVAILABLE : EXIT_FAIL;
	}
	if (u.refused)
		cli_error("enqueue: unique key '%s' is taken by job %llu (%s); nothing enqueued",
		    job->e.unique_key, (unsigned long long)u.id,
		    u.in_window ? "its --unique-for window is still open" : "queued or running");
	printf("%llu\n", (unsigned long long)u.id);
	return 0;
}

static int
insert_one(struct db *db, const struct batch_job *job, int64_t unique_for_ms)
{
	char err[ERRSZ];
	uint64_t id = 0;
	int rc, attempt = 0;

	if (job->e.unique_key != NULL)
		return insert_unique(db, job, unique_for_ms);
	do
		rc = queue_enqueue(db, &job->e, 1, &id, err);
	while (rc != DB_OK && db_retry_after(rc, ++attempt));
	if (rc != DB_OK) {
		cli_error("enqueue: %s (%s)", err, cli_unwritten(db));
		return rc == DB_EGONE ? EX_UNAVAILABLE : EXIT_FAIL;
	}
	printf("%llu\n", (unsigned long long)id);
	return 0;
}

/* Enqueues the job waiting for the jobs after names (after.c). */
static int
insert_after(struct db *db, const struct batch_job *job, const struct after_opt *after)
{
	struct after_job a;
	char err[ERRSZ];
	uint64_t id = 0;
	int rc;

	memset(&a, 0, sizeof a);
	a.e = job->e;
	a.ids = after->ids;
	a.nids = after->n;
	a.after_any = after->any;
	if ((rc = after_enqueue(db, &a, 1, NULL, 0, &id, err)) == AFTER_EUNKNOWN) {
		cli_error("enqueue: %s: %s (nothing was written)", AFTER_NAME(after), err);
		return EX_DATAERR;
	}
	if (rc != DB_OK) {
		cli_error("enqueue: %s (%s)", err, cli_unwritten(db));
		return rc == DB_EGONE ? EX_UNAVAILABLE : EXIT_FAIL;
	}
	printf("%llu\n", (unsigned long long)id);
	/* Enqueued, and ended at once: said, as the id alone reads as a job
	 * that will run. */
	if (a.cancelled[0] != '\0')
		fprintf(stderr, "jobq: enqueue: job %llu was cancelled at once by %s\n", (unsigned long long)id,
		    a.cancelled);
	return 0;
}

/* The expiry against the database's clock (never this host's:
 * DESIGN 5): an --expires-at that has passed, or any expiry not after
 * the job's due time (--delay, --at), would leave a job that never runs,
 * so it is a usage error like --expires-in 0.  opt is --expires-at as
 * written (NULL: none).  -1 when the job can start, else the exit
 * status, said. */
static int
expiry_ahead(struct db *db, const char *opt, const struct enqueue_item *e)
{
	char err[ERRSZ], now[40];
	int rc;

	if (e->expires_at == NULL && e->expires_in_ms <= 0)
		return -1;
	if ((rc = queue_db_now(db, now, sizeof now, err)) != DB_OK) {
		cli_error("enqueue: %s (nothing was written)", err);
		return rc == DB_EGONE ? EX_UNAVAILABLE : EXIT_FAIL;
	}
	if (e->expires_at != NULL && strcmp(e->expires_at, now) <= 0)
		return cli_usage_error("enqueue",
		    "--expires-at: '%s' (%s UTC) is in the past by the database's clock; the job would expire as "
		    "it is enqueued, nothing was written",
		    opt, e->expires_at);
	if (enqueue_expiry_check(e, now, err) != 0)
		return cli_usage_error("enqueue", "%s (--expires-%s), nothing was written", err,
		    opt != NULL ? "at" : "in");
	return -1;
}

/* Checks the job without the database first (so bad input is 65 even
 * when the server is down), then against the server's packet. */
static int
single(struct batch_ctx *ctx, const char *type, const char *payload_arg, const char *unique_key,
    int64_t unique_for_ms, const struct after_opt *after)
{
	struct batch_job job;
	struct db *db = NULL;
	char err[ERRSZ], *payload;
	size_t len;
	int rc, xrc;

	if (payload_arg == NULL || strcmp(payload_arg, "-") == 0) {
		if ((payload = cli_read_all(stdin, ctx->conf->worker.max_payload + 65536, &len)) == NULL) {
			cli_error("enqueue: reading the payload from stdin: %s (nothing was written)",
			    strerror(errno));
			return EX_NOINPUT;
		}
		if (len > ctx->conf->worker.max_payload + 65536) { /* the read stopped there */
			cli_error("enqueue: the payload on stdin is more than max_payload (%zu bytes); nothing was "
			          "written",
			    ctx->conf->worker.max_payload);
			free(payload);
			return EX_DATAERR;
		}
		while (len > 0 && strchr(" \t\r\n", payload[len - 1]) != NULL)
			payload[--len] = '\0'; /* echo's newline is not part of the payload */
	} else
		payload = xstrdup(payload_arg), len = strlen(payload_arg);
	rc = batch_job_single(type, payload, len, ctx, &job, err);
	if (rc == 0) {
		batch_job_clear(&job);
		if ((rc = cli_connect(ctx->conf, &db)) != 0)
			goto out;
		ctx->max_packet = db_max_packet(db);
		rc = batch_job_single(type, payload, len, ctx, &job, err);
		if (rc == 0 && (xrc = expiry_ahead(db, ctx->expires_at, &job.e)) >= 0) {
			batch_job_clear(&job);
			rc = xrc;
			goto out;
		}
	}
	if (rc != 0) {
		cli_error("enqueue: %s", err);
		rc = EX_DATAERR;
	} else {
		job.e.unique_key = unique_key;
		if ((rc = after->n > 0 ? insert_after(db, &job, after)
		                       : insert_one(db, &job, unique_for_ms)) == 0)
			wakeup_enqueued(ctx->conf, &job.e, 1);
		batch_job_clear(&job);
	}
out:
	free(payload);
	db_free(db);
	return rc;
}

/* ---- the command ---- */

enum {
	OPT_AT = 256,
	OPT_MAX_ATTEMPTS,
	OPT_BATCH,
	OPT_UNIQUE_FOR,
	OPT_TRACEPARENT,
	OPT_EXPIRES_IN,
	OPT_EXPIRES_AT,
	OPT_AFTER,
	OPT_AFTER_ANY,
	OPT_GROUP,
	OPT_ON_COMPLETE,
	OPT_ON_SUCCESS
};


struct opts {
	struct batch_ctx ctx;
	const char *key;
	int is_batch, dry_run;
	const char *unique_key;
	int64_t unique_for_ms;
	struct after_opt after;
	struct group_spec group;
};

/* The steps of parse_opt: each checks optarg for one option and stores
 * it, returning -1, or says what is wrong and returns EX_USAGE. */

/* --delay (and positive_duration_opt): a duration (90, 90s, 5m, 2h...). */
static int
duration_opt(const char *name, int64_t *ms)
{
	char err[ERRSZ];

	if (duration_parse(optarg, ms, err) < 0)
		return cli_usage_error("enqueue", "--%s: %s", name, err);
	return -1;
}

/* --priority, --max-attempts: a whole number in lo..hi. */
static int
int_opt(const char *name, int64_t lo, int64_t hi, int64_t *v)
{
	if (str_to_int64(optarg, lo, hi, v) < 0)
		return cli_usage_error("enqueue", "--%s: expected %lld to %lld, not '%s'", name,
		    (long long)lo, (long long)hi, optarg);
	return -1;
}

/* One rule for every option: a value that does not parse is a usage
 * error (64), like --delay 5x; one that parses but the job may not have
 * (a year past 9999 in UTC) is bad data (65), found by the same check a
 * batch line gets. */
static int
at_opt(struct batch_ctx *ctx)
{
	char utc[64], err[ERRSZ];

	if (isotime_to_utc(optarg, utc, sizeof utc, err) == -1)
		return cli_usage_error("enqueue", "--at: %s", err);
	ctx->at = optarg;
	return -1;
}

/* --expires-at: like --at. */
static int
expires_at_opt(struct batch_ctx *ctx)
{
	char utc[64], err[ERRSZ];

	if (isotime_to_utc(optarg, utc, sizeof utc, err) == -1)
		return cli_usage_error("enqueue", "--expires-at: %s", err);
	ctx->expires_at = optarg;
	return -1;
}

/* --batch-key: 1 to KEY_MAX characters that are safe in a shell and a
 * log line. */
static int
batch_key_opt(struct opts *o)
{
	size_t n = strlen(optarg);

	if (n == 0 || n > KEY_MAX ||
	    strspn(optarg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-") != n)
		return cli_usage_error(
		    "enqueue", "--batch-key: 1 to %d of A-Z a-z 0-9 . _ : -, not '%s'", KEY_MAX, optarg);
	o->key = optarg;
	return -1;
}

/* --unique-key: a key flow_unique_key_check takes. */
static int
unique_key_opt(struct opts *o)
{
	char err[ERRSZ];

	if (flow_unique_key_check(optarg, err) < 0)
		return cli_usage_error("enqueue", "--unique-key: %s", err);
	o->unique_key = optarg;
	return -1;
}

/* --unique-for, --expires-in: a duration above 0 (an expiry of 0 would
 * expire the job as it is enqueued, and 0 in expires_in_ms means none;
 * a batch line's "expires_in" is held to the same). */
static int
positive_duration_opt(const char *name, int64_t *ms)
{
	int rc = duration_opt(name, ms);

	if (rc >= 0)
		return rc;
	if (*ms <= 0)
		return cli_usage_error(
		    "enqueue", "--%s: expected a duration above 0, not '%s'", name, optarg);
	return -1;
}

/* --traceparent: a W3C trace context (trace.h). */
static int
traceparent_opt(struct opts *o)
{
	char err[ERRSZ];

	if (trace_check(optarg, err) < 0)
		return cli_usage_error("enqueue", "--traceparent: %s", err);
	o->ctx.traceparent = optarg;
	return -1;
}

/* Without --traceparent, the trace context of the caller's environment
 * (TRACEPARENT, as W3C's environment-variable carrier names it), so
 * that a traced script's jobs join its trace.  A bad one is bad input
 * (65): refused rather than dropped, as a job must not silently leave
 * the trace it was meant to be in. */
static int
traceparent_env(struct opts *o)
{
	const char *tp = getenv("TRACEPARENT");
	char err[ERRSZ];

	if (o->ctx.traceparent != NULL || tp == NULL || *tp == '\0')
		return 0;
	if (trace_check(tp, err) < 0) {
		cli_error("enqueue: TRACEPARENT in the environment: %s (nothing was written)", err);
		return EX_DATAERR;
	}
	o->ctx.traceparent = tp;
	return 0;
}

/* --after or --after-any (any): a list of job ids, 1..AFTER_MAX of them. */
static int
after_opt(struct opts *o, int any)
{
	const char *p = optarg;
	int64_t v;
	int rc;

	if (o->after.n > 0)
		return cli_usage_error("enqueue", "give --after or --after-any once");
	o->after.any = any;
	o->after.ids = xcalloc(AFTER_MAX, sizeof *o->after.ids);
	for (;;) {
		size_t len = strcspn(p, ",");
		char *one = xstrndup(p, len);

		if (len == 0 || str_to_int64(one, 1, INT64_MAX, &v) < 0) {
			rc = cli_usage_error("enqueue", "%s: '%s' is not a job id (expected job ids separated by commas)",
			    AFTER_NAME(&o->after), one);
			free(one);
			return rc;
		}
		free(one);
		if (o->after.n == AFTER_MAX)
			return cli_usage_error("enqueue", "%s: more than %d job ids", AFTER_NAME(&o->after), AFTER_MAX);
		o->after.ids[o->after.n++] = (uint64_t)v;
		if (p[len] == '\0')
			return -1;
		p += len + 1;
	}
}

/* --group: a name groups.c takes. */
static int
group_opt(struct opts *o)
{
	char err[ERRSZ];

	if (groups_name_check(optarg, err) < 0)
		return cli_usage_error("enqueue", "--group: %s", err);
	o->group.name = optarg;
	return -1;
}

/* One option of enqueue's own: -1 once stored, else the exit status. */
static int
parse_opt(int opt, struct opts *o)
{
	int64_t v;
	int rc = -1;

	switch (opt) {
	case 'q':
		o->ctx.queue = optarg;
		break;
	case 'd':
		return duration_opt("delay", &o->ctx.delay_ms);
	case OPT_AT:
		return at_opt(&o->ctx);
	case 'p':
		if ((rc = int_opt("priority", -32768, 32767, &v)) < 0)
			o->ctx.priority = (int)v;
		break;
	case OPT_MAX_ATTEMPTS:
		if ((rc = int_opt("max-attempts", 1, 1000000, &v)) < 0)
			o->ctx.max_attempts = (unsigned)v;
		break;
	case OPT_BATCH:
		o->is_batch = 1;
		break;
	case 'k':
		return batch_key_opt(o);
	case 'n':
		o->dry_run = 1;
		break;
	case 'u':
		return unique_key_opt(o);
	case OPT_UNIQUE_FOR:
		return positive_duration_opt("unique-for", &o->unique_for_ms);
	case OPT_TRACEPARENT:
		return traceparent_opt(o);
	case OPT_EXPIRES_IN:
		return positive_duration_opt("expires-in", &o->ctx.expires_in_ms);
	case OPT_EXPIRES_AT:
		return expires_at_opt(&o->ctx);
	case OPT_AFTER:
	case OPT_AFTER_ANY:
		return after_opt(o, opt == OPT_AFTER_ANY);
	case OPT_GROUP:
		return group_opt(o);
	case OPT_ON_COMPLETE:
		o->group.on_complete = optarg;
		break;
	case OPT_ON_SUCCESS:
		o->group.on_success = optarg;
		break;
	default:
		return EX_USAGE;
	}
	return rc;
}

/* Options that do not go together, and the arguments, as usage errors. */
static int
check_args(const struct opts *o, int argc)
{
	if (o->ctx.at != NULL && o->ctx.delay_ms > 0)
		return cli_usage_error("enqueue", "--at and --delay exclude each other");
	if (o->ctx.expires_at != NULL && o->ctx.expires_in_ms > 0)
		return cli_usage_error("enqueue", "--expires-at and --expires-in exclude each other");
	if (o->dry_run && !o->is_batch)
		return cli_usage_error("enqueue", "--dry-run goes with --batch");
	if (o->key != NULL && !o->is_batch)
		return cli_usage_error("enqueue", "--batch-key goes with --batch");
	if (o->unique_key != NULL && o->is_batch)
		return cli_usage_error("enqueue", "--unique-key goes with a single job, not --batch");
	if (o->after.n > 0 && (o->is_batch || o->unique_key != NULL))
		return cli_usage_error("enqueue",
		    "%s goes with a single job without --unique-key (in --batch"
		    " lines: \"after\")",
		    AFTER_NAME(&o->after));
	if ((o->group.on_complete != NULL || o->group.on_success != NULL) && o->group.name == NULL)
		return cli_usage_error("enqueue", "--%s goes with --group", o->group.on_complete != NULL ? "on-complete" : "on-success");
	if (o->group.name != NULL && !o->is_batch)
		return cli_usage_error("enqueue", "--group goes with --batch");
	if (o->unique_for_ms > 0 && o->unique_key == NULL)
		return cli_usage_error("enqueue", "--unique-for goes with --unique-key");
	if (o->is_batch ? optind != argc : (optind >= argc || argc - optind > 2))
		return cli_usage_error("enqueue",
		    o->is_batch ? "--batch takes no arguments (jobs come on stdin)"
		                : "expected TYPE [PAYLOAD]");
	return 0;
}

/* The callback types of --on-complete and --on-success must have
 * handlers, like any job's; each callback goes to its handler's queue.
 * EX_DATAERR (said) when one has none. */
static int
group_callbacks(struct group_spec *g, const struct conf *c)
{
	const char **type[] = { &g->on_complete, &g->on_success };
	const char **queue[] = { &g->complete_queue, &g->success_queue };
	static const char *const opt[] = { "--on-complete", "--on-success" };
	size_t i;

	for (i = 0; i < ARRAY_LEN(type); i++) {
		const struct handler *h;

		if (*type[i] == NULL)
			continue;
		if ((h = conf_handler(c, *type[i])) == NULL) {
			cli_error("enqueue: %s: unknown callback type '%s' (no [handler %s] section in %s)", opt[i],
			    *type[i], *type[i], c->path);
			return EX_DATAERR;
		}
		*queue[i] = h->queue;
	}
	return 0;
}

/* --expires-at with --batch, the default of its lines: as for one job
 * (expiry_ahead), against now; each line is held to its own due time
 * (enqueue_batch.c).  -1 when it is ahead or not given. */
static int
batch_expires_at_ahead(struct db *db, const struct batch_ctx *ctx)
{
	char utc[64], err[ERRSZ];
	struct enqueue_item e = { .expires_at = utc };

	if (ctx->expires_at == NULL || isotime_to_utc(ctx->expires_at, utc, sizeof utc, err) != 0)
		return -1; /* a time that does not convert is refused with its line */
	return expiry_ahead(db, ctx->expires_at, &e);
}

/* The command once its options are checked and c is loaded (freed here). */
static int
enqueue(struct opts *o, struct conf *c, char **argv)
{
	struct db *db = NULL;
	int rc = 0;

	o->ctx.conf = c;
	if (o->ctx.queue != NULL && !conf_has_queue(c, o->ctx.queue)) {
		cli_error(
		    "unknown queue '%s' (no [queue %s] section in %s)", o->ctx.queue, o->ctx.queue, c->path);
		rc = EX_DATAERR;
	} else if (o->group.name != NULL && (rc = group_callbacks(&o->group, c)) != 0) {
		/* said */
	} else if (!o->is_batch)
		rc = single(
		    &o->ctx, argv[optind], argv[optind + 1], o->unique_key, o->unique_for_ms, &o->after);
	else if ((rc = cli_connect(c, &db)) == 0 && (rc = batch_expires_at_ahead(db, &o->ctx)) < 0) {
		/* the packet limit is one of the checks, so even a dry run asks the server */
		o->ctx.max_packet = db_max_packet(db);
		o->ctx.group = o->group.name != NULL ? &o->group : NULL;
		rc = enqueue_batch_run(&o->ctx, db, o->key, o->dry_run);
	}
	db_free(db);
	conf_free(c);
	return rc;
}

int
cmd_enqueue(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "queue", required_argument, NULL, 'q' },
		{ "delay", required_argument, NULL, 'd' },
		{ "at", required_argument, NULL, OPT_AT },
		{ "priority", required_argument, NULL, 'p' },
		{ "max-attempts", required_argument, NULL, OPT_MAX_ATTEMPTS },
		{ "batch", no_argument, NULL, OPT_BATCH },
		{ "batch-key", required_argument, NULL, 'k' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "unique-key", required_argument, NULL, 'u' },
		{ "unique-for", required_argument, NULL, OPT_UNIQUE_FOR },
		{ "traceparent", required_argument, NULL, OPT_TRACEPARENT },
		{ "expires-in", required_argument, NULL, OPT_EXPIRES_IN },
		{ "expires-at", required_argument, NULL, OPT_EXPIRES_AT },
		{ "after", required_argument, NULL, OPT_AFTER },
		{ "after-any", required_argument, NULL, OPT_AFTER_ANY },
		{ "group", required_argument, NULL, OPT_GROUP },
		{ "on-complete", required_argument, NULL, OPT_ON_COMPLETE },
		{ "on-success", required_argument, NULL, OPT_ON_SUCCESS },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o;
	struct conf *c;
	int opt, rc = -1;

	memset(&o, 0, sizeof o);
	while (rc < 0 &&
	    (opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS "q:d:p:k:nu:", longopts, NULL)) != -1) {
		if ((rc = cli_common_opt(opt, "enqueue", usage)) >= 0)
			break;
		rc = rc == -2 ? -1 : parse_opt(opt, &o);
	}
	if (rc < 0 && (rc = check_args(&o, argc)) == 0 && (rc = traceparent_env(&o)) == 0 &&
	    (rc = cli_conf(0, &c)) == 0)
		rc = enqueue(&o, c, argv);
	free(o.after.ids);
	return rc;
}

/* cmd_show.c -- `jobq show ID`: one job, wherever it is, and its runs. */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backoff.h"
#include "cli.h"
#include "deps.h"
#include "duration.h"
#include "queue.h"
#include "queue_states.h"
#include "runs.h"
#include "timefmt.h"

static void
usage(void)
{
	printf("Usage: jobq show [--json] [--runs N | --all-runs] ID\n"
	       "Show job ID from the queue or the dead-letter table: its state, payload,\n"
	       "attempts, times ([worker] timezone, with offset), lease, last error, the backoff its next\n"
	       "failure would get, and its last 20 runs with their output.  A done job has left\n"
	       "the queue: it is shown as its runs keep it (created time, payload up to 64 KiB)\n"
	       "until pruned.\n"
	       "On a terminal, control characters in stored text (a handler's error output,\n"
	       "the payload) are shown as \\xHH.\n\n"
	       "      --runs N     show the last N runs (default 20)\n"
	       "      --all-runs   show every run\n"
	       "      --json       print JSON (times ISO 8601 in UTC, +00:00); runs_total counts all runs\n\n"
	       "Exit status: 0, 65 when there is no job ID.\n");
}

/* cJSON's pretty form with its tabs (a tab inside a string is printed
 * as \t, so every raw tab is layout) turned into two blanks for each
 * level of indent and one blank after a colon: a terminal shows tabs 8
 * wide, and a pasted tab is not what was shown.  Frees s. */
static char *
untab(char *s)
{
	struct buf b;
	const char *p;
	int line_start = 1;

	buf_init(&b);
	for (p = s; *p != '\0'; p++) {
		if (*p == '\t')
			buf_adds(&b, line_start ? "  " : " ");
		else {
			buf_addc(&b, *p);
			line_start = *p == '\n';
		}
	}
	cJSON_free(s);
	return buf_steal(&b);
}

static char *
pretty_payload(const char *payload)
{
	cJSON *j = cJSON_Parse(payload);
	char *s;

	if (j == NULL)
		return xstrdup(payload);
	s = cJSON_Print(j);
	cJSON_Delete(j);
	if (s == NULL)
		return xstrdup(payload);
	return untab(s);
}

static void
add_str(cJSON *o, const char *k, const char *v)
{
	if (v != NULL)
		cJSON_AddStringToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

/* Stored JSON text as JSON when it parses, else as a string (a row
 * another program wrote); null when NULL. */
static void
add_json(cJSON *o, const char *k, const char *text)
{
	cJSON *v = text != NULL ? cJSON_Parse(text) : NULL;

	if (v != NULL)
		cJSON_AddItemToObject(o, k, v);
	else
		add_str(o, k, text);
}

/* A time as ISO 8601 with its offset, in UTC (timefmt_json). */
static void
add_time(cJSON *o, const char *k, const char *v)
{
	char *iso = timefmt_json(v);

	add_str(o, k, iso);
	free(iso);
}

/* The job's own fields, in print_json's order: what it is, its payload
 * (as JSON when it parses), its attempts and when it is due. */
static void
json_add_job(cJSON *o, const struct job_view *v, unsigned max)
{
	cJSON *payload = cJSON_Parse(v->payload);

	cJSON_AddNumberToObject(o, "id", (double)v->id);
	cJSON_AddStringToObject(o, "state", v->state);
	cJSON_AddStringToObject(o, "queue", v->queue);
	cJSON_AddStringToObject(o, "type", v->type);
	/* A job that left both tables: its runs keep no priority and no
	 * attempt limit.  max is 0 for it, and for a job of a type this
	 * configuration has no handler for: no limit is known, null. */
	if (job_view_ended(v))
		cJSON_AddNullToObject(o, "priority");
	else
		cJSON_AddNumberToObject(o, "priority", v->priority);
	add_str(o, "unique_key", v->unique_key);
	if (v->payload == NULL)
		cJSON_AddNullToObject(o, "payload"); /* a done job whose runs did not keep it */
	else if (payload != NULL)
		cJSON_AddItemToObject(o, "payload", payload);
	else
		cJSON_AddStringToObject(o, "payload", v->payload);
	cJSON_AddNumberToObject(o, "attempts", v->attempts);
	if (max > 0)
		cJSON_AddNumberToObject(o, "max_attempts", max);
	else
		cJSON_AddNullToObject(o, "max_attempts");
	add_time(o, "created_at", v->created_at);
	add_time(o, "available_at", v->available_at);
	if (v->available_at != NULL)
		cJSON_AddNumberToObject(o, "available_in_seconds", (double)v->available_in_ms / 1000.0);
	add_time(o, "not_before", v->not_before);
	add_str(o, "traceparent", v->traceparent);
	if (v->group_id != 0)
		cJSON_AddNumberToObject(o, "group_id", (double)v->group_id);
	else
		cJSON_AddNullToObject(o, "group_id");
	add_str(o, "group", v->group_name);
	add_json(o, "checkpoint", v->checkpoint);
	add_time(o, "expires_at", v->expires_at);
	add_str(o, "cancel_requested_by", v->cancel_by);
	add_time(o, "cancel_requested_at", v->cancel_at);
}

/* Who holds the job and until when; its progress only while it runs. */
static void
json_add_lease(cJSON *o, const struct job_view *v)
{
	add_str(o, "reserved_by", v->reserved_by);
	add_time(o, "reserved_at", v->reserved_at);
	add_time(o, "lease_expires_at", v->lease_expires_at);
	if (v->lease_expires_at != NULL)
		cJSON_AddNumberToObject(o, "lease_left_seconds", (double)v->lease_left_ms / 1000.0);
	if (v->progress >= 0 && (strcmp(v->state, "reserved") == 0 || strcmp(v->state, "stale") == 0)) {
		cJSON_AddNumberToObject(o, "progress", v->progress);
		add_str(o, "progress_note", v->progress_note);
	}
}

/* How it failed so far, and the backoff its next failure would get
 * (null when none: no handler, or no attempts left). */
static void
json_add_failure(cJSON *o, const struct job_view *v, int64_t next_ms)
{
	add_str(o, "last_error", v->last_error);
	if (next_ms > 0)
		cJSON_AddNumberToObject(o, "next_backoff_seconds", (double)next_ms / 1000.0);
	else
		cJSON_AddNullToObject(o, "next_backoff_seconds");
	add_time(o, "failed_at", v->failed_at);
	add_str(o, "exit_status", v->exit_status);
	add_str(o, "reason", v->reason);
	add_str(o, "error", v->exception);
}

/* The runs as an array "runs" of o; a result is JSON when it parses. */
static void
json_add_runs(cJSON *o, const struct run_row *runs, size_t nruns)
{
	cJSON *arr = cJSON_AddArrayToObject(o, "runs");
	size_t i;

	for (i = 0; i < nruns; i++) {
		cJSON *r = cJSON_CreateObject();

		cJSON_AddNumberToObject(r, "attempt", runs[i].attempt);
		add_str(r, "worker", runs[i].worker);
		add_time(r, "started_at", runs[i].started_at);
		cJSON_AddNumberToObject(r, "duration_ms", (double)runs[i].duration_ms);
		add_str(r, "outcome", runs[i].outcome);
		add_str(r, "exit_status", runs[i].exit_status);
		add_str(r, "error", runs[i].error);
		add_str(r, "error_summary", runs[i].summary);
		add_str(r, "output", runs[i].output);
		if (runs[i].result != NULL) {
			cJSON *res = cJSON_Parse(runs[i].result);

			if (res != NULL)
				cJSON_AddItemToObject(r, "result", res);
			else
				add_str(r, "result", runs[i].result);
		}
		if (runs[i].follow_ups != NULL)
			cJSON_AddItemToObject(r, "follow_ups", runs_follow_ups_json(runs[i].follow_ups));
		add_str(r, "trace_id", runs[i].trace_id);
		add_str(r, "span_id", runs[i].span_id);
		cJSON_AddItemToArray(arr, r);
	}
}

/* Whether a job in state (as JOB_STATE_OF says it) has ended. */
static int
dep_ended(const char *state)
{
	static const char *const live[] = QUEUED_STATES;
	size_t i;

	for (i = 0; i < ARRAY_LEN(live); i++)
		if (strcmp(state, live[i]) == 0)
			return 0;
	return 1;
}

/* One line "  LABEL  12 (done), 13 (waiting)" of the jobs of d that have
 * ended (which 1), that have not (0), or all (-1); none: no line. */
static void
print_deps(const char *label, const struct dep_view *d, size_t n, int which)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (which >= 0 && dep_ended(d[i].state) != which)
			continue;
		if (k++ == 0)
			printf("  %-12s", label);
		printf("%s%llu (%s)", k > 1 ? ", " : " ", (unsigned long long)d[i].id, d[i].state);
	}
	if (k > 0)
		printf("\n");
}

/* `show --json`: the job, its policy and its last runs as one object,
 * every time in UTC; runs_total counts all runs, shown or not. */
static void
print_json(const struct conf *c, const struct job_view *v, const struct run_row *runs, size_t nruns,
    uint64_t total, const struct deps_links *dp)
{
	cJSON *o = cJSON_CreateObject();
	unsigned max, failing;
	int64_t next_ms;
	char *s;

	job_view_policy(c, v, &max, &next_ms, &failing);
	json_add_job(o, v, max);
	json_add_lease(o, v);
	json_add_failure(o, v, next_ms);
	cJSON_AddItemToObject(o, "waits_for", deps_json(dp->after, dp->nafter));
	cJSON_AddItemToObject(o, "waited_for_by", deps_json(dp->by, dp->nby));
	cJSON_AddItemToObject(o, "reopens_on_retry", deps_json(dp->reopens, dp->nreopens));
	if (dp->reopened_by != 0)
		cJSON_AddNumberToObject(o, "reopened_by_retry_of", (double)dp->reopened_by);
	else
		cJSON_AddNullToObject(o, "reopened_by_retry_of");
	cJSON_AddStringToObject(o, "timezone", "UTC"); /* of every time above */
	cJSON_AddNumberToObject(o, "runs_total", (double)total);
	json_add_runs(o, runs, nruns);
	s = cJSON_Print(o);
	puts(s);
	cJSON_free(s);
	cJSON_Delete(o);
}

/* Stored text (a handler's stderr, a payload) as it is safe to show:
 * on a terminal control characters are made visible (cli_visible). */
static void
print_indented(const char *label, const char *text, int tty)
{
	char *vis = cli_visible(text, tty);
	const char *p = vis, *nl;

	printf("%s\n", label);
	while (*p != '\0') {
		nl = strchr(p, '\n');
		printf("  %.*s\n", nl ? (int)(nl - p) : (int)strlen(p), p);
		if (nl == NULL)
			break;
		p = nl + 1;
	}
	free(vis);
}

/* printf of stored strings made safe for the terminal when tty. */
static void print_vis(int tty, const char *fmt, ...) PRINTFLIKE(2, 3);

static void
print_vis(int tty, const char *fmt, ...)
{
	struct buf raw;
	char *vis;
	va_list ap;

	buf_init(&raw);
	va_start(ap, fmt);
	buf_vprintf(&raw, fmt, ap);
	va_end(ap);
	vis = cli_visible(raw.data ? raw.data : "", tty);
	fputs(vis, stdout);
	free(vis);
	buf_free(&raw);
}

/* A run's output (the handler's stdout) under its row, each line below
 * the label; trailing newlines dropped, nothing when it printed none. */
static void
print_output(int tty, const char *out)
{
	char *vis, *p, *nl;
	size_t n;

	if (out == NULL || *out == '\0')
		return;
	vis = cli_visible(out, tty);
	n = strlen(vis);
	while (n > 0 && vis[n - 1] == '\n')
		vis[--n] = '\0';
	for (p = vis;; p = nl + 1) {
		nl = strchr(p, '\n');
		printf("%s%.*s\n", p == vis ? "          output " : "                 ",
		    nl ? (int)(nl - p) : (int)strlen(p), p);
		if (nl == NULL)
			break;
	}
	free(vis);
}

/* The runs, oldest first; total is how many the job has (more than
 * nruns when only the last ones were read).  Attempts start again at 1
 * after `jobq failed retry`: that is said where it happened, the first
 * run after a dead one. */
static void
print_runs(const struct timefmt *f, const struct run_row *runs, size_t nruns, uint64_t total)
{
	int tty = cli_isatty();
	char t[TIMEFMT_HUMAN_MAX];
	const char *last_end = "";
	size_t i;

	if (nruns == 0) {
		printf("runs: none yet\n");
		return;
	}
	if (total > nruns)
		printf("runs (the last %zu of %llu; --runs N or --all-runs for more):\n", nruns,
		    (unsigned long long)total);
	else
		printf("runs:\n");
	printf("  %-7s %-26s %-28s %8s  %-11s %s\n", "ATTEMPT", "STARTED", "WORKER", "MS", "OUTCOME", "EXIT");
	for (i = 0; i < nruns; i++) {
		/* Only a retry from the dead letter runs a job again after a
		 * dead run; a run given back or lost keeps its attempt, and a
		 * late "lost" row may come after the run that ended the job. */
		if (strcmp(runs[i].outcome, "lost") != 0 && strcmp(last_end, "dead") == 0)
			printf(
			    "  -- retried by hand (jobq failed retry): attempts counted from 1 again --\n");
		if (strcmp(runs[i].outcome, "lost") != 0)
			last_end = runs[i].outcome;
		print_vis(tty, "  %-7u %-26s %-28s %8lld  %-11s %s\n", runs[i].attempt,
		    timefmt_human(f, runs[i].started_at, 0, t, sizeof t), runs[i].worker,
		    (long long)runs[i].duration_ms, runs[i].outcome, runs[i].exit_status);
		/* A run with no error line on stderr is summed up by how it
		 * ended: the EXIT column above says it already. */
		if (runs[i].summary != NULL && *runs[i].summary && strcmp(runs[i].summary, runs[i].exit_status) != 0)
			print_vis(tty, "          error  %s\n", runs[i].summary);
		print_output(tty, runs[i].output);
		if (runs[i].result != NULL)
			print_vis(tty, "          result %s\n", runs[i].result);
		if (runs[i].follow_ups != NULL)
			print_vis(tty, "          follow-ups %s\n", runs[i].follow_ups);
		if (runs[i].trace_id != NULL)
			print_vis(tty, "          trace  %s span %s\n", runs[i].trace_id,
			    runs[i].span_id ? runs[i].span_id : "-");
	}
}

/* When the job was created, is due, was reserved and until when, and
 * when it failed: in the configured zone, relative to now. */
static void
print_times(const struct timefmt *f, const struct job_view *v, int tty)
{
	char t[TIMEFMT_HUMAN_MAX], rel[64];

	printf("  created      %s\n", timefmt_human(f, v->created_at, 1, t, sizeof t));
	if (v->available_at != NULL)
		printf("  available    %s\n", timefmt_human(f, v->available_at, 1, t, sizeof t));
	if (v->not_before != NULL)
		printf("  not before   %s\n", timefmt_human(f, v->not_before, 1, t, sizeof t));
	if (strcmp(v->state, "reserved") == 0 || strcmp(v->state, "stale") == 0) {
		/* Any of these may be NULL in a row another program wrote. */
		print_vis(tty, "  reserved by  %s at %s\n", v->reserved_by ? v->reserved_by : "-",
		    timefmt_human(f, v->reserved_at, 0, t, sizeof t));
		timefmt_relative(v->lease_left_ms, rel, sizeof rel);
		if (v->lease_expires_at != NULL)
			printf("  lease        %s %s, at %s\n", v->lease_left_ms > 0 ? "expires" : "expired",
			    rel, timefmt_human(f, v->lease_expires_at, 0, t, sizeof t));
		else
			printf("  lease        none (no expiry: it can be taken again)\n");
		if (v->progress >= 0)
			print_vis(tty, "  progress     %d%%%s%s\n", v->progress, v->progress_note ? "  " : "",
			    v->progress_note ? v->progress_note : "");
	}
	if (v->expires_at != NULL && v->cancel_by == NULL)
		printf("  expires      %s (never starts after)\n", timefmt_human(f, v->expires_at, 1, t, sizeof t));
	if (v->cancel_by != NULL)
		print_vis(tty, "  cancel       requested by %s at %s: %s\n", v->cancel_by,
		    timefmt_human(f, v->cancel_at, 0, t, sizeof t),
		    strcmp(v->state, "reserved") == 0 ? "its worker is stopping it"
		                                      : "it ends cancelled, unstarted, when next claimed");
	if (v->failed_at != NULL)
		printf("  failed       %s\n", timefmt_human(f, v->failed_at, 1, t, sizeof t));
}

/* What the job waits for and what waits for it (deps.c), with the
 * job's other facts, before its payload and runs. */
static void
print_links(const struct deps_links *dp)
{
	/* A job it waited for that has ended no longer holds it (released,
	 * or counted by a job of policy any), though its link may be kept
	 * until this job ends: what it still waits for is listed. */
	print_deps("waits for", dp->after, dp->nafter, 0);
	print_deps("waited for by", dp->by, dp->nby, -1);
	print_deps("re-opens", dp->reopens, dp->nreopens, -1);
	if (dp->reopened_by != 0)
		printf("  %-12s when job %llu is retried from the dead letter\n", "re-opens",
		    (unsigned long long)dp->reopened_by);
}

static void
print_text(const struct conf *c, const struct timefmt *f, const struct job_view *v,
    const struct deps_links *dp, const struct run_row *runs, size_t nruns, uint64_t total)
{
	unsigned max, failing;
	int64_t next_ms;
	char d[32];
	char *pretty = pretty_payload(v->payload);
	int tty = cli_isatty();

	job_view_policy(c, v, &max, &next_ms, &failing);
	printf("job %llu: %s\n", (unsigned long long)v->id, v->state);
	print_vis(
	    tty, "  queue        %s\n  type         %s\n  priority     %d\n", v->queue, v->type, v->priority);
	if (v->unique_key != NULL)
		print_vis(tty, "  unique key   %s\n", v->unique_key);
	if (v->traceparent != NULL)
		print_vis(tty, "  traceparent  %s\n", v->traceparent);
	if (v->group_id != 0)
		print_vis(tty, "  group        %llu (%s)\n", (unsigned long long)v->group_id,
		    v->group_name != NULL ? v->group_name : "?");
	if (max > 0)
		printf("  attempts     %u of %u\n", v->attempts, max);
	else
		print_vis(tty, "  attempts     %u (no [handler %s]: no limit known)\n", v->attempts, v->type);
	print_times(f, v, tty);
	if (next_ms > 0) {
		duration_format(next_ms, d, sizeof d);
		printf("  next backoff %s (if attempt %u fails)\n", d, failing);
	} else if (strcmp(v->state, "failed") != 0 && max > 0)
		printf("  next backoff none: attempt %u is its last\n", failing);
	if (v->failed_at != NULL)
		print_vis(tty, "  exit status  %s\n  reason       %s\n", v->exit_status ? v->exit_status : "",
		    v->reason ? v->reason : "");
	print_links(dp);
	if (v->last_error != NULL && *v->last_error)
		print_indented("last error:", v->last_error, tty);
	if (v->exception != NULL && *v->exception)
		print_indented("error:", v->exception, tty);
	print_indented("payload:", pretty, tty);
	free(pretty);
	if (v->checkpoint != NULL)
		print_indented("checkpoint (for the next attempt, JOBQ_CHECKPOINT):", v->checkpoint, tty);
	print_runs(f, runs, nruns, total);
}

/* print_text for a job known only by its runs. */
static void
print_done(const struct timefmt *f, const struct job_view *v, const struct deps_links *dp,
    const struct run_row *runs, size_t nruns, uint64_t total)
{
	int tty = cli_isatty();
	char *pretty, t[TIMEFMT_HUMAN_MAX];

	printf("job %llu: %s (no longer queued; its runs are kept until pruned)\n", (unsigned long long)v->id,
	    v->state);
	print_vis(tty, "  queue        %s\n  type         %s\n", v->queue, v->type);
	printf("  attempts     %u\n", v->attempts);
	if (v->created_at != NULL)
		printf("  created      %s\n", timefmt_human(f, v->created_at, 1, t, sizeof t));
	else
		printf("  created      not kept (its runs are older than jobq keeping it)\n");
	print_links(dp);
	if (v->payload != NULL) {
		pretty = pretty_payload(v->payload);
		print_indented("payload:", pretty, tty);
		free(pretty);
	} else
		printf("payload: not kept (%s)\n",
		    strcmp(v->state, "done") == 0 ? "over 64 KiB, or done before jobq kept it"
		                                  : "only a done job's is kept");
	print_runs(f, runs, nruns, total);
}

/* Prints the job: as JSON, or as text with its times for people (gone:
 * a job known only by its runs).  Returns the exit status. */
static int
print_job(const struct conf *c, struct db *db, const struct job_view *v, const struct run_row *runs,
    size_t nruns, uint64_t total, int json, int gone)
{
	struct timefmt *f;
	struct deps_links dp;
	char err[ERRSZ];
	int rc = 0;

	if (deps_links(db, v->id, &dp, err) != DB_OK) {
		cli_error("show %llu: %s", (unsigned long long)v->id, err);
		deps_links_free(&dp);
		return EX_UNAVAILABLE;
	}
	if (json)
		print_json(c, v, runs, nruns, total, &dp);
	else if ((f = cli_timefmt(c, db, "show")) == NULL)
		rc = EX_UNAVAILABLE;
	else {
		if (gone)
			print_done(f, v, &dp, runs, nruns, total);
		else
			print_text(c, f, v, &dp, runs, nruns, total);
		timefmt_free(f);
	}
	deps_links_free(&dp);
	return rc;
}

/* A job in neither table: done (or forgotten), known only by its runs,
 * which stay in the history until pruned. */
static int
show_done(const struct conf *c, struct db *db, uint64_t id, int json, unsigned last)
{
	struct run_row *runs = NULL, *end = NULL;
	uint64_t total = 0;
	size_t nruns = 0, nend = 0;
	struct job_view v;
	char err[ERRSZ];
	int rc;

	if (runs_for_job_last(db, id, CLI_DB_TZ, last, &runs, &nruns, &total, err) != DB_OK) {
		cli_error("show %llu: %s", (unsigned long long)id, err);
		return EX_UNAVAILABLE;
	}
	if (nruns == 0) {
		runs_free(runs, nruns);
		cli_error(
		    "no job %llu (not queued, not dead-lettered, no runs on record)", (unsigned long long)id);
		return EX_DATAERR;
	}
	/* Only a window of its runs was read: how it ended is read apart. */
	if (total > nruns && runs_job_end(db, id, CLI_DB_TZ, &end, &nend, err) != DB_OK) {
		runs_free(runs, nruns);
		cli_error("show %llu: %s", (unsigned long long)id, err);
		return EX_UNAVAILABLE;
	}
	if (nend > 0)
		runs_job_view(&v, id, end, nend);
	else
		runs_job_view(&v, id, runs, nruns);
	rc = print_job(c, db, &v, runs, nruns, total, json, 1);
	runs_free(runs, nruns);
	runs_free(end, nend);
	return rc;
}

/* Prints job id (only from the dead-letter table when failed_only) with
 * its last `last` runs (all when 0); returns the exit status. */
static int
show_job_runs(const struct conf *c, struct db *db, uint64_t id, int json, int failed_only, unsigned last)
{
	struct job_view v;
	struct run_row *runs = NULL;
	uint64_t total = 0;
	size_t nruns = 0;
	char err[ERRSZ];
	int rc = QUEUE_NOT_FOUND;

	if (!failed_only)
		rc = queue_show(db, id, CLI_DB_TZ, &v, err);
	if (rc == QUEUE_NOT_FOUND)
		rc = failed_show(db, id, CLI_DB_TZ, &v, err);
	if (rc == DB_OK &&
	    (rc = runs_for_job_last(db, id, CLI_DB_TZ, last, &runs, &nruns, &total, err)) != DB_OK)
		job_view_free(&v);
	if (rc == QUEUE_NOT_FOUND && !failed_only)
		return show_done(c, db, id, json, last);
	if (rc == QUEUE_NOT_FOUND) {
		cli_error("no failed job %llu", (unsigned long long)id);
		return EX_DATAERR;
	}
	if (rc != DB_OK) {
		cli_error("show %llu: %s", (unsigned long long)id, err);
		return rc == DB_EGONE ? EX_UNAVAILABLE : EXIT_FAIL;
	}
	rc = print_job(c, db, &v, runs, nruns, total, json, 0);
	runs_free(runs, nruns);
	job_view_free(&v);
	return rc;
}

#define SHOW_RUNS 20

/* Prints job id with its last 20 runs (see show_job_runs). */
int
show_job(const struct conf *c, struct db *db, uint64_t id, int json, int failed_only)
{
	return show_job_runs(c, db, id, json, failed_only, SHOW_RUNS);
}

int
cmd_show(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "json", no_argument, NULL, 'J' },
		{ "runs", required_argument, NULL, 'R' },
		{ "all-runs", no_argument, NULL, 'A' },
		{ NULL, 0, NULL, 0 },
	};
	struct conf *c;
	struct db *db;
	uint64_t id;
	unsigned last = SHOW_RUNS;
	int64_t v;
	int opt, rc, json = 0, nruns_opts = 0;

	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		if ((rc = cli_common_opt(opt, "show", usage)) >= 0)
			return rc;
		if (opt == 'J')
			json = 1;
		else if (opt == 'A')
			last = 0, nruns_opts |= 1;
		else if (opt == 'R') {
			nruns_opts |= 2;
			if (str_to_int64(optarg, 1, 1000000000, &v) < 0)
				return cli_usage_error(
				    "show", "--runs: expected 1 to 1000000000, not '%s'", optarg);
			last = (unsigned)v;
		}
	}
	if (nruns_opts == 3)
		return cli_usage_error("show", "--runs N or --all-runs, not both");
	if (argc - optind != 1)
		return cli_usage_error("show", "expected one job ID");
	if (cli_parse_id(argv[optind], &id) < 0)
		return cli_usage_error("show", "'%s' is not a job id", argv[optind]);
	if ((rc = cli_open_cancelling(&c, &db)) != 0)
		return rc;
	rc = show_job_runs(c, db, id, json, 0, last);
	db_free(db);
	conf_free(c);
	return rc;
}

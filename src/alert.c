/* alert.c -- run a handler's on_dead program for each job committed to
 * dead-letter, with the dead job as one JSON object on its stdin; and
 * the [worker] on_alert program for each watchdog incident this worker
 * raised or cleared (worker_watch.c), with the incident on its stdin.
 *
 * An alert is a handler process like any other (runner.c: no shell, a
 * clean environment with the handler's env.NAME keys, bounded output),
 * run by the worker's own loop so that a slow mail server never holds up
 * jobs or leases: its pipes are polled with the handlers', and it is
 * killed after ALERT_TIMEOUT_MS.  What becomes of it is only logged; the
 * job was dead-lettered (the incident recorded) before it started and
 * stays so. */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alert.h"
#include "log.h"
#include "outcome.h"
#include "runner.h"

struct alert {
	struct handler h; /* the dead job's handler, with on_dead as its program */
	struct job j;     /* the dead job; its payload is the JSON fed on stdin */
	char *json;
	char *label;      /* "job 12: on_dead", "alert wait default: on_alert": for the log */
	const char *note; /* what stays true whatever the program does, for the log */
	struct runner *run;
	int nfds; /* of the last alerts_fds */
};

struct alerts {
	struct alert *list;
	size_t n;
	int64_t stop_at; /* the worker stops: running alerts are stopped then */
};

struct alerts *
alerts_new(void)
{
	struct alerts *a = xcalloc(1, sizeof(struct alerts));

	a->stop_at = INT64_MAX;
	return a;
}

static void
alert_clear(struct alert *x)
{
	runner_free(x->run);
	free(x->json);
	free(x->label);
	free(x->j.type);
	free(x->j.queue);
}

void
alerts_free(struct alerts *a)
{
	size_t i;

	if (a == NULL)
		return;
	for (i = 0; i < a->n; i++)
		alert_clear(&a->list[i]);
	free(a->list);
	free(a);
}

/* The dead job as its alert reads it: id, queue, type, payload (JSON, or
 * a string when it is not JSON), attempts, reason, error, failed_at (ISO
 * 8601, UTC).  v is the row as committed to failed_jobs, times in UTC. */
char *
alert_json(const struct job_view *v)
{
	cJSON *o = cJSON_CreateObject(), *p = cJSON_Parse(v->payload);
	char when[64], *s;

	cJSON_AddNumberToObject(o, "id", (double)v->id);
	cJSON_AddStringToObject(o, "queue", v->queue);
	cJSON_AddStringToObject(o, "type", v->type);
	if (p != NULL)
		cJSON_AddItemToObject(o, "payload", p);
	else
		cJSON_AddStringToObject(o, "payload", v->payload);
	cJSON_AddNumberToObject(o, "attempts", v->attempts);
	cJSON_AddStringToObject(o, "reason", v->reason ? v->reason : "");
	cJSON_AddStringToObject(o, "error", v->exception ? v->exception : "");
	snprintf(when, sizeof when, "%.10sT%sZ", v->failed_at ? v->failed_at : "",
	    v->failed_at && strlen(v->failed_at) > 11 ? v->failed_at + 11 : "");
	cJSON_AddStringToObject(o, "failed_at", when);
	if ((s = cJSON_PrintUnformatted(o)) == NULL)
		fatal("cJSON_PrintUnformatted: out of memory");
	cJSON_Delete(o);
	return s;
}

/* Starts the alert at index i; a failure to start is logged and the
 * alert dropped. */
static int
alert_start(struct alerts *a, size_t i)
{
	struct alert *x = &a->list[i];
	char err[ERRSZ];

	if ((x->run = runner_start(&x->h, &x->j, 1, err)) != NULL)
		return 1;
	log_warn("%s %s: %s", x->label, x->h.argv[0], err);
	alert_clear(x);
	a->list[i] = a->list[--a->n];
	return 0;
}

/* Drops alert i, which has not started, with a log line. */
static void
alert_drop(struct alerts *a, size_t i)
{
	struct alert *x = &a->list[i];

	log_warn("%s %s not run: the worker stops (%s)", x->label, x->h.argv[0], x->note);
	alert_clear(x);
	a->list[i] = a->list[--a->n];
}

/* Queues an alert: h's settings with argv as its program, json (taken)
 * on its stdin; started now, or once fewer than ALERTS_MAX run (not at
 * all once the worker stops: alerts_stop). */
static void
alert_push(struct alerts *a, const struct handler *h, char **argv, uint64_t id, char *label, const char *note,
    char *json)
{
	struct alert *x;

	a->list = xrealloc(a->list, (a->n + 1) * sizeof *a->list);
	x = &a->list[a->n++];
	memset(x, 0, sizeof *x);
	x->h = *h; /* shallow: its strings outlive the worker's loop, but for these: */
	x->h.argv = argv;
	/* An alert is always its own process that reads one JSON object
	 * and exits, whatever mode the dead job's handler runs in: it is
	 * not that handler, speaks no request protocol and must not take
	 * or evict that handler's warm processes. */
	x->h.persistent = 0;
	x->h.timeout_ms = ALERT_TIMEOUT_MS;
	x->h.kill_grace_ms = 2000;
	x->h.stdout_limit = x->h.stderr_limit = 4096;
	x->json = json;
	x->label = label;
	x->note = note;
	x->j.id = id;
	x->j.type = xstrdup(h->type);
	x->j.queue = xstrdup(h->queue);
	x->h.type = x->j.type;
	x->h.queue = x->j.queue;
	x->j.payload = json;
	x->j.payload_len = strlen(json);
	x->j.attempt = 1;
	if (a->stop_at != INT64_MAX)
		alert_drop(a, a->n - 1);
	else if (alerts_busy(a) < ALERTS_MAX)
		alert_start(a, a->n - 1);
}

/* Runs h's on_dead program for dead job job_id with json (taken) on its
 * stdin (alert_push). */
void
alerts_add(struct alerts *a, const struct handler *h, uint64_t job_id, char *json)
{
	alert_push(a, h, h->on_dead_argv, job_id, xasprintf("job %llu: on_dead", (unsigned long long)job_id),
	    "the job stays dead-lettered", json);
}

/* Runs on_alert (argv) for watchdog incident id of kind about name, with
 * json (taken) on its stdin (alert_push): in a clean environment but
 * for env ([worker] env.NAME), as the worker's user, with JOBQ_JOB_ID
 * the incident's id, JOBQ_TYPE its kind and JOBQ_QUEUE its name. */
void
alerts_add_incident(
    struct alerts *a, char **argv, char **env, uint64_t id, const char *kind, const char *name, char *json)
{
	static char *no_env[] = { NULL };
	struct handler h;

	memset(&h, 0, sizeof h);
	h.type = (char *)kind;
	h.queue = (char *)name;
	h.env = env != NULL ? env : no_env;
	alert_push(a, &h, argv, id, xasprintf("alert %s %s: on_alert", kind, name), "the incident stays recorded",
	    json);
}

/* The worker stops and says so: a backlog of alerts must not hold it up
 * (40 alerts of 2 s each kept a stopping worker 18 s).  Alerts still
 * waiting their turn are dropped, each logged (its job stays in
 * failed_jobs, where `jobq failed list` shows it); those running get
 * ALERT_STOP_MS more, then are stopped as a timeout would stop them. */
void
alerts_stop(struct alerts *a, int64_t now)
{
	size_t i = 0;

	if (a->stop_at != INT64_MAX)
		return;
	a->stop_at = now + ALERT_STOP_MS;
	while (i < a->n)
		if (a->list[i].run == NULL)
			alert_drop(a, i);
		else
			i++;
	if (a->n > 0)
		log_info("the worker stops: waiting at most %d s for %zu alert program%s still running",
		    ALERT_STOP_MS / 1000, a->n, a->n == 1 ? "" : "s");
}

unsigned
alerts_busy(const struct alerts *a)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < a->n; i++)
		n += a->list[i].run != NULL;
	return n;
}

/* Fills pollfds for the running alerts (at most ALERTS_MAX *
 * RUNNER_MAX_FDS); returns how many.  alerts_io reads the same layout. */
int
alerts_fds(struct alerts *a, struct pollfd *pfd)
{
	int n = 0;
	size_t i;

	for (i = 0; i < a->n; i++) {
		a->list[i].nfds = a->list[i].run != NULL ? runner_fds(a->list[i].run, pfd + n) : 0;
		n += a->list[i].nfds;
	}
	return n;
}

void
alerts_io(struct alerts *a, const struct pollfd *pfd)
{
	size_t i;

	for (i = 0; i < a->n; i++) {
		if (a->list[i].nfds > 0)
			runner_io(a->list[i].run, pfd, a->list[i].nfds);
		pfd += a->list[i].nfds;
		a->list[i].nfds = 0;
	}
}

/* Whether pid is an alert's program; it is reaped if so. */
int
alerts_reap(struct alerts *a, pid_t pid)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		if (a->list[i].run != NULL && runner_waits_for(a->list[i].run, pid)) {
			runner_reap(a->list[i].run);
			return 1;
		}
	return 0;
}

/* Logs how an alert's program ended. */
static void
alert_done(const struct alert *x)
{
	struct exit_info e;
	char words[128], *out = NULL, *err = NULL;
	int64_t ms;

	runner_result(x->run, &e, &out, &err, &ms);
	outcome_exit_words(&e, words, sizeof words);
	if (e.exited && e.code == 0 && e.exec_errno == 0 && !e.timed_out)
		log_info("%s %s ran (%lld ms)", x->label, x->h.argv[0], (long long)ms);
	else
		log_warn("%s %s failed: %s%s%.300s (%s)", x->label, x->h.argv[0], words, err && *err ? ": " : "",
		    err ? err : "", x->note);
	free(out);
	free(err);
}

/* Applies timeouts, logs and drops the alerts that ended, starts those
 * waiting their turn. */
void
alerts_tick(struct alerts *a, int64_t now)
{
	size_t i = 0;

	while (i < a->n) {
		struct alert *x = &a->list[i];

		if (x->run == NULL || (runner_tick(x->run, now), !runner_finished(x->run))) {
			i++;
			continue;
		}
		alert_done(x);
		alert_clear(x);
		a->list[i] = a->list[--a->n];
	}
	if (now >= a->stop_at) {
		for (i = 0; i < a->n; i++)
			if (a->list[i].run != NULL)
				runner_terminate(a->list[i].run);
		return;
	}
	for (i = 0; i < a->n && alerts_busy(a) < ALERTS_MAX; i++)
		if (a->list[i].run == NULL && !alert_start(a, i))
			i--;
}

/* When alerts_tick next has work to do (INT64_MAX: never). */
int64_t
alerts_deadline(const struct alerts *a)
{
	int64_t t = INT64_MAX, d;
	size_t i;

	for (i = 0; i < a->n; i++)
		if (a->list[i].run != NULL && (d = runner_deadline(a->list[i].run)) < t)
			t = d;
	return a->n > 0 && a->stop_at < t ? a->stop_at : t;
}

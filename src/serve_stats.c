/* serve_stats.c -- GET /api/stats, the charts of the dashboard, and the
 * thread of `jobq serve` that keeps the statistics behind them rolled
 * up (stats_rollup.c) and pruned (stats.c).
 *
 * The roll-up runs in the server rather than in workers so that workers
 * pay nothing for the charts; without a `jobq serve` the runs wait in
 * job_runs, and the first server to start reads those of the last week.
 * It steps as long as runs are waiting (STATS_CHUNK a step, a few
 * milliseconds each) and then looks again every ROLL_EVERY_MS. */
#include "config.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "serve_stats.h"
#include "serve_thread.h"
#include "stats.h"

#define ROLL_EVERY_MS 1000
#define PRUNE_EVERY_MS 60000

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	int started, stop;
	struct serve *srv;
} roll = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static int
stopping(void)
{
	int stop;

	pthread_mutex_lock(&roll.mu);
	stop = roll.stop;
	pthread_mutex_unlock(&roll.mu);
	return stop;
}

/* Rolls up what is waiting and prunes when it is time; logs the first
 * failure of a series only (the database may be down for a while). */
static void
roll_once(struct db *db, int64_t *pruned_at, int *failing)
{
	char err[ERRSZ];
	uint64_t removed;
	int more = 1, rc = DB_OK;

	while (more && rc == DB_OK && !stopping())
		rc = stats_rollup(db, STATS_CHUNK, &more, err);
	if (rc == DB_OK && mono_ms() - *pruned_at >= PRUNE_EVERY_MS) {
		rc = stats_prune(db, &removed, err);
		*pruned_at = mono_ms();
	}
	if (rc != DB_OK && !*failing)
		log_error("serve: statistics: %s", err);
	*failing = rc != DB_OK;
}

static void *
roller(void *arg)
{
	int64_t pruned_at = mono_ms() - PRUNE_EVERY_MS;
	int failing = 0;

	(void)arg;
	while (!stopping()) {
		struct db *db = serve_thread_db(roll.srv); /* logs why when NULL */
		struct timespec until;

		if (db != NULL)
			roll_once(db, &pruned_at, &failing);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += ROLL_EVERY_MS / 1000;
		pthread_mutex_lock(&roll.mu);
		if (!roll.stop)
			pthread_cond_timedwait(&roll.cv, &roll.mu, &until);
		pthread_mutex_unlock(&roll.mu);
	}
	return NULL;
}

/* Starts the roll-up thread.  0, or -1 when it cannot be made. */
int
serve_stats_start(struct serve *s)
{
	roll.srv = s;
	roll.stop = 0;
	if (pthread_create(&roll.thread, NULL, roller, NULL) != 0)
		return -1;
	roll.started = 1;
	return 0;
}

/* Stops it after the step in hand. */
void
serve_stats_stop(void)
{
	if (!roll.started)
		return;
	pthread_mutex_lock(&roll.mu);
	roll.stop = 1;
	pthread_cond_broadcast(&roll.cv);
	pthread_mutex_unlock(&roll.mu);
	pthread_join(roll.thread, NULL);
	roll.started = 0;
}

/* A number, or null for -1 (no run in the bucket). */
static cJSON *
ms_json(double v)
{
	return v < 0 ? cJSON_CreateNull() : cJSON_CreateNumber((double)(int64_t)(v * 10 + 0.5) / 10);
}

static cJSON *
counts_json(const uint64_t *v, unsigned n)
{
	cJSON *a = cJSON_CreateArray();
	unsigned i;

	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
	return a;
}

static cJSON *
times_json(const double *v, unsigned n)
{
	cJSON *a = cJSON_CreateArray();
	unsigned i;

	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(a, ms_json(v[i]));
	return a;
}

static const char *const count_key[3] = { "done", "retry", "dead" };
static const char *const p50_key[2] = { "wait_p50", "run_p50" };
static const char *const p95_key[2] = { "wait_p95", "run_p95" };

static cJSON *
series_json(const struct stats_series *s)
{
	cJSON *doc = cJSON_CreateObject(), *tot;
	unsigned n = s->range->nbuckets;
	int k;

	cJSON_AddStringToObject(doc, "range", s->range->name);
	ADD_NUM(doc, "step_s", s->range->res);
	ADD_NUM(doc, "start_s", s->start);
	ADD_NUM(doc, "now_s", s->now);
	if (s->behind >= 0)
		ADD_NUM(doc, "behind", s->behind);
	else
		cJSON_AddNullToObject(doc, "behind");
	tot = cJSON_AddObjectToObject(doc, "total");
	for (k = 0; k < 3; k++) {
		cJSON_AddItemToObject(doc, count_key[k], counts_json(s->count[k], n));
		ADD_NUM(tot, count_key[k], s->tot_count[k]);
	}
	for (k = 0; k < 2; k++) {
		cJSON_AddItemToObject(doc, p50_key[k], times_json(s->p50[k], n));
		cJSON_AddItemToObject(doc, p95_key[k], times_json(s->p95[k], n));
		cJSON_AddItemToObject(tot, p50_key[k], ms_json(s->tot_p50[k]));
		cJSON_AddItemToObject(tot, p95_key[k], ms_json(s->tot_p95[k]));
	}
	return doc;
}

/* A queue or type filter: NULL for all; "" (refused) when it cannot be
 * a name (longer than one, or not ASCII: the columns are). */
static const char *
name_param(struct req *r, const char *key)
{
	const char *v = serve_query(r, key), *p;

	if (v == NULL || *v == '\0')
		return NULL;
	for (p = v; *p != '\0'; p++)
		if ((unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e)
			return "";
	return strlen(v) > NAME_MAX_LEN ? "" : v;
}

/* GET /api/stats?range=1h|24h|7d&queue=&type=: runs per bucket by
 * outcome and the p50/p95 of the wait (due to claim) and run time. */
MHD_RESULT
api_stats(struct req *r)
{
	const char *name = serve_query(r, "range"), *queue = name_param(r, "queue"),
		   *type = name_param(r, "type");
	const struct stats_range *range = stats_range_find(name && *name ? name : "1h");
	struct stats_series s;
	char err[ERRSZ];
	MHD_RESULT ret;

	if (range == NULL)
		return serve_error(r, 400, "range: expected 1h, 24h or 7d");
	if ((queue && !*queue) || (type && !*type))
		return serve_error(r, 400, "queue and type must be names (printable ASCII, at most 64 bytes)");
	if (stats_series(r->db, range, queue, type, &s, err) != DB_OK) {
		stats_series_free(&s);
		return serve_db_error(r, "stats", err);
	}
	ret = serve_json(r, 200, series_json(&s));
	stats_series_free(&s);
	return ret;
}

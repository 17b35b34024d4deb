/* otlp.c -- the span exporter of otlp.h: a bounded queue, filled by the
 * worker's loop, drained by one thread of its own that POSTs batches to
 * {endpoint}/v1/traces with libcurl.
 *
 * The loop's side (otlp_add) takes the queue's mutex for a copy of one
 * span and never waits for anything else: the thread holds the mutex
 * only to move spans out of the queue, never across a request.  A full
 * queue drops the new span (drop-newest: the spans already queued are
 * as good, and dropping them would cost a copy), counted.  A batch whose
 * request fails is dropped, counted, and the thread waits before the
 * next try (1 s, doubling to 30 s), which is an empty request until the
 * collector answers, while the queue fills and then drops: a collector
 * that is down costs the worker the spans, never its time (nor the
 * machine's: no span is encoded for it).
 *
 * The counters go to the worker's /metrics (metrics.c) when it has one,
 * and to the "spans" line of the stopping worker's log. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "log.h"
#include "metrics.h"
#include "otlp.h"
#include "otlp_json.h"
#include "util.h"

#define CONNECT_TIMEOUT_MS 1000L
#define TOTAL_TIMEOUT_MS 5000L
#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS 30000

struct otlp {
	char *url; /* {endpoint}/v1/traces */
	char *instance;
	CURL *curl;
	struct curl_slist *headers;
	char curl_err[CURL_ERROR_SIZE];
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* under mu: the queue (a ring), and what the thread is told */
	struct otlp_span *ring;
	size_t head, len;
	int stopping;        /* otlp_stop was called (read unlocked by on_progress) */
	int64_t stop_by;     /* then: monotonic ms past which nothing more is sent */
	uint64_t queue_full; /* spans dropped by otlp_add */
	/* the thread's own */
	int64_t retry_at, next_flush, backoff_ms;
	int failing; /* the last request failed (logged once per change) */
	uint64_t exported, failed_spans, stop_dropped;
};

/* Nanoseconds since the Unix epoch, the clock of spans' times. */
int64_t
otlp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* 0 when url can be an otlp_endpoint: http:// or https://, a host, no
 * blank or control character (it is sent as it is); else -1 with err
 * saying why. */
int
otlp_endpoint_check(const char *url, char *err)
{
	const char *p, *host;

	if (strncmp(url, "http://", 7) == 0)
		host = url + 7;
	else if (strncmp(url, "https://", 8) == 0)
		host = url + 8;
	else
		return errf(err, "expected an http:// or https:// URL (the collector's OTLP/HTTP address)"), -1;
	if (*host == '\0' || *host == '/')
		return errf(err, "the URL has no host"), -1;
	for (p = url; *p != '\0'; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return errf(err, "the URL holds a blank or control character"), -1;
	if (strchr(url, '?') != NULL || strchr(url, '#') != NULL)
		return errf(err, "the URL must not hold a query or fragment (/v1/traces is added to it)"), -1;
	return 0;
}

/* A monotonic time in ms as the absolute time of a timed wait on cv
 * (which uses CLOCK_MONOTONIC). */
static struct timespec
abs_time(int64_t at_ms)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(at_ms / 1000);
	ts.tv_nsec = (long)(at_ms % 1000) * 1000000;
	return ts;
}

/* Copies sp into the queue, or drops it when the queue is full; wakes
 * the thread when a batch is full.  Never waits but for the mutex, which
 * the thread holds only to move spans out.  o NULL: no exporter, no-op. */
void
otlp_add(struct otlp *o, const struct otlp_span *sp)
{
	if (o == NULL)
		return;
	pthread_mutex_lock(&o->mu);
	if (o->len == OTLP_QUEUE || o->stopping) {
		o->queue_full++;
		pthread_mutex_unlock(&o->mu);
		metrics_spans(MS_DROPPED_FULL, 1);
		return;
	}
	o->ring[(o->head + o->len) % OTLP_QUEUE] = *sp;
	if (++o->len == OTLP_BATCH)
		pthread_cond_signal(&o->cv);
	pthread_mutex_unlock(&o->mu);
}

/* Moves up to OTLP_BATCH spans from the queue's head to batch; mu held. */
static size_t
take_locked(struct otlp *o, struct otlp_span *batch)
{
	size_t n = o->len < OTLP_BATCH ? o->len : OTLP_BATCH, i;

	for (i = 0; i < n; i++)
		batch[i] = o->ring[(o->head + i) % OTLP_QUEUE];
	o->head = (o->head + n) % OTLP_QUEUE;
	o->len -= n;
	return n;
}

/* The thread's next request, waiting until one is due: a full batch,
 * or any spans every OTLP_FLUSH_MS, never before the backoff ends.
 * While the collector is not answering, the request due is a probe: no
 * span (*n = 0), so that a collector that is down costs no encoding of
 * spans that would be dropped; the queue meanwhile fills and otlp_add
 * drops.  Once stopping, what is left goes at once until stop_by (none
 * when the collector was not answering); then the rest is dropped
 * (counted) and 0 returned: the thread ends. */
static int
take_batch(struct otlp *o, struct otlp_span *batch, size_t *n)
{
	struct timespec ts;
	int more = 1;

	*n = 0;
	pthread_mutex_lock(&o->mu);
	for (;;) {
		int64_t now = mono_ms(), due;

		if (o->stopping) {
			if (o->len > 0 && now < o->stop_by && !o->failing)
				*n = take_locked(o, batch);
			else {
				o->stop_dropped += o->len;
				metrics_spans(MS_DROPPED_STOP, (unsigned)o->len);
				o->len = 0;
				more = 0;
			}
			break;
		}
		due = o->len >= OTLP_BATCH ? o->retry_at : (o->retry_at > o->next_flush ? o->retry_at : o->next_flush);
		if (now < due) {
			ts = abs_time(due);
			pthread_cond_timedwait(&o->cv, &o->mu, &ts);
			continue;
		}
		o->next_flush = now + OTLP_FLUSH_MS;
		if (o->failing || o->len > 0) {
			if (!o->failing)
				*n = take_locked(o, batch);
			break;
		}
	}
	pthread_mutex_unlock(&o->mu);
	return more;
}

/* libcurl's progress callback: a request still going when a stopping
 * worker's wait is over is cut short. */
static int
on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	struct otlp *o = arg;

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return __atomic_load_n(&o->stopping, __ATOMIC_ACQUIRE) && mono_ms() >= o->stop_by;
}

/* The collector's answer is not read: only its status counts. */
static size_t
on_body(char *data, size_t size, size_t n, void *arg)
{
	(void)data, (void)arg;
	return size * n;
}

/* POSTs body; 0 when the collector answered 2xx, else -1 with err. */
static int
post(struct otlp *o, const char *body, char *err)
{
	long timeout = TOTAL_TIMEOUT_MS, code = 0;
	CURLcode rc;

	if (__atomic_load_n(&o->stopping, __ATOMIC_ACQUIRE)) {
		int64_t left = o->stop_by - mono_ms();

		timeout = left < 1 ? 1 : left < timeout ? (long)left : timeout;
	}
	curl_easy_setopt(o->curl, CURLOPT_TIMEOUT_MS, timeout);
	curl_easy_setopt(o->curl, CURLOPT_POSTFIELDS, body);
	o->curl_err[0] = '\0';
	rc = curl_easy_perform(o->curl);
	if (rc != CURLE_OK)
		return errf(err, "%s", o->curl_err[0] != '\0' ? o->curl_err : curl_easy_strerror(rc)), -1;
	curl_easy_getinfo(o->curl, CURLINFO_RESPONSE_CODE, &code);
	if (code < 200 || code > 299)
		return errf(err, "the collector answered HTTP %ld", code), -1;
	return 0;
}

/* Sends one batch (n 0: an empty request, a probe) and counts what
 * became of it; a failure starts (or lengthens) the backoff, and the
 * first failure and the recovery are logged, not every request. */
static void
export_batch(struct otlp *o, const struct otlp_span *batch, size_t n)
{
	char *body = otlp_json_request(batch, n, o->instance), err[ERRSZ];
	int ok = post(o, body, err) == 0;

	cJSON_free(body);
	if (ok) {
		o->exported += n;
		metrics_spans(MS_EXPORTED, (unsigned)n);
		if (o->failing)
			log_info("otlp: %s answers again; spans are exported", o->url);
		o->failing = 0;
		o->backoff_ms = 0;
		return;
	}
	o->failed_spans += n;
	metrics_spans(MS_DROPPED_FAILED, (unsigned)n); /* no-op for a probe */
	metrics_spans(MS_POST_FAILED, 1);
	if (!o->failing)
		log_warn("otlp: POST %s: %s; spans are dropped until it answers", o->url, err);
	o->failing = 1;
	o->backoff_ms = o->backoff_ms == 0 ? BACKOFF_MIN_MS : o->backoff_ms * 2;
	if (o->backoff_ms > BACKOFF_MAX_MS)
		o->backoff_ms = BACKOFF_MAX_MS;
	o->retry_at = mono_ms() + o->backoff_ms;
}

/* The exporter's thread: batches until stopped and flushed. */
static void *
drain(void *arg)
{
	struct otlp *o = arg;
	struct otlp_span *batch = xcalloc(OTLP_BATCH, sizeof *batch);
	size_t n;

	while (take_batch(o, batch, &n))
		export_batch(o, batch, n);
	free(batch);
	return NULL;
}

/* The easy handle, kept for the thread's life so that its connection is
 * reused: short timeouts, no signals (it runs on a thread), no
 * redirects, HTTP(S) only. */
static int
curl_setup(struct otlp *o, char *err)
{
	if ((o->curl = curl_easy_init()) == NULL)
		return errf(err, "otlp_endpoint: libcurl cannot make a handle"), -1;
	o->headers = curl_slist_append(NULL, "Content-Type: application/json");
	if (o->headers == NULL)
		fatal("out of memory");
	curl_easy_setopt(o->curl, CURLOPT_URL, o->url);
	curl_easy_setopt(o->curl, CURLOPT_HTTPHEADER, o->headers);
	curl_easy_setopt(o->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(o->curl, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
	curl_easy_setopt(o->curl, CURLOPT_ERRORBUFFER, o->curl_err);
	curl_easy_setopt(o->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(o->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(o->curl, CURLOPT_XFERINFODATA, o);
	curl_easy_setopt(o->curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(o->curl, CURLOPT_USERAGENT, "jobq/" PACKAGE_VERSION);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(o->curl, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(o->curl, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	return 0;
}

/* Frees o (its thread joined or never started). */
static void
otlp_free(struct otlp *o)
{
	curl_slist_free_all(o->headers);
	if (o->curl != NULL)
		curl_easy_cleanup(o->curl);
	curl_global_cleanup();
	pthread_cond_destroy(&o->cv);
	pthread_mutex_destroy(&o->mu);
	free(o->ring);
	free(o->url);
	free(o->instance);
	free(o);
}

/* Starts exporting to endpoint (checked by otlp_endpoint_check) as the
 * worker instance; call before other threads use libcurl.  The thread
 * gets no signal (the loop reads them).  NULL with err on failure. */
struct otlp *
otlp_start(const char *endpoint, const char *instance, char *err)
{
	struct otlp *o = xcalloc(1, sizeof *o);
	size_t len = strlen(endpoint);
	pthread_condattr_t ca;
	sigset_t all, old;
	int rc;

	while (len > 0 && endpoint[len - 1] == '/')
		len--;
	o->url = xasprintf("%.*s/v1/traces", (int)len, endpoint);
	o->instance = xstrdup(instance);
	o->ring = xcalloc(OTLP_QUEUE, sizeof *o->ring);
	pthread_mutex_init(&o->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&o->cv, &ca);
	pthread_condattr_destroy(&ca);
	o->next_flush = mono_ms() + OTLP_FLUSH_MS;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (curl_setup(o, err) < 0) {
		otlp_free(o);
		return NULL;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&o->thread, NULL, drain, o);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		errf(err, "otlp_endpoint: pthread_create: %s", strerror(rc));
		otlp_free(o);
		return NULL;
	}
	return o;
}

/* Sends what is queued, waiting OTLP_STOP_MS at most (a request still
 * going then is cut short), logs the exporter's counts and frees o.
 * o NULL: nothing to do. */
void
otlp_stop(struct otlp *o)
{
	struct log_field f[4];

	if (o == NULL)
		return;
	pthread_mutex_lock(&o->mu);
	o->stop_by = mono_ms() + OTLP_STOP_MS;
	__atomic_store_n(&o->stopping, 1, __ATOMIC_RELEASE); /* after stop_by: on_progress reads both */
	pthread_cond_signal(&o->cv);
	pthread_mutex_unlock(&o->mu);
	pthread_join(o->thread, NULL);
	f[0] = LF_N("exported", o->exported);
	f[1] = LF_N("dropped_queue_full", o->queue_full);
	f[2] = LF_N("dropped_export_failed", o->failed_spans);
	f[3] = LF_N("dropped_at_stop", o->stop_dropped);
	log_fields(LOG_INFO, "otlp spans", f, 4);
	otlp_free(o);
}

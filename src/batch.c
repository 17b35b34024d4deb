/* batch.c -- parse and check one job of `jobq enqueue` (see batch.h for
 * the contract).  Pure: no database, no I/O. */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "duration.h"
#include "isotime.h"
#include "json.h"
#include "trace.h"

/* A job's row text beyond its escaped strings: separators, quotes,
 * priority, max_attempts and the longest time expression. */
#define ROW_OVERHEAD 128

/* The longest delay: duration_parse's limit, 100 years. */
#define DELAY_MAX_MS (100LL * 365 * 24 * 3600 * 1000)

/* At most 32: check_fields keeps a bit for each. */
static const char *const FIELDS[] = { "type", "payload", "queue", "delay", "at", "priority", "max_attempts",
	"traceparent", "expires_at", "expires_in", "ref", "after", "after_policy", "group", "on_complete",
	"on_success" };

static void
job_init(struct batch_job *job, const struct batch_ctx *ctx)
{
	memset(job, 0, sizeof *job);
	job->e.priority = ctx->priority;
	job->e.max_attempts = ctx->max_attempts;
	job->e.delay_ms = ctx->delay_ms;
	job->e.expires_in_ms = ctx->expires_in_ms;
}

void
batch_job_clear(struct batch_job *job)
{
	free(job->type);
	free(job->queue);
	free(job->payload);
	free(job->at);
	free(job->traceparent);
	free(job->expires_at);
	free(job->ref);
	free(job->after_ids);
	while (job->nafter_refs > 0)
		free(job->after_refs[--job->nafter_refs]);
	free(job->after_refs);
	free(job->after_idx);
	if (job->group != NULL) {
		free((char *)job->group->name);
		free((char *)job->group->on_complete);
		free((char *)job->group->complete_queue);
		free((char *)job->group->on_success);
		free((char *)job->group->success_queue);
		free(job->group);
	}
	memset(job, 0, sizeof *job);
}

/* The longest line worth reading: a payload may shrink up to six-fold
 * from its escaped form in the line ("\u0041" is one byte), and no job
 * can be larger than the payload limit or the server's packet. */
size_t
batch_line_max(const struct batch_ctx *ctx)
{
	size_t p = ctx->conf->worker.max_payload;

	if (ctx->max_packet > 0 && ctx->max_packet < p)
		p = ctx->max_packet;
	return p > (SIZE_MAX - 65536) / 6 ? SIZE_MAX : p * 6 + 65536;
}

/* Bytes s[0..n) takes inside quotes once escaped (db_sql.c's add_quoted
 * adds a backslash before NUL, LF, CR, backslash, both quotes and ^Z). */
static size_t
escaped_len(const char *s, size_t n)
{
	static const unsigned char extra[256] = {
		[0] = 1, ['\n'] = 1, ['\r'] = 1, ['\\'] = 1, ['\''] = 1, ['"'] = 1, ['\032'] = 1
	};
	size_t i, len = n;

	for (i = 0; i < n; i++)
		len += extra[(unsigned char)s[i]];
	return len;
}

/* The payload as the server will store it: JSON (when it is not known to
 * be already, as cJSON's own output is), UTF-8, no NUL, within limits. */
static int
check_payload(const struct batch_ctx *ctx, const char *p, size_t len, int is_json, char *err)
{
	return json_payload_check(p, len, ctx->conf->worker.max_payload, is_json, err);
}

/* Type and queue whitelisted; the queue defaults to the handler's. */
static int
check_names(const struct batch_ctx *ctx, struct batch_job *job, char *err)
{
	const struct conf *c = ctx->conf;
	const struct handler *h = conf_handler(c, job->type);

	if (h == NULL) {
		errf(err, "unknown job type '%s' (no [handler %s] section in %s)", job->type, job->type,
		    c->path);
		return -1;
	}
	if (job->queue == NULL)
		job->queue = xstrdup(ctx->queue != NULL ? ctx->queue : h->queue);
	if (!conf_has_queue(c, job->queue)) {
		errf(
		    err, "unknown queue '%s' (no [queue %s] section in %s)", job->queue, job->queue, c->path);
		return -1;
	}
	return 0;
}

/* The expiry: the line's expires_at (ISO 8601, made UTC) or expires_in,
 * else the command line's. */
static int
finish_expiry(const struct batch_ctx *ctx, struct batch_job *job, char *err)
{
	const char *when = job->expires_at;
	char utc[40];

	if (when == NULL && job->e.expires_in_ms == 0)
		when = ctx->expires_at;
	if (job->e.expires_in_ms < 0 || job->e.expires_in_ms > DELAY_MAX_MS) {
		errf(err, "expires_in must be from 0 to 100 years");
		return -1;
	}
	if (when == NULL)
		return 0;
	if (isotime_to_utc(when, utc, sizeof utc, err) < 0)
		return -1;
	free(job->expires_at);
	job->expires_at = xstrdup(utc);
	job->e.expires_at = job->expires_at;
	job->e.expires_in_ms = 0;
	return 0;
}

/* The checks every job passes, from a line or from the command line;
 * at is the time as written (NULL: use the delay). */
static int
finish(const struct batch_ctx *ctx, struct batch_job *job, const char *at, int is_json, char *err)
{
	struct enqueue_item *e = &job->e;
	char utc[40];

	if (check_names(ctx, job, err) < 0 ||
	    check_payload(ctx, job->payload, e->payload_len, is_json, err) < 0)
		return -1;
	if (at != NULL && isotime_to_utc(at, utc, sizeof utc, err) < 0)
		return -1;
	if (at == NULL && (e->delay_ms < 0 || e->delay_ms > DELAY_MAX_MS)) {
		errf(err, "delay must be from 0 to 100 years");
		return -1;
	}
	if (finish_expiry(ctx, job, err) < 0)
		return -1;
	if (e->priority < -32768 || e->priority > 32767 || e->max_attempts > 1000000) {
		errf(err, "priority or max_attempts out of range");
		return -1;
	}
	e->type = job->type;
	e->queue = job->queue;
	e->payload = job->payload;
	if (at != NULL)
		job->at = xstrdup(utc);
	e->at = job->at;
	if (job->traceparent == NULL && ctx->traceparent != NULL)
		job->traceparent = xstrdup(ctx->traceparent);
	e->traceparent = job->traceparent;
	job->sql_len = escaped_len(job->type, strlen(job->type)) +
	    escaped_len(job->queue, strlen(job->queue)) + escaped_len(job->payload, e->payload_len) +
	    ROW_OVERHEAD + (job->traceparent != NULL ? TRACEPARENT_LEN + 4 : 0) + 64;
	if (ctx->max_packet > 0 && job->sql_len + BATCH_SQL_OVERHEAD > ctx->max_packet) {
		errf(err,
		    "payload of %zu bytes makes a statement of about %zu bytes once escaped, more than the "
		    "server's max_allowed_packet (%zu)",
		    e->payload_len, job->sql_len + BATCH_SQL_OVERHEAD, ctx->max_packet);
		return -1;
	}
	return 0;
}

/* Shows the control characters of a message as \\xHH (truncating at
 * ERRSZ): messages quote what the user wrote (a type, a field name, a
 * time), JSON strings can hold raw control characters (cJSON takes them),
 * and a message must stay one line that cannot drive a terminal. */
void
batch_err_visible(char *err)
{
	char copy[ERRSZ];
	const char *p;
	struct buf b;

	snprintf(copy, sizeof copy, "%s", err);
	buf_init(&b);
	buf_add(&b, "", 0);
	for (p = copy; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			buf_printf(&b, "\\x%02x", (unsigned char)*p);
		else
			buf_addc(&b, *p);
	snprintf(err, ERRSZ, "%s", b.data);
	buf_free(&b);
}

/* A job given on the command line: TYPE and the payload as written. */
int
batch_job_single(const char *type, const char *payload, size_t len, const struct batch_ctx *ctx,
    struct batch_job *job, char *err)
{
	job_init(job, ctx);
	job->type = xstrdup(type);
	job->payload = xmalloc(len + 1);
	memcpy(job->payload, payload, len);
	job->payload[len] = '\0';
	job->e.payload_len = len;
	if (finish(ctx, job, ctx->at, 0, err) < 0) {
		batch_job_clear(job);
		batch_err_visible(err);
		return -1;
	}
	return 0;
}

/* A whole number in lo..hi. */
static int
json_int(const cJSON *v, int64_t lo, int64_t hi, int64_t *out)
{
	double d;

	if (!cJSON_IsNumber(v))
		return -1;
	d = cJSON_GetNumberValue(v);
	if (!(d >= (double)lo && d <= (double)hi) || d != (double)(int64_t)d)
		return -1;
	*out = (int64_t)d;
	return 0;
}

static int
check_fields(const cJSON *o, char *err)
{
	const cJSON *v;
	size_t i;
	uint32_t seen = 0;

	for (v = o->child; v != NULL; v = v->next) {
		for (i = 0; i < ARRAY_LEN(FIELDS) && strcmp(v->string, FIELDS[i]) != 0; i++)
			;
		if (i == ARRAY_LEN(FIELDS)) {
			errf(err, "unknown field \"%s\"", v->string);
			return -1;
		}
		/* cJSON reads the first of two, Python's json the last: the
		 * line would mean one thing here and another to its writer. */
		if (seen & (UINT32_C(1) << i)) {
			errf(err, "field \"%s\" is given twice", v->string);
			return -1;
		}
		seen |= UINT32_C(1) << i;
	}
	if (cJSON_GetObjectItemCaseSensitive(o, "delay") != NULL &&
	    cJSON_GetObjectItemCaseSensitive(o, "at") != NULL) {
		errf(err, "\"delay\" and \"at\" exclude each other");
		return -1;
	}
	if (cJSON_GetObjectItemCaseSensitive(o, "expires_in") != NULL &&
	    cJSON_GetObjectItemCaseSensitive(o, "expires_at") != NULL) {
		errf(err, "\"expires_in\" and \"expires_at\" exclude each other");
		return -1;
	}
	return 0;
}

/* A duration above 0 given as seconds (a whole number, up to 100
 * years) or as a duration string ("5m"), into *ms; -1 with err naming
 * the field when it is not one.  "expires_in" (0 would expire the job
 * as it is enqueued, and 0 in expires_in_ms means none, like
 * --expires-in) and the dashboard's "unique_for" (like --unique-for). */
int
batch_duration_above0(const cJSON *v, const char *name, int64_t *ms, char *err)
{
	char why[ERRSZ];
	int64_t n;

	if (cJSON_IsString(v)) {
		if (duration_parse(v->valuestring, ms, why) < 0) {
			errf(err, "\"%s\": %s", name, why);
			return -1;
		}
	} else if (json_int(v, 0, DELAY_MAX_MS / 1000, &n) == 0)
		*ms = n * 1000;
	else {
		errf(err, "\"%s\" must be seconds (up to 100 years) or a duration like \"5m\"", name);
		return -1;
	}
	if (*ms <= 0) {
		errf(err, "\"%s\" must be above 0%s", name,
		    strcmp(name, "expires_in") == 0 ? " (the job would expire as it is enqueued)" : "");
		return -1;
	}
	return 0;
}

/* "expires_in" or "expires_at" (ISO 8601): the job never starts after
 * then. */
static int
get_expiry(const cJSON *o, struct batch_job *job, char *err)
{
	const cJSON *v;

	if ((v = cJSON_GetObjectItemCaseSensitive(o, "expires_in")) != NULL)
		return batch_duration_above0(v, "expires_in", &job->e.expires_in_ms, err);
	if ((v = cJSON_GetObjectItemCaseSensitive(o, "expires_at")) != NULL) {
		if (!cJSON_IsString(v)) {
			errf(err, "\"expires_at\" must be an ISO 8601 time");
			return -1;
		}
		job->expires_at = xstrdup(v->valuestring);
	}
	return 0;
}

static int
get_names(const cJSON *o, struct batch_job *job, char *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "type");

	if (!cJSON_IsString(v)) {
		errf(err, "\"type\" is missing or not a string");
		return -1;
	}
	job->type = xstrdup(v->valuestring);
	if ((v = cJSON_GetObjectItemCaseSensitive(o, "queue")) == NULL)
		return 0;
	if (!cJSON_IsString(v)) {
		errf(err, "\"queue\" is not a string");
		return -1;
	}
	job->queue = xstrdup(v->valuestring);
	return 0;
}

/* "delay" (seconds or a duration) or "at"; *at is left alone when the
 * line has neither, and a line's delay beats a default --at. */
static int
get_time(const cJSON *o, struct batch_job *job, const char **at, char *err)
{
	const cJSON *v;
	int64_t n;

	if ((v = cJSON_GetObjectItemCaseSensitive(o, "delay")) != NULL) {
		*at = NULL;
		if (cJSON_IsString(v))
			return duration_parse(v->valuestring, &job->e.delay_ms, err);
		if (json_int(v, 0, DELAY_MAX_MS / 1000, &n) == 0) {
			job->e.delay_ms = n * 1000;
			return 0;
		}
		errf(err, "\"delay\" must be seconds or a duration like \"5m\"");
		return -1;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(o, "at")) != NULL) {
		if (!cJSON_IsString(v)) {
			errf(err, "\"at\" must be an ISO 8601 time");
			return -1;
		}
		*at = v->valuestring;
	}
	return 0;
}

static int
get_numbers(const cJSON *o, struct batch_job *job, char *err)
{
	const cJSON *v;
	int64_t n;

	if ((v = cJSON_GetObjectItemCaseSensitive(o, "priority")) != NULL) {
		if (json_int(v, -32768, 32767, &n) < 0) {
			errf(err, "\"priority\" must be a whole number from -32768 to 32767");
			return -1;
		}
		job->e.priority = (int)n;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(o, "max_attempts")) != NULL) {
		if (json_int(v, 1, 1000000, &n) < 0) {
			errf(err, "\"max_attempts\" must be a whole number from 1 to 1000000");
			return -1;
		}
		job->e.max_attempts = (unsigned)n;
	}
	return 0;
}

/* "traceparent": a W3C trace context (trace.h). */
static int
get_trace(const cJSON *o, struct batch_job *job, char *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "traceparent");
	char why[ERRSZ];

	if (v == NULL)
		return 0;
	if (!cJSON_IsString(v) || trace_check(v->valuestring, why) < 0) {
		errf(err, "\"traceparent\": %s", cJSON_IsString(v) ? why : "must be a string");
		return -1;
	}
	job->traceparent = xstrdup(v->valuestring);
	return 0;
}

/* A ref: 1..BATCH_REF_MAX printable ASCII characters. */
static int
ref_ok(const cJSON *v)
{
	const char *p;

	if (!cJSON_IsString(v) || v->valuestring[0] == '\0' || strlen(v->valuestring) > BATCH_REF_MAX)
		return 0;
	for (p = v->valuestring; *p != '\0'; p++)
		if (*p < 0x21 || *p > 0x7e)
			return 0;
	return 1;
}

/* One element of "after": a job id, or the ref of an earlier line. */
static int
get_after_one(const cJSON *v, struct batch_job *job, char *err)
{
	int64_t id;

	if (ref_ok(v)) {
		job->after_refs[job->nafter_refs++] = xstrdup(v->valuestring);
		return 0;
	}
	/* Below 2^53: above it a JSON number is no longer read exactly, and
	 * another job's id would be taken for it. */
	if (json_int(v, 1, ((int64_t)1 << 53) - 1, &id) < 0) {
		errf(err, "\"after\": each element is a job id or the \"ref\" of an earlier line");
		return -1;
	}
	job->after_ids[job->nafter_ids++] = (uint64_t)id;
	return 0;
}

/* "ref", "after" and "after_policy".  A follow-up's refs name the
 * earlier follow-ups of the same run (control.c resolves them); its ids
 * and policy go with its item for the outcome's transaction
 * (queue_follow.c). */
static int
get_deps(const struct batch_ctx *ctx, const cJSON *o, struct batch_job *job, char *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "ref"), *a;
	int n;

	if (v != NULL && !ref_ok(v)) {
		errf(err, "\"ref\": must be 1-%d printable ASCII characters without blanks", BATCH_REF_MAX);
		return -1;
	}
	job->ref = v != NULL ? xstrdup(v->valuestring) : NULL;
	if ((v = cJSON_GetObjectItemCaseSensitive(o, "after_policy")) != NULL) {
		if (!cJSON_IsString(v) ||
		    (strcmp(v->valuestring, "any") != 0 && strcmp(v->valuestring, "all") != 0)) {
			errf(err, "\"after_policy\": must be \"all\" or \"any\"");
			return -1;
		}
		job->after_any = strcmp(v->valuestring, "any") == 0;
	}
	a = cJSON_GetObjectItemCaseSensitive(o, "after_policy");
	if ((v = cJSON_GetObjectItemCaseSensitive(o, "after")) == NULL || (cJSON_IsArray(v) && cJSON_GetArraySize(v) == 0)) {
		if (a == NULL)
			return 0;
		/* a policy with nothing to apply it to is a mistake, not a no-op */
		errf(err, "\"after_policy\": goes with a non-empty \"after\"");
		return -1;
	}
	if (!cJSON_IsArray(v) || (n = cJSON_GetArraySize(v)) > BATCH_AFTER_MAX) {
		errf(err, "\"after\": must be an array of at most %d job ids or refs", BATCH_AFTER_MAX);
		return -1;
	}
	job->after_ids = xcalloc((size_t)n + 1, sizeof *job->after_ids);
	job->after_refs = xcalloc((size_t)n + 1, sizeof *job->after_refs);
	cJSON_ArrayForEach(a, v)
	{
		if (get_after_one(a, job, err) < 0)
			return -1;
	}
	if (ctx->follow_up) {
		job->e.after = job->after_ids;
		job->e.nafter = job->nafter_ids;
		job->e.after_any = job->after_any;
	}
	return 0;
}

/* "on_complete" or "on_success" of a follow-up's group: a type with a
 * handler, whose queue the callback goes to. */
static int
get_callback(const struct batch_ctx *ctx, const cJSON *o, const char *k, const char **type,
    const char **queue, char *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
	const struct handler *h;

	if (v == NULL)
		return 0;
	if (!cJSON_IsString(v) || (h = conf_handler(ctx->conf, v->valuestring)) == NULL) {
		errf(err, "\"%s\": unknown callback type '%.64s' (no such [handler] section in %s)", k,
		    cJSON_IsString(v) ? v->valuestring : "?", ctx->conf->path);
		return -1;
	}
	*type = xstrdup(v->valuestring);
	*queue = xstrdup(h->queue);
	return 0;
}

/* "group", "on_complete" and "on_success": in a follow-up only (a batch
 * names its group with --group); job->e.group points at the group. */
static int
get_group(const struct batch_ctx *ctx, const cJSON *o, struct batch_job *job, char *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "group");
	struct group_spec *g;

	if (v == NULL) {
		if (cJSON_GetObjectItemCaseSensitive(o, "on_complete") == NULL &&
		    cJSON_GetObjectItemCaseSensitive(o, "on_success") == NULL)
			return 0;
		errf(err, "\"on_complete\" and \"on_success\" go with \"group\"");
		return -1;
	}
	if (!ctx->follow_up) {
		errf(err, "\"group\": only in follow-ups (descriptor 3); a batch names its group with --group");
		return -1;
	}
	if (!cJSON_IsString(v) || groups_name_check(v->valuestring, err) < 0) {
		if (!cJSON_IsString(v))
			errf(err, "\"group\": must be a string");
		return -1;
	}
	g = job->group = xcalloc(1, sizeof *g);
	g->name = xstrdup(v->valuestring);
	job->e.group = g;
	return get_callback(ctx, o, "on_complete", &g->on_complete, &g->complete_queue, err) < 0 ||
	        get_callback(ctx, o, "on_success", &g->on_success, &g->success_queue, err) < 0
	    ? -1
	    : 0;
}

/* The payload, printed compact.  Last of the line's readers: printing
 * changes the payload's numbers (json_print_compact). */
static int
get_payload(cJSON *o, struct batch_job *job)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "payload");

	job->payload = v != NULL ? json_print_compact(v) : xstrdup("{}");
	if (job->payload == NULL)
		fatal("json_print_compact: out of memory");
	job->e.payload_len = strlen(job->payload);
	return 0;
}

/* The "ref" a line that batch_line_parse refused defines, if it reads
 * as a JSON object with a well-formed one (a new string), else NULL:
 * the line is bad, but what it names is still what it names, and a
 * later line that waits for it must not be called bad for that. */
char *
batch_line_ref(const char *line, size_t len)
{
	const cJSON *v;
	size_t at;
	cJSON *o;
	char *ref = NULL;

	if (memchr(line, '\0', len) != NULL || (o = json_parse_exact(line, len, &at)) == NULL)
		return NULL;
	if (cJSON_IsObject(o) && (v = cJSON_GetObjectItemCaseSensitive(o, "ref")) != NULL && ref_ok(v))
		ref = xstrdup(v->valuestring);
	cJSON_Delete(o);
	return ref;
}

int
batch_line_parse(const char *line, size_t len, const struct batch_ctx *ctx, struct batch_job *job, char *err)
{
	const char *at = ctx->at;
	size_t at_byte;
	cJSON *o;
	int rc = -1;

	job_init(job, ctx);
	if (memchr(line, '\0', len) != NULL) {
		errf(err, "the line contains a NUL byte");
		return -1;
	}
	if (json_has_escaped_nul(line, len)) {
		errf(err, "the line contains \\u0000, which cannot be stored");
		return -1;
	}
	o = json_parse_exact(line, len, &at_byte);
	if (o == NULL && json_too_deep(line, len, at_byte))
		errf(err, "arrays and objects nested deeper than %d levels (at byte %zu)", CJSON_NESTING_LIMIT,
		    at_byte);
	else if (o == NULL)
		errf(err, "not JSON (at byte %zu)", at_byte);
	else if (!cJSON_IsObject(o))
		errf(err, "not a JSON object");
	else if (check_fields(o, err) == 0 && get_names(o, job, err) == 0 &&
	    get_time(o, job, &at, err) == 0 && get_numbers(o, job, err) == 0 && get_trace(o, job, err) == 0 &&
	    get_expiry(o, job, err) == 0 && get_deps(ctx, o, job, err) == 0 && get_group(ctx, o, job, err) == 0 &&
	    get_payload(o, job) == 0)
		rc = finish(ctx, job, at, 1, err);
	cJSON_Delete(o);
	if (rc < 0) {
		batch_job_clear(job);
		batch_err_visible(err);
	}
	return rc;
}

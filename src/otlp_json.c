/* otlp_json.c -- spans as the JSON body of an OTLP/HTTP export request
 * (ExportTraceServiceRequest in OTLP's JSON mapping: trace and span ids
 * as hex strings, 64-bit integers and times as decimal strings). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "otlp_json.h"
#include "util.h"

/* OTLP's span kinds: a run consumes a job from the queue; a claim is
 * the worker's own work. */
#define KIND_INTERNAL 1
#define KIND_CONSUMER 5

/* Adds {"key": key, "value": {"stringValue": v}} to the array attrs. */
static void
attr_str(cJSON *attrs, const char *key, const char *v)
{
	cJSON *a = cJSON_CreateObject(), *val = cJSON_CreateObject();

	cJSON_AddStringToObject(a, "key", key);
	cJSON_AddStringToObject(val, "stringValue", v);
	cJSON_AddItemToObject(a, "value", val);
	cJSON_AddItemToArray(attrs, a);
}

/* Adds {"key": key, "value": {"intValue": "v"}}: OTLP's JSON carries
 * 64-bit integers as strings. */
static void
attr_int(cJSON *attrs, const char *key, uint64_t v)
{
	cJSON *a = cJSON_CreateObject(), *val = cJSON_CreateObject();
	char num[24];

	snprintf(num, sizeof num, "%" PRIu64, v);
	cJSON_AddStringToObject(a, "key", key);
	cJSON_AddStringToObject(val, "intValue", num);
	cJSON_AddItemToObject(a, "value", val);
	cJSON_AddItemToArray(attrs, a);
}

/* The attributes of sp: the job's for a run (and the outcome it asked
 * for when that was not written), the count for a claim. */
static cJSON *
span_attrs(const struct otlp_span *sp)
{
	cJSON *attrs = cJSON_CreateArray();

	if (sp->kind == OTLP_CLAIM) {
		attr_int(attrs, "jobq.claim.jobs", sp->count);
		return attrs;
	}
	attr_int(attrs, "jobq.job.id", sp->job_id);
	attr_str(attrs, "jobq.job.type", sp->type);
	attr_str(attrs, "jobq.queue", sp->queue);
	attr_int(attrs, "jobq.attempt", sp->attempt);
	attr_str(attrs, "jobq.outcome", sp->outcome);
	if (sp->unwritten[0] != '\0')
		attr_str(attrs, "jobq.outcome.unwritten", sp->unwritten);
	return attrs;
}

/* One span object of sp. */
static cJSON *
span_json(const struct otlp_span *sp)
{
	cJSON *s = cJSON_CreateObject(), *st;
	char num[24], *name;

	cJSON_AddStringToObject(s, "traceId", sp->trace_id);
	cJSON_AddStringToObject(s, "spanId", sp->span_id);
	if (sp->parent_id[0] != '\0')
		cJSON_AddStringToObject(s, "parentSpanId", sp->parent_id);
	name = sp->kind == OTLP_RUN ? xasprintf("jobq.run %s", sp->type) : xstrdup("jobq.claim");
	cJSON_AddStringToObject(s, "name", name);
	free(name);
	cJSON_AddNumberToObject(s, "kind", sp->kind == OTLP_RUN ? KIND_CONSUMER : KIND_INTERNAL);
	snprintf(num, sizeof num, "%" PRId64, sp->start_ns);
	cJSON_AddStringToObject(s, "startTimeUnixNano", num);
	snprintf(num, sizeof num, "%" PRId64, sp->end_ns);
	cJSON_AddStringToObject(s, "endTimeUnixNano", num);
	cJSON_AddItemToObject(s, "attributes", span_attrs(sp));
	st = cJSON_CreateObject();
	cJSON_AddNumberToObject(st, "code", sp->status);
	if (sp->status == OTLP_ERROR && sp->message[0] != '\0')
		cJSON_AddStringToObject(st, "message", sp->message);
	cJSON_AddItemToObject(s, "status", st);
	return s;
}

/* The resource every span of this worker shares: service.name "jobq"
 * and service.instance.id the worker's id (as `jobq workers` shows it). */
static cJSON *
resource_json(const char *instance)
{
	cJSON *r = cJSON_CreateObject(), *attrs = cJSON_CreateArray();

	attr_str(attrs, "service.name", "jobq");
	attr_str(attrs, "service.instance.id", instance);
	attr_str(attrs, "service.version", PACKAGE_VERSION);
	cJSON_AddItemToObject(r, "attributes", attrs);
	return r;
}

/* The request body for spans[0..n), which the caller frees with
 * cJSON_free.  A span's strings were cut to their fields when it was
 * made and are escaped here (cJSON), so any text makes valid JSON. */
char *
otlp_json_request(const struct otlp_span *spans, size_t n, const char *instance)
{
	cJSON *root = cJSON_CreateObject(), *rss = cJSON_CreateArray(), *rs = cJSON_CreateObject();
	cJSON *sss = cJSON_CreateArray(), *ss = cJSON_CreateObject(), *scope = cJSON_CreateObject();
	cJSON *arr = cJSON_CreateArray();
	char *out;
	size_t i;

	cJSON_AddItemToObject(rs, "resource", resource_json(instance));
	cJSON_AddStringToObject(scope, "name", "jobq");
	cJSON_AddStringToObject(scope, "version", PACKAGE_VERSION);
	cJSON_AddItemToObject(ss, "scope", scope);
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, span_json(&spans[i]));
	cJSON_AddItemToObject(ss, "spans", arr);
	cJSON_AddItemToArray(sss, ss);
	cJSON_AddItemToObject(rs, "scopeSpans", sss);
	cJSON_AddItemToArray(rss, rs);
	cJSON_AddItemToObject(root, "resourceSpans", rss);
	out = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (out == NULL)
		fatal("out of memory");
	return out;
}

/* cmd_enqueue.c -- `jobq enqueue`: one job, or many with --batch.
 *
 * Everything is validated before anything is written: the type must have
 * a [handler TYPE] section, the queue a [queue NAME] section, the payload
 * must be JSON no larger than max_payload.  A batch is read whole and
 * checked line by line first (every bad line is reported); only a clean
 * batch is inserted, in multi-row INSERTs of CHUNK rows, one transaction
 * each. */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "duration.h"
#include "isotime.h"
#include "queue.h"

#define CHUNK_ROWS 2000
#define CHUNK_BYTES (4 * 1024 * 1024)

static void
usage(void)
{
	printf("Usage: jobq enqueue [options] TYPE [PAYLOAD|-]\n"
	       "       jobq enqueue --batch [--dry-run] [options] < jobs.jsonl\n"
	       "Add a job of TYPE with a JSON PAYLOAD (read from stdin when absent or '-');\n"
	       "prints its id.\n\n"
	       "  -q, --queue NAME       queue (default: the handler's queue)\n"
	       "  -d, --delay DURATION   run no earlier than DURATION from now (90, 90s, 5m, 2h...)\n"
	       "      --at TIME          run no earlier than TIME (ISO 8601; UTC unless it has an offset)\n"
	       "  -p, --priority N       smaller runs first (default 0; -32768..32767)\n"
	       "      --max-attempts N   this job's attempt limit (default: the handler's)\n"
	       "      --batch            read one job per line on stdin:\n"
	       "                         {\"type\": ..., \"payload\": ..., \"queue\": ..., \"delay\": ...,\n"
	       "                          \"at\": ..., \"priority\": ..., \"max_attempts\": ...};\n"
	       "                         only type is required, the options above give the defaults\n"
	       "  -n, --dry-run          with --batch: check and print what would be enqueued\n\n"
	       "Exit status: 0 enqueued, 65 bad input (nothing written), 69 database\n"
	       "unavailable, 78 configuration error.\n");
}

struct defaults {
	const char *queue;
	int64_t delay_ms;
	const char *at;
	int priority;
	unsigned max_attempts;
};

/* One validated job, owning its strings. */
struct item {
	struct enqueue_item e;
	char *payload;
	char at[40];
	int line;
};

static int
check_type_queue(const struct conf *c, const char *type, const char **queue, char *err)
{
	const struct handler *h = conf_handler(c, type);

	if (h == NULL) {
		errf(err, "unknown job type '%s' (no [handler %s] section in %s)", type, type, c->path);
		return -1;
	}
	if (*queue == NULL)
		*queue = h->queue;
	if (!conf_has_queue(c, *queue)) {
		errf(err, "unknown queue '%s' (no [queue %s] section in %s)", *queue, *queue, c->path);
		return -1;
	}
	return 0;
}

/* Parses exactly one JSON value filling s[0..len), white space around
 * it allowed; *end points where parsing stopped (for the message). */
static cJSON *
json_parse_exact(const char *s, size_t len, const char **end)
{
	cJSON *j = cJSON_ParseWithLengthOpts(s, len, end, 0);
	const char *p = *end;

	if (j == NULL)
		return NULL;
	while (p < s + len && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	if (p != s + len) {
		*end = p;
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

static int
check_payload(const struct conf *c, const char *payload, size_t len, char *err)
{
	const char *end = NULL;
	cJSON *j;

	if (len > c->worker.max_payload) {
		errf(err, "payload is %zu bytes, more than max_payload (%zu)", len, c->worker.max_payload);
		return -1;
	}
	if (memchr(payload, '\0', len) != NULL) {
		errf(err, "payload contains a NUL byte");
		return -1;
	}
	j = json_parse_exact(payload, len, &end);
	if (j == NULL) {
		size_t off = end != NULL && end >= payload ? (size_t)(end - payload) : 0;

		errf(err, "payload is not valid JSON (at byte %zu)", off);
		return -1;
	}
	cJSON_Delete(j);
	return 0;
}

static char *
read_all(FILE *fp, size_t *len)
{
	struct buf b;
	char chunk[65536];
	size_t n;

	buf_init(&b);
	while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0)
		buf_add(&b, chunk, n);
	*len = b.len;
	return buf_steal(&b);
}

/* Inserts items in chunks, one transaction each; prints the ids of a
 * single job. */
static int
insert_items(struct db *db, struct item *items, size_t n, int print_id)
{
	struct enqueue_item *chunk = xcalloc(CHUNK_ROWS, sizeof *chunk);
	char err[ERRSZ];
	size_t i = 0, total = 0;
	uint64_t id = 0;
	int rc = DB_OK;

	while (i < n && rc == DB_OK) {
		size_t k = 0, bytes = 0;

		while (i + k < n && k < CHUNK_ROWS &&
		    (k == 0 || bytes + items[i + k].e.payload_len < CHUNK_BYTES)) {
			chunk[k] = items[i + k].e;
			bytes += items[i + k].e.payload_len;
			k++;
		}
		/* One multi-row INSERT is one transaction. */
		if ((rc = queue_enqueue(db, chunk, k, &id, err)) == DB_OK) {
			i += k;
			total += k;
		}
	}
	free(chunk);
	if (rc != DB_OK) {
		cli_error("enqueue: %s%s", err, total ? "" : " (nothing was written)");
		if (total > 0)
			cli_error("%zu of %zu jobs were enqueued before the error", total, n);
		return rc == DB_EGONE ? EX_UNAVAILABLE : EXIT_FAIL;
	}
	if (print_id)
		printf("%llu\n", (unsigned long long)id);
	else
		printf("enqueued %zu job%s\n", total, total == 1 ? "" : "s");
	return 0;
}

static int
apply_time(const struct defaults *d, int64_t delay_ms, const char *at, struct item *it, char *err)
{
	it->e.delay_ms = delay_ms;
	if (at != NULL) {
		if (isotime_to_utc(at, it->at, sizeof it->at, err) < 0)
			return -1;
		it->e.at = it->at;
	}
	(void)d;
	return 0;
}

/* ---- --batch ---- */

static int
json_int(const cJSON *v, int64_t lo, int64_t hi, int64_t *out)
{
	double d;

	if (!cJSON_IsNumber(v))
		return -1;
	d = cJSON_GetNumberValue(v);
	if (d != (double)(int64_t)d || d < (double)lo || d > (double)hi)
		return -1;
	*out = (int64_t)d;
	return 0;
}

/* Validates one batch line into it; returns -1 with the reason in err. */
static int
parse_line(
    const struct conf *c, const struct defaults *d, const char *line, size_t len, struct item *it, char *err)
{
	const char *end = NULL;
	cJSON *o = json_parse_exact(line, len, &end), *v;
	const char *queue = d->queue, *at = d->at;
	int64_t delay = d->delay_ms, n;
	int rc = -1;

	it->e.priority = d->priority;
	it->e.max_attempts = d->max_attempts;
	if (o == NULL || !cJSON_IsObject(o)) {
		errf(err, "not a JSON object");
		goto out;
	}
	for (v = o->child; v != NULL; v = v->next)
		if (strcmp(v->string, "type") && strcmp(v->string, "payload") && strcmp(v->string, "queue") &&
		    strcmp(v->string, "delay") && strcmp(v->string, "priority") && strcmp(v->string, "at") &&
		    strcmp(v->string, "max_attempts")) {
			errf(err, "unknown field \"%s\"", v->string);
			goto out;
		}
	v = cJSON_GetObjectItemCaseSensitive(o, "type");
	if (!cJSON_IsString(v)) {
		errf(err, "\"type\" is missing or not a string");
		goto out;
	}
	it->e.type = xstrdup(v->valuestring);
	v = cJSON_GetObjectItemCaseSensitive(o, "queue");
	if (v != NULL && !cJSON_IsString(v)) {
		errf(err, "\"queue\" is not a string");
		goto out;
	}
	if (v != NULL)
		queue = v->valuestring;
	if (check_type_queue(c, it->e.type, &queue, err) < 0)
		goto out;
	it->e.queue = xstrdup(queue);
	v = cJSON_GetObjectItemCaseSensitive(o, "payload");
	it->payload = v != NULL ? cJSON_PrintUnformatted(v) : xstrdup("{}");
	if (it->payload == NULL)
		fatal("cJSON_PrintUnformatted: out of memory");
	it->e.payload = it->payload;
	it->e.payload_len = strlen(it->payload);
	if (check_payload(c, it->payload, it->e.payload_len, err) < 0)
		goto out;
	if (cJSON_GetObjectItemCaseSensitive(o, "delay") != NULL &&
	    cJSON_GetObjectItemCaseSensitive(o, "at") != NULL) {
		errf(err, "\"delay\" and \"at\" exclude each other");
		goto out;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(o, "delay")) != NULL) {
		at = NULL; /* the line's own delay beats a default --at */
		if (cJSON_IsString(v)) {
			if (duration_parse(v->valuestring, &delay, err) < 0)
				goto out;
		} else if (json_int(v, 0, 100LL * 365 * 86400, &n) == 0)
			delay = n * 1000;
		else {
			errf(err, "\"delay\" must be seconds or a duration like \"5m\"");
			goto out;
		}
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(o, "at")) != NULL) {
		if (!cJSON_IsString(v)) {
			errf(err, "\"at\" must be an ISO 8601 time");
			goto out;
		}
		at = v->valuestring;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(o, "priority")) != NULL) {
		if (json_int(v, -32768, 32767, &n) < 0) {
			errf(err, "\"priority\" must be a whole number from -32768 to 32767");
			goto out;
		}
		it->e.priority = (int)n;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(o, "max_attempts")) != NULL) {
		if (json_int(v, 1, 1000000, &n) < 0) {
			errf(err, "\"max_attempts\" must be a whole number from 1 to 1000000");
			goto out;
		}
		it->e.max_attempts = (unsigned)n;
	}
	rc = apply_time(d, delay, at, it, err);
out:
	cJSON_Delete(o);
	return rc;
}

static void
items_free(struct item *items, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free((char *)items[i].e.type);
		free((char *)items[i].e.queue);
		free(items[i].payload);
	}
	free(items);
}

static void
print_dry_run(const struct item *items, size_t n)
{
	size_t i;
	char d[32];

	for (i = 0; i < n; i++) {
		const struct enqueue_item *e = &items[i].e;

		if (e->at != NULL)
			snprintf(d, sizeof d, "at %s", e->at);
		else
			duration_format(e->delay_ms, d, sizeof d);
		printf("line %d: %s queue=%s priority=%d %s%s payload=%s\n", items[i].line, e->type, e->queue,
		    e->priority, e->at ? "" : "delay=", d, e->payload);
	}
	printf("would enqueue %zu job%s (dry run: nothing written)\n", n, n == 1 ? "" : "s");
}

static int
batch(const struct conf *c, const struct defaults *d, int dry_run, struct item **out, size_t *nout)
{
	size_t len, cap = 1024, n = 0;
	char *data = read_all(stdin, &len), *p = data, err[ERRSZ];
	struct item *items = xcalloc(cap, sizeof *items);
	int line = 0, bad = 0;

	while (p < data + len) {
		char *nl = memchr(p, '\n', (size_t)(data + len - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(data + len - p);
		char *s = p;

		line++;
		p += l + (nl != NULL);
		while (l > 0 && (s[l - 1] == '\r' || s[l - 1] == ' ' || s[l - 1] == '\t'))
			l--;
		while (l > 0 && (*s == ' ' || *s == '\t'))
			s++, l--;
		if (l == 0)
			continue;
		if (n == cap)
			items = xrealloc(items, (cap *= 2) * sizeof *items);
		memset(&items[n], 0, sizeof *items);
		items[n].line = line;
		if (parse_line(c, d, s, l, &items[n], err) < 0) {
			fprintf(stderr, "jobq: line %d: %s\n", line, err);
			bad++;
			free((char *)items[n].e.type);
			free((char *)items[n].e.queue);
			free(items[n].payload);
			continue;
		}
		n++;
	}
	free(data);
	if (bad > 0) {
		cli_error("%d bad line%s; nothing was enqueued", bad, bad == 1 ? "" : "s");
		items_free(items, n);
		return EX_DATAERR;
	}
	if (dry_run)
		print_dry_run(items, n);
	*out = items;
	*nout = n;
	return 0;
}

/* ---- single job ---- */

static int
single(const struct conf *c, const struct defaults *d, const char *type, const char *payload_arg,
    struct item **out)
{
	struct item *it = xcalloc(1, sizeof *it);
	const char *queue = d->queue;
	char err[ERRSZ];
	size_t len;

	if (payload_arg == NULL || strcmp(payload_arg, "-") == 0) {
		it->payload = read_all(stdin, &len);
		while (len > 0 && strchr(" \t\r\n", it->payload[len - 1]) != NULL)
			it->payload[--len] = '\0'; /* echo's newline is not part of the payload */
	} else {
		it->payload = xstrdup(payload_arg);
		len = strlen(payload_arg);
	}
	it->e.payload = it->payload;
	it->e.payload_len = len;
	it->e.priority = d->priority;
	it->e.max_attempts = d->max_attempts;
	if (check_type_queue(c, type, &queue, err) < 0 || check_payload(c, it->payload, len, err) < 0 ||
	    apply_time(d, d->delay_ms, d->at, it, err) < 0) {
		cli_error("%s", err);
		free(it->payload);
		free(it);
		return EX_DATAERR;
	}
	it->e.type = xstrdup(type);
	it->e.queue = xstrdup(queue);
	*out = it;
	return 0;
}

enum { OPT_AT = 256, OPT_MAX_ATTEMPTS, OPT_BATCH };

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
		{ "dry-run", no_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	struct defaults d = { NULL, 0, NULL, 0, 0 };
	struct item *items = NULL;
	size_t n = 0;
	struct conf *c;
	struct db *db = NULL;
	char err[ERRSZ];
	int opt, rc, is_batch = 0, dry_run = 0;
	int64_t v;

	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS "q:d:p:n", longopts, NULL)) != -1) {
		if ((rc = cli_common_opt(opt, "enqueue", usage)) >= 0)
			return rc;
		if (rc == -2)
			continue;
		switch (opt) {
		case 'q':
			d.queue = optarg;
			break;
		case 'd':
			if (duration_parse(optarg, &d.delay_ms, err) < 0)
				return cli_usage_error("enqueue", "--delay: %s", err);
			break;
		case OPT_AT:
			d.at = optarg;
			break;
		case 'p':
			if (str_to_int64(optarg, -32768, 32767, &v) < 0)
				return cli_usage_error(
				    "enqueue", "--priority: expected -32768 to 32767, not '%s'", optarg);
			d.priority = (int)v;
			break;
		case OPT_MAX_ATTEMPTS:
			if (str_to_int64(optarg, 1, 1000000, &v) < 0)
				return cli_usage_error(
				    "enqueue", "--max-attempts: expected 1 to 1000000, not '%s'", optarg);
			d.max_attempts = (unsigned)v;
			break;
		case OPT_BATCH:
			is_batch = 1;
			break;
		case 'n':
			dry_run = 1;
			break;
		}
	}
	if (d.at != NULL && d.delay_ms > 0)
		return cli_usage_error("enqueue", "--at and --delay exclude each other");
	if (dry_run && !is_batch)
		return cli_usage_error("enqueue", "--dry-run goes with --batch");
	if (is_batch ? optind != argc : (optind >= argc || argc - optind > 2))
		return cli_usage_error("enqueue",
		    is_batch ? "--batch takes no arguments (jobs come on stdin)" : "expected TYPE [PAYLOAD]");
	if ((rc = cli_conf(0, &c)) != 0)
		return rc;
	if (d.queue != NULL && !conf_has_queue(c, d.queue)) {
		cli_error("unknown queue '%s' (no [queue %s] section in %s)", d.queue, d.queue, c->path);
		conf_free(c);
		return EX_DATAERR;
	}
	rc = is_batch ? batch(c, &d, dry_run, &items, &n)
	              : single(c, &d, argv[optind], argv[optind + 1], &items);
	if (rc == 0 && !dry_run) {
		n = is_batch ? n : 1;
		if ((rc = cli_connect(c, &db)) == 0)
			rc = insert_items(db, items, n, !is_batch);
	}
	items_free(items, is_batch ? n : (items ? 1 : 0));
	db_free(db);
	conf_free(c);
	return rc;
}

/* conf_schedule.c -- one schedule's fields, checked one by one: the
 * [schedule NAME] sections of the INI and the `jobq schedule add|edit`
 * options go through the same schedule_set(), so a schedule kept in the
 * database can name only what a reviewed INI file allows (a configured
 * handler, a configured queue). */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "conf_ini.h"
#include "conf_schedule.h"
#include "cron.h"
#include "duration.h"
#include "json.h"
#include "utf8.h"

void
schedule_free(struct schedule *s)
{
	if (s == NULL)
		return;
	free(s->name);
	free(s->cron);
	free(s->type);
	free(s->payload);
	free(s->queue);
	free(s->timezone);
	free(s->description);
	free(s->problem);
	free(s->version);
	free(s);
}

/* A new schedule with the defaults. */
struct schedule *
schedule_new(const char *name, enum schedule_source source)
{
	struct schedule *s = xcalloc(1, sizeof *s);

	s->name = xstrdup(name);
	s->source = source;
	s->enabled = 1;
	s->catch_up_ms = SCHEDULE_CATCH_UP_MS;
	return s;
}

static int
set_bool(const char *value, int *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	size_t i;

	for (i = 0; i < ARRAY_LEN(yes); i++) {
		if (strcasecmp(value, yes[i]) == 0)
			return *out = 1, 0;
		if (strcasecmp(value, no[i]) == 0)
			return *out = 0, 0;
	}
	return -1;
}

/* A schedule's payload must be what the worker will run: UTF-8, one
 * JSON object and nothing after it (cJSON_Parse alone stops at the end of the first
 * value, so '{} x' would pass here and be dead-lettered by the worker as
 * "not valid JSON" at every fire), within [worker] max_payload. */
static int
check_payload(const struct conf *c, const char *value, char *err)
{
	const char *end = NULL;
	size_t len = strlen(value);
	char e2[ERRSZ];
	cJSON *j;

	/* the size and UTF-8 rule of every payload (json_payload_check): a
	 * byte that is not UTF-8 is refused by the database at every fire */
	if (json_payload_check(value, len, c->worker.max_payload, 1, e2) < 0)
		return errf(err, "payload: %s", strncmp(e2, "payload is ", 11) == 0 ? e2 + 11 : e2), -1;
	if ((j = cJSON_ParseWithOpts(value, &end, 1)) == NULL) {
		size_t at = end != NULL && end >= value ? (size_t)(end - value) : (size_t)0;

		if (json_too_deep(value, len, at))
			return errf(err, "payload: arrays and objects nested deeper than %d levels (at byte %zu)",
			           CJSON_NESTING_LIMIT, at),
			       -1;
		return errf(err, "payload: not valid JSON (at byte %zu): %s", at, value), -1;
	}
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return errf(err, "payload: not a JSON object: %s", value), -1;
	}
	cJSON_Delete(j);
	return 0;
}

/* cron: an expression that parses and names a date that exists: one
 * that never fires ("0 0 31 2 *") is refused here, where the INI, `jobq
 * schedule add|edit` and the dashboard all set it, not found later by
 * `jobq check` or by a schedule that silently never runs. */
static int
set_cron(struct schedule *s, const char *value, char *err)
{
	char e2[ERRSZ];
	struct cron *cr;
	int never;

	if (conf_text_check("cron", value, 255, err) < 0)
		return -1;
	if ((cr = cron_parse(value, e2)) == NULL)
		return errf(err, "cron: %s", e2), -1;
	never = cron_never(cr);
	cron_free(cr);
	if (never)
		return errf(err, "cron: '%s' names no date that exists: it would never fire", value), -1;
	return free(s->cron), s->cron = xstrdup(value), 0;
}

static int
set_checked(const struct conf *c, struct schedule *s, const char *key, const char *value, char *err)
{
	char e2[ERRSZ];

	if (strcmp(key, "cron") == 0)
		return set_cron(s, value, err);
	if (strcmp(key, "type") == 0) {
		if (conf_handler(c, value) == NULL)
			return errf(err, "type: unknown job type '%s' (no [handler %s] section)", value,
			           value),
			       -1;
		return free(s->type), s->type = xstrdup(value), 0;
	}
	if (strcmp(key, "queue") == 0) {
		if (!conf_has_queue(c, value))
			return errf(err, "queue: unknown queue '%s' (no [queue %s] section)", value, value),
			       -1;
		return free(s->queue), s->queue = xstrdup(value), 0;
	}
	if (strcmp(key, "payload") == 0) {
		if (check_payload(c, value, err) < 0)
			return -1;
		return free(s->payload), s->payload = xstrdup(value), 0;
	}
	if (strcmp(key, "timezone") == 0) {
		struct cron_zone *z = cron_zone_open(value, e2);

		if (z == NULL)
			return errf(err, "timezone: %s", e2), -1;
		cron_zone_free(z);
		return free(s->timezone), s->timezone = xstrdup(value), 0;
	}
	return -2;
}

/* catch_up = none | latest [DURATION] | all [DURATION] | DURATION (the
 * same as latest DURATION): which fires missed while nothing ticked are
 * enqueued late, and how late at most (1h when not given). */
static int
set_catch_up(struct schedule *s, const char *value, char *err)
{
	static const char *const modes[] = { "latest", "none", "all" };
	const char *rest = value;
	char e2[ERRSZ];
	size_t i, n;

	s->catch_up_mode = CATCH_UP_LATEST;
	for (i = 0; i < ARRAY_LEN(modes); i++) {
		n = strlen(modes[i]);
		if (strncmp(value, modes[i], n) == 0 && (value[n] == '\0' || value[n] == ' ')) {
			s->catch_up_mode = (enum catch_up)i;
			for (rest = value + n; *rest == ' '; rest++)
				;
			break;
		}
	}
	if (s->catch_up_mode == CATCH_UP_NONE && *rest != '\0')
		return errf(err, "catch_up: none takes no duration, not '%s'", value), -1;
	if (*rest == '\0') {
		s->catch_up_ms = s->catch_up_mode == CATCH_UP_NONE ? 0 : SCHEDULE_CATCH_UP_MS;
		return 0;
	}
	if (duration_parse(rest, &s->catch_up_ms, e2) < 0 || s->catch_up_ms < 0)
		return errf(err, "catch_up: expected none, latest [DURATION], all [DURATION] or a duration: %s",
		           e2),
		       -1;
	return 0;
}

/* Sets one field from its text after checking it; returns 0, -1 with
 * the reason in err ("queue: unknown queue 'x' ..."), or -2 when key is
 * not a schedule key. */
int
schedule_set(const struct conf *c, struct schedule *s, const char *key, const char *value, char *err)
{
	int64_t v;
	int rc;

	if ((rc = set_checked(c, s, key, value, err)) != -2)
		return rc;
	if (strcmp(key, "priority") == 0) {
		if (str_to_int64(value, -32768, 32767, &v) < 0)
			return errf(err, "priority: expected a whole number from -32768 to 32767, not '%s'",
			           value),
			       -1;
		return s->priority = (int)v, 0;
	}
	if (strcmp(key, "enabled") == 0) {
		if (set_bool(value, &s->enabled) < 0)
			return errf(err, "enabled: expected yes or no (or true, false, on, off, 1, 0), not '%s'", value), -1;
		return 0;
	}
	if (strcmp(key, "overlap") == 0) {
		if (strcmp(value, "skip") != 0 && strcmp(value, "allow") != 0)
			return errf(err, "overlap: expected skip or allow, not '%s'", value), -1;
		return s->overlap_allow = strcmp(value, "allow") == 0, 0;
	}
	if (strcmp(key, "catch_up") == 0)
		return set_catch_up(s, value, err);
	if (strcmp(key, "alert_after") == 0) {
		char e2[ERRSZ];

		if (duration_parse(value, &s->alert_after_ms, e2) < 0 || s->alert_after_ms < 0)
			return errf(err, "alert_after: %s", e2), -1;
		return 0;
	}
	if (strcmp(key, "description") == 0) {
		if (conf_text_check("description", value, 255, err) < 0)
			return -1;
		return free(s->description), s->description = xstrdup(value), 0;
	}
	return -2;
}

/* Checks that cron and type were given and fills the defaults: the
 * handler's queue, the [worker] time zone, an empty payload. */
int
schedule_finish(const struct conf *c, struct schedule *s, char *err)
{
	char e2[ERRSZ];

	if (s->cron == NULL)
		return errf(err, "has no cron"), -1;
	if (s->type == NULL)
		return errf(err, "has no type"), -1;
	if (s->payload == NULL)
		s->payload = xstrdup("{}");
	if (s->queue == NULL)
		s->queue = xstrdup(conf_handler(c, s->type)->queue);
	if (!conf_has_queue(c, s->queue))
		return errf(err,
		           "queue: unknown queue '%s' (the queue of [handler %s]; no [queue %s] section)",
		           s->queue, s->type, s->queue),
		       -1;
	if (s->timezone == NULL) {
		struct cron_zone *z = cron_zone_open(c->worker.timezone, e2);

		if (z == NULL)
			return errf(err, "timezone: %s (the [worker] timezone)", e2), -1;
		cron_zone_free(z);
		s->timezone = xstrdup(c->worker.timezone);
	}
	if (s->description == NULL)
		s->description = xstrdup("");
	return 0;
}

void
conf_schedule_load(struct loader *ld, struct conf *c, const struct section *s, const char *name)
{
	struct schedule *sc = schedule_new(name, SCHEDULE_INI);
	char err[ERRSZ];
	size_t i;
	int bad = 0, rc;

	sc->line = s->line;
	c->schedules = xgrow(c->schedules, c->nschedules, 1, sizeof *c->schedules);
	c->schedules[c->nschedules++] = sc;
	for (i = 0; i < s->nentries; i++) {
		const struct entry *e = &s->entries[i];

		if ((rc = schedule_set(c, sc, e->key, e->value, err)) == -2)
			ld_unknown_key(ld, s, e);
		else if (rc < 0)
			ld_error(ld, e->line, "%s", err);
		bad |= rc < 0;
	}
	/* after a refused line (most likely a key it needs), that line is
	 * the one to fix: "has no cron" would report the mistake twice */
	if (!bad && s->nrefused == 0 && schedule_finish(c, sc, err) < 0)
		ld_error(ld, s->line, "[schedule %s] %s", name, err);
}

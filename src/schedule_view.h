/* schedule_view.h -- read-only views of the schedules: status, fire
 * history and the JSON list behind `jobq schedule --list` and the
 * dashboard's Schedules page. */
#ifndef JOBQ_SCHEDULE_VIEW_H
#define JOBQ_SCHEDULE_VIEW_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"
#include "db.h"
#include "errtext.h"

/* What `jobq schedule --list` shows about one schedule. */
struct schedule_status {
	int64_t next;       /* 0: never */
	char last_fire[40]; /* "" when it never fired */
	int64_t last_fire_t;
	int last_manual;
	char outcome[16]; /* done, queued, running, stale, retrying, failed, cancelled, expired, skipped, missed */
	uint64_t last_job;
	char last_error[ERRTEXT_SUMMARY_MAX + 1]; /* the last fire's job's, when it is failed */
	uint64_t runs, failures, skipped, missed; /* within the window */
};

/* One fire of a schedule (jobq_schedule_runs) and what became of it. */
struct schedule_fire {
	char at[40]; /* UTC, "YYYY-MM-DD HH:MM:SS.ffffff" */
	int64_t at_t;
	int manual;
	uint64_t job;     /* 0: none enqueued (skipped, missed) */
	char outcome[16]; /* as schedule_status.outcome */
	char error[ERRTEXT_SUMMARY_MAX + 1]; /* the dead-lettered job's error: its summary (errtext_summary_or) */
};

int64_t schedule_view_next_after(const struct schedule *s, int64_t t);
int schedule_view_status(struct db *db, const struct schedule *s, int64_t now, int64_t window_s,
    struct schedule_status *st, char *err);
int schedule_view_history(
    struct db *db, const char *name, unsigned limit, struct schedule_fire **out, size_t *n, char *err);
const char *schedule_view_fire_text(const struct schedule *s, int64_t t, char *buf, size_t len);
struct schedule *schedule_view_gone(const char *name);
int schedule_view_list_json(const struct conf *c, struct db *db, int64_t window_s, cJSON **out, char *err);

#endif

/* incidents.h -- the watchdogs' incidents, kept in jobq_alerts
 * (incidents.c). */
#ifndef JOBQ_INCIDENTS_H
#define JOBQ_INCIDENTS_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"

/* One row of jobq_alerts; times "YYYY-MM-DD HH:MM:SS" UTC, cleared_at
 * "" while open. */
struct incident {
	uint64_t id;
	char kind[17];
	char name[129];
	char *reason;
	char raised_at[32];
	char cleared_at[32];
	int open;
};

int incidents_open(struct db *db, const char *kind, const char *name, const char *reason, const char *by,
    struct incident *x, int *won, char *err);
int incidents_clear(
    struct db *db, const char *kind, const char *name, const char *by, struct incident *x, int *won, char *err);
int incidents_list(struct db *db, int cleared_hours, struct incident **out, size_t *n, char *err);
const struct incident *incidents_find(const struct incident *v, size_t n, const char *kind, const char *name);
void incidents_free(struct incident *v, size_t n);
char *incident_json(const struct incident *x, const char *event);

#endif

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
	char raised_by[161], cleared_by[161]; /* who wrote it: a worker's id ("" for none) */
};

/* *won of incidents_open and incidents_clear: the write was sent and its
 * answer lost; it may have taken (incidents_took). */
#define INCIDENT_UNSURE -1

int incidents_open(struct db *db, const char *kind, const char *name, const char *reason, const char *by,
    struct incident *x, int *won, char *err);
int incidents_clear(
    struct db *db, const char *kind, const char *name, const char *by, struct incident *x, int *won, char *err);
int incidents_took(struct db *db, const char *kind, const char *name, uint64_t id, const char *by,
    struct incident *x, int *took, char *err);
int incidents_list(struct db *db, int cleared_hours, struct incident **out, size_t *n, char *err);
const struct incident *incidents_find(const struct incident *v, size_t n, const char *kind, const char *name);
void incidents_free(struct incident *v, size_t n);
char *incident_json(const struct incident *x, const char *event);

#endif

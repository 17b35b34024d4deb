/* registry.h -- the jobq_workers table: who is working, on what. */
#ifndef JOBQ_REGISTRY_H
#define JOBQ_REGISTRY_H

#include <stdint.h>

#include "db.h"

struct worker_counts {
	uint64_t done, retried, dead;
	uint64_t cancelled, expired; /* kept by the worker; not in its registry row */
};

struct worker_row {
	char *id, *host, *queues, *current_jobs, *version, *started_at, *last_seen_at;
	unsigned pid, concurrency;
	int64_t heartbeat_ms;
	int64_t uptime_s;    /* alive: since it started; gone: how long it ran */
	int64_t seen_ago_ms;
	uint64_t done, retried, dead;
	int alive; /* heart-beat within three intervals */
};

int registry_register(struct db *db, const char *id, const char *host, unsigned pid, const char *queues,
    unsigned concurrency, int64_t heartbeat_ms, char *err);
int registry_heartbeat(
    struct db *db, const char *id, const struct worker_counts *c, const char *current_jobs, char *err);
int registry_unregister(struct db *db, const char *id, char *err);
int registry_list(struct db *db, struct worker_row **rows, size_t *n, char *err);
void registry_rows_free(struct worker_row *rows, size_t n);
int registry_count_alive(struct db *db, uint64_t *n, char *err);
int registry_alive_queues(struct db *db, char ***lists, size_t *n, char *err);
void registry_queues_free(char **lists, size_t n);
uint64_t registry_serving(char *const *lists, size_t n, const char *queue);
int registry_prune(struct db *db, int64_t older_than_ms, int count_only, uint64_t *removed, char *err);

#endif

/* schema.h -- create, upgrade and check the jobq tables. */
#ifndef JOBQ_SCHEMA_H
#define JOBQ_SCHEMA_H

#include "db.h"

struct migration {
	unsigned version;
	const char *name;
	const char *sql;
};

extern const struct migration schema_migrations[];
extern const unsigned schema_nmigrations;

int schema_init(struct db *db, const char *database, unsigned *from, unsigned *to, char *err);
int schema_version(struct db *db, unsigned *version, char *err);
unsigned schema_latest(void);
int schema_statement(unsigned version, const char *start, struct buf *stmt);

#endif

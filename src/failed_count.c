/* failed_count.c -- how many jobs wait in the dead letter, in every
 * queue: one count over the failed_jobs primary key, without the scan of
 * the jobs table that queue_status makes. */
#include "config.h"

#include <stdlib.h>

#include "failed_count.h"

int
failed_count(struct db *db, uint64_t *n, char *err)
{
	struct db_res *r;
	char **row;
	int rc;

	*n = 0;
	if ((r = db_query(db, &rc, err, "SELECT COUNT(*) FROM failed_jobs")) == NULL)
		return rc;
	if ((row = db_res_next(r)) != NULL && row[0] != NULL)
		*n = strtoull(row[0], NULL, 10);
	db_res_free(r);
	return DB_OK;
}

/* cmd_failed_act.h -- what `jobq failed` does to dead-lettered jobs:
 * retry, forget, clear (cmd_failed_act.c), apart from reading them. */
#ifndef JOBQ_CMD_FAILED_ACT_H
#define JOBQ_CMD_FAILED_ACT_H

#include "conf.h"
#include "db.h"
#include "failed.h"

/* The options of `jobq failed`, as parsed. */
struct failed_opts {
	struct failed_filter f;
	int all, json, dry_run, yes, limit_set;
	int64_t older_than_ms;
	const char *payload, *payload_file; /* retry with an edited payload */
};

int cmd_failed_act_ids_check(int argc, char **argv, int from_stdin);
void cmd_failed_note_unknown(const struct conf *c, const struct failed_opts *o);
int cmd_failed_act_stdin_ids(char ***v, int *n);
int cmd_failed_act_each(struct db *db, const struct conf *c, const struct failed_opts *o, int argc,
    char **argv, int from_stdin, int retry);
int cmd_failed_act_edit_read(
    const struct conf *c, const struct failed_opts *o, const char *id, char **text, size_t *len);
int cmd_failed_act_edit(struct db *db, const struct conf *c, const struct failed_opts *o, const char *arg,
    const char *text, size_t len);
int cmd_failed_act_all(struct db *db, const struct conf *c, const struct failed_opts *o, int retry);
int cmd_failed_act_clear(struct db *db, const struct failed_opts *o);

#endif

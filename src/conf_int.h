/* conf_int.h -- what the parts of the INI loader share: the entries of
 * pass 1 and the value parsers of pass 2.  Private to conf*.c; the rest
 * of jobq sees only conf.h. */
#ifndef JOBQ_CONF_INT_H
#define JOBQ_CONF_INT_H

#include "conf.h"

struct entry {
	char *key;
	char *value;
	int line;
};

struct section {
	char *name; /* "handler send_email" */
	int line;
	struct entry *entries;
	size_t nentries;
};

struct loader {
	const char *path;
	FILE *fp;
	int lineno;
	char *linebuf;
	size_t linecap;
	int continuation; /* the current line is indented */
	struct section *sections;
	size_t nsections;
	struct buf *errors;
	struct buf *warnings;
	int nerrors;
	int flags;
	int has_password;
	char *password_file; /* set when it is readable by others */
	char *config_dir;
	int queues_line;    /* of [worker] queues, checked in validate() */
	int heartbeat_line; /* of [worker] heartbeat */
	int reserve_ahead_line;
};

void PRINTFLIKE(3, 4) ld_warning(struct loader *ld, int line, const char *fmt, ...);
void ld_check_writers(struct loader *ld, int line, const char *what, const char *path, uid_t run_uid);
/* Each value parser reports its own error as FILE:LINE and returns -1. */
void PRINTFLIKE(3, 4) ld_error(struct loader *ld, int line, const char *fmt, ...);
void ld_unknown_key(struct loader *ld, const struct section *s, const struct entry *e);
int ld_duration(struct loader *ld, const struct entry *e, int64_t *out, int64_t min_ms);
int ld_uint(struct loader *ld, const struct entry *e, int64_t min, int64_t max, int64_t *out);
int ld_size(struct loader *ld, const struct entry *e, size_t *out);
int ld_output_limit(struct loader *ld, const struct entry *e, size_t *out);
int ld_bool(struct loader *ld, const struct entry *e, int *out);
void ld_str(char **dst, const char *value);
pcre2_code *ld_regex(struct loader *ld, const struct entry *e);

/* max_running and rate of [handler TYPE] and [queue NAME] (conf_flow.c) */
int conf_flow_handler(struct loader *ld, struct handler *h, const struct entry *e);
int conf_flow_queue(struct loader *ld, struct conf *c, const char *queue, const struct entry *e);
void conf_flow_free(struct conf *c);

/* [database] (conf_db.c) */
void conf_db_load(struct loader *ld, struct conf *c, const struct section *s);

/* [handler TYPE] and the handler keys of [worker] (conf_handler.c) */
void conf_handler_defaults(struct handler *h);
void conf_handler_free_fields(struct handler *h);
int conf_handler_set(struct loader *ld, struct handler *h, const struct entry *e);
void conf_handler_load(struct loader *ld, struct conf *c, const struct section *s, const char *type,
    const struct handler *defaults);

/* [schedule NAME] (conf_schedule.c) */
void conf_schedule_load(struct loader *ld, struct conf *c, const struct section *s, const char *name);

/* [serve] and [user NAME] (conf_serve.c) */
void conf_serve_defaults(struct conf *c);
void conf_serve_load(struct loader *ld, struct conf *c, const struct section *s);
void conf_user_load(struct loader *ld, struct conf *c, const struct section *s, const char *name);
void conf_serve_free(struct conf *c);

#endif

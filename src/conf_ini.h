/* conf_ini.h -- the loader of jobq.ini (conf_ini.c): the entries pass 1
 * reads and the value parsers pass 2 uses.  Private to conf*.c;
 * the rest of jobq sees only conf.h. */
#ifndef JOBQ_CONF_INI_H
#define JOBQ_CONF_INI_H

#include <stdio.h>

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
	int nrefused; /* lines under it refused in pass 1 (a key may be missing for it) */
	char *after;  /* text after the header's ']' (reported in pass 2), or NULL */
};

struct loader {
	const char *path;
	FILE *fp;
	int lineno;
	char *linebuf;
	size_t linecap;
	int continuation; /* the current line is indented */
	int dropping;     /* the last header was refused: its keys go unreported */
	int read_errno;   /* why the file could not be read to its end */
	char *long_value; /* the value of a line too long for inih, or NULL */
	struct section *sections;
	size_t nsections;
	struct buf *errors;
	struct buf *warnings;
	int nerrors;
	int nunknown; /* unknown keys reported so far (ld_unknown_key) */
	int flags;
	int has_password;
	char *password_file; /* set when it is readable by others */
	char *config_dir;
	struct nameset *worker_env; /* [worker]'s env.NAME names: their index in a handler's env */
	char **worker_env_names;    /* the names it holds */
	int queues_line;    /* of [worker] queues, checked in conf_worker_validate() */
	int heartbeat_line; /* of [worker] heartbeat */
	int reserve_ahead_line;
};

/* pass 1 */
int ld_open(struct loader *ld, const char *path, int flags, struct buf *errors, struct buf *warnings);
void ld_read(struct loader *ld);
void ld_free(struct loader *ld);

void PRINTFLIKE(3, 4) ld_warning(struct loader *ld, int line, const char *fmt, ...);
void ld_check_writers(struct loader *ld, int line, const char *what, const char *path, uid_t run_uid);
/* Each value parser reports its own error as FILE:LINE and returns -1. */
void PRINTFLIKE(3, 4) ld_error(struct loader *ld, int line, const char *fmt, ...);
void ld_errors_end(struct loader *ld);
void ld_unknown_key(struct loader *ld, const struct section *s, const struct entry *e);
int ld_duration(struct loader *ld, const struct entry *e, int64_t *out, int64_t min_ms);
int ld_uint(struct loader *ld, const struct entry *e, int64_t min, int64_t max, int64_t *out);
int ld_size(struct loader *ld, const struct entry *e, size_t *out);
int ld_output_limit(struct loader *ld, const struct entry *e, size_t *out);
int bool_word(const char *s, int *out);
int ld_bool(struct loader *ld, const struct entry *e, int *out);
void ld_str(char **dst, const char *value);
int ld_length(struct loader *ld, const struct entry *e, size_t max, int chars, const char *what);
int conf_text_check(const char *key, const char *value, size_t max, char *err);
pcre2_code *ld_regex(struct loader *ld, const struct entry *e);

#endif

/* cli.h -- what every `jobq COMMAND` shares: options, config, database. */
#ifndef JOBQ_CLI_H
#define JOBQ_CLI_H

#include <getopt.h>
#include <stdio.h>
#include <sysexits.h>

#include "conf.h"
#include "db.h"

/* Exit statuses (sysexits(3)); anything else that fails exits 1. */
#define EXIT_FAIL 1

/* Options every command accepts, first in its long-option table. */
#define CLI_COMMON_LONGOPTS                         \
	{ "config", required_argument, NULL, 'c' }, \
	{                                           \
		"help", no_argument, NULL, 'h'      \
	}
#define CLI_COMMON_SHORTOPTS "c:h"

struct cli_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

extern const char *cli_config_path;
extern int cli_log_level; /* from --quiet or -v, or -1: the config's log_level */

int cli_common_opt(int opt, const char *cmd, void (*usage)(void));
int cli_usage_error(const char *cmd, const char *fmt, ...) PRINTFLIKE(2, 3);
void cli_error(const char *fmt, ...) PRINTFLIKE(1, 2);
const char *cli_unwritten(const struct db *db);
int cli_write_failed(const struct db *db, const char *look, const char *fmt, ...) PRINTFLIKE(3, 4);
int cli_conf(int flags, struct conf **out);
int cli_connect_error(const struct conf *c, const struct db *db, const char *err);
int cli_db(const struct conf *c, struct db **out);
int cli_connect(const struct conf *c, struct db **db);
int cli_open(int conf_flags, struct conf **c, struct db **db);
int cli_open_cancelling(struct conf **c, struct db **db);
int cli_connect_cancelling(const struct conf *c, struct db **db);
const char *cli_tz(const struct conf *c);
/* The zone the database is asked for times in: UTC, always; they are
 * shown in [worker] timezone by timefmt (cli_timefmt). */
#define CLI_DB_TZ "+00:00"
struct timefmt;
struct timefmt *cli_timefmt(const struct conf *c, struct db *db, const char *cmd);
int cli_parse_id(const char *s, uint64_t *id);
int cli_isatty(void);
int cli_reconnect(struct db *db, char *err);
int cli_part(struct db *db, int rc, const char *cmd, const char *what, const char *err);

int cli_can_ask(void);
int cli_bulk_check(const char *cmd, const char *what, int yes, int dry_run);
int cli_confirm(const char *fmt, ...) PRINTFLIKE(1, 2);

struct cli_progress {
	int on, shown;
	int64_t next_ms;
};

void cli_progress_init(struct cli_progress *p);
void cli_progress(struct cli_progress *p, const char *fmt, ...) PRINTFLIKE(2, 3);
void cli_progress_end(struct cli_progress *p);
char *cli_visible(const char *s, int tty);
char *cli_read_all(FILE *f, size_t max, size_t *len);
char **cli_read_ids(FILE *f, int *n);
void cli_who(char *out, size_t len);
struct cJSON;
void cli_print_json(struct cJSON *doc);

int show_job(const struct conf *c, struct db *db, uint64_t id, int json, int failed_only);

int cmd_init(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_enqueue(int argc, char **argv);
int cmd_work(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_failed(int argc, char **argv);
int cmd_release_stale(int argc, char **argv);
int cmd_pause(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
int cmd_group(int argc, char **argv);
int cmd_resume(int argc, char **argv);
int cmd_workers(int argc, char **argv);
int cmd_prune(int argc, char **argv);
int cmd_cron(int argc, char **argv);
int cmd_schedule(int argc, char **argv);
int cmd_passwd(int argc, char **argv);
int cmd_sessions(int argc, char **argv);
int cmd_user(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_serve(int argc, char **argv);

#endif

/* cli.c -- the parts every command shares.
 *
 * Commands print their own results on stdout and problems on stderr as
 * one line "jobq: what went wrong", and exit with a sysexits(3) status:
 * 64 usage, 65 bad input data, 69 database unavailable, 78 configuration,
 * 1 anything else. */
#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <mysqld_error.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "schedules.h"
#include "schema.h"
#include "timefmt.h"

const char *cli_config_path;
int cli_log_level = -1;

/* Writes "jobq: PREFIX" and the message on stderr as one line: the
 * message (which may quote a name, a payload or a server's words) is
 * escaped as the log escapes it, so it cannot add lines or drive the
 * operator's terminal. */
static void
say(const char *prefix, const char *fmt, va_list ap)
{
	struct buf msg, line;

	buf_init(&msg);
	buf_init(&line);
	buf_vprintf(&msg, fmt, ap);
	buf_printf(&line, "jobq: %s", prefix);
	log_escape(&line, msg.data != NULL ? msg.data : "");
	buf_addc(&line, '\n');
	fputs(line.data, stderr);
	buf_free(&msg);
	buf_free(&line);
}

void
cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("", fmt, ap);
	va_end(ap);
}

/* What a write that failed on db left, in the words of "enqueue: ERR
 * (...)": nothing, or, when the connection died before the answer to
 * something that commits came back (db_unsure), maybe all of it. */
const char *
cli_unwritten(const struct db *db)
{
	return db_unsure(db) ? "the connection was lost before its answer came: it may have been written; look "
	                       "(jobq status, jobq show) before running it again"
	                     : "nothing was written";
}

/* Reports the failed write of a change as "jobq: MESSAGE" and returns
 * EX_UNAVAILABLE.  When the connection died before the answer to what
 * commits came back (db_unsure) the change may have been made, and the
 * line says so and where to look (look: "jobq schedule --list", say),
 * since running the command again blind may be refused or do it twice. */
int
cli_write_failed(const struct db *db, const char *look, const char *fmt, ...)
{
	struct buf msg;
	va_list ap;

	buf_init(&msg);
	va_start(ap, fmt);
	buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	if (db_unsure(db))
		cli_error("%s (the connection was lost before its answer came: it may have been made; look (%s) "
		          "before running it again)",
		    msg.data != NULL ? msg.data : "", look);
	else
		cli_error("%s", msg.data != NULL ? msg.data : "");
	buf_free(&msg);
	return EX_UNAVAILABLE;
}

/* Reports a usage problem and returns EX_USAGE. */
int
cli_usage_error(const char *cmd, const char *fmt, ...)
{
	char prefix[64];
	va_list ap;

	snprintf(prefix, sizeof prefix, "%s: ", cmd);
	va_start(ap, fmt);
	say(prefix, fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try 'jobq %s --help'.\n", cmd);
	return EX_USAGE;
}

/* Handles -c and -h and a bad option; returns -1 when opt was not one of
 * them, else the exit status to leave with (0 after --help), or -2 when
 * the command should go on. */
int
cli_common_opt(int opt, const char *cmd, void (*usage)(void))
{
	switch (opt) {
	case 'c':
		if (*optarg == '\0')
			return cli_usage_error(cmd, "-c: an empty file name");
		cli_config_path = optarg;
		return -2;
	case 'h':
		usage();
		return 0;
	case '?':
		fprintf(stderr, "Try 'jobq %s --help'.\n", cmd);
		return EX_USAGE;
	default:
		return -1;
	}
}

/* Writes text, lines of "FILE:LINE: message", on stderr with each line
 * escaped as say() escapes: a message quotes keys and values from the
 * file, which must not drive the operator's terminal. */
static void
put_lines(const char *text)
{
	const char *p = text, *nl;
	struct buf line;
	char *one;

	buf_init(&line);
	for (; *p != '\0'; p = *nl != '\0' ? nl + 1 : nl) {
		nl = p + strcspn(p, "\n");
		one = xstrndup(p, (size_t)(nl - p));
		buf_reset(&line);
		log_escape(&line, one);
		buf_addc(&line, '\n');
		fputs(line.data, stderr);
		free(one);
	}
	buf_free(&line);
}

/* Loads the configuration; prints every problem and returns EX_CONFIG
 * on failure.  The scheduler's test hook in the environment is held to
 * the same (schedules_clock_check): set to no time, every command that
 * loads the configuration refuses to start. */
int
cli_conf(int flags, struct conf **out)
{
	const char *path = cli_config_path ? cli_config_path : conf_default_path();
	struct buf errors, warnings;
	char err[ERRSZ];

	*out = NULL;
	if (schedules_clock_check(err) != 0) {
		cli_error("%s", err);
		return EX_CONFIG;
	}
	buf_init(&errors);
	buf_init(&warnings);
	*out = conf_load(path, flags, &errors, &warnings);
	if (warnings.len > 0)
		put_lines(warnings.data);
	if (*out == NULL && errors.len > 0)
		put_lines(errors.data);
	buf_free(&errors);
	buf_free(&warnings);
	if (*out == NULL)
		return EX_CONFIG;
	log_set_format((*out)->worker.log_format);
	/* --quiet or -v on the command line beat log_level = in the file */
	log_set_level(cli_log_level >= 0 ? (enum log_level)cli_log_level : (*out)->worker.log_level);
	return 0;
}

/* Reports a failed connection (err from db_connect) with what to do
 * about it, and returns the exit status: refused credentials or rights
 * are a configuration problem (EX_CONFIG) that retrying cannot fix; an
 * unknown database is one `jobq init` creates; anything else is the
 * server being unavailable (EX_UNAVAILABLE). */
int
cli_connect_error(const struct conf *c, const struct db *db, const char *err)
{
	switch (db_errno(db)) {
	case ER_ACCESS_DENIED_ERROR:
		cli_error("%s: check user and password in [database] of %s; 'jobq init --print-grants'"
		          " prints the statements that create the user",
		    err, c->path);
		return EX_CONFIG;
	case ER_DBACCESS_DENIED_ERROR:
		cli_error("%s: the user has no rights on database '%s'; 'jobq init --print-grants'"
		          " prints the GRANT statements",
		    err, c->db.database);
		return EX_CONFIG;
	case ER_BAD_DB_ERROR:
		cli_error("%s: run 'jobq init' to create it (or check database = in [database] of %s)", err,
		    c->path);
		return EX_UNAVAILABLE;
	default:
		cli_error("%s", err);
		return EX_UNAVAILABLE;
	}
}

/* Connects; prints the reason and returns its exit status on failure
 * (see cli_connect_error). */
int
cli_db(const struct conf *c, struct db **out)
{
	char err[ERRSZ];
	int rc;

	*out = db_new(&c->db);
	if (db_connect(*out, 1, err) != DB_OK) {
		rc = cli_connect_error(c, *out, err);
		db_free(*out);
		*out = NULL;
		return rc;
	}
	return 0;
}

/* Connects and makes sure the schema is installed and current. */
int
cli_connect(const struct conf *c, struct db **db)
{
	char err[ERRSZ];
	unsigned version;
	int rc;

	if ((rc = cli_db(c, db)) != 0)
		return rc;
	if (schema_version(*db, &version, err) != DB_OK) {
		cli_error("%s", err);
		rc = EX_UNAVAILABLE;
	} else if (version < schema_latest()) {
		cli_error("database '%s' has %s (version %u, this jobq needs %u): run 'jobq init'",
		    c->db.database, version ? "an old jobq schema" : "no jobq schema", version,
		    schema_latest());
		rc = EX_UNAVAILABLE;
	} else if (version > schema_latest()) {
		cli_error(
		    "database '%s' has schema version %u, newer than this jobq knows (%u): upgrade jobq",
		    c->db.database, version, schema_latest());
		rc = EX_UNAVAILABLE;
	}
	if (rc != 0) {
		db_free(*db);
		*db = NULL;
	}
	return rc;
}

/* For the operator's commands: a statement they give up on (read
 * timeout) is also stopped on the server, so that nothing of theirs keeps
 * running or waiting for locks after they have reported it. */
int
cli_open_cancelling(struct conf **c, struct db **db)
{
	int rc = cli_open(0, c, db);

	if (rc == 0)
		db_cancel_abandoned(*db, 1);
	return rc;
}

/* cli_connect, cancelling as cli_open_cancelling does: for a command
 * that checks its input against the configuration before connecting. */
int
cli_connect_cancelling(const struct conf *c, struct db **db)
{
	int rc = cli_connect(c, db);

	if (rc == 0)
		db_cancel_abandoned(*db, 1);
	return rc;
}

/* Loads the configuration and connects (see cli_connect). */
int
cli_open(int conf_flags, struct conf **c, struct db **db)
{
	int rc;

	*db = NULL;
	if ((rc = cli_conf(conf_flags, c)) != 0)
		return rc;
	if ((rc = cli_connect(*c, db)) != 0) {
		conf_free(*c);
		*c = NULL;
	}
	return rc;
}

/* The configured time zone as the database's CONVERT_TZ wants it: UTC
 * as an offset (named zones need the server's time zone tables). */
const char *
cli_tz(const struct conf *c)
{
	const char *tz = c->worker.timezone;

	if (strcasecmp(tz, "UTC") == 0 || strcmp(tz, "Z") == 0 || strcasecmp(tz, "GMT") == 0)
		return "+00:00";
	return tz;
}

/* The formatter of every time a command prints (timefmt.c): in the
 * configured zone, relative to the database's clock.  NULL (and the
 * error printed) when the clock cannot be read. */
struct timefmt *
cli_timefmt(const struct conf *c, struct db *db, const char *cmd)
{
	struct timefmt *f = NULL;
	struct db_res *r;
	char **row, err[ERRSZ];
	int rc;

	r = db_query(db, &rc, err, "SELECT FLOOR(UNIX_TIMESTAMP(UTC_TIMESTAMP(3)) * 1000)");
	if (r != NULL && (row = db_res_next(r)) != NULL &&
	    (f = timefmt_new(c->worker.timezone, db_col_i64(row[0], 0), err)) == NULL)
		cli_error("%s: [worker] timezone: %s", cmd, err);
	else if (r == NULL || f == NULL)
		cli_error("%s: reading the database's clock: %s", cmd, r == NULL ? err : "no row");
	db_res_free(r);
	return f;
}

/* A job id: a positive decimal number. */
int
cli_parse_id(const char *s, uint64_t *id)
{
	char *end;
	unsigned long long v;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v == 0)
		return -1;
	*id = v;
	return 0;
}

int
cli_isatty(void)
{
	return isatty(STDOUT_FILENO);
}

/* Opens the connection again after a statement lost it (a read timeout
 * closes it), so that a command can go on with its other parts. */
int
cli_reconnect(struct db *db, char *err)
{
	if (db_connected(db))
		return DB_OK;
	return db_connect(db, 1, err);
}

/* For reports made of parts (status, workers): rc is how reading one
 * part went.  A part that failed is named on stderr as missing, and the
 * connection is opened again when the failure (a read timeout) closed
 * it, so that the other parts can still be read and printed.  Returns 1
 * when the part was read. */
int
cli_part(struct db *db, int rc, const char *cmd, const char *what, const char *err)
{
	char rerr[ERRSZ];

	if (rc == DB_OK)
		return 1;
	cli_error("%s: %s missing: %s", cmd, what, err);
	if (cli_reconnect(db, rerr) != DB_OK)
		cli_error("%s: %s", cmd, rerr);
	return 0;
}

/* A person is there to answer: stdin and stderr are both terminals. */
int
cli_can_ask(void)
{
	return isatty(STDIN_FILENO) && isatty(STDERR_FILENO);
}

/* Called before a bulk change touches anything (what: "deletes rows",
 * "cancels jobs"): it may go ahead when asked for --dry-run or --yes, or
 * when a person can confirm it on the terminal.  Otherwise (a script,
 * cron) it refuses with EX_USAGE: a command that changes many rows must
 * be told so in writing. */
int
cli_bulk_check(const char *cmd, const char *what, int yes, int dry_run)
{
	if (dry_run || yes || cli_can_ask())
		return 0;
	fprintf(stderr,
	    "jobq: %s: this %s and there is no terminal to confirm it on: pass --yes"
	    " (or --dry-run to only count them)\n",
	    cmd, what);
	return EX_USAGE;
}

/* Asks the question (which states the count) on the terminal; 1 when
 * the answer is y or yes.  Call only when cli_can_ask().  An end of
 * input (^D) is a no, and ends the prompt's line, so that the message
 * that follows starts a line of its own. */
int
cli_confirm(const char *fmt, ...)
{
	char line[64];
	va_list ap;

	fputs("jobq: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" [y/N] ", stderr);
	fflush(stderr);
	if (fgets(line, sizeof line, stdin) == NULL) {
		fputc('\n', stderr);
		return 0;
	}
	line[strcspn(line, "\r\n")] = '\0';
	return strcasecmp(line, "y") == 0 || strcasecmp(line, "yes") == 0;
}

/* Progress of a long operation on stderr, when stderr is a terminal:
 * one line, redrawn at most once a second, erased by cli_progress_end.
 * Scripts reading stderr get none of it. */
void
cli_progress_init(struct cli_progress *p)
{
	p->on = isatty(STDERR_FILENO);
	p->shown = 0;
	p->next_ms = mono_ms() + 1000;
}

void
cli_progress(struct cli_progress *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->on || mono_ms() < p->next_ms)
		return;
	p->next_ms = mono_ms() + 1000;
	fputs("\r", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\033[K", stderr); /* erase the rest of the older, longer line */
	fflush(stderr);
	p->shown = 1;
}

void
cli_progress_end(struct cli_progress *p)
{
	if (p->shown)
		fputs("\r\033[K", stderr);
	p->shown = 0;
}

/* s as it may be printed on a terminal: text written by handlers and
 * other programs must not drive the operator's terminal (clear it, set
 * its title, hide lines), so every control character but newline and tab
 * is shown as \xHH, and the C1 controls (U+0080..U+009F, which some
 * terminals obey) as \u00HH.  Unchanged when tty is 0 (a file or pipe
 * gets the stored bytes).  Returns a string to free. */
char *
cli_visible(const char *s, int tty)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	struct buf b;

	if (!tty)
		return xstrdup((const char *)p);
	buf_init(&b);
	buf_add(&b, "", 0); /* an empty s gives an empty string */
	buf_reserve(&b, strlen((const char *)p));
	for (; *p != '\0'; p++) {
		if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f)
			buf_printf(&b, "\\x%02x", *p);
		else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			buf_printf(&b, "\\u00%02x", *++p);
		else
			buf_addc(&b, (char)*p);
	}
	return buf_steal(&b);
}

/* Reads f to its end, at most max bytes (more: *len = max + 1, so the
 * caller can say it was too long); NUL-terminated, to free.  NULL with
 * errno set when f cannot be read (a folder, an I/O error): what was
 * read before must not pass for the whole input. */
char *
cli_read_all(FILE *f, size_t max, size_t *len)
{
	struct buf b;
	char chunk[65536];
	size_t n;
	int e;

	buf_init(&b);
	errno = 0;
	while (b.len <= max && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
		buf_add(&b, chunk, n);
	if (ferror(f)) {
		e = errno != 0 ? errno : EIO;
		buf_free(&b);
		errno = e;
		return NULL;
	}
	if (b.len > max + 1)
		b.len = max + 1;
	*len = b.len;
	buf_addc(&b, '\0');
	return buf_steal(&b);
}

/* The job ids in f (an operator's '-' for stdin), separated by blanks or
 * newlines, as a NULL-terminated list to free with strv_free; *n of them.
 * A word too long for an id is kept as its start and "...", which no id
 * parses as and which a message can quote as it was given.  NULL with
 * errno set when f cannot be read: the ids before the error are not all
 * of them. */
char **
cli_read_ids(FILE *f, int *n)
{
	size_t cap = 64;
	char **v = xcalloc(cap + 1, sizeof *v);
	char tok[32];
	int c, cut = 0;
	size_t len = 0;

	*n = 0;
	errno = 0;
	do {
		c = getc(f);
		if (c == EOF || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			if (len == 0)
				continue;
			tok[len] = '\0';
			if (cut)
				memcpy(tok + len - 3, "...", 3);
			len = 0;
			cut = 0;
			if ((size_t)*n == cap) {
				v = xrealloc(v, (cap * 2 + 1) * sizeof *v);
				cap *= 2;
			}
			v[(*n)++] = xstrdup(tok);
			v[*n] = NULL;
		} else if (len < sizeof tok - 1)
			tok[len++] = (char)c;
		else
			cut = 1;
	} while (c != EOF);
	if (ferror(f)) {
		c = errno != 0 ? errno : EIO;
		strv_free(v);
		errno = c;
		return NULL;
	}
	return v;
}

/* Who acts from the command line, for the audit table: "cli:" and the
 * account that ran jobq. */
void
cli_who(char *out, size_t len)
{
	struct passwd *pw = getpwuid(getuid());

	snprintf(out, len, "cli:%s", pw != NULL ? pw->pw_name : "?");
}

/* Prints doc as one line of JSON on stdout, and frees it. */
void
cli_print_json(struct cJSON *doc)
{
	char *s = cJSON_PrintUnformatted(doc);

	printf("%s\n", s != NULL ? s : "null");
	cJSON_free(s);
	cJSON_Delete(doc);
}

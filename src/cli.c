/* cli.c -- the parts every command shares.
 *
 * Commands print their own results on stdout and problems on stderr as
 * one line "jobq: what went wrong", and exit with a sysexits(3) status:
 * 64 usage, 65 bad input data, 69 database unavailable, 78 configuration,
 * 1 anything else. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "schema.h"

const char *cli_config_path;

void
cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("jobq: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Reports a usage problem and returns EX_USAGE. */
int
cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "jobq %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'jobq %s --help'.\n", cmd);
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

/* Loads the configuration; prints every problem and returns EX_CONFIG
 * on failure. */
int
cli_conf(int flags, struct conf **out)
{
	const char *path = cli_config_path ? cli_config_path : conf_default_path();
	struct buf errors, warnings;

	buf_init(&errors);
	buf_init(&warnings);
	*out = conf_load(path, flags, &errors, &warnings);
	if (warnings.len > 0)
		fputs(warnings.data, stderr);
	if (*out == NULL)
		fputs(errors.data, stderr);
	buf_free(&errors);
	buf_free(&warnings);
	if (*out == NULL)
		return EX_CONFIG;
	log_set_format((*out)->worker.log_format);
	return 0;
}

/* Connects; prints the reason and returns EX_UNAVAILABLE on failure. */
int
cli_db(const struct conf *c, struct db **out)
{
	char err[ERRSZ];

	*out = db_new(&c->db);
	if (db_connect(*out, 1, err) != DB_OK) {
		cli_error("%s", err);
		db_free(*out);
		*out = NULL;
		return EX_UNAVAILABLE;
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

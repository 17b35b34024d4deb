/* conf_db.c -- the [database] section. */
#include "config.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "conf_int.h"
#include "cron.h"
#include "duration.h"
#include "words.h"

static int
db_set(struct loader *ld, struct db_conf *db, const struct entry *e)
{
	const char *k = e->key;
	int64_t v;
	int b;

	if (strcmp(k, "host") == 0)
		ld_str(&db->host, e->value);
	else if (strcmp(k, "port") == 0) {
		if (ld_uint(ld, e, 1, 65535, &v) < 0)
			return -1;
		db->port = (unsigned)v;
	} else if (strcmp(k, "socket") == 0)
		ld_str(&db->socket, e->value);
	else if (strcmp(k, "user") == 0)
		ld_str(&db->user, e->value);
	else if (strcmp(k, "password") == 0) {
		ld_str(&db->password, e->value);
		ld->has_password = 1;
	} else if (strcmp(k, "password_file") == 0)
		return -2; /* read after the section: see read_password_file */
	else if (strcmp(k, "database") == 0)
		ld_str(&db->database, e->value);
	else if (strcmp(k, "tls") == 0) {
		if (strcmp(e->value, "verify") == 0)
			db->tls = TLS_VERIFY;
		else if (ld_bool(ld, e, &b) < 0)
			return -1;
		else
			db->tls = b ? TLS_ON : TLS_OFF;
	} else if (strcmp(k, "tls_ca") == 0)
		ld_str(&db->tls_ca, e->value);
	else if (strcmp(k, "tls_cert") == 0)
		ld_str(&db->tls_cert, e->value);
	else if (strcmp(k, "tls_key") == 0)
		ld_str(&db->tls_key, e->value);
	else if (strcmp(k, "connect_timeout") == 0)
		return ld_duration(ld, e, &db->connect_timeout_ms, 1000);
	else if (strcmp(k, "read_timeout") == 0)
		return ld_duration(ld, e, &db->read_timeout_ms, 1000);
	else
		return 1;
	return 0;
}

/* Opens password_file for reading.  Not blocking on open, so that a
 * FIFO in its place is refused rather than waited for. */
static FILE *
open_password_file(struct loader *ld, const struct entry *e, const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	FILE *fp;

	if (fd < 0) {
		ld_error(ld, e->line, "password_file: open %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		ld_error(ld, e->line, "password_file: fstat %s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		ld_error(ld, e->line, "password_file: %s is %s, not a file holding the password", path,
		    S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
		close(fd);
		return NULL;
	}
	if (st.st_mode & S_IROTH) {
		ld->has_password = 2;
		free(ld->password_file);
		ld->password_file = xstrdup(path);
	}
	if ((fp = fdopen(fd, "r")) == NULL)
		fatal("fdopen %s: %s", path, strerror(errno));
	return fp;
}

/* Reads the first line of password_file; relative paths are relative to
 * the configuration file.  An empty first line is refused: a password
 * that silently became empty would fail later as "access denied" far
 * from its cause (and a server account without a password needs no
 * password_file). */
static void
read_password_file(struct loader *ld, struct db_conf *db, const struct entry *e)
{
	char *path = e->value[0] == '/' ? xstrdup(e->value) : xasprintf("%s/%s", ld->config_dir, e->value);
	FILE *fp = open_password_file(ld, e, path);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (fp == NULL) {
		free(path);
		return;
	}
	n = getline(&line, &cap, fp);
	if (n < 0 && ferror(fp))
		ld_error(ld, e->line, "password_file: read %s: %s", path, strerror(errno));
	else {
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (n <= 0)
			ld_error(ld, e->line, "password_file: %s %s (the password is its first line)", path,
			    n < 0 ? "is empty" : "has an empty first line");
	}
	fclose(fp);
	if (n > 0) {
		free(db->password);
		db->password = line;
	} else
		free(line);
	free(path);
}

void
conf_db_load(struct loader *ld, struct conf *c, const struct section *s)
{
	size_t i;

	for (i = 0; i < s->nentries; i++) {
		int rc = db_set(ld, &c->db, &s->entries[i]);

		if (rc == 1)
			ld_unknown_key(ld, s, &s->entries[i]);
		else if (rc == -2)
			read_password_file(ld, &c->db, &s->entries[i]);
	}
}

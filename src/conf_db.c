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
#include <strings.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "conf.h"
#include "conf_db.h"
#include "conf_ini.h"
#include "cron.h"
#include "duration.h"
#include "utf8.h"
#include "words.h"

#define DB_HOSTS_MAX 16

/* What the server and the system take, checked at the key's line rather
 * than found out at connect time: user names of up to 128 characters
 * (MariaDB 10.6 and later: mysql.global_priv.User is CHAR(128); MySQL
 * takes 32, a limit left to its server), database names of up to 64
 * (NAME_CHAR_LEN), and a socket path that fits sun_path (108 bytes with
 * its NUL). */
#define DB_USER_MAX 128
#define DB_NAME_MAX 64
#define DB_SOCKET_MAX (sizeof(((struct sockaddr_un *)0)->sun_path) - 1)

/* Host i (0-based) of the list in c->host ("db1, db2:3307, [::1]:3308",
 * "::1"):
 * its name into host (size n) and its port (the item's own, else
 * c->port).  Returns 1 when there is such an item, 0 past the end, -1
 * when item i is malformed (an empty name, a port that is not 1..65535,
 * an item too long), with why set.  The one parser of the list: the
 * loader checks it with this and db_connect walks it with this. */
int
conf_db_host(const struct db_conf *c, size_t i, char *host, size_t n, unsigned *port, const char **why)
{
	const char *p = c->host, *end, *colon, *name;
	size_t len;

	for (; p != NULL && i > 0; i--)
		if ((p = strchr(p, ',')) != NULL)
			p++;
	if (p == NULL)
		return 0;
	while (isspace((unsigned char)*p))
		p++;
	end = strchr(p, ',');
	if (end == NULL)
		end = p + strlen(p);
	while (end > p && isspace((unsigned char)end[-1]))
		end--;
	name = p;
	if (*p == '[') { /* an IPv6 address, with or without a port */
		name = p + 1;
		colon = memchr(p, ']', (size_t)(end - p));
		len = colon != NULL ? (size_t)(colon - name) : 0;
		colon = colon != NULL && colon + 1 < end && colon[1] == ':' ? colon + 1 : NULL;
	} else {
		colon = memchr(p, ':', (size_t)(end - p));
		/* Two colons: a bare IPv6 address, which takes no port. */
		if (colon != NULL && memchr(colon + 1, ':', (size_t)(end - colon - 1)) != NULL)
			colon = NULL;
		len = (size_t)((colon != NULL ? colon : end) - p);
	}
	*port = c->port;
	if (colon != NULL) {
		char *stop;
		unsigned long v = strtoul(colon + 1, &stop, 10);

		if (stop != end || colon + 1 == end || v < 1 || v > 65535) {
			*why = "its port is not a number from 1 to 65535";
			return -1;
		}
		*port = (unsigned)v;
	}
	if (len == 0 || len >= n) {
		*why = len == 0 ? "it names no host" : "its name is too long (a host name is at most 255 bytes)";
		return -1;
	}
	memcpy(host, name, len);
	host[len] = '\0';
	return 1;
}

/* Refuses a host list that db_connect could not walk. */
static void
check_hosts(struct loader *ld, const struct db_conf *db, const struct entry *e)
{
	char host[256];
	const char *why = NULL;
	unsigned port;
	size_t i;
	int rc;

	for (i = 0; (rc = conf_db_host(db, i, host, sizeof host, &port, &why)) == 1; i++)
		;
	if (rc < 0)
		ld_error(ld, e->line, "host: item %zu of '%s': %s", i + 1, e->value, why);
	else if (i > DB_HOSTS_MAX)
		ld_error(ld, e->line, "host: %zu hosts; at most %d", i, DB_HOSTS_MAX);
}

/* An empty socket, user or database would not fall back to the default:
 * the client library would take it as given and fail at connect time, far
 * from the line that caused it. */
static int
not_empty(struct loader *ld, const struct entry *e)
{
	if (e->value[0] != '\0')
		return 0;
	ld_error(ld, e->line, "%s: empty (leave the key out for the default)", e->key);
	return -1;
}

static int
db_set(struct loader *ld, struct db_conf *db, const struct entry *e)
{
	const char *k = e->key;
	int64_t v;
	int b;

	if (strcmp(k, "host") == 0) {
		ld_str(&db->host, e->value);
		check_hosts(ld, db, e);
	} else if (strcmp(k, "port") == 0) {
		if (ld_uint(ld, e, 1, 65535, &v) < 0)
			return db->port = 0, -1; /* 0: refused, check_port says no more of it */
		db->port = (unsigned)v;
	} else if (strcmp(k, "socket") == 0)
		return not_empty(ld, e) < 0 || ld_length(ld, e, DB_SOCKET_MAX, 0, "a unix socket path (sun_path)") < 0
		           ? -1
		           : (ld_str(&db->socket, e->value), 0);
	else if (strcmp(k, "user") == 0)
		return not_empty(ld, e) < 0 || ld_length(ld, e, DB_USER_MAX, 1, "a MariaDB user name") < 0
		           ? -1
		           : (ld_str(&db->user, e->value), 0);
	else if (strcmp(k, "password") == 0) {
		ld_str(&db->password, e->value);
		ld->has_password = 1;
	} else if (strcmp(k, "password_file") == 0)
		return ld_length(ld, e, PATH_MAX - 1, 0, "a path") < 0 ? -1 : -2; /* see read_password_file */
	else if (strcmp(k, "database") == 0)
		return not_empty(ld, e) < 0 || ld_length(ld, e, DB_NAME_MAX, 1, "a database name") < 0
		           ? -1
		           : (ld_str(&db->database, e->value), 0);
	else if (strcmp(k, "tls") == 0) {
		if (strcmp(e->value, "verify") == 0)
			db->tls = TLS_VERIFY;
		else if (bool_word(e->value, &b) == 0)
			db->tls = b ? TLS_ON : TLS_OFF;
		else {
			ld_error(ld, e->line, "tls: expected no, yes or verify, not '%s'", e->value);
			return -1;
		}
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

/* Refuses (reports, -1) a password read from password_file (n bytes)
 * that jobq.ini could not hold as password = ...: a NUL byte (the rest
 * would be silently dropped), a control character other than tab, or
 * bytes that are not UTF-8.  One rule for both places, so a password
 * moved from the file into password_file, or back, means the same. */
static int
password_text(struct loader *ld, const struct entry *e, const char *path, const char *pw, size_t n)
{
	size_t off = utf8_valid_prefix(pw, n), i;
	const char *what = off < n && pw[off] == '\0' ? "NUL byte" : "not valid UTF-8";

	for (i = 0; i < off; i++)
		if (((unsigned char)pw[i] < 0x20 && pw[i] != '\t') || pw[i] == 0x7f) {
			what = "control character";
			off = i;
			break;
		}
	if (off == n)
		return 0;
	ld_error(ld, e->line,
	    "password_file: %s line 1: %s at byte %zu (a password is UTF-8 text without control characters, "
	    "as in jobq.ini)",
	    path, what, off);
	return -1;
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
		else if (password_text(ld, e, path, line, (size_t)n) < 0)
			n = 0;
	}
	fclose(fp);
	if (n > 0) {
		free(db->password);
		db->password = line;
	} else
		free(line);
	free(path);
}

/* The [database] defaults: what an empty section means. */
void
conf_db_defaults(struct conf *c)
{
	c->db.port = 3306;
	c->db.database = xstrdup("jobq");
	c->db.connect_timeout_ms = 10000;
	c->db.read_timeout_ms = 60000;
}

/* The entry of key in s, or NULL. */
static const struct entry *
db_entry(const struct section *s, const char *key)
{
	size_t i;

	for (i = 0; i < s->nentries; i++)
		if (strcmp(s->entries[i].key, key) == 0)
			return &s->entries[i];
	return NULL;
}

/* Refuses a port that no connection would use.  The client library
 * takes a socket, no host, or the host "localhost" as the unix socket
 * and ignores the port, unless tls asks for TCP (db_connect.c): a port
 * meant for another server there would silently reach the default one,
 * and the error of a failed connect would name a port never tried. */
static void
check_port(struct loader *ld, const struct db_conf *db, const struct section *s)
{
	const struct entry *p = db_entry(s, "port"), *h = db_entry(s, "host");
	struct db_conf own = *db;
	char host[256];
	const char *why;
	unsigned port;
	size_t i;

	if (p != NULL && db->port == 0) /* its one error is given */
		return;
	if (p != NULL && db->socket != NULL)
		ld_error(ld, p->line, "port: not used: socket is set, and wins over host and port");
	else if (p != NULL && db->host == NULL && db->tls == TLS_OFF)
		ld_error(ld, p->line,
		    "port: not used without host (the default unix socket is): set host = 127.0.0.1");
	if (h == NULL || db->socket != NULL || db->tls != TLS_OFF)
		return;
	own.port = p != NULL ? db->port : 0; /* 0: the item names no port */
	for (i = 0; conf_db_host(&own, i, host, sizeof host, &port, &why) == 1; i++)
		if (port != 0 && strcasecmp(host, "localhost") == 0)
			ld_error(ld, h->line,
			    "host: localhost is the default unix socket to the client library, which "
			    "ignores port %u: write 127.0.0.1 (or [::1]) for TCP",
			    port);
}

/* A TLS file the client library reads at each connect: readable now,
 * so that a typo is reported at its line by `jobq check`, not as a
 * failed handshake. */
static void
check_tls_file(struct loader *ld, const struct entry *e)
{
	if (ld_length(ld, e, PATH_MAX - 1, 0, "a path") < 0)
		return;
	if (access(e->value, R_OK) < 0)
		ld_error(ld, e->line, "%s: cannot read %s: %s", e->key, e->value, strerror(errno));
}

/* Refuses keys that would be read and then do nothing: a password
 * beside a password_file (the file's would win), TLS over a unix socket,
 * TLS files for a connection that is not encrypted, and an unused port
 * (check_port). */
static void
check_unused(struct loader *ld, const struct db_conf *db, const struct section *s)
{
	static const char *const tls_keys[] = { "tls_ca", "tls_cert", "tls_key" };
	const struct entry *pw = db_entry(s, "password"), *pf = db_entry(s, "password_file"), *e;
	size_t i;

	if (pw != NULL && pf != NULL)
		ld_error(ld, pw->line > pf->line ? pw->line : pf->line,
		    "password and password_file exclude each other (line %d and line %d): give one",
		    pw->line, pf->line);
	/* The client library takes a unix socket as secure, and would go
	 * unencrypted with tls = yes (verify fails): refuse it. */
	if (db->tls != TLS_OFF && (e = db_entry(s, "socket")) != NULL)
		ld_error(ld, e->line,
		    "socket: a unix socket is not encrypted; tls applies to a connection to host (leave "
		    "socket out, or set tls = no)");
	for (i = 0; db->tls == TLS_OFF && i < ARRAY_LEN(tls_keys); i++)
		if ((e = db_entry(s, tls_keys[i])) != NULL)
			ld_error(ld, e->line, "%s: the connection is not encrypted (tls = no): set tls = yes or verify",
			    e->key);
	/* tls = yes checks no certificate: a CA there would be read by no
	 * one, and would read as if the server were checked */
	if (db->tls == TLS_ON && (e = db_entry(s, "tls_ca")) != NULL)
		ld_error(ld, e->line, "tls_ca: tls = yes checks no certificate: set tls = verify to check the "
		                      "server against it");
	for (i = 0; db->tls != TLS_OFF && i < ARRAY_LEN(tls_keys); i++)
		if ((e = db_entry(s, tls_keys[i])) != NULL && !(db->tls == TLS_ON && i == 0))
			check_tls_file(ld, e);
	check_port(ld, db, s);
}

/* [database]: every key into c->db. */
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
	check_unused(ld, &c->db, s);
}

/* Warns when the password can be read by other users: in the
 * password_file, or in the configuration itself. */
void
conf_db_check_password(struct loader *ld)
{
	struct stat st;

	if (ld->has_password == 2)
		buf_printf(ld->warnings,
		    "%s: warning: password_file %s is readable by other users (chmod o-r %s)\n", ld->path,
		    ld->password_file, ld->password_file);
	else if (ld->has_password && fstat(fileno(ld->fp), &st) == 0 && (st.st_mode & S_IROTH))
		buf_printf(ld->warnings,
		    "%s: warning: the database password is readable by other users (chmod o-r %s)\n",
		    ld->path, ld->path);
}

/* Frees what [database] and its defaults allocated. */
void
conf_db_free(struct conf *c)
{
	free(c->db.host);
	free(c->db.socket);
	free(c->db.user);
	free(c->db.password);
	free(c->db.database);
	free(c->db.tls_ca);
	free(c->db.tls_cert);
	free(c->db.tls_key);
}

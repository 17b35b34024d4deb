/* conf_serve.c -- the [serve] section and the [user NAME] sections of the
 * dashboard (`jobq serve`). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "conf_int.h"
#include "duration.h"

void
conf_serve_defaults(struct conf *c)
{
	struct serve_conf *s = &c->serve;

	s->listen = xstrdup("127.0.0.1:8377");
	s->session_ttl_ms = 8 * 3600 * 1000LL;
	s->remember_ttl_ms = 30 * 86400 * 1000LL;
	s->login_rate_max = 5;
	s->login_rate_window_ms = 15 * 60 * 1000LL;
}

/* "5/15m": at most 5 failed logins per user and per address in 15
 * minutes. */
static int
login_rate(struct loader *ld, struct serve_conf *s, const struct entry *e)
{
	const char *slash = strchr(e->value, '/');
	char *n = slash ? xstrndup(e->value, (size_t)(slash - e->value)) : NULL, err[ERRSZ];
	int64_t max = 0, window = 0;
	int rc = -1;

	if (n == NULL || str_to_int64(n, 1, 1000, &max) < 0)
		ld_error(ld, e->line,
		    "login_rate: expected COUNT/DURATION like 5/15m (count 1-1000), not '%s'", e->value);
	else if (duration_parse(slash + 1, &window, err) < 0)
		ld_error(ld, e->line, "login_rate: %s", err);
	else if (window < 1000 || window > 86400 * 1000LL)
		ld_error(ld, e->line, "login_rate: the window '%s' is out of range (1s to 1d)", slash + 1);
	else {
		s->login_rate_max = (unsigned)max;
		s->login_rate_window_ms = window;
		rc = 0;
	}
	free(n);
	return rc;
}

/* A file the server reads at start: it must be readable now, so a typo
 * is reported by `jobq check`, not at the first HTTPS connection. */
static void
readable_file(struct loader *ld, const struct entry *e, char **dst)
{
	if (access(e->value, R_OK) < 0)
		ld_error(ld, e->line, "%s: cannot read '%s'", e->key, e->value);
	ld_str(dst, e->value);
}

static int
ttl(struct loader *ld, const struct entry *e, int64_t *out)
{
	if (ld_duration(ld, e, out, 60 * 1000) < 0)
		return -1;
	if (*out > 366 * 86400 * 1000LL) {
		ld_error(ld, e->line, "%s: '%s' is too long (at most 366d)", e->key, e->value);
		return -1;
	}
	return 0;
}

void
conf_serve_load(struct loader *ld, struct conf *c, const struct section *sec)
{
	struct serve_conf *s = &c->serve;
	int cert_line = 0, key_line = 0;
	size_t i;

	for (i = 0; i < sec->nentries; i++) {
		const struct entry *e = &sec->entries[i];

		if (strcmp(e->key, "listen") == 0)
			ld_str(&s->listen, e->value);
		else if (strcmp(e->key, "tls_cert") == 0)
			readable_file(ld, e, &s->tls_cert), cert_line = e->line;
		else if (strcmp(e->key, "tls_key") == 0)
			readable_file(ld, e, &s->tls_key), key_line = e->line;
		else if (strcmp(e->key, "session_ttl") == 0)
			ttl(ld, e, &s->session_ttl_ms);
		else if (strcmp(e->key, "remember_ttl") == 0)
			ttl(ld, e, &s->remember_ttl_ms);
		else if (strcmp(e->key, "login_rate") == 0)
			login_rate(ld, s, e);
		else if (strcmp(e->key, "metrics_token") == 0) {
			if (strlen(e->value) < 16)
				ld_error(ld, e->line, "metrics_token: too short (at least 16 characters)");
			ld_str(&s->metrics_token, e->value);
		} else
			ld_unknown_key(ld, sec, e);
	}
	if ((s->tls_cert == NULL) != (s->tls_key == NULL))
		ld_error(ld, cert_line ? cert_line : key_line,
		    "[serve] needs both tls_cert and tls_key, or neither");
}

void
conf_user_load(struct loader *ld, struct conf *c, const struct section *sec, const char *name)
{
	struct serve_conf *s = &c->serve;
	struct serve_user *u = xcalloc(1, sizeof *u);
	size_t i;

	u->name = xstrdup(name);
	s->users = xrealloc(s->users, (s->nusers + 1) * sizeof *s->users);
	s->users[s->nusers++] = u;
	for (i = 0; i < sec->nentries; i++) {
		const struct entry *e = &sec->entries[i];

		if (strcmp(e->key, "password_hash") == 0) {
			if (strncmp(e->value, "$argon2id$", 10) != 0)
				ld_error(ld, e->line,
				    "password_hash: not an argon2id hash (make one with 'jobq passwd')");
			ld_str(&u->password_hash, e->value);
		} else if (strcmp(e->key, "role") == 0) {
			if (strcmp(e->value, "admin") == 0)
				u->admin = 1;
			else if (strcmp(e->value, "viewer") == 0)
				u->admin = 0;
			else
				ld_error(ld, e->line, "role: expected admin or viewer, not '%s'", e->value);
		} else
			ld_unknown_key(ld, sec, e);
	}
	if (u->password_hash == NULL)
		ld_error(ld, sec->line, "[user %s] has no password_hash (make one with 'jobq passwd')", name);
}

void
conf_serve_free(struct conf *c)
{
	struct serve_conf *s = &c->serve;
	size_t i;

	free(s->listen);
	free(s->tls_cert);
	free(s->tls_key);
	free(s->metrics_token);
	for (i = 0; i < s->nusers; i++) {
		free(s->users[i]->name);
		free(s->users[i]->password_hash);
		free(s->users[i]);
	}
	free(s->users);
}

/* The dashboard user called name, or NULL. */
const struct serve_user *
conf_serve_user(const struct conf *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->serve.nusers; i++)
		if (strcmp(c->serve.users[i]->name, name) == 0)
			return c->serve.users[i];
	return NULL;
}

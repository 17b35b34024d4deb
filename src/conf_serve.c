/* conf_serve.c -- the [serve] section and the [user NAME] sections of the
 * dashboard (`jobq serve`). */
#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sodium.h>

#include "conf.h"
#include "conf_ini.h"
#include "conf_serve.h"
#include "duration.h"

/* The longest values [serve] takes, refused at their line rather than
 * found out by a browser or a scraper that can never send or use them:
 *   - a host name (allowed_hosts, public_url's host): 253 characters, a
 *     DNS name's longest in text (RFC 1035: 255 octets on the wire),
 *     not counting an IPv6 address's [] or a trailing dot;
 *   - public_url: 2048 bytes, the address length every browser, proxy
 *     and link in a page or a header carries whole;
 *   - metrics_token: 1024 bytes, far past any random secret (64 hex
 *     digits are 32 bytes of randomness), and with "Authorization:
 *     Bearer " well inside the 32 KiB that libmicrohttpd keeps for a
 *     request's head, so a scraper can always send it. */
#define SERVE_HOST_MAX 253
#define SERVE_URL_MAX 2048
#define SERVE_TOKEN_MAX 1024

/* The API limit per session unless [serve] says otherwise: far above
 * what the pages' own refresh (a few calls every 2 s) and a person's
 * clicks need, low enough that a runaway script or tab is slowed down
 * before it loads the database. */
#define SERVE_API_RATE 50
#define SERVE_API_BURST 500

void
conf_serve_defaults(struct conf *c)
{
	struct serve_conf *s = &c->serve;

	s->listen = xstrdup("127.0.0.1:8377");
	s->session_ttl_ms = 8 * 3600 * 1000LL;
	s->remember_ttl_ms = 30 * 86400 * 1000LL;
	s->login_rate_max = 5;
	s->login_rate_window_ms = 15 * 60 * 1000LL;
	s->overview_cache_ms = 2000;
	s->api_rate_count = SERVE_API_RATE;
	s->api_rate_window_ms = 1000;
	s->api_burst = SERVE_API_BURST;
}

/* api_rate = 50/s (COUNT/s, /m, /h or /DURATION), or 0 or off: no
 * limit. */
static void
api_rate(struct loader *ld, struct serve_conf *s, const struct entry *e)
{
	char err[ERRSZ];

	if (strcmp(e->value, "off") == 0 || strcmp(e->value, "0") == 0)
		s->api_rate_count = 0;
	else if (conf_rate_parse(e->value, &s->api_rate_count, &s->api_rate_window_ms, err) < 0)
		ld_error(ld, e->line, "api_rate: %s (or 0 or off for no limit)", err);
}

/* api_burst = 500: calls a session may make at once, 1 to 1000000. */
static void
api_burst(struct loader *ld, struct serve_conf *s, const struct entry *e)
{
	int64_t n;

	if (str_to_int64(e->value, 1, 1000000, &n) < 0)
		ld_error(ld, e->line, "api_burst: expected a whole number from 1 to 1000000, not '%s'", e->value);
	else
		s->api_burst = (unsigned)n;
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

/* "127.0.0.1", "::1", "10.0.0.0/8", "fd00::/8": one address or network;
 * the host bits of a network must be zero (a typo like 10.1.2.3/8 would
 * otherwise trust far more than meant). */
static int
net_parse(const char *s, struct serve_net *n)
{
	const char *slash = strchr(s, '/');
	char host[INET6_ADDRSTRLEN + 1];
	size_t len = slash ? (size_t)(slash - s) : strlen(s), i;
	int64_t bits;

	if (len == 0 || len >= sizeof host)
		return -1;
	memcpy(host, s, len);
	host[len] = '\0';
	memset(n, 0, sizeof *n);
	if (inet_pton(AF_INET, host, n->addr) == 1)
		n->family = AF_INET, n->bits = 32;
	else if (inet_pton(AF_INET6, host, n->addr) == 1)
		n->family = AF_INET6, n->bits = 128;
	else
		return -1;
	if (slash != NULL) {
		if (str_to_int64(slash + 1, 0, n->bits, &bits) < 0)
			return -1;
		n->bits = (unsigned)bits;
	}
	for (i = n->bits; i < (n->family == AF_INET ? 32u : 128u); i++)
		if (n->addr[i / 8] & (0x80 >> (i % 8)))
			return -1;
	return 0;
}

/* ", and N more" when a list holds nbad bad items, for the one line
 * that names the first: the key is one mistake to fix, not a line per
 * item. */
static const char *
more_bad(int nbad, char *buf, size_t len)
{
	if (nbad <= 1)
		return "";
	snprintf(buf, len, ", and %d more", nbad - 1);
	return buf;
}

/* trusted_proxies = 127.0.0.1, ::1, 10.0.0.0/8 */
static void
trusted_proxies(struct loader *ld, struct serve_conf *s, const struct entry *e)
{
	char **v, more[48];
	int n, i, bad = -1, nbad = 0;

	free(s->trusted_proxies);
	s->trusted_proxies = NULL;
	s->ntrusted_proxies = 0;
	if ((n = split_list(e->value, &v)) <= 0) {
		ld_error(ld, e->line, "trusted_proxies: expected addresses or networks separated by commas");
		return;
	}
	s->trusted_proxies = xcalloc((size_t)n, sizeof *s->trusted_proxies);
	for (i = 0; i < n; i++)
		if (net_parse(v[i], &s->trusted_proxies[s->ntrusted_proxies]) < 0)
			bad = bad < 0 ? i : bad, nbad++;
		else
			s->ntrusted_proxies++;
	if (bad >= 0)
		ld_error(ld, e->line, "trusted_proxies: '%s' is not an IP address or network (like 10.0.0.0/8)%s",
		    v[bad], more_bad(nbad, more, sizeof more));
	strv_free(v);
}

/* listen, metrics_listen (of [serve] and of [worker]): ADDR:PORT
 * ([v6]:PORT; an empty ADDR is every address), checked here so that
 * `jobq check` finds a typo; the address itself is resolved when the
 * server starts.  With off_ok (only [worker] metrics_listen, whose unset
 * means none), "off" is taken and leaves *dst NULL, as unset; [serve]
 * has no such value (its metrics_listen unset serves /metrics on
 * listen), so there "off" is refused as any other non-address. */
void
conf_serve_listen_addr(struct loader *ld, const struct entry *e, char **dst, int off_ok)
{
	const char *colon = strrchr(e->value, ':');
	int64_t port;

	if (off_ok && strcmp(e->value, "off") == 0) {
		free(*dst);
		*dst = NULL;
		return;
	}
	if (colon == NULL || str_to_int64(colon + 1, 0, 65535, &port) < 0)
		ld_error(ld, e->line, "%s: expected ADDR:PORT (port 0-65535)%s, not '%s'", e->key,
		    off_ok ? " or off" : "", e->value);
	ld_str(dst, e->value);
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

/* The length of the host name in s (len bytes: HOST, HOST:PORT,
 * [v6]:PORT), without the [] of an IPv6 address, a port or a trailing
 * dot. */
static size_t
host_length(const char *s, size_t len)
{
	const char *end;

	if (len > 0 && s[0] == '[') {
		end = memchr(s, ']', len);
		return end != NULL ? (size_t)(end - s) - 1 : len - 1;
	}
	if ((end = memchr(s, ':', len)) != NULL)
		len = (size_t)(end - s);
	return len > 0 && s[len - 1] == '.' ? len - 1 : len;
}

/* Whether the host name in s (host_length) is longer than SERVE_HOST_MAX. */
static int
host_too_long(const char *s, size_t len)
{
	return host_length(s, len) > SERVE_HOST_MAX;
}

/* public_url = https://jobs.example.com/: what people type.  An https
 * address makes every cookie Secure and every response carry HSTS, even
 * behind a proxy that says nothing of the scheme. */
static void
public_url(struct loader *ld, struct serve_conf *s, const struct entry *e)
{
	const char *v = e->value;
	size_t skip = strncmp(v, "https://", 8) == 0 ? 8 : strncmp(v, "http://", 7) == 0 ? 7 : 0;

	if (skip == 0 || v[skip] == '\0' || v[skip] == '/' || strpbrk(v, " \t") != NULL)
		ld_error(ld, e->line,
		    "public_url: expected http://HOST[:PORT]/ or https://HOST[:PORT]/, not '%s'", v);
	else if (ld_length(ld, e, SERVE_URL_MAX, 0, "an address") == 0 &&
	         host_too_long(v + skip, strcspn(v + skip, "/?#")))
		ld_error(ld, e->line, "public_url: host too long: %zu characters, and a host name is at most %d",
		    host_length(v + skip, strcspn(v + skip, "/?#")), SERVE_HOST_MAX);
	s->public_https = skip == 8;
	ld_str(&s->public_url, v);
}

/* Refuses (one line) the names of allowed_hosts (v, n of them) longer
 * than a host name can be. */
static void
long_hosts(struct loader *ld, const struct entry *e, char *const *v, int n)
{
	char more[48];
	int i, bad = -1, nbad = 0;

	for (i = 0; i < n; i++)
		if (host_too_long(v[i], strlen(v[i])))
			bad = bad < 0 ? i : bad, nbad++;
	if (bad >= 0)
		ld_error(ld, e->line,
		    "allowed_hosts: name %d too long: %zu characters, and a host name is at most %d%s", bad + 1,
		    host_length(v[bad], strlen(v[bad])), SERVE_HOST_MAX, more_bad(nbad, more, sizeof more));
}

/* allowed_hosts = jobs.example.com, localhost, 127.0.0.1: the names the
 * Host header may carry (a port after them is ignored); case does not
 * matter.  The defence against DNS rebinding (see jobq.ini(5)). */
static void
allowed_hosts(struct loader *ld, struct serve_conf *s, const struct entry *e)
{
	char **v, more[48];
	int n, i, bad = -1, nbad = 0;

	strv_free(s->allowed_hosts);
	s->allowed_hosts = NULL;
	if ((n = split_list(e->value, &v)) <= 0) {
		ld_error(ld, e->line, "allowed_hosts: expected host names separated by commas");
		return;
	}
	for (i = 0; i < n; i++)
		if (strpbrk(v[i], " \t/@") != NULL)
			bad = bad < 0 ? i : bad, nbad++;
	if (bad >= 0)
		ld_error(ld, e->line, "allowed_hosts: '%s' is not a host name or address%s", v[bad],
		    more_bad(nbad, more, sizeof more));
	else /* one line for the key: lengths only when every name is one */
		long_hosts(ld, e, v, n);
	s->allowed_hosts = v;
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
	int cert_line = 0, key_line = 0, burst_line = 0;
	size_t i;

	for (i = 0; i < sec->nentries; i++) {
		const struct entry *e = &sec->entries[i];

		if (strcmp(e->key, "listen") == 0)
			conf_serve_listen_addr(ld, e, &s->listen, 0);
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
		else if (strcmp(e->key, "metrics_listen") == 0)
			conf_serve_listen_addr(ld, e, &s->metrics_listen, 0);
		else if (strcmp(e->key, "trusted_proxies") == 0)
			trusted_proxies(ld, s, e);
		else if (strcmp(e->key, "public_url") == 0)
			public_url(ld, s, e);
		else if (strcmp(e->key, "allowed_hosts") == 0)
			allowed_hosts(ld, s, e);
		else if (strcmp(e->key, "api_rate") == 0)
			api_rate(ld, s, e);
		else if (strcmp(e->key, "api_burst") == 0)
			api_burst(ld, s, e), burst_line = e->line;
		else if (strcmp(e->key, "allow_plain_http") == 0)
			ld_bool(ld, e, &s->allow_plain_http);
		else if (strcmp(e->key, "overview_cache") == 0) {
			if (ld_duration(ld, e, &s->overview_cache_ms, 0) == 0 &&
			    s->overview_cache_ms > 3600 * 1000LL)
				ld_error(
				    ld, e->line, "overview_cache: '%s' is too long (at most 1h)", e->value);
		} else if (strcmp(e->key, "metrics_token") == 0) {
			if (strlen(e->value) < 16)
				ld_error(ld, e->line, "metrics_token: too short (at least 16 characters)");
			else
				ld_length(ld, e, SERVE_TOKEN_MAX, 0, "a metrics_token");
			ld_str(&s->metrics_token, e->value);
		} else
			ld_unknown_key(ld, sec, e);
	}
	if ((s->tls_cert == NULL) != (s->tls_key == NULL))
		ld_error(ld, cert_line ? cert_line : key_line,
		    "[serve] needs both tls_cert and tls_key, or neither");
	if (burst_line > 0 && s->api_rate_count == 0) /* a bucket nothing fills or empties */
		ld_error(ld, burst_line, "api_burst: api_rate is off, so there is no limit to burst past: "
		                         "set api_rate, or leave api_burst out");
}

/* Whether hash is an argon2id hash a login can be checked against: the
 * whole string, parameters, salt and hash, not only its prefix (a
 * placeholder like "$argon2id$v=19$m=65536,t=2,p=1$..." would load and
 * let nobody in).  libsodium's parser is the one a login's check uses. */
static int
password_hash_usable(const char *hash)
{
	return strncmp(hash, "$argon2id$", 10) == 0 && sodium_init() >= 0 &&
	       crypto_pwhash_str_needs_rehash(hash, crypto_pwhash_OPSLIMIT_INTERACTIVE,
	           crypto_pwhash_MEMLIMIT_INTERACTIVE) >= 0;
}

void
conf_user_load(struct loader *ld, struct conf *c, const struct section *sec, const char *name)
{
	struct serve_conf *s = &c->serve;
	struct serve_user *u = xcalloc(1, sizeof *u);
	int unknown = ld->nunknown;
	size_t i;

	u->name = xstrdup(name);
	s->users = xgrow(s->users, s->nusers, 1, sizeof *s->users);
	s->users[s->nusers++] = u;
	for (i = 0; i < sec->nentries; i++) {
		const struct entry *e = &sec->entries[i];

		if (strcmp(e->key, "password_hash") == 0) {
			if (!password_hash_usable(e->value))
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
	if (u->password_hash == NULL && ld->nunknown == unknown && sec->nrefused == 0) /* else that line says it */
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
	free(s->metrics_listen);
	free(s->trusted_proxies);
	free(s->public_url);
	strv_free(s->allowed_hosts);
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

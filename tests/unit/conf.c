/* conf.c -- unit tests of conf_load: INI files written to a temporary
 * folder, loaded, and checked value by value; every kind of mistake must
 * fail the load with "FILE:LINE: message" naming the right line. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "conf_argmax.h"
#include "util.h"

#include "../tap.h"

static char dir[PATH_MAX];

/* Writes text to dir/name with mode; returns the path (caller frees). */
static char *
write_file(const char *name, const char *text, mode_t mode)
{
	char *path = xasprintf("%s/%s", dir, name);
	FILE *fp = fopen(path, "w");

	if (fp == NULL || fputs(text, fp) == EOF || fclose(fp) != 0)
		fatal("write %s: %s", path, strerror(errno));
	if (chmod(path, mode) < 0)
		fatal("chmod %s: %s", path, strerror(errno));
	return path;
}

static void
make_dir(const char *name)
{
	char *path = xasprintf("%s/%s", dir, name);

	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		fatal("mkdir %s: %s", path, strerror(errno));
	free(path);
}

/* Loads text as dir/jobq.ini (mode 0600). */
static struct conf *
load(const char *text, int flags, struct buf *errors, struct buf *warnings)
{
	char *path = write_file("jobq.ini", text, 0600);
	struct conf *c = conf_load(path, flags, errors, warnings);

	free(path);
	return c;
}

/* Whether errors holds a line "DIR/jobq.ini:LINE: ..." containing what. */
static int
has_error(const struct buf *errors, int line, const char *what)
{
	char *prefix = xasprintf("%s/jobq.ini:%d: ", dir, line);
	const char *p = errors->data;
	int found = 0;

	while (p != NULL && *p != '\0' && !found) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *one = xstrndup(p, len);

		found = strncmp(one, prefix, strlen(prefix)) == 0 && strstr(one, what) != NULL;
		free(one);
		p = nl ? nl + 1 : NULL;
	}
	free(prefix);
	return found;
}

/* Number of lines in errors. */
static int
count_lines(const struct buf *errors)
{
	int n = 0;
	size_t i;

	for (i = 0; i < errors->len; i++)
		n += errors->data[i] == '\n';
	return n;
}

/* Loading text must fail with an error on line naming what. */
static void
fails(const char *name, const char *text, int flags, int line, const char *what)
{
	struct buf errors, warnings;
	struct conf *c;

	buf_init(&errors);
	buf_init(&warnings);
	c = load(text, flags, &errors, &warnings);
	ok(c == NULL, "%s: load fails", name);
	ok(has_error(&errors, line, what), "%s: error on line %d says '%s'", name, line, what);
	if (!has_error(&errors, line, what))
		printf("#   errors:\n#   %s\n", errors.data ? errors.data : "(none)");
	conf_free(c);
	buf_free(&errors);
	buf_free(&warnings);
}

/* Whether the NULL-terminated v holds s. */
static int
strv_has(char **v, const char *s)
{
	size_t i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		if (strcmp(v[i], s) == 0)
			return 1;
	return 0;
}

static const char full_config[] = "; a full configuration, handlers before [worker]\n" /* 1 */
                                  "# comments of both kinds\n"                         /* 2 */
                                  "[handler mail]\n"                                   /* 3 */
                                  "exec = bin/h.sh --to 'a b'\n"                       /* 4 */
                                  "queue = mail\n"                                     /* 5 */
                                  "timeout = 90s\n"                                    /* 6 */
                                  "max_attempts = 7\n"                                 /* 7 */
                                  "env.SMTP_HOST = mx.example.com\n"                   /* 8 */
                                  "env.MODE = fast\n"                                  /* 9 */
                                  "permanent_exit = 64-78, 100\n"                      /* 10 */
                                  "retry_exit = 75, 65\n"                              /* 11 */
                                  "permanent_stderr = ^fatal:\n"                       /* 12 */
                                  "retry_stderr = (?i)try again\n"                     /* 13 */
                                  "workdir = /tmp\n"                                   /* 14 */
                                  "\n"
                                  "[handler report]\n"
                                  "exec = bin/h.sh\n"
                                  "\n"
                                  "[worker]\n"
                                  "queues = mail, default\n"
                                  "concurrency = 4\n"
                                  "poll_interval = 250ms\n"
                                  "reserve_ttl = 2m\n"
                                  "heartbeat = 20s\n"
                                  "reserve_mode = update\n"
                                  "timezone = Europe/Paris\n"
                                  "log_format = json\n"
                                  "max_payload = 2M\n"
                                  "timeout = 5m\n"
                                  "kill_grace = 3s\n"
                                  "max_attempts = 3\n"
                                  "backoff = 30s,1m,5m\n"
                                  "backoff_jitter = 20%\n"
                                  "retry_until = 1d\n"
                                  "stdout_limit = 16K\n"
                                  "stderr_limit = 32K\n"
                                  "env.LANG = C.UTF-8\n"
                                  "\n"
                                  "[database]\n"
                                  "host = db.example.com\n"
                                  "port = 3307\n"
                                  "user = jobq\n"
                                  "password = s3cret\n"
                                  "database = app\n"
                                  "tls = verify\n"
                                  "tls_ca = /dev/null\n" /* must be readable: any file */
                                  "connect_timeout = 5s\n"
                                  "read_timeout = 30s\n"
                                  "\n"
                                  "[queue default]\n"
                                  "[queue mail]\n"
                                  "description = outgoing email\n"
                                  "\n"
                                  "[schedule nightly]\n"
                                  "cron = 0 3 * * *\n"
                                  "type = report\n"
                                  "payload = {\"kind\": \"daily\"}\n"
                                  "priority = 5\n"
                                  "timezone = UTC\n";

static void
check_full_db_worker(const struct conf *c)
{
	is_str(c->db.host, "db.example.com", "db host");
	is_int(c->db.port, 3307, "db port");
	is_str(c->db.user, "jobq", "db user");
	is_str(c->db.password, "s3cret", "db password");
	is_str(c->db.database, "app", "db database");
	is_int(c->db.tls, TLS_VERIFY, "db tls = verify");
	is_str(c->db.tls_ca, "/dev/null", "db tls_ca");
	is_int(c->db.connect_timeout_ms, 5000, "db connect_timeout");
	is_int(c->db.read_timeout_ms, 30000, "db read_timeout");
	is_int((long long)strv_len(c->worker.queues), 2, "worker serves 2 queues");
	is_str(c->worker.queues[0], "mail", "worker queue 1 in order");
	is_str(c->worker.queues[1], "default", "worker queue 2 in order");
	is_int(c->worker.concurrency, 4, "worker concurrency");
	is_int(c->worker.poll_interval_ms, 250, "worker poll_interval");
	is_int(c->worker.reserve_ttl_ms, 120000, "worker reserve_ttl");
	is_int(c->worker.heartbeat_ms, 20000, "worker heartbeat");
	is_int(c->worker.reserve_mode, RESERVE_UPDATE, "worker reserve_mode");
	is_str(c->worker.timezone, "Europe/Paris", "worker timezone");
	is_int(c->worker.log_format, LOG_JSON, "worker log_format");
	is_int((long long)c->worker.max_payload, 2 * 1024 * 1024, "worker max_payload");
	is_int((long long)strv_len(c->queues), 2, "two queues in the whitelist");
	is_str(c->queues[0], "default", "queue whitelist in file order (1)");
	is_str(c->queues[1], "mail", "queue whitelist in file order (2)");
	ok(conf_has_queue(c, "mail") && !conf_has_queue(c, "nope"), "conf_has_queue");
}

static void
check_full_mail(const struct conf *c)
{
	const struct handler *h = conf_handler(c, "mail");
	char *exe = xasprintf("%s/bin/h.sh", dir);

	ok(h != NULL, "handler mail loaded");
	if (h == NULL) {
		free(exe);
		return;
	}
	is_str(h->type, "mail", "mail type");
	is_int(h->line, 3, "mail section line");
	is_str(h->exec, "bin/h.sh --to 'a b'", "exec kept as written");
	is_str(h->argv[0], exe, "relative exec resolved against the config folder");
	is_str(h->argv[1], "--to", "argv[1]");
	is_str(h->argv[2], "a b", "argv[2] (quoted)");
	ok(h->argv[3] == NULL, "argv has 3 words");
	is_str(h->queue, "mail", "mail queue");
	is_int(h->timeout_ms, 90000, "own timeout wins over [worker]");
	is_int(h->kill_grace_ms, 3000, "kill_grace inherited from a later [worker]");
	is_int(h->max_attempts, 7, "own max_attempts");
	is_int(h->backoff.kind, BACKOFF_LIST, "backoff inherited: a list");
	is_int((long long)h->backoff.nsteps, 3, "backoff list of 3");
	ok(h->backoff.nsteps == 3 && h->backoff.steps[0] == 30000 && h->backoff.steps[1] == 60000 &&
	        h->backoff.steps[2] == 300000,
	    "backoff steps 30s,1m,5m");
	ok(h->backoff.jitter > 0.199 && h->backoff.jitter < 0.201, "backoff_jitter 20%% inherited");
	is_int(h->retry_until_ms, 86400000, "retry_until inherited");
	is_int((long long)h->stdout_limit, 16384, "stdout_limit inherited");
	is_int((long long)h->stderr_limit, 32768, "stderr_limit inherited");
	ok(exit_set_has(&h->permanent_exit, 64) && exit_set_has(&h->permanent_exit, 78) &&
	        exit_set_has(&h->permanent_exit, 100),
	    "permanent_exit holds 64, 78, 100");
	ok(!exit_set_has(&h->permanent_exit, 63) && !exit_set_has(&h->permanent_exit, 79) &&
	        !exit_set_has(&h->permanent_exit, 0) && !exit_set_has(&h->permanent_exit, 1),
	    "permanent_exit lacks 0, 1, 63, 79");
	ok(exit_set_has(&h->retry_exit, 65) && exit_set_has(&h->retry_exit, 75) &&
	        !exit_set_has(&h->retry_exit, 1) && !exit_set_has(&h->retry_exit, 64),
	    "retry_exit is exactly {65, 75} here");
	ok(h->permanent_stderr != NULL, "permanent_stderr compiled at load");
	is_str(h->permanent_stderr_src, "^fatal:", "permanent_stderr source");
	ok(h->retry_stderr != NULL, "retry_stderr compiled at load");
	is_str(h->retry_stderr_src, "(?i)try again", "retry_stderr source");
	is_str(h->workdir, "/tmp", "workdir");
	is_int((long long)strv_len(h->env), 3, "mail env: inherited + 2 own");
	ok(strv_has(h->env, "SMTP_HOST=mx.example.com"), "env.SMTP_HOST in handler env");
	ok(strv_has(h->env, "MODE=fast"), "env.MODE in handler env");
	ok(strv_has(h->env, "LANG=C.UTF-8"), "[worker] env.LANG inherited");
	free(exe);
}

static void
check_full_report(const struct conf *c)
{
	const struct handler *h = conf_handler(c, "report");

	ok(h != NULL, "handler report loaded");
	if (h == NULL)
		return;
	is_str(h->queue, "default", "handler queue defaults to 'default'");
	is_int(h->timeout_ms, 300000, "timeout inherited from a later [worker]");
	is_int(h->max_attempts, 3, "max_attempts inherited from a later [worker]");
	is_int(h->backoff.kind, BACKOFF_LIST, "backoff inherited");
	ok(h->permanent_stderr == NULL && h->retry_stderr == NULL, "no stderr patterns");
	ok(exit_set_has(&h->permanent_exit, 65) && exit_set_has(&h->retry_exit, 75) &&
	        !exit_set_has(&h->retry_exit, 65),
	    "default exit sets");
	is_int((long long)strv_len(h->env), 1, "report env: only the inherited one");
	ok(strv_has(h->env, "LANG=C.UTF-8"), "report env has LANG");
}

static void
check_full_schedule(const struct conf *c)
{
	const struct schedule *s = c->nschedules == 1 ? c->schedules[0] : NULL;

	is_int((long long)c->nschedules, 1, "one schedule");
	if (s == NULL)
		return;
	is_str(s->name, "nightly", "schedule name");
	is_str(s->cron, "0 3 * * *", "schedule cron");
	is_str(s->type, "report", "schedule type");
	is_str(s->payload, "{\"kind\": \"daily\"}", "schedule payload");
	is_str(s->queue, "default", "schedule queue from its handler");
	is_int(s->priority, 5, "schedule priority");
	is_str(s->timezone, "UTC", "schedule timezone");
}

static void
test_full(void)
{
	struct buf errors, warnings;
	struct conf *c;
	char *h = write_file("bin/h.sh", "#!/bin/sh\nexit 0\n", 0755);

	buf_init(&errors);
	buf_init(&warnings);
	c = load(full_config, CONF_CHECK_EXEC, &errors, &warnings);
	ok(c != NULL, "full configuration loads");
	if (c == NULL) {
		printf("#   errors:\n%s\n", errors.data ? errors.data : "");
		goto out;
	}
	is_int((long long)errors.len, 0, "no errors");
	is_int((long long)warnings.len, 0, "no warning for a 0600 file with a password");
	is_int((long long)c->nhandlers, 2, "two handlers");
	ok(conf_handler(c, "nope") == NULL, "conf_handler of an unknown type is NULL");
	check_full_db_worker(c);
	check_full_mail(c);
	check_full_report(c);
	check_full_schedule(c);
out:
	conf_free(c);
	buf_free(&errors);
	buf_free(&warnings);
	free(h);
}

/* The smallest configuration: defaults everywhere, one queue "default". */
static void
test_minimal(void)
{
	struct buf errors, warnings;
	struct conf *c;
	const struct handler *h;

	buf_init(&errors);
	buf_init(&warnings);
	c = load("[handler x]\nexec = /bin/sh -c 'exit 0'\n", 0, &errors, &warnings);
	ok(c != NULL, "minimal configuration loads");
	if (c == NULL)
		goto out;
	is_int((long long)strv_len(c->queues), 1, "no [queue]: one queue");
	is_str(c->queues[0], "default", "no [queue]: the queue is 'default'");
	is_int((long long)strv_len(c->worker.queues), 1, "worker serves one queue");
	is_str(c->worker.queues[0], "default", "worker serves 'default'");
	is_int(c->db.port, 3306, "default port");
	is_str(c->db.database, "jobq", "default database");
	is_int(c->db.tls, TLS_OFF, "tls off by default");
	is_int(c->worker.concurrency, 1, "default concurrency");
	is_int(c->worker.reserve_mode, RESERVE_AUTO, "default reserve_mode");
	is_str(conf_reserve_mode_name(c->worker.reserve_mode), "auto", "reserve mode name");
	h = conf_handler(c, "x");
	ok(h != NULL, "handler x");
	if (h == NULL)
		goto out;
	is_str(h->queue, "default", "handler queue 'default'");
	is_str(h->argv[0], "/bin/sh", "absolute exec kept");
	is_str(h->argv[2], "exit 0", "quoted argument");
	is_int(h->timeout_ms, 15 * 60 * 1000, "default timeout 15m");
	is_int(h->max_attempts, 5, "default max_attempts 5");
	is_int(h->backoff.kind, BACKOFF_EXPONENTIAL, "default backoff exponential");
	is_int(h->backoff.base_ms, 10000, "default backoff base 10s");
	is_int(h->backoff.cap_ms, 600000, "default backoff cap 10m");
	is_int((long long)strv_len(h->env), 0, "no env by default");
out:
	conf_free(c);
	buf_free(&errors);
	buf_free(&warnings);
}

static void
test_empty_file(void)
{
	struct buf errors, warnings;
	struct conf *c;

	buf_init(&errors);
	buf_init(&warnings);
	c = load("", 0, &errors, &warnings);
	ok(c != NULL && c->nhandlers == 0 && conf_has_queue(c, "default"),
	    "an empty file loads: no handlers, queue 'default'");
	conf_free(c);
	buf_free(&errors);
	buf_free(&warnings);
}

static void
test_missing_file(void)
{
	struct buf errors, warnings;
	char *path = xasprintf("%s/no-such.ini", dir);
	struct conf *c;

	buf_init(&errors);
	buf_init(&warnings);
	c = conf_load(path, 0, &errors, &warnings);
	ok(c == NULL, "a missing file fails");
	ok(errors.data != NULL && strstr(errors.data, path) != NULL &&
	        strstr(errors.data, "No such file") != NULL,
	    "error names the file and the reason");
	conf_free(c);
	buf_free(&errors);
	buf_free(&warnings);
	free(path);
}

static void
test_sections_and_syntax(void)
{
	fails("unknown section", "[handler a]\nexec = /bin/true\n\n[wroker]\nconcurrency = 2\n", 0, 4,
	    "unknown section [wroker]");
	fails("[handler] without a name", "[worker]\nconcurrency = 2\n[handler]\nexec = /bin/true\n", 0, 3,
	    "needs a name");
	fails("[handler] with a bad name", "[handler a/b]\nexec = /bin/true\n", 0, 1, "needs a name");
	fails("[queue] without a name", "[queue]\n", 0, 1, "needs a name");
	fails("[worker] with a name", "[worker main]\n", 0, 1, "takes no name");
	fails("duplicate section", "[queue a]\n[queue b]\n[queue a]\n", 0, 3, "duplicate section [queue a]");
	fails("duplicate section names the first",
	    "[queue default]\n[handler a]\nexec = /bin/true\n[handler a]\nexec = /bin/true\n", 0, 4,
	    "first at line 2");
	fails("syntax error line", "[worker]\nconcurrency = 2\nthis line has no equals sign\n", 0, 3,
	    "syntax error");
	fails("key outside any section", "concurrency = 2\n[worker]\n", 0, 1, "outside any section");
	fails("indented continuation line", "[worker]\nconcurrency = 2\n    4\n", 0, 3, "indented");
}

static void
test_keys(void)
{
	fails("unknown key in [worker]", "[worker]\nconcurrency = 2\ntimout = 5s\n", 0, 3,
	    "unknown key 'timout' in [worker]");
	fails("unknown key in [handler]", "[handler a]\nexec = /bin/true\nretries = 3\n", 0, 3,
	    "unknown key 'retries' in [handler a]");
	fails("unknown key in [database]", "[database]\nhost = x\nhots = y\n", 0, 3,
	    "unknown key 'hots' in [database]");
	fails("unknown key in [queue]", "[queue a]\npriority = 1\n", 0, 2, "unknown key 'priority'");
	fails("unknown key in [schedule]",
	    "[handler a]\nexec = /bin/true\n[schedule s]\ncron = @daily\ntype = a\nwhen = now\n", 0, 6,
	    "unknown key 'when'");
	fails("duplicate key", "[handler a]\nexec = /bin/true\ntimeout = 1s\ntimeout = 2s\n", 0, 4,
	    "duplicate key 'timeout'");
	fails("duplicate key names the first", "[worker]\nconcurrency = 1\n\nconcurrency = 2\n", 0, 4,
	    "first at line 2");
}

static void
test_values(void)
{
	fails("bad number", "[worker]\nconcurrency = lots\n", 0, 2, "bad number 'lots'");
	fails("number out of range", "[database]\nport = 70000\n", 0, 2, "bad number '70000'");
	fails("max_attempts 0", "[handler a]\nexec = /bin/true\nmax_attempts = 0\n", 0, 3, "bad number '0'");
	fails("bad duration", "[handler a]\nexec = /bin/true\ntimeout = 5x\n", 0, 3, "bad duration '5x'");
	fails("bad duration in [worker]", "[worker]\n\npoll_interval = soon\n", 0, 3, "bad duration 'soon'");
	fails("duration too short", "[worker]\nreserve_ttl = 10ms\n", 0, 2, "too short");
	fails(
	    "bad backoff", "[handler a]\nexec = /bin/true\nbackoff = exponential 10m 1s\n", 0, 3, "backoff");
	fails("bad backoff list", "[handler a]\nexec = /bin/true\nbackoff = 30,,60\n", 0, 3, "backoff");
	fails("bad backoff word", "[worker]\nbackoff = linear 5s\n", 0, 2, "backoff");
	fails("bad jitter", "[worker]\nbackoff_jitter = 150%\n", 0, 2, "bad jitter");
	fails("bad exit list", "[handler a]\nexec = /bin/true\npermanent_exit = 64-300\n", 0, 3,
	    "bad exit status list");
	fails("bad regex", "[handler a]\nexec = /bin/true\npermanent_stderr = (unclosed\n", 0, 3,
	    "bad regular expression");
	fails("bad retry regex", "[worker]\nretry_stderr = a{2,1}\n", 0, 2, "bad regular expression");
	fails("bad reserve_mode", "[worker]\nreserve_mode = fastest\n", 0, 2, "reserve_mode");
	fails("bad tls", "[database]\nhost = h\ntls = maybe\n", 0, 3, "tls");
	fails("bad log_format", "[worker]\nlog_format = xml\n", 0, 2, "log_format");
	fails("bad size", "[handler a]\nexec = /bin/true\nstdout_limit = lots\n", 0, 3, "bad size");
	fails("relative workdir", "[handler a]\nexec = /bin/true\nworkdir = tmp\n", 0, 3, "absolute");
	fails("env name starting with a digit", "[handler a]\nexec = /bin/true\nenv.1ABC = x\n", 0, 3,
	    "bad environment variable name '1ABC'");
	fails("env name with a dash", "[handler a]\nexec = /bin/true\nenv.A-B = x\n", 0, 3,
	    "bad environment variable name 'A-B'");
	fails("empty env name", "[handler a]\nexec = /bin/true\nenv. = x\n", 0, 3,
	    "bad environment variable name");
	fails("env.JOBQ_*", "[worker]\nenv.JOBQ_TYPE = x\n", 0, 2, "JOBQ_");
	fails("bad cron", "[handler a]\nexec = /bin/true\n[schedule s]\ntype = a\ncron = 61 * * * *\n", 0, 5,
	    "cron");
	fails("schedule of an unknown type",
	    "[handler a]\nexec = /bin/true\n[schedule s]\ncron = @daily\ntype = b\n", 0, 5,
	    "unknown job type 'b'");
	fails("schedule payload not JSON",
	    "[handler a]\nexec = /bin/true\n[schedule s]\ncron = @daily\ntype = a\npayload = {oops\n", 0, 6,
	    "not valid JSON");
}

static void
test_exec(void)
{
	char *noexec = write_file("bin/noexec.sh", "#!/bin/sh\n", 0644);

	fails("missing exec", "[queue default]\n[handler a]\nqueue = default\n", 0, 2, "has no exec");
	fails("unterminated quote in exec", "[handler a]\nexec = /bin/echo 'oops\n", 0, 2, "unterminated");
	fails(
	    "exec: missing path", "[handler a]\nexec = bin/missing.sh\n", CONF_CHECK_EXEC, 2, "No such file");
	fails("exec: not executable", "[handler a]\n\nexec = bin/noexec.sh arg\n", CONF_CHECK_EXEC, 3,
	    "not executable");
	fails("exec: a directory", "[handler a]\nexec = /\n", CONF_CHECK_EXEC, 2, "not a regular file");
	fails("exec: bare name not in PATH", "[handler a]\nexec = jobq-no-such-program-4711\n",
	    CONF_CHECK_EXEC, 2, "not found in PATH");
	fails("handler queue not defined", "[queue mail]\n[handler a]\nexec = /bin/true\nqueue = nope\n", 0,
	    4, "unknown queue 'nope'");
	fails("handler queue 'default' not defined", "[queue mail]\n[handler a]\nexec = /bin/true\n", 0, 2,
	    "unknown queue 'default'");
	fails("handler queue with no [queue] at all", "[handler a]\nexec = /bin/true\nqueue = mail\n", 0, 3,
	    "unknown queue 'mail'");
	free(noexec);
}

/* Without CONF_CHECK_EXEC a missing program is not an error (jobq
 * check and the worker pass the flag; enqueue does not). */
static void
test_exec_unchecked(void)
{
	struct buf errors, warnings;
	struct conf *c;
	char *want = xasprintf("%s/bin/missing.sh", dir);

	buf_init(&errors);
	buf_init(&warnings);
	c = load("[handler a]\nexec = bin/missing.sh\n", 0, &errors, &warnings);
	ok(c != NULL, "missing program accepted without CONF_CHECK_EXEC");
	if (c != NULL)
		is_str(conf_handler(c, "a")->argv[0], want, "and still resolved against the config folder");
	conf_free(c);
	buf_free(&errors);
	buf_free(&warnings);
	free(want);
}

/* A bare name is looked up in PATH (the handler's env.PATH first),
 * skipping directories and non-executable files. */
static void
test_exec_path(void)
{
	struct buf errors, warnings;
	struct conf *c;
	char *old = getenv("PATH") ? xstrdup(getenv("PATH")) : NULL;
	char *p1 = write_file("p1/jobq-test-handler", "#!/bin/sh\n", 0755);
	char *p3 = write_file("p3/jobq-test-handler", "#!/bin/sh\n", 0755);
	char *p4 = write_file("p4/jobq-test-handler", "#!/bin/sh\n", 0644);
	char *path, *text;

	make_dir("p2/jobq-test-handler"); /* a directory of that name */
	path = xasprintf("%s/p4:%s/p2:%s/p1:/usr/bin:/bin", dir, dir, dir);
	setenv("PATH", path, 1);
	buf_init(&errors);
	buf_init(&warnings);
	c = load("[handler a]\nexec = jobq-test-handler one\n", CONF_CHECK_EXEC, &errors, &warnings);
	ok(c != NULL, "bare exec name found in PATH");
	if (c != NULL) {
		is_str(
		    conf_handler(c, "a")->argv[0], p1, "PATH search skips a non-executable and a directory");
		is_str(conf_handler(c, "a")->argv[1], "one", "argument kept");
	} else
		printf("#   errors: %s\n", errors.data);
	conf_free(c);
	text = xasprintf("[handler a]\nenv.PATH = %s/p3\nexec = jobq-test-handler\n", dir);
	c = load(text, CONF_CHECK_EXEC, &errors, &warnings);
	ok(c != NULL && strcmp(conf_handler(c, "a")->argv[0], p3) == 0, "the handler's env.PATH is searched");
	conf_free(c);
	if (old != NULL)
		setenv("PATH", old, 1);
	else
		unsetenv("PATH");
	free(old);
	free(text);
	free(path);
	free(p1);
	free(p3);
	free(p4);
	buf_free(&errors);
	buf_free(&warnings);
}

/* A handler's own env.NAME replaces the inherited one; regular
 * expressions and ids are inherited and resolved too. */
static void
test_inherit_override(void)
{
	struct buf errors, warnings;
	struct conf *c;
	const struct handler *h;

	buf_init(&errors);
	buf_init(&warnings);
	c = load("[handler a]\n"
	         "exec = /bin/true\n"
	         "env.LANG = fr_FR.UTF-8\n"
	         "user = root\n"
	         "[worker]\n"
	         "env.LANG = C.UTF-8\n"
	         "env.TZ = UTC\n"
	         "retry_stderr = busy\n"
	         "permanent_exit = 70\n",
	    0, &errors, &warnings);
	ok(c != NULL, "override configuration loads");
	if (c == NULL) {
		printf("#   errors: %s\n", errors.data);
		goto out;
	}
	h = conf_handler(c, "a");
	is_int((long long)strv_len(h->env), 2, "env: LANG replaced, TZ inherited");
	ok(strv_has(h->env, "LANG=fr_FR.UTF-8") && !strv_has(h->env, "LANG=C.UTF-8"),
	    "handler's env.LANG wins");
	ok(strv_has(h->env, "TZ=UTC"), "env.TZ inherited");
	ok(h->retry_stderr != NULL && h->retry_stderr_src != NULL && strcmp(h->retry_stderr_src, "busy") == 0,
	    "retry_stderr inherited from [worker], compiled");
	ok(exit_set_has(&h->permanent_exit, 70) && !exit_set_has(&h->permanent_exit, 65),
	    "permanent_exit inherited from [worker]");
	ok(h->has_uid && h->uid == 0 && h->has_gid && h->gid == 0, "user = root resolved to uid 0, gid 0");
out:
	conf_free(c);
	buf_free(&errors);
	buf_free(&warnings);
	fails("unknown user", "[handler a]\nexec = /bin/true\nuser = jobq-no-such-user-4711\n", 0, 3,
	    "no such user");
	fails("unknown group", "[handler a]\nexec = /bin/true\n\ngroup = jobq-no-such-group-4711\n", 0, 4,
	    "no such group");
}

/* One load reports every problem, each on its own line. */
static void
test_many_problems(void)
{
	struct buf errors, warnings;
	struct conf *c;

	buf_init(&errors);
	buf_init(&warnings);
	c = load("[worker]\n"             /* 1 */
	         "concurrency = many\n"   /* 2 */
	         "colour = blue\n"        /* 3 */
	         "[handler a]\n"          /* 4 */
	         "exec = /bin/true\n"     /* 5 */
	         "timeout = 5x\n"         /* 6 */
	         "permanent_stderr = (\n" /* 7 */
	         "[handler b]\n"          /* 8 */
	         "queue = default\n"      /* 9 */
	         "[bogus]\n"              /* 10 */
	         "[database]\n"           /* 11 */
	         "tls = maybe\n",         /* 12 */
	    0, &errors, &warnings);
	ok(c == NULL, "a file with 7 problems fails");
	is_int(count_lines(&errors), 7, "all 7 problems reported, one line each");
	ok(has_error(&errors, 2, "concurrency") && has_error(&errors, 3, "colour") &&
	        has_error(&errors, 6, "timeout") && has_error(&errors, 7, "permanent_stderr") &&
	        has_error(&errors, 8, "no exec") && has_error(&errors, 10, "bogus") &&
	        has_error(&errors, 12, "tls"),
	    "each problem on its own line number");
	if (count_lines(&errors) != 7)
		printf("#   errors:\n%s", errors.data ? errors.data : "");
	conf_free(c);
	buf_free(&errors);
	buf_free(&warnings);
}

/* Problems found after reading (cross-checks) still name a line. */
static void
test_late_problems_have_lines(void)
{
	fails("[worker] queues names an unknown queue", "[queue a]\n[worker]\nqueues = a, b\n", 0, 3,
	    "unknown queue 'b'");
	fails("heartbeat longer than half the reserve_ttl", "[worker]\nreserve_ttl = 10s\nheartbeat = 6s\n",
	    0, 3, "heartbeat");
}

/* Two syntax errors are two reports, like every other problem. */
static void
test_two_syntax_errors(void)
{
	struct buf errors, warnings;
	struct conf *c;

	buf_init(&errors);
	buf_init(&warnings);
	c = load("[worker]\nfirst bad line\nconcurrency = 2\nsecond bad line\n", 0, &errors, &warnings);
	ok(c == NULL, "two syntax errors: load fails");
	ok(has_error(&errors, 2, "syntax error"), "first syntax error reported");
	ok(has_error(&errors, 4, "syntax error"), "second syntax error reported too");
	if (!has_error(&errors, 4, "syntax error"))
		printf("#   errors:\n%s", errors.data ? errors.data : "");
	conf_free(c);
	buf_free(&errors);
	buf_free(&warnings);
}

/* inih's line buffer holds 198 characters; a longer value or comment
 * still loads whole (an exec line of long paths), and a longer header
 * or key is refused, never silently cut. */
static void
test_long_lines(void)
{
	struct buf errors, warnings;
	struct conf *c;
	char line[4096], *text, *want;
	const char *key = "env.LONG = ";
	size_t vlen = 198 - strlen(key);

	memset(line, 'v', sizeof line);
	buf_init(&errors);
	buf_init(&warnings);
	text = xasprintf("[handler a]\nexec = /bin/true\n%s%.*s\n", key, (int)vlen, line);
	c = load(text, 0, &errors, &warnings);
	ok(c != NULL, "a line of 198 characters loads");
	want = xasprintf("LONG=%.*s", (int)vlen, line);
	ok(c != NULL && strv_has(conf_handler(c, "a")->env, want), "and its value is whole");
	conf_free(c);
	free(text);
	free(want);
	text = xasprintf("; %.*s\n[handler a]\nexec = /bin/echo %.*s  ; a comment\nenv.B = b:%.*s\ntimeout = 1s\n",
	    3000, line, 300, line, 250, line);
	c = load(text, 0, &errors, &warnings);
	ok(c != NULL, "lines of 3,002, 322 and 259 characters load");
	want = xasprintf("/bin/echo %.*s", 300, line);
	ok(c != NULL && strcmp(conf_handler(c, "a")->exec, want) == 0, "a long value is whole, its inline comment cut");
	free(want);
	want = xasprintf("B=b:%.*s", 250, line);
	ok(c != NULL && strv_has(conf_handler(c, "a")->env, want), "a long value with ':' in it is whole");
	ok(c != NULL && conf_handler(c, "a")->timeout_ms == 1000, "the key after them loads");
	conf_free(c);
	free(text);
	free(want);
	text = xasprintf("[handler a]\nexec = /bin/true\n  env.X = %.*s\ntimeout = 1s\n", 240, line);
	fails("an indented long line", text, 0, 3, "indented line");
	free(text);
	text = xasprintf("[handler %.*s]\nexec = /bin/true\n", 240, line);
	fails("a header of 250 characters", text, 0, 1, "line too long");
	free(text);
	text = xasprintf("[handler a]\nexec = /bin/true\nenv.%.*s = 1\n", 240, line);
	fails("a key of 244 characters", text, 0, 3, "line too long");
	free(text);
	text = xasprintf("[handler a]\nexec = /bin/true\n%.*s\n", 240, line);
	fails("a long line with no '='", text, 0, 3, "line too long");
	free(text);
	buf_free(&errors);
	buf_free(&warnings);
}

/* A password in a file others can read gets a warning; not at 0600. */
static void
test_password_warning(void)
{
	struct buf errors, warnings;
	struct conf *c;
	char *path = write_file("pw.ini", "[database]\npassword = x\n", 0644);
	char *pwfile;

	buf_init(&errors);
	buf_init(&warnings);
	c = conf_load(path, 0, &errors, &warnings);
	ok(c != NULL, "0644 file with a password loads");
	ok(warnings.data != NULL && strstr(warnings.data, "readable by other users") != NULL &&
	        strstr(warnings.data, path) != NULL,
	    "0644 file with a password: warning names the file");
	conf_free(c);
	buf_free(&warnings);
	chmod(path, 0600);
	c = conf_load(path, 0, &errors, &warnings);
	ok(c != NULL && warnings.len == 0, "0600 file with a password: no warning");
	conf_free(c);
	buf_free(&warnings);
	chmod(path, 0644);
	free(write_file("pw.ini", "[database]\nuser = x\n", 0644));
	c = conf_load(path, 0, &errors, &warnings);
	ok(c != NULL && warnings.len == 0, "0644 file without a password: no warning");
	conf_free(c);
	buf_free(&warnings);

	/* password_file: relative to the config folder, first line only. */
	pwfile = write_file("secret", "pw-from-file\nsecond line\n", 0600);
	free(write_file("pw.ini", "[database]\npassword_file = secret\n", 0600));
	c = conf_load(path, 0, &errors, &warnings);
	ok(c != NULL && strcmp(c->db.password, "pw-from-file") == 0, "password_file read, first line");
	ok(warnings.len == 0, "0600 password_file: no warning");
	conf_free(c);
	buf_free(&warnings);
	chmod(pwfile, 0644);
	c = conf_load(path, 0, &errors, &warnings);
	ok(c != NULL && warnings.data != NULL && strstr(warnings.data, "password_file") != NULL,
	    "0644 password_file: warning");
	conf_free(c);
	is_int((long long)errors.len, 0, "no errors in the password cases");
	buf_free(&errors);
	buf_free(&warnings);
	free(pwfile);
	free(path);
}

/* A UTF-8 byte-order mark on line 1 is skipped; anywhere else it is
 * part of the text (issue 8 defect 12). */
static void
test_bom(void)
{
	struct buf errors, warnings;
	struct conf *c;

	buf_init(&errors);
	buf_init(&warnings);
	c = load(
	    "\xEF\xBB\xBF[worker]\nconcurrency = 3\n[handler a]\nexec = /bin/true\n", 0, &errors, &warnings);
	ok(c != NULL, "a file starting with a byte-order mark loads");
	ok(c != NULL && c->worker.concurrency == 3 && c->nhandlers == 1,
	    "and every section after the mark is read");
	if (c == NULL)
		printf("#   errors:\n%s", errors.data ? errors.data : "");
	conf_free(c);
	c = load("\xEF\xBB\xBF; only a comment\n[worker]\nconcurrency = 2\n", 0, &errors, &warnings);
	ok(c != NULL && c->worker.concurrency == 2, "a mark before a comment line");
	conf_free(c);
	buf_free(&errors);
	buf_free(&warnings);
	fails("a mark on line 2",
	    "[worker]\n\xEF\xBB\xBF"
	    "concurrency = 2\n",
	    0, 2, "unknown key");
	fails("two marks on line 1", "\xEF\xBB\xBF\xEF\xBB\xBF[worker]\n", 0, 1, "syntax error");
}

/* password_file must name a file whose first line is the password
 * (issue 8 defect 11). */
static void
test_password_file_refused(void)
{
	char *text;

	make_dir("pwdir");
	free(write_file("pw-empty", "", 0600));
	free(write_file("pw-blank", "\nsecond\n", 0600));
	fails("password_file naming a directory", "[database]\nuser = jobq\npassword_file = pwdir\n", 0, 3,
	    "is a directory");
	fails("empty password_file", "[database]\npassword_file = pw-empty\n", 0, 2, "is empty");
	fails("password_file with an empty first line", "[database]\npassword_file = pw-blank\n", 0, 2,
	    "has an empty first line");
	fails("password_file that does not exist", "[database]\npassword_file = pw-none\n", 0, 2,
	    "No such file");
	text = xasprintf("[database]\npassword_file = %s/pwdir\n", dir);
	fails("absolute password_file naming a directory", text, 0, 2, "pwdir is a directory");
	free(text);
}

/* limit_* keys: parsed with their units and ranges, inherited from
 * [worker], reset with "none". */
static void
test_limits(void)
{
	struct buf errors, warnings;
	struct conf *c;
	const struct handler *a, *b;

	buf_init(&errors);
	buf_init(&warnings);
	c = load("[worker]\n"
	         "limit_as = 1G\n"
	         "limit_cpu = 2m\n"
	         "limit_nofile = 256\n"
	         "[handler a]\n"
	         "exec = /bin/true\n"
	         "[handler b]\n"
	         "exec = /bin/true\n"
	         "limit_as = none\n"
	         "limit_cpu = 90s\n"
	         "limit_nproc = 50\n",
	    0, &errors, &warnings);
	ok(c != NULL, "limits load");
	if (c == NULL) {
		printf("#   errors:\n%s", errors.data ? errors.data : "");
		goto out;
	}
	a = conf_handler(c, "a");
	b = conf_handler(c, "b");
	is_int((long long)a->limits[LIMIT_AS], 1LL << 30, "limit_as inherited from [worker], in bytes");
	is_int((long long)a->limits[LIMIT_CPU], 120, "limit_cpu inherited, in seconds");
	is_int((long long)a->limits[LIMIT_NOFILE], 256, "limit_nofile inherited");
	is_int((long long)a->limits[LIMIT_NPROC], 0, "limit_nproc not set: 0");
	is_int((long long)b->limits[LIMIT_AS], 0, "limit_as = none undoes the [worker] default");
	is_int((long long)b->limits[LIMIT_CPU], 90, "own limit_cpu wins");
	is_int((long long)b->limits[LIMIT_NOFILE], 256, "limit_nofile still inherited");
	is_int((long long)b->limits[LIMIT_NPROC], 50, "own limit_nproc");
	is_int(b->limit_lines[LIMIT_NPROC], 11, "the line of limit_nproc is kept (for check)");
	is_int(a->limit_lines[LIMIT_NOFILE], 4, "an inherited limit keeps its [worker] line");
	is_str(conf_limit_key(LIMIT_NOFILE), "limit_nofile", "conf_limit_key");
out:
	conf_free(c);
	buf_free(&errors);
	buf_free(&warnings);
	fails(
	    "limit_as without a unit", "[handler a]\nexec = /bin/true\nlimit_as = 512\n", 0, 3, "too small");
	fails("limit_as not a size", "[worker]\nlimit_as = big\n", 0, 2, "bad size 'big'");
	fails(
	    "limit_cpu not whole seconds", "[worker]\nlimit_cpu = 1500ms\n", 0, 2, "whole number of seconds");
	fails("limit_cpu under a second", "[worker]\nlimit_cpu = 500ms\n", 0, 2, "too short");
	fails("limit_cpu over a year", "[worker]\nlimit_cpu = 400d\n", 0, 2, "365d");
	fails("limit_nofile too small", "[worker]\nlimit_nofile = 7\n", 0, 2, "bad number '7'");
	fails("limit_nofile too large", "[worker]\nlimit_nofile = 2000000\n", 0, 2, "from 8 to 1048576");
	fails("limit_nproc 0", "[handler a]\nexec = /bin/true\nlimit_nproc = 0\n", 0, 3, "bad number '0'");
	fails("unknown limit", "[handler a]\nexec = /bin/true\nlimit_stack = 8M\n", 0, 3,
	    "unknown key 'limit_stack'");
}

/* With CONF_CHECK_EXEC the workdir must be an existing folder (issue 8,
 * item 13); without it (enqueue) it is not looked at. */
static void
test_workdir_checked(void)
{
	struct buf errors, warnings;
	struct conf *c;
	char *text = xasprintf("[worker]\nworkdir = %s/no-such-dir\n[handler a]\nexec = /bin/true\n", dir);
	char *file = write_file("plain-file", "x\n", 0644);

	fails("missing workdir from [worker]", text, CONF_CHECK_EXEC, 2, "No such file or directory");
	buf_init(&errors);
	buf_init(&warnings);
	c = load(text, 0, &errors, &warnings);
	ok(c != NULL, "without CONF_CHECK_EXEC a missing workdir is not an error");
	conf_free(c);
	free(text);
	text = xasprintf("[handler a]\nexec = /bin/true\n\nworkdir = %s\n", file);
	fails("workdir that is a file", text, CONF_CHECK_EXEC, 4, "is not a directory");
	free(text);
	text = xasprintf("[handler a]\nexec = /bin/true\nworkdir = %s/bin\n", dir);
	c = load(text, CONF_CHECK_EXEC, &errors, &warnings);
	ok(c != NULL && warnings.len == 0, "an existing workdir passes");
	conf_free(c);
	free(text);
	free(file);
	buf_free(&errors);
	buf_free(&warnings);
}

/* group without user: only the group is set (issue 8 defect 6; the
 * runner applies it, tests/group_only.sh). */
static void
test_group_only(void)
{
	struct buf errors, warnings;
	struct conf *c;
	const struct handler *h;

	buf_init(&errors);
	buf_init(&warnings);
	c = load("[handler a]\nexec = /bin/true\ngroup = root\n", 0, &errors, &warnings);
	h = c != NULL ? conf_handler(c, "a") : NULL;
	ok(h != NULL && h->has_gid && h->gid == 0 && !h->has_uid, "group = root alone: gid 0 set, no uid");
	conf_free(c);
	buf_free(&errors);
	buf_free(&warnings);
}

/* Warnings about what others could change (CONF_CHECK_EXEC only). */
static void
test_writers(void)
{
	struct buf errors, warnings;
	struct conf *c;
	char *prog = write_file("bin/w.sh", "#!/bin/sh\n", 0755);
	char *text = xasprintf("[handler a]\nexec = %s\n", prog);

	buf_init(&errors);
	buf_init(&warnings);
	c = load(text, CONF_CHECK_EXEC, &errors, &warnings);
	ok(c != NULL && warnings.len == 0, "a 0755 program in a 0755 folder: no warning");
	conf_free(c);
	chmod(prog, 0757);
	c = load(text, CONF_CHECK_EXEC, &errors, &warnings);
	ok(c != NULL, "a world-writable program still loads");
	ok(warnings.data != NULL && strstr(warnings.data, "jobq.ini:2: warning: handler 'a': program") &&
	        strstr(warnings.data, "is world-writable"),
	    "with a warning naming the exec line");
	buf_free(&warnings);
	conf_free(c);
	c = load(text, 0, &errors, &warnings);
	ok(c != NULL && warnings.len == 0, "without CONF_CHECK_EXEC: no warning (enqueue runs nothing)");
	conf_free(c);
	chmod(prog, 0755);
	free(write_file("jobq.ini", text, 0602));
	{
		char *path = xasprintf("%s/jobq.ini", dir);

		c = conf_load(path, CONF_CHECK_EXEC, &errors, &warnings);
		ok(c != NULL && warnings.data != NULL &&
		        strstr(warnings.data, "warning: the configuration") != NULL &&
		        strstr(warnings.data, "world-writable") != NULL,
		    "a world-writable configuration: warning");
		conf_free(c);
		free(path);
	}
	is_int((long long)errors.len, 0, "no errors in the warning cases");
	buf_free(&errors);
	buf_free(&warnings);
	free(text);
	free(prog);
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int
main(void)
{
	char *tmp = tap_tmpdir("conf");

	if (realpath(tmp, dir) == NULL)
		fatal("realpath %s: %s", tmp, strerror(errno));
	free(tmp);
	make_dir("bin");
	make_dir("p1");
	make_dir("p2");
	make_dir("p3");
	make_dir("p4");
	test_full();
	test_minimal();
	test_empty_file();
	test_missing_file();
	test_sections_and_syntax();
	test_keys();
	test_values();
	test_exec();
	test_exec_unchecked();
	test_exec_path();
	test_inherit_override();
	test_many_problems();
	test_late_problems_have_lines();
	test_two_syntax_errors();
	test_long_lines();
	test_password_warning();
	test_bom();
	test_password_file_refused();
	test_limits();
	test_workdir_checked();
	test_group_only();
	test_writers();
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return done();
}

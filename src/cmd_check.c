/* cmd_check.c -- `jobq check`: is everything in place for a worker? */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "cron.h"
#include "queue.h"
#include "schedule_view.h"
#include "schedules.h"
#include "schema.h"

static void
usage(void)
{
	printf("Usage: jobq check [-c FILE] [--repair-counts] [--explain [--batch N] [--json]]\n"
	       "Load the configuration (every handler program must exist and be executable,\n"
	       "every workdir must be a folder, resource limits must fit under this\n"
	       "process's own; a warning for a configuration, program or folder that others\n"
	       "could change), connect to the database, check the schema version, check that\n"
	       "an outcome of every handler fits the server's max_allowed_packet (see\n"
	       "stdout_limit and stderr_limit), and find out, by trying, whether the server\n"
	       "supports SELECT ... FOR UPDATE SKIP LOCKED.  Prints the reservation mode\n"
	       "workers will use, and the topology: one server, or a Galera node (its cluster\n"
	       "size, state and wsrep_sync_wait, with a warning for binlog_format not ROW,\n"
	       "innodb_autoinc_lock_mode not 2, a node not Synced).  Compares the job counts\n"
	       "that 'jobq status' starts from (kept by triggers) with a count of every job\n"
	       "and dead job, and warns when they differ (TRUNCATE bypasses the triggers).\n\n"
	       "With --repair-counts, first make those counts agree with the jobs and\n"
	       "failed_jobs tables again (safe while workers and applications write).\n\n"
	       "With --explain, also show how the database serves a worker's reservation\n"
	       "of N jobs (default 10) from its queues: the plan of each statement (index,\n"
	       "access type, any filesort) and the rows the server read for it, measured\n"
	       "on a claim that is rolled back (nothing changes).\n\n"
	       "Exit status: 0 ready, 78 configuration error (also a refused user or password),\n"
	       "69 database unavailable or "
	       "schema missing.\n");
}

/* Reads the (name, value) rows of a SHOW into v: one slot per name in
 * names, "" for a name the server does not have. */
static int
show_into(struct db *db, const char *sql, const char *const *names, size_t n, char v[][64], char *err)
{
	struct db_res *r;
	char **row;
	size_t i;
	int rc;

	for (i = 0; i < n; i++)
		v[i][0] = '\0';
	if ((r = db_query(db, &rc, err, "%s", sql)) == NULL)
		return rc;
	while ((row = db_res_next(r)) != NULL)
		for (i = 0; i < n; i++)
			if (row[0] != NULL && row[1] != NULL && strcasecmp(row[0], names[i]) == 0)
				snprintf(v[i], sizeof v[i], "%s", row[1]);
	db_res_free(r);
	return DB_OK;
}

static size_t
hosts_listed(const struct conf *c)
{
	char host[256];
	const char *why;
	unsigned port;
	size_t i;

	if (c->db.socket != NULL || c->db.host == NULL)
		return 1;
	for (i = 0; conf_db_host(&c->db, i, host, sizeof host, &port, &why) == 1; i++)
		;
	return i;
}

/* A Galera node: the cluster, the node's state and the settings a queue
 * depends on, with a warning for each that breaks one. */
static int
report_galera(const struct conf *c, struct db *db, size_t hosts)
{
	static const char *const vars[] = { "wsrep_node_name", "wsrep_sync_wait", "binlog_format",
		"innodb_autoinc_lock_mode" };
	static const char *const stat[] = { "wsrep_cluster_size", "wsrep_cluster_status",
		"wsrep_local_state_comment" };
	char v[4][64], st[3][64], err[ERRSZ];
	int rc;

	if ((rc = show_into(db,
	         "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('wsrep_node_name', 'wsrep_sync_wait',"
	         " 'binlog_format', 'innodb_autoinc_lock_mode')",
	         vars, 4, v, err)) != DB_OK ||
	    (rc = show_into(db,
	         "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_cluster_size', 'wsrep_cluster_status',"
	         " 'wsrep_local_state_comment')",
	         stat, 3, st, err)) != DB_OK) {
		cli_error("read the Galera state: %s", err);
		return EX_UNAVAILABLE;
	}
	printf("galera: node %s, cluster of %s nodes (%s), state %s, wsrep_sync_wait %s\n", v[0], st[0],
	    st[1], st[2], v[1]);
	if (strcasecmp(v[2], "ROW") != 0)
		fprintf(stderr, "jobq: warning: binlog_format is %s: Galera replicates rows only with ROW\n",
		    v[2]);
	if (strcmp(v[3], "2") != 0)
		fprintf(stderr,
		    "jobq: warning: innodb_autoinc_lock_mode is %s: Galera needs 2 (interleaved) for "
		    "concurrent inserts\n",
		    v[3]);
	if (strcmp(st[2], "Synced") != 0 || strcmp(st[1], "Primary") != 0)
		fprintf(stderr, "jobq: warning: this node is %s in a %s component: workers will skip it\n",
		    st[2], st[1]);
	if (hosts > 1)
		printf("topology: Galera cluster, %zu hosts listed: workers write through the first ready "
		       "one and move down the list when it fails (one writer node, the others standing by: "
		       "the recommended layout)\n",
		    hosts);
	else
		printf("topology: Galera cluster, one host listed: no failover when this node leaves "
		       "(list every node: host = node1,node2,node3, the same order for every worker)\n");
	(void)c;
	return 0;
}

/* Which topology the connection shows: one server, or a Galera node. */
static int
report_topology(const struct conf *c, struct db *db)
{
	size_t hosts = hosts_listed(c);

	if (db_galera(db))
		return report_galera(c, db, hosts);
	if (hosts > 1)
		printf("topology: one server (not Galera), %zu hosts listed: the first that answers takes "
		       "the work\n",
		    hosts);
	else
		printf("topology: one server (not Galera)\n");
	return 0;
}

/* --repair-counts: makes the trigger-kept counts agree with the tables. */
static int
repair_counts(struct db *db)
{
	char err[ERRSZ];

	if (queue_counts_repair(db, err) != DB_OK) {
		cli_error("repair the job counts: %s", err);
		return EX_UNAVAILABLE;
	}
	printf("job counts: repaired from a count of the jobs table\n");
	printf("dead-letter counts: repaired from a count of the failed_jobs table\n");
	return 0;
}

/* The kept counts of one table, against the table (d holds the queues
 * where any count differs): a line when they agree, a one-line warning
 * naming the queues when they do not. */
static void
report_drift(const struct counts_drift *d, size_t n, int dead)
{
	const char *what = dead ? "dead-letter" : "job", *table = dead ? "failed_jobs" : "jobs";
	size_t i, k = 0;
	struct buf b;

	buf_init(&b);
	for (i = 0; i < n; i++)
		if (d[i].dead == dead && k++ < 5)
			buf_printf(&b, "%s'%s' counted %lld, holds %lld", k > 1 ? "; " : "", d[i].queue,
			    (long long)d[i].kept, (long long)d[i].rows);
	if (k > 5)
		buf_printf(&b, "; %zu more", k - 5);
	if (k == 0)
		printf("%s counts: jobq_counts agrees with the %s table: ok\n", what, table);
	else
		fprintf(stderr,
		    "jobq: warning: %s counts differ from the %s table for %zu queue%s (%s), so 'jobq "
		    "status' is off (did something TRUNCATE %s?): run 'jobq check --repair-counts'\n",
		    what, table, k, k == 1 ? "" : "s", b.data, table);
	buf_free(&b);
}

/* Whether the trigger-kept counts agree with the jobs and failed_jobs
 * tables (report_drift).  Not an error: workers do not read the counts,
 * only status does. */
static int
report_counts(struct db *db)
{
	struct counts_drift *d;
	char err[ERRSZ];
	size_t n;

	if (queue_counts_drift(db, &d, &n, err) != DB_OK) {
		cli_error("compare the job counts with the jobs table: %s", err);
		return EX_UNAVAILABLE;
	}
	report_drift(d, n, 0);
	report_drift(d, n, 1);
	queue_counts_drift_free(d, n);
	return 0;
}

/* Whether schedule s can ever fire; says why not (one line) if not. */
static int
schedule_fires(const struct schedule *s)
{
	char err[ERRSZ], where[64];
	struct cron *cr;
	int never;

	if (s->line > 0)
		snprintf(where, sizeof where, "[schedule %s] (line %d)", s->name, s->line);
	else
		snprintf(where, sizeof where, "database schedule '%s'", s->name);
	if (s->problem != NULL) {
		cli_error("%s: %s%s", where, s->problem, strstr(s->problem, "never fire") ? "" : ": it never fires");
		return 0;
	}
	if ((cr = cron_parse(s->cron, err)) == NULL) {
		cli_error("%s: cron '%s': %s", where, s->cron, err);
		return 0;
	}
	never = cron_never(cr);
	cron_free(cr);
	if (never)
		cli_error("%s: cron '%s' names no date that exists: it never fires", where, s->cron);
	return !never;
}

/* A warning line for each name the database keeps a switch or fires
 * of that is no schedule of v (schedules_orphans: an INI section
 * renamed or taken out of the file): it fires nothing, so it is no
 * error, but what it left stays until someone removes it. */
static int
warn_gone(struct db *db, struct schedule *const *v, size_t n)
{
	char err[ERRSZ], **names;
	size_t nn, i;

	if (schedules_orphans(db, v, n, &names, &nn, err) != DB_OK) {
		cli_error("schedules: %s", err);
		return EX_UNAVAILABLE;
	}
	for (i = 0; i < nn; i++) {
		struct schedule *s = schedule_view_gone(names[i]); /* says it as --list does */

		fprintf(stderr, "jobq: warning: schedule '%s' is gone: %s\n", s->name, s->problem);
		schedule_free(s);
	}
	strv_free(names);
	return 0;
}

/* Every schedule, the INI's and the database's, as a tick would read
 * them: a name in both places (the database one cannot fire), a database
 * schedule whose handler or queue left the INI, and an expression that
 * can never fire are configuration errors; a warning only for a schedule
 * switched off, which no tick tries to fire, and for a gone name
 * (warn_gone). */
static int
report_schedules(const struct conf *c, struct db *db)
{
	struct schedule **v;
	size_t n, i, ini = 0, bad = 0, off = 0;
	char err[ERRSZ];
	int rc;

	if ((rc = schedules_load(c, db, &v, &n, err)) != DB_OK) {
		cli_error("schedules: %s", err);
		return EX_UNAVAILABLE;
	}
	if ((rc = warn_gone(db, v, n)) != 0) {
		schedules_free(v, n);
		return rc;
	}
	for (i = 0; i < n; i++) {
		ini += v[i]->source == SCHEDULE_INI;
		off += !v[i]->enabled;
		if (v[i]->enabled || v[i]->problem == NULL)
			bad += !schedule_fires(v[i]);
		else /* the ticks leave it alone until someone enables it */
			fprintf(stderr, "jobq: warning: schedule '%s' is disabled, and could not fire if enabled: %s\n",
			    v[i]->name, v[i]->problem);
	}
	if (bad == 0)
		printf("schedules: %zu (%zu in the configuration, %zu in the database, %zu disabled): ok\n", n,
		    ini, n - ini, off);
	schedules_free(v, n);
	return bad > 0 ? EX_CONFIG : 0;
}

static int
report_db(const struct conf *c, struct db *db, int repair)
{
	enum reserve_mode probed;
	char err[ERRSZ];
	unsigned version;
	int rc;

	if (schema_version(db, &version, err) != DB_OK) {
		cli_error("%s", err);
		return EX_UNAVAILABLE;
	}
	if (version > schema_latest()) {
		cli_error(
		    "database '%s' has schema version %u, newer than this jobq knows (%u): upgrade jobq",
		    c->db.database, version, schema_latest());
		return EX_UNAVAILABLE;
	}
	if (version < schema_latest()) {
		cli_error("database '%s' has %s (version %u, this jobq needs %u): run 'jobq init'",
		    c->db.database, version ? "an old jobq schema" : "no jobq schema", version,
		    schema_latest());
		return EX_UNAVAILABLE;
	}
	printf(
	    "database: %s, database '%s', schema version %u: ok\n", db_target(db), c->db.database, version);
	if (repair && (rc = repair_counts(db)) != 0)
		return rc;
	if (queue_check_limits(c, db_max_packet(db), err) < 0) {
		cli_error("%s", err);
		return EX_CONFIG;
	}
	printf("output limits: every handler's outcome fits max_allowed_packet (%zu bytes): ok\n",
	    db_max_packet(db));
	if (queue_probe(db, &probed, err) != DB_OK) {
		cli_error("probe SKIP LOCKED: %s", err);
		return EX_UNAVAILABLE;
	}
	if (c->worker.reserve_mode == RESERVE_AUTO)
		printf("reservation mode: %s (probed: the server %s SKIP LOCKED)\n",
		    conf_reserve_mode_name(probed),
		    probed == RESERVE_SKIP_LOCKED ? "supports" : "does not support");
	else
		printf("reservation mode: %s (set by reserve_mode; the server %s SKIP LOCKED)\n",
		    conf_reserve_mode_name(c->worker.reserve_mode),
		    probed == RESERVE_SKIP_LOCKED ? "supports" : "does not support");
	if (c->worker.reserve_mode == RESERVE_SKIP_LOCKED && probed != RESERVE_SKIP_LOCKED) {
		conf_no_skip_locked(c, err, sizeof err);
		cli_error("%s", err);
		return EX_CONFIG;
	}
	if ((rc = report_topology(c, db)) != 0)
		return rc;
	if ((rc = report_counts(db)) != 0)
		return rc;
	return report_schedules(c, db);
}

static void
print_explain_json(const struct explain_report *x, enum reserve_mode mode, unsigned batch)
{
	cJSON *o = cJSON_CreateObject(), *steps = cJSON_AddArrayToObject(o, "steps");
	char *s;
	size_t i;

	cJSON_AddStringToObject(o, "reserve_mode", conf_reserve_mode_name(mode));
	cJSON_AddNumberToObject(o, "batch", batch);
	cJSON_AddNumberToObject(o, "due_groups", (double)x->due_groups);
	cJSON_AddNumberToObject(o, "due_rows_read", (double)x->due_rows_read);
	cJSON_AddBoolToObject(o, "nothing_due", x->nothing_due);
	cJSON_AddBoolToObject(o, "walked", x->walked);
	cJSON_AddStringToObject(o, "queue", x->queue);
	cJSON_AddStringToObject(o, "priorities", x->priorities);
	cJSON_AddNumberToObject(o, "claimed", (double)x->claimed);
	cJSON_AddNumberToObject(o, "claim_rows_read", (double)x->claim_rows_read);
	if (x->ordered) {
		cJSON_AddNumberToObject(o, "order_groups_due", (double)x->order_groups);
		cJSON_AddNumberToObject(o, "order_rows_read", (double)x->order_rows_read);
	}
	for (i = 0; i < x->nsteps; i++) {
		cJSON *st = cJSON_CreateObject();

		cJSON_AddStringToObject(st, "query", x->steps[i].query);
		cJSON_AddStringToObject(st, "type", x->steps[i].type);
		cJSON_AddStringToObject(st, "key", x->steps[i].key);
		cJSON_AddStringToObject(st, "rows", x->steps[i].rows);
		cJSON_AddStringToObject(st, "extra", x->steps[i].extra);
		cJSON_AddItemToArray(steps, st);
	}
	s = cJSON_Print(o);
	puts(s);
	cJSON_free(s);
	cJSON_Delete(o);
}

static void
print_explain(const struct explain_report *x, enum reserve_mode mode, unsigned batch)
{
	size_t i;

	printf("reservation of %u jobs (%s):\n", batch, conf_reserve_mode_name(mode));
	for (i = 0; i < x->nsteps; i++)
		printf("  %-10s type=%s key=%s rows~%s extra=\"%s\"\n", x->steps[i].query, x->steps[i].type,
		    x->steps[i].key, x->steps[i].rows, x->steps[i].extra);
	printf("  due groups: %llu priorities due, %llu index entries read%s\n",
	    (unsigned long long)x->due_groups, (unsigned long long)x->due_rows_read,
	    x->walked ? " (backlog: priority groups walked)" : "");
	if (x->nothing_due)
		printf("  claim: nothing is due in the served queues\n");
	else
		printf("  claim from queue %s, priorities %s: %llu jobs for %llu rows read\n", x->queue,
		    x->priorities, (unsigned long long)x->claimed, (unsigned long long)x->claim_rows_read);
	if (x->ordered)
		printf("  order of the types' claims (flow limits): %llu with due jobs, %llu rows read\n",
		    (unsigned long long)x->order_groups, (unsigned long long)x->order_rows_read);
}

/* --explain: how a reservation is served, measured without changing
 * anything. */
static int
explain(const struct conf *c, struct db *db, unsigned batch, int json)
{
	struct explain_report x;
	struct reserve_req req;
	char err[ERRSZ];

	memset(&req, 0, sizeof req);
	req.queues = c->worker.queues;
	req.limit = batch;
	req.ttl_ms = c->worker.reserve_ttl_ms;
	req.worker = "jobq-check-explain";
	req.mode = c->worker.reserve_mode;
	req.flow = c;
	if (req.mode == RESERVE_AUTO && queue_probe(db, &req.mode, err) != DB_OK) {
		cli_error("probe SKIP LOCKED: %s", err);
		return EX_UNAVAILABLE;
	}
	if (queue_explain(db, &req, &x, err) != DB_OK) {
		cli_error("explain: %s", err);
		return EX_UNAVAILABLE;
	}
	if (json)
		print_explain_json(&x, req.mode, batch);
	else
		print_explain(&x, req.mode, batch);
	return 0;
}

enum { OPT_EXPLAIN = 256, OPT_BATCH, OPT_JSON, OPT_REPAIR_COUNTS };

int
cmd_check(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_COMMON_LONGOPTS,
		{ "explain", no_argument, NULL, OPT_EXPLAIN },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "repair-counts", no_argument, NULL, OPT_REPAIR_COUNTS },
		{ NULL, 0, NULL, 0 },
	};
	struct conf *c;
	struct db *db;
	int opt, rc, do_explain = 0, json = 0, repair = 0;
	unsigned batch = 0;
	int64_t v;

	while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		if ((rc = cli_common_opt(opt, "check", usage)) >= 0)
			return rc;
		if (opt == OPT_EXPLAIN)
			do_explain = 1;
		else if (opt == OPT_JSON)
			json = 1;
		else if (opt == OPT_REPAIR_COUNTS)
			repair = 1;
		else if (opt == OPT_BATCH) {
			if (str_to_int64(optarg, 1, 10000, &v) < 0)
				return cli_usage_error(
				    "check", "--batch: expected 1 to 10000, not '%s'", optarg);
			batch = (unsigned)v;
		}
	}
	if (optind < argc)
		return cli_usage_error("check", "unexpected argument '%s'", argv[optind]);
	/* each would be taken and then ignored: say so instead */
	if (!do_explain && (batch > 0 || json))
		return cli_usage_error("check", "%s goes with --explain", batch > 0 ? "--batch" : "--json");
	if (do_explain && repair)
		return cli_usage_error("check", "--repair-counts and --explain: one at a time");
	if ((rc = cli_conf(CONF_CHECK_EXEC, &c)) != 0)
		return rc;
	if (do_explain) {
		if ((rc = cli_connect(c, &db)) == 0) {
			rc = explain(c, db, batch > 0 ? batch : 10, json);
			db_free(db);
		}
		conf_free(c);
		return rc;
	}
	printf("config: %s: ok (%zu queue%s, %zu handler%s, %zu schedule%s)\n", c->path, strv_len(c->queues),
	    strv_len(c->queues) == 1 ? "" : "s", c->nhandlers, c->nhandlers == 1 ? "" : "s", c->nschedules,
	    c->nschedules == 1 ? "" : "s");
	if ((rc = cli_db(c, &db)) == 0) {
		rc = report_db(c, db, repair);
		db_free(db);
	}
	conf_free(c);
	return rc;
}

/* outcome.c -- map a handler's exit status and stderr to done, retry or
 * dead-letter (DESIGN.md section 3).
 *
 * Order of the rules, first match wins:
 *   1. exit 0                               -> done (stderr is not looked at)
 *   2. stderr matches permanent_stderr      -> dead-letter
 *   3. stderr matches retry_stderr          -> retry, whatever the exit code
 *   4. exit code in retry_exit (75)         -> retry
 *   5. exit code in permanent_exit (64-78)  -> dead-letter
 *   6. any other exit, a signal, a timeout,
 *      a program that could not be started  -> retry
 * and a retry becomes a dead-letter when the attempts are used up or the
 * next attempt would start after retry_until. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "duration.h"
#include "outcome.h"

const char *
outcome_name(enum outcome_kind k)
{
	switch (k) {
	case OUTCOME_DONE:
		return "done";
	case OUTCOME_RETRY:
		return "retry";
	default:
		return "dead";
	}
}

/* "exit 65", "killed by SIGSEGV", "timed out after 30s",
 * "exec failed: Permission denied", "chdir failed: No such file...". */
void
outcome_exit_words(const struct exit_info *x, char *out, size_t outlen)
{
	char d[32];

	if (x->failure[0] != '\0')
		snprintf(out, outlen, "%s", x->failure);
	else if (x->exec_errno != 0)
		snprintf(out, outlen, "%s failed: %s", x->start_what[0] ? x->start_what : "exec",
		    strerror(x->exec_errno));
	else if (x->timed_out) {
		duration_format(x->timeout_ms, d, sizeof d);
		snprintf(out, outlen, "timed out after %s", d);
	} else if (x->exited)
		snprintf(out, outlen, "exit %d", x->code);
	else
		snprintf(out, outlen, "killed by %s", signal_name(x->signo));
}

static int
matches(const pcre2_code *re, const char *text)
{
	pcre2_match_data *md;
	int rc;

	if (re == NULL || text == NULL)
		return 0;
	md = pcre2_match_data_create_from_pattern(re, NULL);
	if (md == NULL)
		fatal("pcre2_match_data_create_from_pattern: out of memory");
	/* The text was repaired to valid UTF-8 before it got here. */
	rc = pcre2_match(re, (PCRE2_SPTR)text, strlen(text), 0, PCRE2_NO_UTF_CHECK, md, NULL);
	pcre2_match_data_free(md);
	return rc >= 0;
}

/* The end of every failure: dead when the attempts are used up or the
 * next attempt would start after retry_until, else a retry after the
 * delay: retry_after_ms, when the handler asked for one
 * ({"retry_after"} on its control channel, -1 when not), in place of
 * the backoff.  retry_until is checked once, against the delay used: a
 * backoff that would pass it does not bury a job whose handler asked
 * for less.  words says how the attempt ended. */
static void
retry_or_dead(const struct handler *h, const char *words, unsigned attempt, unsigned max_attempts,
    int64_t age_ms, int64_t retry_after_ms, struct decision *d)
{
	char dur[32];

	if (attempt >= max_attempts) {
		d->kind = OUTCOME_DEAD;
		snprintf(d->reason, sizeof d->reason, "attempts used up (%u of %u; last: %s)", attempt,
		    max_attempts, words);
		return;
	}
	d->delay_ms = retry_after_ms >= 0 ? retry_after_ms : backoff_delay(&h->backoff, attempt);
	if (h->retry_until_ms > 0 && age_ms + d->delay_ms > h->retry_until_ms) {
		d->kind = OUTCOME_DEAD;
		duration_format(h->retry_until_ms, dur, sizeof dur);
		if (retry_after_ms >= 0)
			snprintf(d->reason, sizeof d->reason,
			    "retry_until passed (retry_after asked for more than %s; last: %s)", dur, words);
		else
			snprintf(d->reason, sizeof d->reason,
			    "retry_until passed (no attempt after %s; last: %s)", dur, words);
		d->delay_ms = 0;
	}
}

/* Decides the outcome of attempt number attempt (1-based) of a job that
 * was age_ms old when the handler ended.  max_attempts is the limit in
 * force (the job's own or the handler's); a retry waits retry_after_ms
 * instead of the backoff when that is 0 or more (retry_or_dead). */
void
outcome_decide(const struct handler *h, const struct exit_info *x, const char *stderr_text, unsigned attempt,
    unsigned max_attempts, int64_t age_ms, int64_t retry_after_ms, struct decision *d)
{
	char words[128];

	memset(d, 0, sizeof *d);
	outcome_exit_words(x, words, sizeof words);
	if (x->exited && x->code == 0 && !x->timed_out && x->exec_errno == 0) {
		d->kind = OUTCOME_DONE;
		return;
	}
	d->kind = OUTCOME_RETRY;
	if (matches(h->permanent_stderr, stderr_text)) {
		d->kind = OUTCOME_DEAD;
		snprintf(d->reason, sizeof d->reason, "stderr matched permanent_stderr (%s)", words);
		return;
	}
	if (matches(h->retry_stderr, stderr_text))
		snprintf(d->reason, sizeof d->reason, "stderr matched retry_stderr (%s)", words);
	else if (x->exited && x->exec_errno == 0 && !x->timed_out && !exit_set_has(&h->retry_exit, x->code) &&
	    exit_set_has(&h->permanent_exit, x->code)) {
		d->kind = OUTCOME_DEAD;
		snprintf(d->reason, sizeof d->reason, "%s is a permanent failure", words);
		return;
	} else
		snprintf(d->reason, sizeof d->reason, "%s", words);
	retry_or_dead(h, words, attempt, max_attempts, age_ms, retry_after_ms, d);
}

/* A handler error that its exit status does not show (a bad control
 * channel, say what): retried after the backoff like any other failure
 * (a retry_after on a channel in error is not taken), or dead-lettered
 * when the attempts or retry_until are used up. */
void
outcome_handler_error(const struct handler *h, const char *what, unsigned attempt, unsigned max_attempts,
    int64_t age_ms, struct decision *d)
{
	memset(d, 0, sizeof *d);
	d->kind = OUTCOME_RETRY;
	snprintf(d->reason, sizeof d->reason, "%s", what);
	retry_or_dead(h, what, attempt, max_attempts, age_ms, -1, d);
}

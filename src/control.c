/* control.c -- read a handler's control lines (see control.h).
 *
 * The channel is read whole once the handler has ended (control_parse),
 * and applied with its outcome: follow-ups with a done outcome,
 * retry_after with a retry, the result with the run row.  A channel with
 * any bad line is a handler error, whatever the exit status: applying
 * the good half of what a handler meant is worse than applying none.
 *
 * While the handler runs, the heartbeat only wants the last progress
 * line so far (control_progress), read from the complete lines only: a
 * line still being written is not looked at. */
#include "config.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "duration.h"
#include "json.h"
#include "utf8.h"

#define RETRY_AFTER_MAX_MS (365LL * 24 * 3600 * 1000) /* a year */
#define KINDS "enqueue, retry_after, progress, result or checkpoint"

void
control_init(struct control *ctl)
{
	memset(ctl, 0, sizeof *ctl);
	ctl->retry_after_ms = -1;
	ctl->progress = -1;
}

void
control_free(struct control *ctl)
{
	size_t i;

	for (i = 0; i < ctl->nfollow; i++)
		batch_job_clear(&ctl->follow[i]);
	free(ctl->follow);
	free(ctl->follow_line);
	free(ctl->result);
	free(ctl->checkpoint);
	control_init(ctl);
}

/* A note as stored: valid UTF-8, at most CONTROL_NOTE_MAX bytes, no
 * control characters (it is printed on a terminal). */
static void
copy_note(const char *s, char *out, size_t outlen)
{
	struct buf b;
	size_t i, n;

	buf_init(&b);
	utf8_repair(s, strlen(s), &b);
	n = utf8_valid_prefix(b.data, b.len < outlen - 1 ? b.len : outlen - 1);
	for (i = 0; i < n; i++)
		out[i] = (unsigned char)b.data[i] < 0x20 || b.data[i] == 0x7f ? ' ' : b.data[i];
	out[n] = '\0';
	buf_free(&b);
}

/* {"progress": N, "note": "..."}: 0 <= N <= 100, the note a string. */
static int
get_progress(const cJSON *o, const cJSON *v, int *progress, char *note, size_t notelen, char *err)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, "note");

	if (!cJSON_IsNumber(v) || isnan(v->valuedouble) || v->valuedouble < 0 || v->valuedouble > 100) {
		errf(err, "progress must be a number from 0 to 100");
		return -1;
	}
	if (n != NULL && !cJSON_IsString(n)) {
		errf(err, "note must be a string");
		return -1;
	}
	*progress = (int)v->valuedouble;
	copy_note(n != NULL ? n->valuestring : "", note, notelen);
	return 0;
}

/* "10m" (a jobq duration) or a number of seconds. */
static int
get_retry_after(const cJSON *v, int64_t *ms, char *err)
{
	char why[ERRSZ];

	if (cJSON_IsString(v)) {
		if (duration_parse(v->valuestring, ms, why) < 0) {
			errf(err, "retry_after: %.200s", why);
			return -1;
		}
	} else if (cJSON_IsNumber(v) && v->valuedouble >= 0 &&
	    v->valuedouble <= (double)(RETRY_AFTER_MAX_MS / 1000))
		*ms = (int64_t)(v->valuedouble * 1000);
	else {
		errf(err, "retry_after must be a duration (\"10m\") or a number of seconds from 0 to a year");
		return -1;
	}
	if (*ms > RETRY_AFTER_MAX_MS) {
		errf(err, "retry_after is longer than a year");
		return -1;
	}
	return 0;
}

/* A follow-up's "ref" and the refs in its "after": a ref names one
 * earlier follow-up of the same run (so that no cycle can be written),
 * resolved to its index for the outcome's transaction. */
static int
resolve_refs(const struct control *ctl, struct batch_job *job, char *err)
{
	size_t i, k;

	for (k = 0; job->ref != NULL && k < ctl->nfollow; k++)
		if (ctl->follow[k].ref != NULL && strcmp(ctl->follow[k].ref, job->ref) == 0) {
			errf(err, "enqueue: \"ref\": \"%s\" names an earlier follow-up already", job->ref);
			return -1;
		}
	if (job->nafter_refs == 0)
		return 0;
	job->after_idx = xcalloc(job->nafter_refs, sizeof *job->after_idx);
	for (i = 0; i < job->nafter_refs; i++) {
		for (k = 0; k < ctl->nfollow; k++)
			if (ctl->follow[k].ref != NULL && strcmp(ctl->follow[k].ref, job->after_refs[i]) == 0)
				break;
		if (k == ctl->nfollow) {
			errf(err, "enqueue: \"after\": \"%s\" is not the ref of an earlier follow-up",
			    job->after_refs[i]);
			return -1;
		}
		job->after_idx[i] = k;
	}
	job->e.after_refs = job->after_idx;
	job->e.nafter_refs = job->nafter_refs;
	return 0;
}

/* {"enqueue": {...}}: checked as a line of `enqueue --batch` is. */
static int
get_follow(const struct conf *c, const cJSON *v, struct control *ctl, char *err)
{
	struct batch_ctx bx;
	struct batch_job job;
	char why[ERRSZ];
	char *text;
	int rc;

	if (!cJSON_IsObject(v)) {
		errf(err, "enqueue must be an object {\"type\": ..., \"payload\": ...}");
		return -1;
	}
	memset(&bx, 0, sizeof bx);
	bx.conf = c;
	bx.follow_up = 1;
	text = cJSON_PrintUnformatted(v);
	if (text == NULL)
		fatal("cJSON_PrintUnformatted: out of memory");
	rc = batch_line_parse(text, strlen(text), &bx, &job, why);
	free(text);
	if (rc < 0) {
		errf(err, "enqueue: %.400s", why);
		return -1;
	}
	if (resolve_refs(ctl, &job, err) < 0) {
		batch_job_clear(&job);
		return -1;
	}
	ctl->follow = xrealloc(ctl->follow, (ctl->nfollow + 1) * sizeof *ctl->follow);
	ctl->follow[ctl->nfollow++] = job;
	return 0;
}

/* {"result": V} and {"checkpoint": V}: V as compact JSON of at most max
 * bytes, valid UTF-8, into *dst (the newest wins). */
static int
get_json(const cJSON *v, const char *what, size_t max, char **dst, char *err)
{
	char *text = cJSON_PrintUnformatted(v);
	size_t len;

	if (text == NULL)
		fatal("cJSON_PrintUnformatted: out of memory");
	len = strlen(text);
	if (len > max || utf8_valid_prefix(text, len) != len) {
		if (len > max)
			errf(err, "%s is %zu bytes as JSON, more than %zu", what, len, max);
		else
			errf(err, "%s is not valid UTF-8 (%zu bytes)", what, len);
		free(text);
		return -1;
	}
	free(*dst);
	*dst = text;
	return 0;
}

/* The one key of o that says what the line is; NULL (err set) when it
 * has none, several, or one that is not known. */
static const cJSON *
line_kind(const cJSON *o, char *err)
{
	static const char *const kinds[] = { "enqueue", "retry_after", "progress", "result", "checkpoint" };
	const cJSON *v, *found = NULL;
	size_t i;

	for (v = o->child; v != NULL; v = v->next) {
		for (i = 0; i < ARRAY_LEN(kinds); i++)
			if (strcmp(v->string, kinds[i]) == 0)
				break;
		if (i == ARRAY_LEN(kinds) &&
		    !(strcmp(v->string, "note") == 0 && cJSON_GetObjectItemCaseSensitive(o, "progress"))) {
			errf(err, "unknown key '%.40s' (expected " KINDS ")", v->string);
			return NULL;
		}
		if (i < ARRAY_LEN(kinds) && found != NULL) {
			errf(err, "two keys '%s' and '%s' on one line (one a line)", found->string, v->string);
			return NULL;
		}
		if (i < ARRAY_LEN(kinds))
			found = v;
	}
	if (found == NULL)
		errf(err, "no key (expected " KINDS ")");
	return found;
}

/* Applies one line to ctl. */
static int
parse_line(const struct conf *c, const char *s, size_t len, struct control *ctl, char *err)
{
	const cJSON *v;
	size_t at;
	cJSON *o;
	int rc = -1;

	if (memchr(s, '\0', len) != NULL) {
		errf(err, "not JSON (a NUL byte)");
		return -1;
	}
	if ((o = json_parse_exact(s, len, &at)) == NULL) {
		if (json_too_deep(s, len, at))
			errf(err, "arrays and objects nested deeper than %d levels (at byte %zu)",
			    CJSON_NESTING_LIMIT, at);
		else
			errf(err, "not JSON (at byte %zu)", at);
		return -1;
	}
	if (!cJSON_IsObject(o))
		errf(err, "not a JSON object");
	else if ((v = line_kind(o, err)) == NULL)
		;
	else if (strcmp(v->string, "enqueue") == 0)
		rc = get_follow(c, v, ctl, err);
	else if (strcmp(v->string, "retry_after") == 0)
		rc = get_retry_after(v, &ctl->retry_after_ms, err);
	else if (strcmp(v->string, "progress") == 0)
		rc = get_progress(o, v, &ctl->progress, ctl->note, sizeof ctl->note, err);
	else if (strcmp(v->string, "result") == 0)
		rc = get_json(v, "result", CONTROL_RESULT_MAX, &ctl->result, err);
	else
		rc = get_json(v, "checkpoint", CONTROL_CHECKPOINT_MAX, &ctl->checkpoint, err);
	cJSON_Delete(o);
	return rc;
}

/* Whether s[0..len) holds only blanks. */
static int
blank(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return 0;
	return 1;
}

/* Reads every line of buf[0..len), the channel of a handler that has
 * ended (a last line without its newline counts); overflow says that the
 * handler wrote more than the channel keeps; linenos, when not NULL,
 * the number each line had as the handler wrote it (the runner keeps
 * only the newest progress line, and the checkpoint apart).  See
 * control.h. */
int
control_parse(const struct conf *c, const char *buf, size_t len, int overflow, const size_t *linenos,
    struct control *ctl, char *err)
{
	size_t pos = 0, lineno = 0;
	char why[ERRSZ];

	control_init(ctl);
	if (overflow) {
		errf(err, "control channel: more than %d bytes written (the most it keeps)", CONTROL_CHANNEL_MAX);
		return -1;
	}
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t n = nl != NULL ? (size_t)(nl - (buf + pos)) : len - pos, had = ctl->nfollow;
		size_t shown;

		lineno++;
		shown = linenos != NULL ? linenos[lineno - 1] : lineno;
		if (!blank(buf + pos, n) && parse_line(c, buf + pos, n, ctl, why) < 0) {
			errf(err, "control channel line %zu: %.440s", shown, why);
			batch_err_visible(err);
			control_free(ctl);
			return -1;
		}
		if (ctl->nfollow > had) { /* a follow-up: its line, for a later check's message */
			ctl->follow_line =
			    xrealloc(ctl->follow_line, ctl->nfollow * sizeof *ctl->follow_line);
			ctl->follow_line[had] = shown;
		}
		pos += n + (nl != NULL);
	}
	return 0;
}

/* Whether line[0..len) (no newline) is a well-formed progress line:
 * fills *progress and note when it is.  The same rules as control_parse. */
static int
one_progress(const char *line, size_t len, int *progress, char *note, size_t notelen)
{
	char err[ERRSZ];
	const cJSON *v;
	size_t at;
	cJSON *o;
	int found = 0;

	if (memmem(line, len, "\"progress\"", 10) == NULL || memchr(line, '\0', len) != NULL ||
	    (o = json_parse_exact(line, len, &at)) == NULL)
		return 0;
	v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, "progress") : NULL;
	found = v != NULL && line_kind(o, err) == v && get_progress(o, v, progress, note, notelen, err) == 0;
	cJSON_Delete(o);
	return found;
}

/* Whether line[0..len) is a well-formed progress line: the reader keeps
 * only the newest of those, since progress is a value, not a log (a
 * handler may report it a million times without filling the channel). */
int
control_is_progress(const char *line, size_t len)
{
	char note[CONTROL_NOTE_MAX + 1];
	int progress;

	return one_progress(line, len, &progress, note, sizeof note);
}

/* The last well-formed progress line among the complete lines of
 * buf[0..len) (a handler still running may be in the middle of one):
 * 1 with *progress and note set, 0 when there is none. */
int
control_progress(const char *buf, size_t len, int *progress, char *note, size_t notelen)
{
	size_t end = len;

	while (end > 0 && buf[end - 1] != '\n')
		end--; /* drop an unfinished line */
	while (end > 0) {
		size_t start = end - 1;

		while (start > 0 && buf[start - 1] != '\n')
			start--;
		if (one_progress(buf + start, end - 1 - start, progress, note, notelen))
			return 1;
		end = start;
	}
	return 0;
}

/* The line's checkpoint value, when line[0..len) is a checkpoint line
 * ({"checkpoint": V} and nothing else); NULL when it is not one. */
static cJSON *
checkpoint_line(const char *line, size_t len, cJSON **o)
{
	char err[ERRSZ];
	cJSON *v;
	size_t at;

	*o = NULL;
	if (memmem(line, len, "\"checkpoint\"", 12) == NULL || memchr(line, '\0', len) != NULL ||
	    (*o = json_parse_exact(line, len, &at)) == NULL)
		return NULL;
	v = cJSON_IsObject(*o) ? cJSON_GetObjectItemCaseSensitive(*o, "checkpoint") : NULL;
	return v != NULL && line_kind(*o, err) == v ? v : NULL;
}

/* Whether line[0..len) is a checkpoint line, whatever its value: the
 * reader keeps only the newest of those, apart from the other lines and
 * not counted toward CONTROL_CHANNEL_MAX (a checkpoint may be as large
 * as the channel).  control_parse still checks its value. */
int
control_is_checkpoint(const char *line, size_t len)
{
	cJSON *o;
	int found = checkpoint_line(line, len, &o) != NULL;

	cJSON_Delete(o);
	return found;
}

/* The value of the checkpoint line line[0..len) as compact JSON (the
 * caller frees it), or NULL when the line is not a checkpoint line or
 * its value is not one control_parse would take: what the heartbeat
 * stores while the handler runs. */
char *
control_checkpoint(const char *line, size_t len)
{
	char err[ERRSZ], *text = NULL;
	cJSON *o, *v = checkpoint_line(line, len, &o);

	if (v != NULL && get_json(v, "checkpoint", CONTROL_CHECKPOINT_MAX, &text, err) < 0)
		text = NULL;
	cJSON_Delete(o);
	return text;
}

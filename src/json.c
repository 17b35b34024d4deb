/* json.c -- JSON parsing rules shared by every reader of handler and user
 * input.  cJSON stops at the end of the first value and ignores what
 * follows; jobq's inputs are one value each, so `{"status": 0} garbage`
 * must be refused, not read as a status. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "json.h"
#include "utf8.h"

/* Parses exactly one JSON value filling s[0..len), blanks (space, tab,
 * CR, LF) around it allowed; NULL otherwise, *at then says at which byte
 * it went wrong.  s need not be NUL-terminated. */
cJSON *
json_parse_exact(const char *s, size_t len, size_t *at)
{
	const char *end = NULL;
	cJSON *j;
	size_t i;

	/* cJSON skips every byte up to 32 as white space, NUL included;
	 * JSON allows no control character but tab, newline and return,
	 * anywhere.  One raw inside a string cJSON takes as it is: lines
	 * from handlers may carry one (their notes are cleaned after), and
	 * a payload is held to JSON itself by json_payload_check. */
	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') {
			*at = i;
			return NULL;
		}
	j = cJSON_ParseWithLengthOpts(s, len, &end, 0);

	if (end == NULL || end < s || end > s + len)
		end = s;
	while (j != NULL && end < s + len && (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n'))
		end++;
	if (j != NULL && end != s + len) {
		cJSON_Delete(j);
		j = NULL;
	}
	*at = (size_t)(end - s);
	return j;
}

/* Whether cJSON refused s at byte at because its arrays and objects nest
 * deeper than it reads (CJSON_NESTING_LIMIT): valid JSON, so "not JSON"
 * would name the wrong problem.  Counts the brackets outside strings in
 * s[0..at]. */
int
json_too_deep(const char *s, size_t len, size_t at)
{
	size_t i, depth = 0;
	int in_string = 0;

	for (i = 0; i <= at && i < len; i++) {
		if (in_string) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				in_string = 0;
		} else if (s[i] == '"')
			in_string = 1;
		else if ((s[i] == '[' || s[i] == '{') && ++depth > CJSON_NESTING_LIMIT)
			return 1;
		else if ((s[i] == ']' || s[i] == '}') && depth > 0)
			depth--;
	}
	return 0;
}

/* Where in p[0..len), valid JSON to cJSON, a raw control character
 * sits inside a string, or len if none.  cJSON reads one as it is, and
 * the handler's own parser (Python's json, PHP's json_decode) refuses
 * the whole payload: a job that could never run. */
static size_t
raw_control_in_string(const char *p, size_t len)
{
	size_t i;
	int in_string = 0;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c < 0x20 && in_string)
			return i;
		if (in_string && c == '\\')
			i++; /* the escaped byte: cJSON judged the escape */
		else if (c == '"')
			in_string = !in_string;
	}
	return len;
}

/* Whether p[0..len) may be stored as a job's payload: at most max bytes,
 * no NUL, UTF-8, and one JSON value (not checked again when known_json:
 * cJSON's own output is).  0, or -1 with err saying what is wrong and
 * where.  The one rule for every path a payload comes in by (enqueue,
 * an edited retry), so that what one accepts the worker can run. */
int
json_payload_check(const char *p, size_t len, size_t max, int known_json, char *err)
{
	const char *nul;
	size_t ok, at;
	cJSON *j;

	if (len > max)
		return errf(err, "payload is %zu bytes, more than max_payload (%zu)", len, max), -1;
	if ((nul = memchr(p, '\0', len)) != NULL)
		return errf(err, "payload contains a NUL byte at byte %zu", (size_t)(nul - p)), -1;
	for (ok = 0; ok < len && (unsigned char)p[ok] < 0x80; ok++) /* the common case, fast */
		;
	if (ok < len && (ok += utf8_valid_prefix(p + ok, len - ok)) != len)
		return errf(err, "payload is not valid UTF-8 (at byte %zu)", ok), -1;
	if (known_json)
		return 0;
	for (at = 0; at < len && strchr(" \t\r\n", p[at]) != NULL; at++)
		;
	if (at == len) /* an empty stdin, most often */
		return errf(err, "payload is empty (a job's payload is one JSON value, e.g. {})"), -1;
	if ((j = json_parse_exact(p, len, &at)) == NULL && json_too_deep(p, len, at))
		return errf(err, "payload nests arrays and objects deeper than %d levels (at byte %zu)",
		           CJSON_NESTING_LIMIT, at),
		       -1;
	if (j == NULL)
		return errf(err, "payload is not valid JSON (at byte %zu)", at), -1;
	cJSON_Delete(j);
	if ((at = raw_control_in_string(p, len)) < len)
		return errf(err, "payload is not valid JSON (at byte %zu: a control character inside a string, "
		                 "which must be escaped)",
		           at),
		       -1;
	return 0;
}

/* Turns v, when it is a whole number under 10^15 in magnitude, and each
 * such number below it into raw text of its digits.  For such a number
 * cJSON's "%1.15g" writes exactly those digits, so the text printed does
 * not change; -0 is left to cJSON ("-0"). */
static void
raw_integers(cJSON *v)
{
	double d = v->valuedouble;
	char digits[24], *end = digits + sizeof digits, *p = end;
	cJSON *c;
	uint64_t n;

	for (c = v->child; c != NULL; c = c->next)
		raw_integers(c);
	if (!cJSON_IsNumber(v) || d != floor(d) || fabs(d) >= 1e15 || (d == 0 && signbit(d)))
		return;
	n = (uint64_t)fabs(d);
	*--p = '\0';
	do
		*--p = (char)('0' + n % 10);
	while ((n /= 10) > 0);
	if (d < 0)
		*--p = '-';
	if ((v->valuestring = cJSON_malloc((size_t)(end - p))) == NULL)
		return; /* left a number: printed the slow way */
	memcpy(v->valuestring, p, (size_t)(end - p));
	v->type = cJSON_Raw;
}

/* Prints v as cJSON_PrintUnformatted does, byte for byte, but without
 * its slow path for the common numbers: cJSON 1.7.15 writes every number
 * with "%1.15g" and reads it back with sscanf to check it, a fifth of
 * the client's time in a bulk enqueue of payloads that carry ids.  Whole
 * numbers become raw text first (raw_integers), so v is changed: print
 * it last, just before it is deleted.  NULL when out of memory. */
char *
json_print_compact(cJSON *v)
{
	raw_integers(v);
	return cJSON_PrintUnformatted(v);
}

/* Whether the JSON text s[0..len) has the escape \u0000 (a backslash
 * before it escaped by none): cJSON would cut the string there, and the
 * value read would silently lose the rest. */
int
json_has_escaped_nul(const char *s, size_t len)
{
	size_t i, k;

	for (i = 0; i + 6 <= len; i++) {
		if (memcmp(s + i, "\\u0000", 6) != 0)
			continue;
		for (k = 0; k < i && s[i - k - 1] == '\\'; k++)
			;
		if (k % 2 == 0)
			return 1;
	}
	return 0;
}

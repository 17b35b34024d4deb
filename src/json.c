/* json.c -- JSON parsing rules shared by every reader of handler and user
 * input.  cJSON stops at the end of the first value and ignores what
 * follows; jobq's inputs are one value each, so `{"status": 0} garbage`
 * must be refused, not read as a status. */
#include "config.h"

#include "json.h"

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
	 * anywhere (one in a string is written escaped). */
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

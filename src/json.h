/* json.h -- JSON parsing rules shared by every reader of handler and user
 * input (batch lines, control lines, the persistent status line). */
#ifndef JOBQ_JSON_H
#define JOBQ_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>

cJSON *json_parse_exact(const char *s, size_t len, size_t *at);
char *json_print_compact(cJSON *v);
int json_payload_check(const char *p, size_t len, size_t max, int known_json, char *err);
int json_too_deep(const char *s, size_t len, size_t at);
int json_has_escaped_nul(const char *s, size_t len);

#endif

/* otlp_json.h -- the body of an OTLP/HTTP JSON export request. */
#ifndef JOBQ_OTLP_JSON_H
#define JOBQ_OTLP_JSON_H

#include <stddef.h>

#include "otlp.h"

char *otlp_json_request(const struct otlp_span *spans, size_t n, const char *instance);

#endif

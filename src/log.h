/* log.h -- one line per event on stderr, as text or as JSON. */
#ifndef JOBQ_LOG_H
#define JOBQ_LOG_H

#include <stdint.h>

#include "util.h"

enum log_format { LOG_TEXT, LOG_JSON };
enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

/* One field of a structured line: a string or a number. */
struct log_field {
	const char *key;
	const char *str; /* NULL: use num */
	int64_t num;
};

static inline struct log_field
lf_str(const char *k, const char *v)
{
	struct log_field f = { k, v != NULL ? v : "", 0 };

	return f;
}

#define LF_S(k, v) lf_str((k), (v))
#define LF_N(k, v) ((struct log_field){ (k), NULL, (int64_t)(v) })

void log_set_format(enum log_format f);
void log_set_verbose(int verbose);
void log_set_level(enum log_level level);
int log_level_parse(const char *s, enum log_level *level);
int log_format_parse(const char *s, enum log_format *f);
void log_msg(enum log_level level, const char *fmt, ...) PRINTFLIKE(2, 3);
void log_escape(struct buf *b, const char *s);
void log_fields(enum log_level level, const char *msg, const struct log_field *f, int n);

#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif

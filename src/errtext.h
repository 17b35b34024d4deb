/* errtext.h -- the one line that names a handler's error. */
#ifndef JOBQ_ERRTEXT_H
#define JOBQ_ERRTEXT_H

/* The most bytes of an error text a list reads to find its summary:
 * the head and the tail of a long text (a Python traceback names its
 * error last), joined by a newline.  For SELECT lists: ERRTEXT_SQL(col). */
#define ERRTEXT_SQL(col)                             \
	"IF(CHAR_LENGTH(" col ") <= 4096, " col ", " \
	"CONCAT(LEFT(" col ", 2048), '\\n', RIGHT(" col ", 2048)))"

/* The longest summary, in bytes (cut on a character boundary). */
#define ERRTEXT_SUMMARY_MAX 500

char *errtext_summary(const char *text);
char *errtext_summary_or(const char *text, const char *reason);

#endif

/* serve_www.h -- the dashboard's static files, compiled into the binary
 * (serve_www.c, generated from src/www/ by build-aux/www2c.sh). */
#ifndef JOBQ_SERVE_WWW_H
#define JOBQ_SERVE_WWW_H

#include <stddef.h>

struct www_file {
	const char *path; /* "/static/app.js" */
	const char *type;
	const char *data;
	size_t len;
};
extern const struct www_file www_files[];
extern const size_t www_nfiles;

#endif

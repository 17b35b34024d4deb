/* testconf.h -- a configuration from text, for the unit tests and fuzz
 * targets: written to jobq.ini in a private folder under $TMPDIR
 * (default /tmp), loaded, and the folder removed again at once. */
#ifndef JOBQ_TESTCONF_H
#define JOBQ_TESTCONF_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "util.h"

/* Aborts, naming who, when the text does not load. */
static inline struct conf *
testconf_load(const char *who, const char *text)
{
	const char *tmp = getenv("TMPDIR");
	char *dir = xasprintf("%s/jobq-%s.XXXXXX", tmp && *tmp ? tmp : "/tmp", who), *path;
	struct buf errors, warnings;
	struct conf *c;
	FILE *fp;

	if (mkdtemp(dir) == NULL)
		fatal("mkdtemp %s: %s", dir, strerror(errno));
	path = xasprintf("%s/jobq.ini", dir);
	if ((fp = fopen(path, "w")) == NULL || fputs(text, fp) < 0 || fclose(fp) != 0)
		fatal("write %s: %s", path, strerror(errno));
	buf_init(&errors);
	buf_init(&warnings);
	if ((c = conf_load(path, 0, &errors, &warnings)) == NULL)
		fatal("%s: the configuration does not load: %s", who, errors.data ? errors.data : "?");
	buf_free(&errors);
	buf_free(&warnings);
	unlink(path);
	rmdir(dir);
	free(path);
	free(dir);
	return c;
}

#endif

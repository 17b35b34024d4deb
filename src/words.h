/* words.h -- split a command line into words the way a shell would. */
#ifndef JOBQ_WORDS_H
#define JOBQ_WORDS_H

char **words_split(const char *s, char *err);

#endif

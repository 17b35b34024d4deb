/* password.h -- dashboard passwords: read from a terminal or stdin, and
 * hashed with argon2id, for `jobq passwd`, `jobq user` and the Users page. */
#ifndef JOBQ_PASSWORD_H
#define JOBQ_PASSWORD_H

#include <stddef.h>

#define PASSWORD_MAX 1024 /* bytes of a password */
#define PASSWORD_MIN 8    /* characters, at least */
#define PASSWORD_HASH_MAX 128 /* crypto_pwhash_STRBYTES, with its NUL */

int password_read(const char *cmd, int from_stdin, char *pw, size_t len);
int password_hash(const char *pw, char *hash, char *err);

#endif

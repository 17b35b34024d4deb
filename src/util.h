/* util.h -- memory, strings, growable buffers, clocks and error text. */
#ifndef JOBQ_UTIL_H
#define JOBQ_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Every recoverable error is reported into a caller-owned buffer of ERRSZ
 * bytes; functions return 0 on success and -1 (or a negative code) on
 * failure. */
#define ERRSZ 512

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__GNUC__)
#define PRINTFLIKE(f, a) __attribute__((format(printf, f, a)))
#define NORETURN __attribute__((noreturn))
#else
#define PRINTFLIKE(f, a)
#define NORETURN
#endif

/* Growable byte buffer; data is always NUL-terminated. */
struct buf {
	char *data;
	size_t len;
	size_t cap;
};

void fatal(const char *fmt, ...) PRINTFLIKE(1, 2) NORETURN;
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
void *xgrow(void *p, size_t n, size_t more, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xstrdup_or_null(const char *s);
char *xstrdup_or_empty(const char *s);
char *xasprintf(const char *fmt, ...) PRINTFLIKE(1, 2);
void errf(char *err, const char *fmt, ...) PRINTFLIKE(2, 3);

void buf_init(struct buf *b);
void buf_free(struct buf *b);
void buf_reset(struct buf *b);
void buf_reserve(struct buf *b, size_t extra);
void buf_add(struct buf *b, const void *data, size_t len);
void buf_adds(struct buf *b, const char *s);
void buf_addc(struct buf *b, char c);
void buf_printf(struct buf *b, const char *fmt, ...) PRINTFLIKE(2, 3);
void buf_add_ids(struct buf *b, const uint64_t *v, size_t n);
void buf_vprintf(struct buf *b, const char *fmt, va_list ap);
char *buf_steal(struct buf *b);

int64_t mono_ms(void);
int64_t mono_us(void);
void wall_iso8601(char *out, size_t outlen);
const char *signal_name(int sig);
int str_to_int64(const char *s, int64_t min, int64_t max, int64_t *out);
int size_parse(const char *s, size_t *out, char *err);
void strv_free(char **v);
size_t strv_len(char *const *v);
char *str_trim(char *s);
int split_list(const char *s, char ***out);
void random_hex(char *out, size_t nbytes);
uint32_t random_u32(void);

#endif

/* control.c -- unit tests of control.c: a handler's control lines. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control.h"
#include "util.h"

#include "../tap.h"

static const struct conf *conf;

/* Parses text; returns the rc, err and ctl for the caller to look at. */
static int
parse(const char *text, struct control *ctl, char *err)
{
	err[0] = '\0';
	return control_parse(conf, text, strlen(text), 0, NULL, ctl, err);
}

static void
good(const char *text, const char *name)
{
	struct control ctl;
	char err[ERRSZ];

	ok(parse(text, &ctl, err) == 0, "accepted: %s", name);
	if (err[0] != '\0')
		printf("#   error: %s\n", err);
	control_free(&ctl);
}

static void
bad(const char *text, const char *want, const char *name)
{
	struct control ctl;
	char err[ERRSZ];
	int rc = parse(text, &ctl, err);

	ok(rc == -1 && strstr(err, want) != NULL, "refused: %s", name);
	if (rc != -1 || strstr(err, want) == NULL)
		printf("#   got: '%s'\n#   want: '%s'\n", err, want);
	ok(ctl.nfollow == 0 && ctl.result == NULL && ctl.retry_after_ms == -1, "refused leaves nothing: %s",
	    name);
	control_free(&ctl);
}

static void
test_lines(void)
{
	struct control ctl;
	char err[ERRSZ];

	ok(parse("", &ctl, err) == 0 && ctl.nfollow == 0 && ctl.progress == -1 && ctl.result == NULL &&
	        ctl.retry_after_ms == -1,
	    "an empty channel says nothing");
	control_free(&ctl);
	ok(parse("{\"enqueue\": {\"type\": \"a\", \"payload\": {\"x\": 1}}}\n"
	         "{\"progress\": 40, \"note\": \"half\"}\n"
	         "\n"
	         "{\"enqueue\": {\"type\": \"b\", \"payload\": [1], \"queue\": \"q2\", \"delay\": \"10m\"}}\n"
	         "{\"progress\": 70.5}\n"
	         "{\"retry_after\": \"10m\"}\n"
	         "{\"result\": {\"rows\": 3}}",
	       &ctl, err) == 0,
	    "a channel of every kind of line");
	ok(ctl.nfollow == 2, "two follow-ups");
	is_str(ctl.nfollow == 2 ? ctl.follow[0].e.type : NULL, "a", "first follow-up's type");
	is_str(ctl.nfollow == 2 ? ctl.follow[0].e.queue : NULL, "default", "its queue: the handler's");
	is_str(ctl.nfollow == 2 ? ctl.follow[0].e.payload : NULL, "{\"x\":1}", "its payload");
	is_str(ctl.nfollow == 2 ? ctl.follow[1].e.queue : NULL, "q2", "second follow-up's queue");
	ok(ctl.nfollow == 2 && ctl.follow[1].e.delay_ms == 600000, "second follow-up's delay");
	is_int(ctl.progress, 70, "the last progress wins");
	is_str(ctl.note, "", "a progress line without a note clears the note");
	ok(ctl.retry_after_ms == 600000, "retry_after 10m");
	is_str(ctl.result, "{\"rows\":3}", "the result, compact");
	control_free(&ctl);
	ok(parse("{\"retry_after\": 90}\r\n", &ctl, err) == 0 && ctl.retry_after_ms == 90000,
	    "retry_after as seconds, CRLF line");
	control_free(&ctl);
	good("{\"result\": \"ok\"}\n{\"result\": null}\n", "results: the last wins");
	good("  {\"progress\": 0}  \n", "blanks around a line");
}

static void
test_bad(void)
{
	char big[CONTROL_RESULT_MAX + 64];
	struct control ctl;
	char err[ERRSZ];

	bad("{\"progress\": 1}\nhello\n", "control channel line 2: not JSON", "not JSON");
	bad("[1, 2]\n", "line 1: not a JSON object", "an array");
	bad("{\"enqeue\": {}}\n", "unknown key 'enqeue'", "a misspelt key");
	bad("{}\n", "no key", "an empty object");
	bad("{\"result\": 1, \"progress\": 2}\n", "two keys", "two keys on one line");
	bad("{\"note\": \"x\"}\n", "unknown key 'note'", "a note without progress");
	bad("{\"progress\": 101}\n", "progress must be a number from 0 to 100", "progress over 100");
	bad("{\"progress\": \"40\"}\n", "progress must be a number", "progress as a string");
	bad("{\"progress\": 4, \"note\": 5}\n", "note must be a string", "a note that is a number");
	bad("{\"retry_after\": \"soon\"}\n", "retry_after:", "retry_after not a duration");
	bad("{\"retry_after\": -1}\n", "retry_after must be", "negative retry_after");
	bad("{\"retry_after\": true}\n", "retry_after must be", "retry_after a boolean");
	bad("{\"enqueue\": 1}\n", "enqueue must be an object", "enqueue not an object");
	bad("{\"enqueue\": {\"type\": \"nope\", \"payload\": {}}}\n", "unknown job type 'nope'",
	    "a type not in the whitelist");
	bad("{\"enqueue\": {\"type\": \"a\", \"payload\": {}, \"queue\": \"nope\"}}\n", "unknown queue 'nope'",
	    "a queue not in the whitelist");
	bad("{\"enqueue\": {\"type\": \"a\", \"payload\": \"" /* over max_payload 64 bytes */
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}}\n",
	    "more than max_payload", "a payload over max_payload");
	bad("{\"progress\": 1}\n{\"enqueue\": {\"type\": \"a\", \"delay\": \"soon\"}}\n", "line 2: enqueue:",
	    "a follow-up with a bad delay");
	bad("{\"enqueue\": {\"type\": \"a\", \"payload\": {}}}\n{\"x\":\n", "line 2", "a good line then a bad one");
	bad("{\"bad\\u0001key\": 1}\n", "unknown key 'bad\\x01key'", "control characters made visible");
	bad("{\"status\x01\": 1}\n", "not JSON", "a raw control character is not JSON (cJSON would take it for a blank)");
	/* 1,001 arrays deep: JSON, deeper than cJSON reads */
	memset(big, '[', 1001);
	memset(big + 1001, ']', 1001);
	memcpy(big + 2002, "\n", 2);
	bad(big, "line 1: arrays and objects nested deeper than 1000 levels (at byte 1000)", "nesting too deep");
	/* the same brackets inside a string are text */
	memcpy(big, "{\"result\": \"", 12);
	memcpy(big + 1500, "\"}\n", 4);
	good(big, "brackets inside a string do not count as depth");
	memset(big, 'a', sizeof big);
	memcpy(big, "{\"result\": \"", 12);
	memcpy(big + sizeof big - 4, "\"}\n", 4);
	bad(big, "more than 16384", "a result over the bound");
	ok(control_parse(conf, "{}", 2, 1, NULL, &ctl, err) == -1 && strstr(err, "more than 65536 bytes") != NULL,
	    "overflow of the channel is an error");
	control_free(&ctl);
}

static void
test_progress(void)
{
	char note[CONTROL_NOTE_MAX + 1];
	const char *s;
	int p = -1;

	s = "{\"progress\": 10, \"note\": \"a\"}\n{\"progress\": 20, \"note\": \"b\"}\n{\"progress\": 30";
	ok(control_progress(s, strlen(s), &p, note, sizeof note) == 1 && p == 20 && strcmp(note, "b") == 0,
	    "progress: the last complete line, not the one being written");
	s = "{\"progress\": 10}\n{\"result\": 1}\ngarbage\n";
	ok(control_progress(s, strlen(s), &p, note, sizeof note) == 1 && p == 10,
	    "progress: other lines and garbage are passed over");
	s = "{\"result\": 1}\n";
	ok(control_progress(s, strlen(s), &p, note, sizeof note) == 0, "progress: none written");
	s = "{\"progress\": 50, \"note\": \"tab\there\"}\n";
	ok(control_progress(s, strlen(s), &p, note, sizeof note) == 1 && strcmp(note, "tab here") == 0,
	    "progress: control characters in a note become spaces");
}

/* Checkpoints: parsed with the rest (the newest wins, bounded), and
 * read on their own for the heartbeat; a follow-up's traceparent. */
static void
test_checkpoint(void)
{
	static char big[CONTROL_CHECKPOINT_MAX + 32];
	struct control ctl;
	char err[ERRSZ], *text;
	const char *s;

	s = "{\"checkpoint\": {\"row\": 1000}}\n{\"progress\": 5}\n{\"checkpoint\": {\"row\": 2000}}\n";
	ok(parse(s, &ctl, err) == 0, "checkpoint lines are taken");
	is_str(ctl.checkpoint, "{\"row\":2000}", "checkpoint: the newest wins, compact");
	control_free(&ctl);
	ok(control_is_checkpoint(s, strcspn(s, "\n")), "a checkpoint line is one");
	ok(!control_is_checkpoint("{\"result\": \"checkpoint\"}", 25), "a result that says checkpoint is not");
	ok(!control_is_checkpoint("{\"checkpoint\": 1, \"result\": 2}", 31), "two keys are no checkpoint line");
	text = control_checkpoint(s, strcspn(s, "\n"));
	is_str(text, "{\"row\":1000}", "control_checkpoint: the value, compact");
	free(text);
	memset(big, 'a', sizeof big);
	memcpy(big, "{\"checkpoint\": \"", 16);
	memcpy(big + sizeof big - 4, "\"}\n", 4);
	ok(control_is_checkpoint(big, strlen(big) - 1), "an oversized checkpoint line is still one (kept apart)");
	ok(control_checkpoint(big, strlen(big) - 1) == NULL, "but the heartbeat does not store it");
	bad(big, "checkpoint is 65550 bytes as JSON, more than 65536", "a checkpoint over 64 KiB");
	good("{\"enqueue\": {\"type\": \"a\", \"traceparent\": "
	     "\"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\"}}\n",
	    "a follow-up with a traceparent");
	bad("{\"enqueue\": {\"type\": \"a\", \"traceparent\": \"00-x\"}}\n", "enqueue: \"traceparent\": expected",
	    "a follow-up with a bad traceparent");
}

int
main(void)
{
	struct conf *c = tap_conf("control",
	    "[worker]\nmax_payload = 64\n[queue default]\n[queue q2]\n[handler a]\nexec = /bin/true\n"
	    "[handler b]\nexec = /bin/true\n");

	conf = c;
	test_lines();
	test_bad();
	test_progress();
	test_checkpoint();
	conf_free(c);
	return done();
}

#!/usr/bin/env php
<?php
// log_event.php -- a jobq handler in PHP: append the payload's event to
// EVENT_LOG as one JSON line.  Payload: {"event": "signup", ...}.
// Exit 65 (bad data: dead-letter now) when the payload has no event;
// 75 (try again later) when the log cannot be written.  Safe to run twice
// for one job (at-least-once delivery): a line carries the job id, so a
// duplicate is easy to spot.
$job = json_decode(stream_get_contents(STDIN), true);
if (!is_array($job) || !isset($job['event']) || !is_string($job['event'])) {
    fwrite(STDERR, "log_event: payload needs a string \"event\"\n");
    exit(65);
}
$line = json_encode(['job' => getenv('JOBQ_JOB_ID'), 'event' => $job['event'],
    'attempt' => (int)getenv('JOBQ_ATTEMPT')]) . "\n";
if (@file_put_contents(getenv('EVENT_LOG'), $line, FILE_APPEND | LOCK_EX) === false) {
    fwrite(STDERR, "log_event: cannot write " . getenv('EVENT_LOG') . "\n");
    exit(75);
}
echo "logged {$job['event']}\n";

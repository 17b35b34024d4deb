<?php
// persist_php.php -- a test handler written with handlers/jobq_handler.php
// (from $HANDLER_LIB): says hello to stdout and its pid to stderr; fails as
// the payload asks.
require getenv('HANDLER_LIB') . '/jobq_handler.php';

jobq_serve(function ($payload, $job) {
    printf("%s from job %s attempt %s\n", $payload['say'] ?? '', $job['id'], $job['attempt']);
    fwrite(STDERR, 'pid ' . getmypid() . "\n");
    if (($payload['fail'] ?? '') === 'permanent') {
        throw new PermanentFailure('this can never work');
    }
    if (isset($payload['fail'])) {
        throw new RuntimeException('something went wrong');
    }
});

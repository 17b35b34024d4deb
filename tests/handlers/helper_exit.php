<?php
// helper_exit.php -- a handler on the PHP helper (from $HANDLER_LIB) that
// ends its job with exit($payload['exit']) (tests/promises.sh, item 15).
require getenv('HANDLER_LIB') . '/jobq_handler.php';

jobq_serve(function ($payload, $job) {
    exit($payload['exit']);
});

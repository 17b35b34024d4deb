<?php
// persist_ctl.php -- writes every kind of control line with the helper
// module, then fails as the payload asks.
require getenv('HANDLER_LIB') . '/jobq_handler.php';

jobq_serve(function ($payload, $job) {
    jobq_progress(40, 'half');
    jobq_enqueue('next', ['from' => $job['id']], 'low', '5m');
    jobq_result(['ok' => true]);
    if (!empty($payload['fail'])) {
        jobq_retry_after('10m');
        throw new RuntimeException('later');
    }
});

<?php
/*
 * jobq_handler.php -- write a jobq handler in PHP, in either mode.
 *
 *     require '/usr/local/libexec/jobq/jobq_handler.php';
 *     jobq_serve(function ($payload, $job) {
 *         // do the work; return normally when done
 *         jobq_enqueue('log_event', ['sent' => $payload['to']]);
 *     });
 *
 * jobq_serve($fn) calls $fn($payload, $job) once per job: $payload is the
 * decoded JSON payload (associative arrays), $job an array with id, type,
 * queue, attempt, max_attempts, enqueued_at, checkpoint (JSON text, or
 * false) and traceparent.  Returning is success
 * (done); throwing JobqPermanentFailure dead-letters the job at once; any
 * other Throwable retries it with backoff (its text goes to stderr).
 *
 * With `mode = persistent` the process stays up and reads one request
 * line after another from stdin, answering each with {"status": N} on
 * descriptor 3 (jobq-handler(7)); with `mode = exec` it reads the payload
 * from stdin, calls $fn once and exits with the matching status.  The
 * control functions work in both modes; jobq_save_checkpoint($value)
 * saves where the job got to, and jobq_checkpoint() gives the next
 * attempt what the last one saved (null when none).  Delivery is at-least-once: $fn
 * must be idempotent.
 */

/* Throw to dead-letter the job now: retrying cannot help. */
class JobqPermanentFailure extends Exception
{
}

if (!class_exists('PermanentFailure')) {
    class_alias('JobqPermanentFailure', 'PermanentFailure');
}

const JOBQ_EX_DONE = 0;
const JOBQ_EX_DATAERR = 65;
const JOBQ_EX_TEMPFAIL = 75;

function jobq_control_line(array $obj): void
{
    static $ctl = null;
    if ($ctl === null) {
        $fd = getenv('JOBQ_CONTROL_FD');
        $ctl = fopen('php://fd/' . ($fd === false ? '3' : $fd), 'wb');
        if ($ctl === false) {
            throw new RuntimeException('jobq: cannot open the control descriptor');
        }
    }
    $data = json_encode($obj, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR) . "\n";
    while ($data !== '') {
        $n = fwrite($ctl, $data);
        if ($n === false || $n === 0) {
            throw new RuntimeException('jobq: cannot write to the control descriptor');
        }
        $data = substr($data, $n);
    }
    fflush($ctl);
}

/* A follow-up job, committed only if this job is done.  $fields holds
 * any other field of a follow-up by name: 'after' => [id or ref, ...],
 * 'after_policy' => 'any', 'ref' => 'name', 'group' => 'name', ... */
function jobq_enqueue(string $type, $payload, ?string $queue = null, $delay = null, ?string $at = null,
    array $fields = []): void
{
    $job = array_merge($fields, ['type' => $type, 'payload' => $payload]);
    if ($queue !== null) {
        $job['queue'] = $queue;
    }
    if ($delay !== null) {
        $job['delay'] = $delay;
    }
    if ($at !== null) {
        $job['at'] = $at;
    }
    jobq_control_line(['enqueue' => $job]);
}

/* With a retry outcome, wait this long (e.g. "10m") instead of the backoff. */
function jobq_retry_after($duration): void
{
    jobq_control_line(['retry_after' => $duration]);
}

/* Progress (0-100) and an optional note while the job runs. */
function jobq_progress($percent, ?string $note = null): void
{
    $line = ['progress' => $percent];
    if ($note !== null) {
        $line['note'] = $note;
    }
    jobq_control_line($line);
}

/* A small JSON value kept as the run's result. */
function jobq_result($value): void
{
    jobq_control_line(['result' => $value]);
}

/* Where this job got to (any JSON value, at most 64 KiB as compact JSON);
 * the newest wins, stored with the job even when the worker dies. */
function jobq_save_checkpoint($value): void
{
    jobq_control_line(['checkpoint' => $value]);
}

/* The checkpoint an earlier attempt saved, decoded; null when none. */
function jobq_checkpoint()
{
    $text = getenv('JOBQ_CHECKPOINT');
    return $text === false || $text === '' ? null : json_decode($text, true, 512, JSON_THROW_ON_ERROR);
}

function jobq_run(callable $fn, $payload, array $job): int
{
    try {
        $fn($payload, $job);
        return JOBQ_EX_DONE;
    } catch (JobqPermanentFailure $e) {
        fwrite(STDERR, (string)$e . "\n");
        return JOBQ_EX_DATAERR;
    } catch (Throwable $e) {
        fwrite(STDERR, (string)$e . "\n");
        return JOBQ_EX_TEMPFAIL;
    }
}

const JOBQ_JOB_ENV = [
    'id' => 'JOBQ_JOB_ID',
    'type' => 'JOBQ_TYPE',
    'queue' => 'JOBQ_QUEUE',
    'attempt' => 'JOBQ_ATTEMPT',
    'max_attempts' => 'JOBQ_MAX_ATTEMPTS',
    'enqueued_at' => 'JOBQ_ENQUEUED_AT',
    'checkpoint' => 'JOBQ_CHECKPOINT',
    'traceparent' => 'TRACEPARENT',
];

/* Runs $fn($payload, $job) for each job jobq hands this process. */
function jobq_serve(callable $fn): void
{
    if (getenv('JOBQ_JOB_ID') !== false) {
        $raw = stream_get_contents(STDIN);
        $payload = trim($raw) === '' ? null : json_decode($raw, true);
        $job = [];
        foreach (JOBQ_JOB_ENV as $k => $v) {
            $val = getenv($v);
            $job[$k] = $val !== false && in_array($k, ['id', 'attempt', 'max_attempts'], true) ? (int)$val : $val;
        }
        $status = jobq_run($fn, $payload, $job);
        fflush(STDOUT);
        exit($status);
    }
    while (($line = fgets(STDIN)) !== false) {
        $request = json_decode($line, true, 512, JSON_THROW_ON_ERROR);
        $payload = $request['payload'] ?? null;
        unset($request['payload']);
        foreach (JOBQ_JOB_ENV as $k => $v) {
            putenv(isset($request[$k]) ? $v . '=' . $request[$k] : $v);
        }
        $status = jobq_run($fn, $payload, $request);
        fflush(STDOUT);
        jobq_control_line(['status' => $status]);
    }
}

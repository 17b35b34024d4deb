<?php
// app_insert.php SOCKET DB commit|rollback REF -- what a PHP web app does:
// an order and its job, one transaction, through PDO.  Prints the job id.
[, $socket, $db, $mode, $ref] = $argv;
$pdo = new PDO("mysql:unix_socket=$socket;dbname=$db;charset=utf8mb4", 'root', '', [
    PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
]);
// An application in its own time zone: the contract uses UTC_TIMESTAMP().
$pdo->exec("SET time_zone = '+05:00'");
$pdo->beginTransaction();
$pdo->prepare('INSERT INTO orders (ref, lang) VALUES (?, ?)')->execute([$ref, 'php']);
$payload = json_encode(['order' => $ref, 'note' => "café \"quoted\" O'Brien"], JSON_UNESCAPED_UNICODE);
$pdo->prepare("INSERT INTO jobs (queue, type, payload, available_at) VALUES ('default', 'echo', ?, UTC_TIMESTAMP())")
    ->execute([$payload]);
$id = $pdo->lastInsertId();
if ($mode === 'commit') {
    $pdo->commit();
} else {
    $pdo->rollBack();
}
echo $id, "\n";

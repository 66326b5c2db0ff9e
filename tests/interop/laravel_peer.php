<?php
// The live Laravel peer of tests/interop/laravel_php_test.cpp: Laravel's own queue code
// (Illuminate\Queue\RedisQueue and RedisJob from Debian's php-illuminate-queue, over
// php-redis through Illuminate\Redis), so its Lua scripts run exactly as a Laravel worker runs
// them — including the Redis connection prefix phpredis puts on every key.
//
//   php laravel_peer.php PORT PREFIX RETRY_AFTER COMMAND QUEUE [ARGS]
//
//   push QUEUE FILE       pushRaw() each line of FILE (an envelope) onto QUEUE
//   pop QUEUE N ACTION    pop() up to N jobs (waiting up to 5 s each), print one JSON line
//                         per job {"raw": getRawBody(), "attempts": attempts(),
//                         "reserved": getReservedJob()}, then ACTION on it:
//                         delete | release:SECONDS | keep (a worker that died holding it)
//
// Exit 0 on success; anything else is a failure the test reports with stderr.
declare(strict_types=1);

require '/usr/share/php/Illuminate/Queue/autoload.php';
require '/usr/share/php/Illuminate/Redis/autoload.php';

use Illuminate\Container\Container;
use Illuminate\Queue\RedisQueue;
use Illuminate\Redis\RedisManager;

[$_, $port, $prefix, $retryAfter, $command, $queue] = array_pad($argv, 6, '');
$redis = new RedisManager(null, 'phpredis', [
    'options' => ['prefix' => $prefix],
    'default' => ['host' => '127.0.0.1', 'port' => (int) $port, 'database' => 0,
                  'read_timeout' => 10],
]);
$laravel = new RedisQueue($redis, $queue, 'default', (int) $retryAfter, null);
$laravel->setContainer(new Container());
$laravel->setConnectionName('redis');

switch ($command) {
    case 'push':
        foreach (file($argv[6], FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES) as $line) {
            $laravel->pushRaw($line, $queue);
        }
        break;
    case 'pop':
        $want = (int) ($argv[6] ?? '1');
        $action = $argv[7] ?? 'delete';
        for ($got = 0; $got < $want;) {
            $deadline = microtime(true) + 5.0;
            $job = null;
            while ($job === null && microtime(true) < $deadline) {
                $job = $laravel->pop($queue);
                if ($job === null) {
                    usleep(20000);
                }
            }
            if ($job === null) {
                break;
            }
            ++$got;
            echo json_encode(['raw' => $job->getRawBody(), 'attempts' => $job->attempts(),
                              'reserved' => $job->getReservedJob()],
                             JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE), "\n";
            if ($action === 'delete') {
                $job->delete();
            } elseif (str_starts_with($action, 'release:')) {
                $job->release((int) substr($action, 8));
            }
        }
        break;
    default:
        fwrite(STDERR, "unknown command '$command'\n");
        exit(2);
}

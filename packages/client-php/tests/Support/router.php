<?php

declare(strict_types=1);

/*
 * Router of the scripted loopback server (`php -S 127.0.0.1:PORT router.php`), see
 * ScriptedServer. Each request is appended to requests.jsonl (method, URI, headers, raw body as
 * base64) and answered with the next step of script.json: {status, headers, body, sleep_ms, gzip}.
 * With no step left it answers 500, so a test that sends more than it scripted fails loudly.
 */

$dir = getenv('SCRIPTED_SERVER_DIR');
if (!is_string($dir) || !is_dir($dir)) {
    http_response_code(500);
    echo 'SCRIPTED_SERVER_DIR is not set';
    return true;
}
$lock = fopen("{$dir}/lock", 'c');
flock($lock, LOCK_EX);
$body = file_get_contents('php://input');
$headers = function_exists('getallheaders') ? getallheaders() : [];
file_put_contents("{$dir}/requests.jsonl", json_encode([
    'method' => $_SERVER['REQUEST_METHOD'],
    'uri' => $_SERVER['REQUEST_URI'],
    'headers' => array_change_key_case($headers, CASE_LOWER),
    'body_b64' => base64_encode($body === false ? '' : $body),
]) . "\n", FILE_APPEND);
$script = json_decode((string) @file_get_contents("{$dir}/script.json"), true) ?: [];
$step = array_shift($script);
file_put_contents("{$dir}/script.json", json_encode($script));
flock($lock, LOCK_UN);

if ($step === null) {
    http_response_code(500);
    header('Content-Type: text/plain');
    echo 'no step scripted';
    return true;
}
if (($step['sleep_ms'] ?? 0) > 0) {
    usleep($step['sleep_ms'] * 1000);
}
http_response_code($step['status'] ?? 200);
foreach ($step['headers'] ?? [] as $name => $values) {
    foreach ((array) $values as $i => $value) {
        header("{$name}: {$value}", $i === 0);
    }
}
$out = $step['body'] ?? '';
if ($step['gzip'] ?? false) {
    header('Content-Encoding: gzip');
    $out = gzencode($out);
}
echo $out;
return true;

<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Support;

/**
 * A real HTTP server on 127.0.0.1 (PHP's built-in server running router.php) that answers from a
 * script, so the curl transport is tested over a real socket: timeouts, gzip, headers, an HTML 502.
 */
final class ScriptedServer
{
    public readonly string $url;
    private readonly string $dir;
    /** @var resource */
    private $process;

    public function __construct()
    {
        $this->dir = sys_get_temp_dir() . '/platform-php-scripted-' . bin2hex(random_bytes(6));
        mkdir($this->dir);
        file_put_contents("{$this->dir}/script.json", '[]');
        $port = self::freePort();
        $this->url = "http://127.0.0.1:{$port}";
        $command = [PHP_BINARY, '-S', "127.0.0.1:{$port}", __DIR__ . '/router.php'];
        $env = getenv() + ['SCRIPTED_SERVER_DIR' => $this->dir];
        $env['SCRIPTED_SERVER_DIR'] = $this->dir;
        $process = proc_open(
            $command,
            [0 => ['pipe', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']],
            $pipes,
            null,
            $env,
        );
        if (!is_resource($process)) {
            throw new \RuntimeException('Could not start php -S');
        }
        $this->process = $process;
        self::waitForPort($port);
    }

    /**
     * Appends steps: each `['status' => 200, 'headers' => [...], 'body' => '...', 'sleep_ms' => 0, 'gzip' => false]`.
     *
     * @param array<string, mixed> ...$steps
     */
    public function script(array ...$steps): void
    {
        $script = json_decode((string) file_get_contents("{$this->dir}/script.json"), true) ?: [];
        file_put_contents("{$this->dir}/script.json", json_encode(array_merge($script, $steps)));
    }

    /** @return list<array{method: string, uri: string, headers: array<string, string>, body: string}> */
    public function requests(): array
    {
        $file = "{$this->dir}/requests.jsonl";
        if (!is_file($file)) {
            return [];
        }
        $out = [];
        foreach (file($file, FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES) ?: [] as $line) {
            $r = json_decode($line, true);
            $out[] = [
                'method' => $r['method'],
                'uri' => $r['uri'],
                'headers' => $r['headers'],
                'body' => base64_decode($r['body_b64']),
            ];
        }
        return $out;
    }

    public function stop(): void
    {
        if (is_resource($this->process)) {
            // The command is an array, so no shell: this ends the php -S we started, by its own pid.
            proc_terminate($this->process);
            proc_close($this->process);
        }
        foreach (glob("{$this->dir}/*") ?: [] as $f) {
            unlink($f);
        }
        @rmdir($this->dir);
    }

    public static function freePort(): int
    {
        $socket = stream_socket_server('tcp://127.0.0.1:0', $errno, $error);
        if ($socket === false) {
            throw new \RuntimeException("No free port: {$error}");
        }
        $name = stream_socket_get_name($socket, false);
        fclose($socket);
        return (int) substr((string) $name, strrpos((string) $name, ':') + 1);
    }

    public static function waitForPort(int $port, float $seconds = 10.0): void
    {
        $deadline = microtime(true) + $seconds;
        while (microtime(true) < $deadline) {
            $c = @stream_socket_client("tcp://127.0.0.1:{$port}", $errno, $error, 0.2);
            if ($c !== false) {
                fclose($c);
                return;
            }
            usleep(20_000);
        }
        throw new \RuntimeException("Nothing listens on 127.0.0.1:{$port}");
    }
}

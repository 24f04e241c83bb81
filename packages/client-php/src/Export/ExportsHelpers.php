<?php

declare(strict_types=1);

namespace PlatformApi\Export;

use PlatformApi\Exception\PlatformException;
use PlatformApi\Model\Export;

/**
 * The hand-written methods of `$client->exports` (the generated ExportsService uses this trait):
 * wait for an export to finish, and stream its file to a path or a stream.
 */
trait ExportsHelpers
{
    /**
     * Polls `GET /v1/exports/{id}` until the export has succeeded and returns it; throws a
     * PlatformException when it failed or expired, or when `$timeout` seconds passed.
     */
    public function wait(string $id, float $interval = 1.0, ?float $timeout = null): Export
    {
        $started = microtime(true);
        while (true) {
            $export = $this->retrieve($id);
            $status = $export->status;
            if ($status === 'succeeded') {
                return $export;
            }
            if ($status === 'failed' || $status === 'expired') {
                $reason = $export->error !== null ? ": {$export->error}" : '';
                throw new PlatformException("Export {$id} {$status}{$reason}; start a new one");
            }
            if ($timeout !== null && microtime(true) - $started > $timeout) {
                throw new PlatformException("Export {$id} did not finish within {$timeout} s");
            }
            usleep((int) ($interval * 1_000_000));
        }
    }

    /**
     * Streams the file of a succeeded export to `$destination` (a path, or a writable stream left
     * open) and returns its size in bytes. The body goes to the destination in chunks as it
     * arrives, so memory stays bounded whatever the file's size (`download($id)` returns the whole
     * file as a string). A path is written only once the download has started: an error (a 409
     * for an expired export, …) leaves no file behind.
     *
     * @param string|resource $destination
     */
    public function downloadTo(string $id, mixed $destination): int
    {
        $path = is_string($destination) ? $destination : null;
        $out = $path === null ? $destination : null;
        $size = 0;
        $sink = static function (string $chunk) use (&$out, &$size, $path): void {
            if ($out === null) {
                $opened = @fopen((string) $path, 'wb');
                if ($opened === false) {
                    throw new PlatformException("Could not write {$path}");
                }
                $out = $opened;
            }
            $length = strlen($chunk);
            for ($written = 0; $written < $length; $written += $n) {
                $n = fwrite($out, $written === 0 ? $chunk : substr($chunk, $written));
                if ($n === false || $n === 0) {
                    throw new PlatformException('Could not write the export file' . ($path !== null ? " {$path}" : ''));
                }
            }
            $size += $length;
        };
        try {
            $this->http->request('GET', '/v1/exports/' . rawurlencode($id) . '/file', [], null, null, null, $sink);
        } finally {
            if ($path !== null && $out !== null) {
                fclose($out);
            }
        }
        if ($path !== null && $out === null) {
            // An empty file arrives as no chunk at all.
            if (@file_put_contents($path, '') === false) {
                throw new PlatformException("Could not write {$path}");
            }
        }
        return $size;
    }
}

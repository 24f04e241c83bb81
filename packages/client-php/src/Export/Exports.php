<?php

declare(strict_types=1);

namespace PlatformApi\Export;

use PlatformApi\Exception\PlatformException;
use PlatformApi\Model\Export;
use PlatformApi\PlatformClient;

/**
 * Hand-written helpers beside the generated `$client->exports`: wait for an export to finish,
 * download its file, and compute the collection checksum of your own copy.
 */
final class Exports
{
    /**
     * Polls `GET /v1/exports/{id}` until the export has succeeded and returns it; throws when it
     * failed or expired, or when `$timeout` seconds passed.
     */
    public static function wait(
        PlatformClient $client,
        string $id,
        float $interval = 1.0,
        ?float $timeout = null,
    ): Export {
        $started = microtime(true);
        while (true) {
            $export = $client->exports->retrieve($id);
            $status = $export->status;
            if ($status === 'succeeded') {
                return $export;
            }
            if ($status === 'failed' || $status === 'expired') {
                throw new PlatformException("Export {$id} {$status}; start a new one");
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
     * arrives, so memory stays bounded whatever the file's size. A path is written only once the
     * download has started: an error (a 409 for an expired export, …) leaves no file behind.
     *
     * @param string|resource $destination
     */
    public static function download(PlatformClient $client, string $id, mixed $destination): int
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
            $client->stream("/v1/exports/{$id}/file", $sink);
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

    /**
     * The checksum `GET /v1/collections/checksums` answers, over your own copy: lowercase hex
     * SHA-256 of "<id>\t<updated_at>\n" per record, sorted by id (byte order), `updated_at`
     * exactly as the API writes it.
     *
     * @param iterable<array{id: string, updated_at: string}> $records
     */
    public static function collectionChecksum(iterable $records): string
    {
        $rows = [];
        foreach ($records as $record) {
            $rows[] = $record;
        }
        usort($rows, static fn (array $a, array $b): int => strcmp($a['id'], $b['id']));
        $context = hash_init('sha256');
        foreach ($rows as $record) {
            hash_update($context, "{$record['id']}\t{$record['updated_at']}\n");
        }
        return hash_final($context);
    }
}

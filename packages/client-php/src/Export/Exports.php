<?php

declare(strict_types=1);

namespace PlatformApi\Export;

use PlatformApi\Model\Export;
use PlatformApi\PlatformClient;

/**
 * The checksum of your own copy of a collection. `wait` and `download` are deprecated: they are
 * `$client->exports->wait($id)` and `$client->exports->downloadTo($id, $destination)` now.
 */
final class Exports
{
    /**
     * Waits for an export to finish: `$client->exports->wait($id, $interval, $timeout)`, which this calls.
     *
     * @deprecated and will be removed. Use `$client->exports->wait($id)` instead.
     */
    public static function wait(
        PlatformClient $client,
        string $id,
        float $interval = 1.0,
        ?float $timeout = null,
    ): Export {
        trigger_error(
            'PlatformApi\\Export\\Exports::wait($client, $id) is deprecated: use $client->exports->wait($id)',
            E_USER_DEPRECATED,
        );
        return $client->exports->wait($id, $interval, $timeout);
    }

    /**
     * Streams an export's file: `$client->exports->downloadTo($id, $destination)`, which this calls.
     *
     * @deprecated and will be removed. Use `$client->exports->downloadTo($id, $destination)` instead.
     * @param string|resource $destination
     */
    public static function download(PlatformClient $client, string $id, mixed $destination): int
    {
        trigger_error(
            'PlatformApi\\Export\\Exports::download($client, $id, $destination) is deprecated: '
            . 'use $client->exports->downloadTo($id, $destination)',
            E_USER_DEPRECATED,
        );
        return $client->exports->downloadTo($id, $destination);
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

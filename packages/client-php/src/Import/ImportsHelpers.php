<?php

declare(strict_types=1);

namespace PlatformApi\Import;

use PlatformApi\Exception\PlatformException;
use PlatformApi\Model\Import;

/**
 * The hand-written method of `$client->imports` (the generated ImportsService uses this trait):
 * wait for an import to finish.
 */
trait ImportsHelpers
{
    /**
     * Polls `GET /v1/imports/{id}` until the import has finished and returns it, succeeded or
     * failed (`error` says why: a threshold passed, unreadable rows); refused rows are in
     * `errors($id)`. Throws a PlatformException once `$timeout` seconds have passed.
     */
    public function wait(string $id, float $interval = 1.0, ?float $timeout = null): Import
    {
        $started = microtime(true);
        while (true) {
            $import = $this->retrieve($id);
            if ($import->status === 'succeeded' || $import->status === 'failed') {
                return $import;
            }
            if ($timeout !== null && microtime(true) - $started > $timeout) {
                $progress = "{$import->rowsProcessed} of {$import->rows} rows";
                throw new PlatformException("Import {$id} did not finish within {$timeout} s ({$progress})");
            }
            usleep((int) ($interval * 1_000_000));
        }
    }
}

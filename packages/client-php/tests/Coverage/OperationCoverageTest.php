<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Coverage;

use PHPUnit\Framework\TestCase;
use PlatformApi\Service\Operations;
use PlatformApi\Tests\Support\RecordingTransport;

/**
 * Runs after the live suite (phpunit.xml.dist lists it last): every operation of the generated
 * list must have answered 2xx at least once, so an operation the contract gains without a live
 * test fails the build.
 */
final class OperationCoverageTest extends TestCase
{
    public function testEveryOperationWasCalledByTheLiveSuite(): void
    {
        $missing = array_values(array_diff(array_keys(Operations::ALL), array_keys(RecordingTransport::$succeeded)));
        self::assertSame([], $missing, 'operations no live test called successfully: ' . implode(', ', $missing));
    }
}

<?php

declare(strict_types=1);

namespace PlatformApi\Exception;

/**
 * Implemented by every exception this SDK throws, so one `catch (ExceptionInterface $e)` covers
 * them all without catching unrelated \RuntimeExceptions.
 */
interface ExceptionInterface extends \Throwable
{
}

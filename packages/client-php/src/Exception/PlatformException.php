<?php

declare(strict_types=1);

namespace PlatformApi\Exception;

/** Base class of the SDK's runtime errors (API answers, connection problems, webhooks). */
class PlatformException extends \RuntimeException implements ExceptionInterface
{
}

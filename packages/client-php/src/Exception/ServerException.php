<?php

declare(strict_types=1);

namespace PlatformApi\Exception;

/** 5xx: something failed on the server's side; quote `requestId` to support. */
class ServerException extends ApiStatusException
{
}

<?php

declare(strict_types=1);

namespace PlatformApi\Exception;

/** 403: the token lacks the scope the operation needs (`insufficient_scope`), or it is forbidden. */
class PermissionDeniedException extends ApiStatusException
{
}

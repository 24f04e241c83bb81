<?php

declare(strict_types=1);

namespace PlatformApi\Exception;

/** 400: the request is invalid; `errors` names each offending parameter. */
class ValidationException extends ApiStatusException
{
}

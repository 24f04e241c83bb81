<?php

declare(strict_types=1);

namespace PlatformApi\Exception;

/** 404: no such resource in your organization. */
class NotFoundException extends ApiStatusException
{
}

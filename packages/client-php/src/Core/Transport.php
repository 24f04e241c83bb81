<?php

declare(strict_types=1);

namespace PlatformApi\Core;

/**
 * Sends one HTTP request. The default is CurlTransport; pass your own to PlatformClient to add a
 * proxy, logging or a test double. Retries, auth and errors are handled above this interface.
 */
interface Transport
{
    /**
     * Sends the request and returns whatever status came back (a 4xx/5xx is a Response too).
     *
     * @throws \PlatformApi\Exception\ApiConnectionException when no response arrived
     *     (\PlatformApi\Exception\ApiTimeoutException when a timeout ran out)
     */
    public function send(Request $request): Response;
}

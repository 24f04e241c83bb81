<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Support;

use PlatformApi\ClientOptions;
use PlatformApi\OAuth\TokenProvider;
use PlatformApi\PlatformClient;

/** Builds clients on a FakeTransport whose retry waits are recorded instead of slept. */
trait ClientFactory
{
    protected FakeTransport $transport;
    /** @var list<float> */
    protected array $sleeps = [];
    protected float $now = 1_800_000_000.0;

    protected function client(
        ?ClientOptions $options = null,
        ?TokenProvider $auth = null,
        string $baseUrl = 'https://api.school.test',
    ): PlatformClient {
        $this->transport ??= new FakeTransport();
        $options = ($options ?? new ClientOptions())->with(
            sleep: function (float $seconds): void {
                $this->sleeps[] = $seconds;
            },
            clock: fn (): float => $this->now,
        );
        return new PlatformClient(
            token: $auth === null ? 'pat_test' : null,
            baseUrl: $baseUrl,
            auth: $auth,
            options: $options,
            transport: $this->transport,
        );
    }

    protected function script(\PlatformApi\Core\Response|\Throwable|\Closure ...$steps): FakeTransport
    {
        $this->transport = new FakeTransport(...$steps);
        $this->sleeps = [];
        return $this->transport;
    }
}

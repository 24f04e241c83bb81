<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Unit;

use PHPUnit\Framework\TestCase;
use PlatformApi\Core\Request;
use PlatformApi\Exception\ApiConnectionException;
use PlatformApi\Exception\AuthenticationException;
use PlatformApi\Exception\ExceptionInterface;
use PlatformApi\Exception\OAuthException;
use PlatformApi\OAuth\ClientCredentials;
use PlatformApi\OAuth\OAuthTokens;
use PlatformApi\OAuth\RefreshToken;
use PlatformApi\PlatformClient;
use PlatformApi\Tests\Support\ClientFactory;
use PlatformApi\Tests\Support\FakeTransport;
use PlatformApi\Tests\Support\Fixtures;

final class OAuthTest extends TestCase
{
    use ClientFactory;

    private const TOKEN_URL = 'https://api.school.test/oauth/token';

    private static function token(
        string $access,
        int $expiresIn = 3600,
        ?string $refresh = null,
    ): \PlatformApi\Core\Response {
        return FakeTransport::json(200, array_filter([
            'access_token' => $access,
            'token_type' => 'Bearer',
            'expires_in' => $expiresIn,
            'scope' => 'students:read',
            'refresh_token' => $refresh,
        ], static fn ($v) => $v !== null));
    }

    /** @return array<string, string> */
    private static function form(Request $request): array
    {
        parse_str((string) $request->body, $form);
        /** @var array<string, string> $form */
        return $form;
    }

    public function testClientCredentialsPostsAFormWithBasicAuthAndCachesTheToken(): void
    {
        $this->script(
            self::token('at_1'),
            FakeTransport::json(200, Fixtures::student()),
            FakeTransport::json(200, Fixtures::student()),
        );
        $client = $this->client(auth: new ClientCredentials('oac_1', 's3cr:et', ['students:read', 'courses:read']));
        $client->students->retrieve('stu_01');
        $client->students->retrieve('stu_01');

        [$tokenRequest, $first, $second] = $this->transport->requests;
        self::assertSame(['POST', self::TOKEN_URL], [$tokenRequest->method, $tokenRequest->url]);
        self::assertSame('application/x-www-form-urlencoded', $tokenRequest->headers['content-type']);
        // RFC 6749 §2.3.1: id and secret form-encoded before base64.
        self::assertSame('Basic ' . base64_encode('oac_1:s3cr%3Aet'), $tokenRequest->headers['authorization']);
        self::assertSame(
            ['grant_type' => 'client_credentials', 'scope' => 'students:read courses:read'],
            self::form($tokenRequest),
        );
        self::assertArrayNotHasKey('idempotency-key', $tokenRequest->headers);
        self::assertSame('Bearer at_1', $first->headers['authorization']);
        self::assertSame('Bearer at_1', $second->headers['authorization']);
    }

    public function testTheTokenIsRenewedShortlyBeforeItExpires(): void
    {
        $this->script(
            self::token('at_1', 3600),
            FakeTransport::json(200, Fixtures::student()),
            FakeTransport::json(200, Fixtures::student()),
            self::token('at_2', 3600),
            FakeTransport::json(200, Fixtures::student()),
        );
        $client = $this->client(auth: new ClientCredentials('oac_1', 'secret'));
        $start = $this->now;
        $client->students->retrieve('stu_01');
        $this->now = $start + 3539; // min(60, 3600 / 2) = 60 s before expiry: still fine
        $client->students->retrieve('stu_01');
        $this->now = $start + 3541;
        $client->students->retrieve('stu_01');
        $auth = array_map(static fn ($r) => $r->headers['authorization'] ?? '', $this->transport->requests);
        self::assertSame('Bearer at_1', $auth[2]);
        self::assertSame('Bearer at_2', $auth[4]);
        self::assertSame(0, $this->transport->remaining());
    }

    public function testAShortLivedTokenIsUsedForHalfItsLife(): void
    {
        $this->script(
            self::token('at_1', 20),
            FakeTransport::json(200, Fixtures::student()),
            self::token('at_2', 20),
            FakeTransport::json(200, Fixtures::student()),
        );
        $client = $this->client(auth: new ClientCredentials('oac_1', 'secret'));
        $client->students->retrieve('stu_01');
        $this->now += 11;
        $client->students->retrieve('stu_01');
        self::assertSame('Bearer at_2', $this->transport->requests[3]->headers['authorization']);
    }

    public function testA401DropsTheTokenFetchesAnotherAndReplaysOnce(): void
    {
        $this->script(
            self::token('at_revoked'),
            FakeTransport::problem(401, 'unauthorized'),
            self::token('at_fresh'),
            FakeTransport::json(201, Fixtures::student()),
        );
        $client = $this->client(auth: new ClientCredentials('oac_1', 'secret'));
        $client->students->create(['first_name' => 'A']);
        [, $refused, , $replayed] = $this->transport->requests;
        self::assertSame('Bearer at_revoked', $refused->headers['authorization']);
        self::assertSame('Bearer at_fresh', $replayed->headers['authorization']);
        self::assertSame($refused->headers['idempotency-key'], $replayed->headers['idempotency-key']);
        self::assertSame([], $this->sleeps, 'a replay after renewal does not wait');
    }

    public function testASecond401IsThrownNotLoopedOn(): void
    {
        $this->script(
            self::token('at_1'),
            FakeTransport::problem(401, 'unauthorized'),
            self::token('at_2'),
            FakeTransport::problem(401, 'unauthorized', 'still no'),
        );
        try {
            $this->client(auth: new ClientCredentials('oac_1', 'secret'))->students->retrieve('stu_01');
            self::fail('expected an AuthenticationException');
        } catch (AuthenticationException $e) {
            self::assertNotInstanceOf(OAuthException::class, $e);
            self::assertSame('still no', $e->detail);
        }
        self::assertCount(4, $this->transport->requests);
    }

    public function testAFixedTokenRefusedWith401IsNotReplayed(): void
    {
        $this->script(FakeTransport::problem(401, 'unauthorized'));
        $this->expectException(AuthenticationException::class);
        try {
            $this->client()->students->retrieve('stu_01');
        } finally {
            self::assertCount(1, $this->transport->requests);
        }
    }

    public function testTheTokenEndpointsRefusalIsAnOAuthException(): void
    {
        $this->script(
            FakeTransport::json(
                401,
                ['error' => 'invalid_client', 'error_description' => 'client authentication failed'],
            ),
        );
        try {
            $this->client(auth: new ClientCredentials('oac_1', 'wrong'))->students->retrieve('stu_01');
            self::fail('expected an OAuthException');
        } catch (OAuthException $e) {
            self::assertInstanceOf(AuthenticationException::class, $e);
            self::assertInstanceOf(ExceptionInterface::class, $e);
            self::assertSame('invalid_client', $e->error);
            self::assertSame('invalid_client', $e->errorCode);
            self::assertSame('client authentication failed', $e->errorDescription);
            self::assertSame(401, $e->statusCode);
            self::assertStringContainsString('invalid_client (client authentication failed)', $e->getMessage());
        }
        self::assertCount(1, $this->transport->requests, 'the API is not called without a token');
    }

    public function testAnUnreachableTokenEndpointIsRetriedLikeAnyConnectionError(): void
    {
        $this->script(
            new ApiConnectionException('refused', 'POST', self::TOKEN_URL),
            self::token('at_1'),
            FakeTransport::json(200, Fixtures::student()),
        );
        $this->client(auth: new ClientCredentials('oac_1', 'secret'))->students->retrieve('stu_01');
        self::assertCount(1, $this->sleeps);
    }

    public function testRefreshTokenRotatesAndHandsTheNewTokensToTheCallback(): void
    {
        $this->script(
            self::token('at_1', 3600, 'rt_2'),
            FakeTransport::json(200, Fixtures::student()),
            self::token('at_2', 3600, 'rt_3'),
            FakeTransport::json(200, Fixtures::student()),
        );
        /** @var list<OAuthTokens> $handed */
        $handed = [];
        $auth = new RefreshToken(
            clientId: 'oac_1',
            refreshToken: 'rt_1',
            clientSecret: 'secret',
            onTokens: static function (OAuthTokens $tokens) use (&$handed): void {
                $handed[] = $tokens;
            },
        );
        $client = $this->client(auth: $auth);
        $client->students->retrieve('stu_01');
        $this->now += 3600;
        $client->students->retrieve('stu_01');

        self::assertSame(
            ['grant_type' => 'refresh_token', 'refresh_token' => 'rt_1'],
            self::form($this->transport->requests[0]),
        );
        self::assertSame(
            ['grant_type' => 'refresh_token', 'refresh_token' => 'rt_2'],
            self::form($this->transport->requests[2]),
        );
        self::assertSame(['rt_2', 'rt_3'], array_map(static fn (OAuthTokens $t) => $t->refreshToken, $handed));
        self::assertSame('at_1', $handed[0]->accessToken);
        self::assertSame((int) $this->now - 3600 + 3600, $handed[0]->expiresAt->getTimestamp());
        self::assertSame('rt_3', $auth->refreshToken());
    }

    public function testARefreshHappensOncePerExpiry(): void
    {
        $this->script(
            self::token('at_1', 3600, 'rt_2'),
            ...array_fill(0, 5, FakeTransport::json(200, Fixtures::student())),
        );
        $client = $this->client(auth: new RefreshToken('oac_1', 'rt_1', 'secret'));
        for ($i = 0; $i < 5; $i++) {
            $client->students->retrieve('stu_01');
        }
        $tokenRequests = array_filter($this->transport->requests, static fn ($r) => $r->url === self::TOKEN_URL);
        self::assertCount(1, $tokenRequests);
    }

    public function testAPublicClientSendsItsIdInTheForm(): void
    {
        $this->script(self::token('at_1', 3600, 'rt_2'), FakeTransport::json(200, Fixtures::student()));
        $this->client(auth: new RefreshToken('oac_public', 'rt_1'))->students->retrieve('stu_01');
        $tokenRequest = $this->transport->requests[0];
        self::assertArrayNotHasKey('authorization', $tokenRequest->headers);
        self::assertSame(
            ['grant_type' => 'refresh_token', 'refresh_token' => 'rt_1', 'client_id' => 'oac_public'],
            self::form($tokenRequest),
        );
    }

    public function testAGivenAccessTokenIsUsedUntilRefused(): void
    {
        $this->script(
            FakeTransport::json(200, Fixtures::student()),
            FakeTransport::problem(401, 'unauthorized'),
            self::token('at_new', 3600, 'rt_2'),
            FakeTransport::json(200, Fixtures::student()),
        );
        $client = $this->client(auth: new RefreshToken('oac_1', 'rt_1', 'secret', accessToken: 'at_held'));
        $client->students->retrieve('stu_01');
        $client->students->retrieve('stu_01');
        $auth = array_map(static fn ($r) => $r->headers['authorization'] ?? null, $this->transport->requests);
        self::assertSame(
            ['Bearer at_held', 'Bearer at_held', 'Basic ' . base64_encode('oac_1:secret'), 'Bearer at_new'],
            $auth,
        );
    }

    public function testASpentRefreshTokenIsAnOAuthExceptionWithInvalidGrant(): void
    {
        $this->script(
            FakeTransport::json(400, ['error' => 'invalid_grant', 'error_description' => 'grant request is invalid']),
        );
        try {
            $this->client(auth: new RefreshToken('oac_1', 'rt_spent', 'secret'))->students->retrieve('stu_01');
            self::fail('expected an OAuthException');
        } catch (OAuthException $e) {
            self::assertSame('invalid_grant', $e->error);
            self::assertSame(400, $e->statusCode);
        }
    }

    public function testTokenUrlCanBeGiven(): void
    {
        $this->script(self::token('at_1'), FakeTransport::json(200, Fixtures::student()));
        $this->client(auth: new ClientCredentials('oac_1', 'secret', tokenUrl: 'https://auth.school.test/token'))
            ->students->retrieve('stu_01');
        self::assertSame('https://auth.school.test/token', $this->transport->requests[0]->url);
    }

    public function testAClosureTokenIsAskedBeforeEachRequestAndOnceMoreAfterA401(): void
    {
        $this->script(FakeTransport::problem(401, 'unauthorized'), FakeTransport::json(200, Fixtures::student()));
        $n = 0;
        $client = new PlatformClient(
            token: static function () use (&$n): string {
                return 'at_' . ++$n;
            },
            baseUrl: 'https://api.school.test',
            transport: $this->transport,
        );
        $client->students->retrieve('stu_01');
        self::assertSame(
            ['Bearer at_1', 'Bearer at_2'],
            array_map(static fn ($r) => $r->headers['authorization'], $this->transport->requests),
        );
    }
}

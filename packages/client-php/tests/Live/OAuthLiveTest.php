<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Live;

use PlatformApi\Exception\OAuthException;
use PlatformApi\Model\TokenInfoType;
use PlatformApi\Model\UserSessionType;
use PlatformApi\OAuth\ClientCredentials;
use PlatformApi\OAuth\OAuthTokens;
use PlatformApi\OAuth\RefreshToken;
use PlatformApi\Tests\Support\RecordingTransport;

/** OAuth 2.0 against the server's real authorization server (oidc-provider). */
final class OAuthLiveTest extends LiveTestCase
{
    /** @return list<string> fresh single-use refresh tokens from real authorization code flows */
    private static function refreshTokens(): array
    {
        $tokens = explode(',', self::env('PLATFORM_OAUTH_REFRESH_TOKENS'));
        self::assertGreaterThanOrEqual(2, count($tokens));
        return $tokens;
    }

    public function testClientCredentialsGetsACachedTokenFromTheDefaultTokenUrl(): void
    {
        self::assertSame(self::env('PLATFORM_BASE_URL') . '/oauth/token', self::env('PLATFORM_OAUTH_TOKEN_URL'));
        $transport = new RecordingTransport();
        $client = self::client(
            auth: new ClientCredentials(
                self::env('PLATFORM_OAUTH_CLIENT_ID'),
                self::env('PLATFORM_OAUTH_CLIENT_SECRET'),
                ['students:read'],
            ),
            transport: $transport,
        );
        $info = $client->token->retrieve();
        self::assertSame(TokenInfoType::OAUTH_ACCESS_TOKEN, $info->type);
        self::assertSame(self::env('PLATFORM_OAUTH_CLIENT_ID'), $info->clientId);
        self::assertSame(['students:read'], $info->scopes);
        self::assertNull($info->userId);
        $client->students->list(['per_page' => 1]);
        $tokenCalls = array_filter($transport->requests, static fn ($r) => str_ends_with($r->url, '/oauth/token'));
        self::assertCount(1, $tokenCalls, 'the access token is cached');
    }

    public function testARefreshTokenIsRotatedAndHandedBack(): void
    {
        [$original] = self::refreshTokens();
        /** @var list<OAuthTokens> $handed */
        $handed = [];
        $auth = new RefreshToken(
            clientId: self::env('PLATFORM_OAUTH_CLIENT_ID'),
            refreshToken: $original,
            clientSecret: self::env('PLATFORM_OAUTH_CLIENT_SECRET'),
            onTokens: static function (OAuthTokens $tokens) use (&$handed): void {
                $handed[] = $tokens;
            },
        );
        $info = self::client(auth: $auth)->token->retrieve();
        self::assertSame(TokenInfoType::OAUTH_ACCESS_TOKEN, $info->type);
        self::assertNotNull($info->userId, 'a token a user approved');
        self::assertCount(1, $handed);
        self::assertNotNull($handed[0]->refreshToken);
        self::assertNotSame($original, $handed[0]->refreshToken, 'rotated');
        self::assertSame($handed[0]->refreshToken, $auth->refreshToken());
        self::assertGreaterThan(time(), $handed[0]->expiresAt->getTimestamp());

        // The rotated token works; the spent one is refused.
        $next = new RefreshToken(
            self::env('PLATFORM_OAUTH_CLIENT_ID'),
            (string) $handed[0]->refreshToken,
            self::env('PLATFORM_OAUTH_CLIENT_SECRET'),
        );
        self::assertSame($info->userId, self::client(auth: $next)->token->retrieve()->userId);
        try {
            $spent = new RefreshToken(
                self::env('PLATFORM_OAUTH_CLIENT_ID'),
                $original,
                self::env('PLATFORM_OAUTH_CLIENT_SECRET'),
            );
            self::client(auth: $spent)->token->retrieve();
            self::fail('expected an OAuthException');
        } catch (OAuthException $e) {
            self::assertSame('invalid_grant', $e->error);
        }
    }

    public function testARefusedAccessTokenIsRefreshedAndTheCallReplayedOnce(): void
    {
        $refresh = self::refreshTokens()[1];
        $transport = new RecordingTransport();
        $auth = new RefreshToken(
            self::env('PLATFORM_OAUTH_CLIENT_ID'),
            $refresh,
            self::env('PLATFORM_OAUTH_CLIENT_SECRET'),
            accessToken: 'not-a-valid-access-token',
        );
        $student = self::newStudent(self::client(auth: $auth, transport: $transport));
        self::assertStringStartsWith('stu_', $student->id);
        $statuses = array_map(static fn ($r) => $r->status, $transport->responses);
        self::assertSame([401, 200, 201], $statuses, 'refused, refreshed, replayed');
        self::assertSame(
            $transport->requests[0]->headers['idempotency-key'],
            $transport->requests[2]->headers['idempotency-key'],
        );
    }

    public function testAnAppSeesTheMembersSessionsAndSignsOutTheBrowser(): void
    {
        self::assertGreaterThanOrEqual(4, count(self::refreshTokens()));
        $app = self::client(auth: new RefreshToken(
            self::env('PLATFORM_OAUTH_CLIENT_ID'),
            self::refreshTokens()[3],
            self::env('PLATFORM_OAUTH_CLIENT_SECRET'),
        ));
        // The member signed in on the sign-in page to approve the app: one browser, and this app.
        $sessions = $app->user->listSessions()->data;
        $types = array_map(static fn ($s) => $s->type, $sessions);
        self::assertSame([UserSessionType::BROWSER, UserSessionType::APP], $types);
        [$browser, $self] = $sessions;
        self::assertTrue($self->current);
        self::assertSame(self::env('PLATFORM_OAUTH_CLIENT_ID'), $self->app?->id);
        self::assertNotNull($browser->lastActiveAt);

        $deleted = $app->user->revokeSession($browser->id);
        self::assertSame([$browser->id, true], [$deleted->id, $deleted->deleted]);
        $remaining = $app->user->signOutOtherSessions()->data;
        self::assertSame([$self->id], array_map(static fn ($s) => $s->id, $remaining));
    }
}

<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Live;

use PlatformApi\Exception\AuthenticationException;
use PlatformApi\Exception\OAuthException;
use PlatformApi\Exception\ValidationException;
use PlatformApi\Model\TokenInfoType;
use PlatformApi\OAuth\ClientCredentials;

final class TokensLiveTest extends LiveTestCase
{
    public function testTokenInfoOfThePersonalAccessToken(): void
    {
        $info = self::client()->token->retrieve();
        self::assertSame(TokenInfoType::PERSONAL_ACCESS_TOKEN, $info->type);
        self::assertContains('students:write', $info->scopes);
        self::assertNotNull($info->personalAccessTokenId);
    }

    public function testPersonalAccessTokensCanBeCreatedUsedAndRevoked(): void
    {
        $client = self::client();
        $created = $client->personalAccessTokens->create([
            'name' => self::unique('php-sdk-'),
            'scopes' => ['students:read'],
            'expires_at' => new \DateTimeImmutable('+1 day'),
        ]);
        self::assertStringStartsWith('pat_', $created->token);
        $info = self::client($created->token)->token->retrieve();
        self::assertSame(['students:read'], $info->scopes);
        self::assertSame($created->id, $info->personalAccessTokenId);

        self::assertSame($created->name, $client->personalAccessTokens->retrieve($created->id)->name);
        self::assertContains(
            $created->id,
            array_map(static fn ($t) => $t->id, iterator_to_array($client->personalAccessTokens->list())),
        );
        $revoked = $client->personalAccessTokens->delete($created->id);
        self::assertNotNull($revoked->revokedAt);

        $this->expectException(AuthenticationException::class);
        self::client($created->token)->token->retrieve();
    }

    public function testOAuthClientsCanBeCreatedRotatedAndDeleted(): void
    {
        $client = self::client();
        $oauth = $client->oauthClients->create([
            'name' => self::unique('php-sdk-'),
            'type' => 'confidential',
            'scopes' => ['courses:read'],
            'grant_types' => ['client_credentials'],
        ]);
        self::assertNotNull($oauth->clientSecret);
        $asClient = self::client(auth: new ClientCredentials($oauth->id, (string) $oauth->clientSecret));
        $info = $asClient->token->retrieve();
        self::assertSame(TokenInfoType::OAUTH_ACCESS_TOKEN, $info->type);
        self::assertSame($oauth->id, $info->clientId);

        self::assertSame($oauth->name, $client->oauthClients->retrieve($oauth->id)->name);
        self::assertContains(
            $oauth->id,
            array_map(static fn ($c) => $c->id, iterator_to_array($client->oauthClients->list())),
        );

        $renamed = $client->oauthClients->update($oauth->id, [
            'name' => 'Renamed php sync',
            'redirect_uris' => ['https://sync.example/callback'],
        ]);
        self::assertSame('Renamed php sync', $renamed->name);
        self::assertSame(['https://sync.example/callback'], $renamed->redirectUris);
        try {
            $client->oauthClients->update($oauth->id, ['redirect_uris' => ['http://sync.example/cb']]);
            self::fail('expected a ValidationException');
        } catch (ValidationException $e) {
            self::assertStringContainsString('redirect_uris.0', $e->getMessage());
        }

        $rotated = $client->oauthClients->rotateSecret($oauth->id);
        self::assertNotSame($oauth->clientSecret, $rotated->clientSecret);
        try {
            self::client(auth: new ClientCredentials($oauth->id, (string) $oauth->clientSecret))->token->retrieve();
            self::fail('expected an OAuthException');
        } catch (OAuthException $e) {
            self::assertSame('invalid_client', $e->error);
        }
        self::assertSame(
            $oauth->id,
            self::client(
                auth: new ClientCredentials($oauth->id, (string) $rotated->clientSecret),
            )->token->retrieve()->clientId,
        );

        self::assertTrue($client->oauthClients->delete($oauth->id)->deleted);
    }
}

<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Live;

use PlatformApi\Exception\NotFoundException;
use PlatformApi\Exception\PermissionDeniedException;
use PlatformApi\Exception\ValidationException;
use PlatformApi\Model\AuditEvent;
use PlatformApi\Model\Member;
use PlatformApi\PlatformClient;

/**
 * The organization, its audit log, members, invitations and the calling member, against the real
 * server: each change is checked where a user would see it (a later read, the audit log, the
 * invitation page).
 */
final class MembersLiveTest extends LiveTestCase
{
    private static function organizationId(): string
    {
        $fixtures = json_decode((string) file_get_contents(self::env('PLATFORM_FIXTURES')), true);
        self::assertIsArray($fixtures);
        self::assertIsString($fixtures['organization_id']);
        return $fixtures['organization_id'];
    }

    /**
     * A plain HTTP request without following redirects, as a browser's first hop.
     *
     * @param array<string, string> $form
     * @return array{int, string, ?string} status, body, Location
     */
    private static function http(string $url, ?array $form = null): array
    {
        $curl = curl_init($url);
        self::assertNotFalse($curl);
        $location = null;
        curl_setopt_array($curl, [
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_FOLLOWLOCATION => false,
            CURLOPT_TIMEOUT => 10,
            CURLOPT_HEADERFUNCTION => static function ($_, string $line) use (&$location): int {
                if (stripos($line, 'location:') === 0) {
                    $location = trim(substr($line, 9));
                }
                return strlen($line);
            },
        ]);
        if ($form !== null) {
            curl_setopt_array($curl, [
                CURLOPT_POST => true,
                CURLOPT_POSTFIELDS => http_build_query($form),
                CURLOPT_HTTPHEADER => [
                    'Content-Type: application/x-www-form-urlencoded',
                    'Origin: ' . self::env('PLATFORM_BASE_URL'),
                ],
            ]);
        }
        $body = curl_exec($curl);
        self::assertIsString($body, curl_error($curl));
        $status = (int) curl_getinfo($curl, CURLINFO_RESPONSE_CODE);
        curl_close($curl);
        return [$status, $body, $location];
    }

    /**
     * Opens the link and sends its form the way a browser does.
     *
     * @return array{int, ?string} status and Location
     */
    private static function acceptInvitation(string $acceptUrl, string $name, string $password): array
    {
        [$status, $page] = self::http($acceptUrl);
        self::assertSame(200, $status, $page);
        $document = new \DOMDocument();
        self::assertTrue(@$document->loadHTML($page));
        $token = null;
        foreach ($document->getElementsByTagName('input') as $input) {
            if ($input->getAttribute('type') === 'hidden' && $input->getAttribute('name') === 'token') {
                $token = $input->getAttribute('value');
            }
        }
        self::assertNotEmpty($token, 'the accept page carries no token input');
        [$status, , $location] = self::http(self::env('PLATFORM_BASE_URL') . '/invitations/accept', [
            'token' => (string) $token,
            'name' => $name,
            'password' => $password,
            'password_confirmation' => $password,
        ]);
        return [$status, $location];
    }

    /**
     * @param array<string, mixed> $filters
     * @return list<AuditEvent>
     */
    private static function auditEvents(PlatformClient $client, array $filters): array
    {
        /** @var list<AuditEvent> */
        return array_values(iterator_to_array($client->auditEvents->list($filters), false));
    }

    /** @return list<Member> */
    private static function members(PlatformClient $client, array $filters = []): array
    {
        /** @var list<Member> */
        return array_values(iterator_to_array($client->members->list($filters), false));
    }

    public function testOrganizationRetrieveShowsTheFixtureOrganizationAndItsRateLimit(): void
    {
        $client = self::client();
        $raw = $client->organization->raw->retrieve();
        $organization = $raw->parse();
        self::assertSame(self::organizationId(), $organization->id);
        self::assertSame('organization', $organization->object);
        self::assertSame('standard', $organization->plan);
        self::assertStringStartsWith('SDK Live School A', $organization->name);
        $limit = $organization->rateLimit;
        // The body's numbers are the window as this very request left it: its headers say the same.
        self::assertSame((int) $raw->header('X-RateLimit-Limit'), $limit->limitPerMinute);
        self::assertSame((int) $raw->header('X-RateLimit-Remaining'), $limit->remaining);
        self::assertGreaterThanOrEqual(1, $limit->used);
        self::assertSame($limit->limitPerMinute, $limit->used + $limit->remaining);
        // The next call is charged too. The window slides: a request of a minute ago may leave it
        // between two calls, so a few tries are allowed; a call that is never charged fails them all.
        for ($try = 0; $try < 3; $try++) {
            $again = $client->organization->retrieve()->rateLimit;
            if ($again->used > $limit->used && $again->remaining < $limit->remaining) {
                break;
            }
            $limit = $again;
        }
        self::assertGreaterThan($limit->used, $again->used);
        self::assertLessThan($limit->remaining, $again->remaining);
    }

    public function testRenamingTheOrganizationIsRecordedInTheAuditLog(): void
    {
        $client = self::client();
        $organizationId = self::organizationId();
        $before = $client->organization->retrieve()->name;
        $newName = self::unique('SDK Live School A (renamed ') . ')';
        try {
            $renamed = $client->organization->update(['name' => $newName]);
            self::assertSame([$organizationId, $newName], [$renamed->id, $renamed->name]);
            self::assertSame($newName, $client->organization->retrieve()->name);

            $entries = self::auditEvents($client, [
                'action' => 'organization.updated',
                'target_id' => $organizationId,
            ]);
            $matching = array_values(array_filter(
                $entries,
                static fn (AuditEvent $e): bool => $e->changes === ['name' => [$before, $newName]],
            ));
            self::assertCount(1, $matching);
            $entry = $matching[0];
            self::assertStringStartsWith('aud_', $entry->id);
            self::assertSame(['organization', $organizationId], [$entry->target->type, $entry->target->id]);
            // Made with the fixture PAT, an operator's: no member behind it, the caller's IP recorded.
            self::assertSame('personal_access_token', $entry->actor->type);
            self::assertSame($client->token->retrieve()->personalAccessTokenId, $entry->actor->credentialId);
            self::assertNull($entry->actor->userId);
            self::assertNotEmpty($entry->actor->ip);

            $fetched = $client->auditEvents->retrieve($entry->id);
            self::assertSame($entry->toArray(), $fetched->toArray());
        } finally {
            $client->organization->update(['name' => $before]);
        }
        self::assertSame($before, $client->organization->retrieve()->name);

        // The plan is an operator's to change: the field is named in the 400.
        try {
            $client->organization->update(['name' => $before, 'plan' => 'enterprise']);
            self::fail('expected a ValidationException');
        } catch (ValidationException $e) {
            self::assertSame(['body.plan'], array_map(static fn ($f) => $f->path, $e->errors));
        }
    }

    public function testInvitationsAreCreatedListedWithoutTheLinkAndRevoked(): void
    {
        $client = self::client();
        $email = self::unique('invitee-') . '@school.test';
        $invitation = $client->invitations->create(['email' => $email, 'role' => 'viewer']);
        self::assertStringStartsWith('inv_', $invitation->id);
        self::assertSame([$email, 'viewer'], [$invitation->email, $invitation->role]);
        // The live server sends no mail, so the link comes back to the caller.
        self::assertSame('link', $invitation->delivery);
        self::assertStringStartsWith(
            self::env('PLATFORM_BASE_URL') . '/invitations/accept?token=',
            $invitation->acceptUrl,
        );
        self::assertGreaterThan($invitation->createdAt, $invitation->expiresAt);

        $listed = array_values(array_filter(
            iterator_to_array($client->invitations->list(), false),
            static fn ($i): bool => $i->id === $invitation->id,
        ));
        self::assertCount(1, $listed);
        self::assertSame($email, $listed[0]->email);
        self::assertArrayNotHasKey('accept_url', $listed[0]->toArray());
        self::assertStringNotContainsString($invitation->acceptUrl, (string) json_encode($listed[0]));

        $fetched = $client->invitations->retrieve($invitation->id);
        self::assertSame([$invitation->id, $email, 'viewer'], [$fetched->id, $fetched->email, $fetched->role]);
        self::assertArrayNotHasKey('accept_url', $fetched->toArray());
        self::assertSame(200, self::http($invitation->acceptUrl)[0]);

        // Resent: a new link; the old one stops working.
        $resent = $client->invitations->resend($invitation->id);
        self::assertSame($invitation->id, $resent->id);
        self::assertNotSame($invitation->acceptUrl, $resent->acceptUrl);
        self::assertSame(404, self::http((string) $invitation->acceptUrl)[0]);
        $invitation = $resent;

        $deleted = $client->invitations->delete($invitation->id);
        self::assertSame([$invitation->id, true], [$deleted->id, $deleted->deleted]);
        // Revoked: no longer pending, and its link shows a page saying so.
        self::assertNotContains(
            $invitation->id,
            array_map(static fn ($i) => $i->id, iterator_to_array($client->invitations->list(), false)),
        );
        [$status, $page] = self::http($invitation->acceptUrl);
        self::assertSame(410, $status);
        self::assertStringContainsString('withdrawn', $page);
    }

    public function testAnInviteeWhoAcceptsBecomesAMemberWhoCanBeChangedAndRemoved(): void
    {
        $client = self::client();
        $email = self::unique('member-') . '@school.test';
        $invitation = $client->invitations->create(['email' => $email, 'role' => 'developer']);
        [$status, $location] = self::acceptInvitation($invitation->acceptUrl, 'Grace Hopper', 'a long enough password');
        self::assertSame(303, $status);
        self::assertSame(self::env('PLATFORM_BASE_URL') . '/portal/', $location);
        // The link worked once.
        self::assertSame(410, self::http($invitation->acceptUrl)[0]);

        $found = array_values(array_filter(
            self::members($client, ['role' => 'developer']),
            static fn (Member $m): bool => $m->email === $email,
        ));
        self::assertCount(1, $found);
        $member = $found[0];
        self::assertStringStartsWith('usr_', $member->id);
        self::assertSame(
            ['Grace Hopper', 'developer', self::organizationId()],
            [$member->name, $member->role, $member->organizationId],
        );
        self::assertNotContains($email, array_map(
            static fn (Member $m) => $m->email,
            self::members($client, ['role' => 'viewer']),
        ));
        self::assertSame($member->toArray(), $client->members->retrieve($member->id)->toArray());

        $updated = $client->members->update($member->id, ['role' => 'viewer', 'name' => 'Grace B. Hopper']);
        self::assertSame([$member->id, 'viewer', 'Grace B. Hopper'], [$updated->id, $updated->role, $updated->name]);
        self::assertSame('viewer', $client->members->retrieve($member->id)->role);
        self::assertSame(
            [['role' => ['developer', 'viewer']]],
            array_map(static fn (AuditEvent $e) => $e->changes, self::auditEvents($client, [
                'action' => 'member.role_changed',
                'target_id' => $member->id,
            ])),
        );

        $deleted = $client->members->delete($member->id);
        self::assertSame([$member->id, true], [$deleted->id, $deleted->deleted]);
        try {
            $client->members->retrieve($member->id);
            self::fail('expected a NotFoundException');
        } catch (NotFoundException $e) {
            self::assertSame(404, $e->statusCode);
        }
        self::assertNotContains($email, array_map(static fn (Member $m) => $m->email, self::members($client)));
        self::assertCount(1, self::auditEvents($client, ['action' => 'member.removed', 'target_id' => $member->id]));
    }

    public function testTheCallingMemberAndTheirPassword(): void
    {
        $client = self::client();
        // The fixture token is an operator's: it acts for no member.
        try {
            $client->user->retrieve();
            self::fail('expected a PermissionDeniedException');
        } catch (PermissionDeniedException $e) {
            self::assertSame([403, 'forbidden'], [$e->statusCode, $e->errorCode]);
            self::assertStringContainsString('acts for no member', $e->detail);
        }

        $member = self::client(self::env('PLATFORM_MEMBER_TOKEN'));
        $me = $member->user->retrieve();
        self::assertSame(
            [self::env('PLATFORM_MEMBER_EMAIL'), 'admin', self::organizationId()],
            [$me->email, $me->role, $me->organizationId],
        );
        // The person's account, and each organization it belongs to: here, this one.
        self::assertStringStartsWith('acc_', $me->accountId);
        self::assertSame(
            [[self::organizationId(), 'admin', $me->id]],
            array_map(static fn ($m) => [$m->organizationId, $m->role, $m->memberId], $me->memberships),
        );
        $asMember = $client->members->retrieve($me->id);
        self::assertSame([$me->id, $me->email, $me->role], [$asMember->id, $asMember->email, $asMember->role]);

        try {
            $member->user->changePassword([
                'current_password' => 'not my password',
                'new_password' => 'whatever it is now',
            ]);
            self::fail('expected a ValidationException');
        } catch (ValidationException $e) {
            self::assertSame(['body.current_password'], array_map(static fn ($f) => $f->path, $e->errors));
        }

        $password = self::env('PLATFORM_MEMBER_PASSWORD');
        $newPassword = self::unique('a new password ');
        $member->user->changePassword(['current_password' => $password, 'new_password' => $newPassword]);
        try {
            // Tokens already issued keep working, and the change is in the audit log (no password).
            self::assertSame($me->id, $member->user->retrieve()->id);
            $entries = self::auditEvents($client, ['action' => 'user.password_changed', 'user_id' => $me->id]);
            self::assertNotEmpty($entries);
            self::assertSame([$me->id, $me->id], [$entries[0]->target->id, $entries[0]->actor->userId]);
            self::assertStringNotContainsString($newPassword, (string) json_encode($entries[0]));
            // The old password is no longer the current one.
            try {
                $member->user->changePassword([
                    'current_password' => $password,
                    'new_password' => self::unique('another one '),
                ]);
                self::fail('expected a ValidationException');
            } catch (ValidationException $e) {
                self::assertSame(['body.current_password'], array_map(static fn ($f) => $f->path, $e->errors));
            }
        } finally {
            $member->user->changePassword(['current_password' => $newPassword, 'new_password' => $password]);
        }
    }

    public function testChangingTheEmailWaitsForTheNewAddress(): void
    {
        $member = self::client(self::env('PLATFORM_MEMBER_TOKEN'));
        try {
            $member->user->changeEmail([
                'email' => self::unique('moved-') . '@school.test',
                'current_password' => 'not my password',
            ]);
            self::fail('expected a ValidationException');
        } catch (ValidationException $e) {
            self::assertSame(['body.current_password'], array_map(static fn ($f) => $f->path, $e->errors));
        }

        $newEmail = self::unique('moved-') . '@school.test';
        $pending = $member->user->changeEmail([
            'email' => $newEmail,
            'current_password' => self::env('PLATFORM_MEMBER_PASSWORD'),
        ]);
        // The live server sends no mail (development): the link comes back instead of going out,
        // and the email stays as it is until the link is opened.
        self::assertSame(['email_change', $newEmail, 'link'], [$pending->object, $pending->email, $pending->delivery]);
        $confirmAt = self::env('PLATFORM_BASE_URL') . '/email-change?token=';
        self::assertStringStartsWith($confirmAt, (string) $pending->confirmUrl);
        self::assertSame(self::env('PLATFORM_MEMBER_EMAIL'), $member->user->retrieve()->email);
    }

    public function testWhatActsForAMemberAndHandingItToAnother(): void
    {
        $client = self::client();
        $member = self::client(self::env('PLATFORM_MEMBER_TOKEN'));
        $me = $member->user->retrieve();
        $endpoint = $member->webhookEndpoints->create([
            'url' => 'https://127.0.0.1:9/php-credentials',
            'events' => ['student.created'],
        ]);
        $app = $member->oauthClients->create([
            'name' => self::unique('php app '),
            'type' => 'confidential',
            'scopes' => ['students:read'],
            'grant_types' => ['client_credentials'],
        ]);
        try {
            // Made by the member: theirs, and listed with what removing them would stop.
            self::assertSame([$me->id, $me->id], [$endpoint->memberId, $app->memberId]);
            $held = $client->members->credentials($me->id);
            self::assertSame($me->id, $held->memberId);
            self::assertContains($endpoint->id, array_map(static fn ($e) => $e->id, $held->webhookEndpoints));
            self::assertContains($app->id, array_map(static fn ($c) => $c->id, $held->oauthClients));

            // An admin hands them over (here to the same member): bound to the member, no credential.
            $moved = $client->webhookEndpoints->transfer($endpoint->id, ['member_id' => $me->id]);
            self::assertSame([$me->id, null], [$moved->memberId, $moved->owner]);
            self::assertSame($me->id, $client->oauthClients->transfer($app->id, ['member_id' => $me->id])->memberId);
            $actions = array_map(
                static fn ($e) => $e->action,
                self::auditEvents($client, ['target_id' => $endpoint->id]),
            );
            self::assertContains('webhook_endpoint.transferred', $actions);
        } finally {
            $client->webhookEndpoints->delete($endpoint->id);
            $client->oauthClients->delete($app->id);
        }
    }
}

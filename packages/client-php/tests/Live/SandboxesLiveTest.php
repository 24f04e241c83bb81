<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Live;

/** Sandboxes against a live server: made, listed, a pat_test_ token, a triggered event, reset and deleted. */
final class SandboxesLiveTest extends LiveTestCase
{
    public function testASandboxItsTokenAndATriggeredEvent(): void
    {
        $client = self::client();
        $sandbox = $client->sandboxes->create(['name' => 'PHP sandbox', 'students' => 20, 'seed' => 5]);
        self::assertSame('sandbox', $sandbox->object);
        self::assertSame(20, $sandbox->students);
        self::assertNull($sandbox->resetAt);
        $ids = array_map(static fn ($s) => $s->id, $client->sandboxes->list()->data);
        self::assertContains($sandbox->id, $ids);
        self::assertSame('PHP sandbox', $client->sandboxes->retrieve($sandbox->id)->name);

        $made = $client->sandboxes->createToken(
            $sandbox->id,
            ['name' => 'php', 'scopes' => ['students:read', 'students:write']],
        );
        self::assertStringStartsWith('pat_test_', $made->token);
        $sandboxed = self::client($made->token);
        $triggered = $sandboxed->sandbox->trigger(
            ['event' => 'student.created', 'overrides' => ['first_name' => 'Php']],
        );
        self::assertSame('student.created', $triggered->event->type);
        self::assertSame('Php', $sandboxed->students->retrieve($triggered->record->id)->firstName);

        self::assertNotNull($client->sandboxes->reset($sandbox->id)->resetAt);
        self::assertTrue($client->sandboxes->delete($sandbox->id)->deleted);
    }
}

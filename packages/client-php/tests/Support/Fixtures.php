<?php

declare(strict_types=1);

namespace PlatformApi\Tests\Support;

/** Response bodies shaped like the server's. */
final class Fixtures
{
    /** @return array<string, mixed> */
    public static function student(string $id = 'stu_01', array $overrides = []): array
    {
        return $overrides + [
            'id' => $id,
            'object' => 'student',
            'student_number' => 'S-' . $id,
            'first_name' => 'Ana',
            'last_name' => 'Lima',
            'preferred_name' => null,
            'email' => 'ana@school.test',
            'date_of_birth' => '2010-04-01',
            'status' => 'active',
            'grade_level' => 9,
            'created_at' => '2026-01-02T03:04:05.678Z',
            'updated_at' => '2026-01-02T03:04:05.678Z',
        ];
    }

    /**
     * A list page body.
     *
     * @param list<array<string, mixed>> $items
     * @return array<string, mixed>
     */
    public static function page(array $items, int $page, int $perPage, int $total): array
    {
        $totalPages = $perPage > 0 ? (int) ceil($total / $perPage) : 0;
        return [
            'object' => 'list',
            'data' => $items,
            'meta' => [
                'page' => $page,
                'per_page' => $perPage,
                'total' => $total,
                'total_pages' => $totalPages,
                'total_exact' => true,
            ],
            'links' => [
                'self' => "/v1/students?page={$page}",
                'first' => '/v1/students?page=1',
                'prev' => $page > 1 ? '/v1/students?page=' . ($page - 1) : null,
                'next' => $page < $totalPages ? '/v1/students?page=' . ($page + 1) : null,
                'last' => "/v1/students?page={$totalPages}",
            ],
        ];
    }
}

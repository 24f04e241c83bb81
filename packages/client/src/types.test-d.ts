// Type-level tests, checked by `tsc --noEmit` (pnpm typecheck), never run. Each
// `@ts-expect-error` fails the typecheck if the line below it starts compiling.
import type { Student } from '@platform/contract';
import { initContract } from '@ts-rest/core';
import { createClient, createClientFor } from './index';

const client = createClient({ baseUrl: 'http://127.0.0.1:1', token: 'pat_x' });

export async function typeTests(): Promise<void> {
  const page = await client.students.list({ page: 2, per_page: 10, status: 'active' });
  const first: Student | undefined = page.data[0];
  const total: number = page.meta.total;
  const next: string | null = page.links.next;

  await client.students.list();
  await client.students.list({
    query: { q: 'ada', sort: '-last_name' },
    fetchOptions: { signal: AbortSignal.timeout(1000) },
  });
  await client.students.list({ 'created_at[gte]': '2026-01-01T00:00:00Z' });

  // @ts-expect-error page is a number, not a string
  await client.students.list({ page: '2' });
  // @ts-expect-error per_page is a number
  await client.students.list({ query: { per_page: 'ten' } });
  // @ts-expect-error unknown query parameter
  await client.students.list({ pages: 2 });
  // @ts-expect-error status takes a string
  await client.students.list({ status: 1 });
  // several values are comma-separated, and each is checked against the enum's first value
  await client.students.list({ status: 'active,graduated', grade_level: 9 });
  // @ts-expect-error 'expelled' is not a student status
  await client.students.list({ status: 'expelled' });
  // @ts-expect-error range filters exist only for created_at and updated_at
  await client.students.list({ 'last_name[gte]': 'A' });
  // @ts-expect-error the body is typed: students have no `name`
  void page.data[0]?.name;

  for await (const student of client.students.listAll({ status: 'graduated', per_page: 50 })) {
    const id: string = student.id;
    // @ts-expect-error items are students, typed
    const wrong: number = student.first_name;
    void id;
    void wrong;
  }
  // @ts-expect-error listAll takes the same query types
  client.students.listAll({ per_page: '50' });
  // @ts-expect-error only list routes get an `All` method
  void client.students.getAll;

  // A nested list takes the route's arguments: its path params, and the query beside them.
  for await (const delivery of client.webhookEndpoints.deliveriesAll({
    params: { id: 'whe_01JD6Y3ZK8R5V2N3M4P5Q6R7S8' },
    query: { status: 'failed' },
  })) {
    const attempts: number = delivery.attempts.length;
    void attempts;
  }
  // @ts-expect-error a nested list needs its endpoint id
  client.webhookEndpoints.deliveriesAll({ status: 'failed' });
  // @ts-expect-error the webhook secret is only on create and rotate responses
  void (await client.webhookEndpoints.retrieve({ params: { id: 'x' } })).secret;

  void first;
  void total;
  void next;
}

// A router the SDK has never seen gets typed methods too: params and bodies are required where
// the route needs them, and only list routes get an `All` method.
const c = initContract();
const futureContract = c.router({
  courses: {
    create: {
      method: 'POST',
      path: '/v1/courses',
      body: c.type<{ title: string }>(),
      responses: { 201: c.type<{ id: string; title: string }>() },
      metadata: { scope: 'courses:write' } as const,
    },
    retrieve: {
      method: 'GET',
      path: '/v1/courses/:id',
      responses: { 200: c.type<{ id: string; title: string }>() },
      metadata: { scope: 'courses:read' } as const,
    },
  },
});
const future = createClientFor(futureContract, { baseUrl: 'http://127.0.0.1:1', token: 'pat_x' });

export async function futureTypeTests(): Promise<void> {
  const created = await future.courses.create({
    body: { title: 'Algebra' },
    extraHeaders: { 'Idempotency-Key': 'k' },
  });
  const title: string = created.title;
  const course = await future.courses.retrieve({ params: { id: created.id } });

  // @ts-expect-error the body is required
  await future.courses.create();
  // @ts-expect-error title is a string
  await future.courses.create({ body: { title: 1 } });
  // @ts-expect-error the path parameter is required
  await future.courses.retrieve({});
  // @ts-expect-error not a list route
  void future.courses.createAll;

  void title;
  void course;
}

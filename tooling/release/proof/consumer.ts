// The TypeScript consumer: type-checked with `tsc --strict` and no skipLibCheck, as
// consumer.mts (the `import` types) and consumer.cts (the `require` types). Never run.
import {
  createClient,
  PlatformApiError,
  verifyWebhook,
  WebhookVerificationError,
  type Event,
  type PlatformClient,
  type Student,
} from '@platform/client';

declare const token: string;
declare const rawBody: string;
declare const headers: Record<string, string>;

export async function main(): Promise<string> {
  const platform: PlatformClient = createClient({ baseUrl: 'http://127.0.0.1:3000', token });
  const student: Student = await platform.students.create({
    body: { student_number: 'S-1', first_name: 'Ada', last_name: 'Lovelace' },
  });
  // A prefixed id from one response feeds the next call.
  const payments = await platform.payments.list({ student_id: student.id });
  const raw = await platform.students.list({ per_page: 10 }).withResponse();
  const requestId: string | undefined = raw.requestId;
  const remaining: string | null = raw.headers.get('X-RateLimit-Remaining');
  const payment = payments.data[0];
  if (payment) {
    // @ts-expect-error: a payment id is not a student id
    await platform.payments.list({ student_id: payment.id });
  }
  // @ts-expect-error: students are not sortable by amount
  await platform.students.list({ sort: 'amount' });
  // The id positionally; every item of every page with for await; the first 200 in an array.
  const same: Student = await platform.students.retrieve(student.id);
  for await (const s of platform.students.list({ status: 'active' })) void s.last_name;
  const firsts: Student[] = await platform.students.list().autoPagingToArray({ limit: 200 });
  // Any path, with the client's auth, retries and errors.
  const beta = await platform.request<{ ok: boolean }>('GET', '/v1/students', {
    query: { q: 'ada' },
  });
  void [same, firsts, beta.ok];

  try {
    const event: Event = await verifyWebhook(rawBody, headers, 'whsec_c2VjcmV0');
    if (event.type === 'student.created') return event.data.last_name;
    return event.type;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    if (error instanceof PlatformApiError) return `${error.status} ${error.code}`;
    throw error;
  } finally {
    void requestId;
    void remaining;
  }
}

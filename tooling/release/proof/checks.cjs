'use strict';
/**
 * What every JavaScript consumer of the release proof does with the installed @platform/client
 * (ESM and CommonJS under Node, Bun and Deno pass in the module they loaded): create a student
 * against the live server, list students, read the raw response's headers, and verify a webhook
 * the server's own signer signed. Plain JavaScript on purpose: it is copied into a project
 * outside the workspace and runs unbuilt in every runtime.
 */

function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

function env(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (the release proof sets it)`);
  return value;
}

/** `sdk` is the loaded @platform/client; `webhooks` its ./webhooks entry, when it has one. */
async function run(sdk, label, webhooks) {
  const version = env('PROOF_VERSION');
  check(sdk.VERSION === version, `VERSION is ${sdk.VERSION}, the release is ${version}`);
  const client = sdk.createClient({
    baseUrl: env('PLATFORM_BASE_URL'),
    token: env('PLATFORM_TOKEN'),
    maxRetries: 0,
  });

  const number = `PROOF-${label}-${Date.now().toString(36)}`;
  const created = await client.students
    .create({ body: { student_number: number, first_name: 'Ada', last_name: 'Lovelace' } })
    .withResponse();
  check(created.status === 201, `create answered ${created.status}, not 201`);
  check(/^stu_/.test(created.data.id), `the new student's id is ${created.data.id}`);
  check(created.data.student_number === number, 'the new student has another number');
  check(Boolean(created.requestId), 'withResponse() gave no requestId');
  check(
    created.headers.get('X-Request-Id') === created.requestId,
    'X-Request-Id differs from requestId',
  );
  const serverVersion = created.headers.get('Platform-Version');
  check(serverVersion === version, `Platform-Version is ${serverVersion}, not ${version}`);

  const page = await client.students.list({ per_page: 100, q: number });
  check(
    page.data.some((s) => s.id === created.data.id),
    'the new student is not in the list',
  );

  const verifiers = [['@platform/client', sdk]];
  if (webhooks) verifiers.push(['@platform/client/webhooks', webhooks]);
  const body = Buffer.from(env('PROOF_WEBHOOK_BODY_B64'), 'base64').toString('utf8');
  const headers = JSON.parse(env('PROOF_WEBHOOK_HEADERS'));
  const secret = env('PROOF_WEBHOOK_SECRET');
  for (const [entry, module] of verifiers) {
    const event = await module.verifyWebhook(body, headers, secret);
    check(event.type === 'student.created', `${entry}: event type ${event.type}`);
    check(event.data.id === env('PROOF_WEBHOOK_STUDENT_ID'), `${entry}: another student`);
    const tampered = body.replace('"Ana"', '"Eve"');
    check(tampered !== body, 'the payload has no "Ana" to tamper with');
    const refused = await module.verifyWebhook(tampered, headers, secret).then(
      () => null,
      (error) => error,
    );
    check(
      refused instanceof module.WebhookVerificationError,
      `${entry}: a tampered body was not refused with WebhookVerificationError (${refused})`,
    );
    check(
      refused.reason === 'no_valid_signature',
      `${entry}: reason ${refused.reason}, not no_valid_signature`,
    );
  }

  console.log(
    `ok ${label}: created ${created.data.id} (request ${created.requestId}, server ${serverVersion}), ` +
      `listed ${page.data.length}, webhook verified by ${verifiers.map(([e]) => e).join(' and ')}`,
  );
}

module.exports = { run };

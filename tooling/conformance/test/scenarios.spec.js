/**
 * The conformance suite's own checks: the scenario file covers what the SDKs must agree on, and
 * the scripted server fails an SDK that sends or returns the wrong thing (so a green run means
 * something).
 */
const fs = require('node:fs');
const path = require('node:path');
const { createConformanceServer, SCENARIOS_FILE } = require('../src/server');

const { scenarios } = JSON.parse(fs.readFileSync(SCENARIOS_FILE, 'utf8'));
const byName = (name) => scenarios.find((s) => s.name === name);
const openapi = JSON.parse(
  fs.readFileSync(path.resolve(__dirname, '../../../packages/contract/openapi.json'), 'utf8'),
);

describe('conformance/http/scenarios.json', () => {
  it('names each scenario once', () => {
    const names = scenarios.map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it('maps every problem code of the contract to an error class', () => {
    const codes = openapi.components.schemas.Problem.properties.code.enum;
    const covered = scenarios.map((s) => s.problem_code).filter(Boolean);
    expect([...covered].sort()).toEqual([...codes].sort());
  });

  it('covers each behaviour the SDKs must share', () => {
    const names = scenarios.map((s) => s.name).join(' ');
    for (const topic of [
      'base-url-ending-v1',
      'retry-limit',
      'retry-after-seconds',
      'retry-after-http-date',
      'x-should-retry-true',
      'x-should-retry-false',
      'retry-post-reuses-idempotency-key',
      'timeout-per-call',
      'auto-paging-170',
      'unknown-fields-and-enum-values',
      'request-headers',
      'raw-response',
      'generic-request-get',
    ]) {
      expect(names).toContain(topic);
    }
  });

  it('only calls operations of the contract, with their path', () => {
    const paths = new Set(Object.keys(openapi.paths));
    for (const { call, exchanges } of scenarios) {
      if (call.request) continue;
      const first = exchanges[0].request.path.replace(/^\/gateway\/platform/, '');
      const template = first.replace(/\/[a-z]+_[0-9A-Z][^/]*/, '/{id}');
      expect([call.resource, call.method, paths.has(template)]).toEqual([
        call.resource,
        call.method,
        true,
      ]);
    }
  });
});

describe('the scripted server', () => {
  let server;
  let origin;
  beforeAll(async () => {
    server = createConformanceServer();
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${server.address().port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const control = async (action, body) =>
    (
      await fetch(`${origin}/__conformance/${action}`, {
        method: 'POST',
        body: JSON.stringify(body),
      })
    ).json();

  it('accepts the requests and outcome a scenario describes', async () => {
    await control('start', { name: 'base-url-ending-v1' });
    const response = await fetch(`${origin}/v1/students/stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8`);
    const value = await response.json();
    const verdict = await control('verdict', { ok: true, value, waits: [] });
    expect(verdict).toEqual({ requests: 1, expected: 1, mismatches: [] });
  });

  it('reports a doubled /v1, a missing request and a wrong outcome', async () => {
    await control('start', { name: 'retry-503-then-ok' });
    await fetch(`${origin}/v1/v1/students/stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8`);
    const verdict = await control('verdict', { ok: false, error: { kind: 'server' }, waits: [] });
    expect(verdict.mismatches).toEqual([
      'request 1: path /v1/v1/students/stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8, expected /v1/students/stu_01JD6Y3ZK8R5V2N3M4P5Q6R7S8',
      '1 request(s) arrived, the scenario expects 2',
      'the call failed: {"kind":"server"}',
    ]);
  });

  it('reports a changed idempotency key, a wait out of range and a missing item', async () => {
    await control('start', { name: 'retry-post-reuses-idempotency-key' });
    const body = JSON.stringify({
      student_number: 'S-1003',
      first_name: 'Eva',
      last_name: 'Lopes',
    });
    for (const key of [
      '6f1c2a4e-9d1b-4c3e-8a7f-0b2c4d6e8f10',
      '6f1c2a4e-9d1b-4c3e-8a7f-0b2c4d6e8f11',
    ]) {
      await fetch(`${origin}/v1/students`, {
        method: 'POST',
        body,
        headers: { 'idempotency-key': key },
      });
    }
    const verdict = await control('verdict', { ok: true, value: {}, waits: [2] });
    expect(verdict.mismatches).toEqual([
      'request 2: header idempotency-key is "6f1c2a4e-9d1b-4c3e-8a7f-0b2c4d6e8f11", expected the same as request 1 ("6f1c2a4e-9d1b-4c3e-8a7f-0b2c4d6e8f10")',
      'value.id is missing',
      'wait 1 was 2 s, expected between 0.25 and 0.5 s',
    ]);
  });

  it('reports an auto-paging walk that asked for the wrong page size', async () => {
    await control('start', { name: 'auto-paging-170' });
    const first = await (await fetch(`${origin}/v1/students?per_page=25`)).json();
    const verdict = await control('verdict', {
      ok: true,
      ids: first.data.map((s) => s.id),
      waits: [],
    });
    expect(verdict.mismatches).toEqual([
      'request 1: query {"per_page":"25"}, expected {"per_page":"100"}',
      '1 request(s) arrived, the scenario expects 2',
      'items.count is 100, expected 170',
      'items.unique is 100, expected 170',
      `items.last is "${first.data.at(-1).id}", expected "${byName('auto-paging-170').expect.items.last}"`,
    ]);
  });
});

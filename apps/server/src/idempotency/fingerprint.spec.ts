import { canonicalJson, normalisedPath, requestFingerprint } from './fingerprint';

describe(normalisedPath.name, () => {
  it.each([
    ['/v1/students', '/v1/students'],
    ['/api/v1/students', '/v1/students'],
    ['/v1/students/', '/v1/students'],
    ['/api/v1/students/?x=1', '/v1/students'],
    ['/v1/students?a=b', '/v1/students'],
    ['/api/v10/students', '/api/v10/students'],
    ['/', '/'],
  ])('%s is %s', (url, expected) => {
    expect(normalisedPath(url)).toBe(expected);
  });
});

describe(canonicalJson.name, () => {
  it('sorts object keys at every level and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('keeps a "__proto__" key as a key', () => {
    expect(canonicalJson(JSON.parse('{"__proto__":{"x":1},"a":2}'))).toBe(
      '{"__proto__":{"x":1},"a":2}',
    );
  });

  it('gives no body an empty form, distinct from null and {}', () => {
    expect(new Set([canonicalJson(undefined), canonicalJson(null), canonicalJson({})]).size).toBe(
      3,
    );
  });
});

describe(requestFingerprint.name, () => {
  const body = { student_number: 'S-1', first_name: 'Ada', last_name: 'Lovelace' };
  const base = requestFingerprint('POST', '/v1/students', body);

  it('is a hex SHA-256', () => {
    expect(base).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is the same for either path alias and any key order', () => {
    expect(
      requestFingerprint('post', '/api/v1/students', {
        last_name: 'Lovelace',
        first_name: 'Ada',
        student_number: 'S-1',
      }),
    ).toBe(base);
  });

  it('differs when the body, the path or the method differs', () => {
    expect(requestFingerprint('POST', '/v1/students', { ...body, first_name: 'Ava' })).not.toBe(
      base,
    );
    expect(requestFingerprint('POST', '/v1/courses', body)).not.toBe(base);
    expect(requestFingerprint('PUT', '/v1/students', body)).not.toBe(base);
  });
});

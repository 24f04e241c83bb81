import {
  assertLiteralHostAllowed,
  checkWebhookUrl,
  isPublicAddress,
  type Resolver,
  type UrlPolicy,
  WebhookUrlError,
} from './url-guard';

const strict: UrlPolicy = { allowPrivate: false };
const dev: UrlPolicy = { allowPrivate: true };

const PUBLIC_V4 = '93.184.216.34';
const PUBLIC_V6 = '2606:2800:220:1:248:1893:25c8:1946';

/** IP literals that must never receive a webhook, with what makes each one special. */
const nonPublic = [
  { address: '127.0.0.1', kind: 'loopback' },
  { address: '127.255.0.9', kind: 'loopback' },
  { address: '10.0.0.5', kind: 'private' },
  { address: '172.16.0.1', kind: 'private' },
  { address: '172.31.255.254', kind: 'private' },
  { address: '192.168.1.1', kind: 'private' },
  { address: '169.254.169.254', kind: 'link-local (cloud metadata)' },
  { address: '100.64.0.1', kind: 'carrier-grade NAT' },
  { address: '0.0.0.0', kind: 'unspecified' },
  { address: '224.0.0.1', kind: 'multicast' },
  { address: '255.255.255.255', kind: 'broadcast' },
  { address: '192.0.2.1', kind: 'documentation' },
  { address: '::1', kind: 'IPv6 loopback' },
  { address: '::', kind: 'IPv6 unspecified' },
  { address: 'fd00:ec2::254', kind: 'unique local (AWS metadata over IPv6)' },
  { address: 'fe80::1', kind: 'IPv6 link-local' },
  { address: '::ffff:127.0.0.1', kind: 'IPv4-mapped loopback' },
  { address: '::ffff:a9fe:a9fe', kind: 'IPv4-mapped metadata, hex form' },
  { address: '::7f00:1', kind: 'IPv4-compatible loopback (ipaddr.js calls it unicast)' },
  { address: '::127.0.0.1', kind: 'IPv4-compatible loopback, dotted form' },
  { address: '64:ff9b::a00:5', kind: 'NAT64 of 10.0.0.5' },
  { address: '64:ff9b::7f00:1', kind: 'NAT64 of 127.0.0.1' },
  { address: '2002:7f00:1::1', kind: '6to4 of 127.0.0.1' },
  { address: '2001::1', kind: 'Teredo' },
  { address: '2001:db8::1', kind: 'IPv6 documentation' },
];

describe(isPublicAddress.name, () => {
  it.each(nonPublic)('refuses $address ($kind)', ({ address }) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each([
    { address: PUBLIC_V4 },
    { address: '8.8.8.8' },
    { address: PUBLIC_V6 },
    { address: '2001:4860:4860::8888' },
    { address: `::ffff:${PUBLIC_V4}` },
  ])('allows public $address', ({ address }) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it.each([
    { address: 'example.com' },
    { address: '' },
    { address: `[${PUBLIC_V6}]` },
    // inet_aton shorthands: ipaddr.js parses them, but they are not IP literals to Node.
    { address: '8.8.2056' },
    { address: '134744072' },
    // An IPv6 literal to Node whose zone ipaddr.js cannot parse.
    { address: 'fe80::1%-' },
  ])('refuses $address, which is not an IP literal', ({ address }) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it('refuses NAT64 even when the embedded IPv4 address is public', () => {
    expect(isPublicAddress('64:ff9b::808:808')).toBe(false);
  });
});

/** A resolver that must not be called (IP literals, allowPrivate). */
function noDns(): jest.Mock<ReturnType<Resolver>, Parameters<Resolver>> {
  return jest.fn<ReturnType<Resolver>, Parameters<Resolver>>(() =>
    Promise.reject(new Error('resolver must not be called')),
  );
}

/** A resolver answering from a fixed table; unknown names fail like dns.lookup does. */
function fakeResolver(table: Record<string, string[]>): jest.Mock<ReturnType<Resolver>, [string]> {
  return jest.fn((hostname: string) => {
    const addresses = table[hostname];
    if (addresses === undefined) {
      return Promise.reject(
        Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }),
      );
    }
    return Promise.resolve(
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  });
}

async function refusal(promise: Promise<unknown>): Promise<WebhookUrlError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WebhookUrlError);
  return error as WebhookUrlError;
}

describe(checkWebhookUrl.name, () => {
  it('accepts a public https URL, checking the resolved addresses', async () => {
    const resolve = fakeResolver({ 'hooks.example.com': [PUBLIC_V4, PUBLIC_V6] });
    const url = await checkWebhookUrl('https://hooks.example.com/in?x=1', strict, resolve);
    expect(url.href).toBe('https://hooks.example.com/in?x=1');
    expect(resolve).toHaveBeenCalledWith('hooks.example.com');
  });

  it.each([{ raw: 'hooks.example.com/in' }, { raw: '/webhooks' }, { raw: 'not a url' }])(
    'refuses $raw, which is not an absolute URL',
    async ({ raw }) => {
      const error = await refusal(checkWebhookUrl(raw, strict, noDns()));
      expect(error.message).toMatch(/must be an absolute URL/);
    },
  );

  it('refuses URLs over 2048 characters and accepts exactly 2048', async () => {
    const base = 'https://hooks.example.com/';
    const resolve = fakeResolver({ 'hooks.example.com': [PUBLIC_V4] });
    const exact = base + 'a'.repeat(2048 - base.length);
    await expect(checkWebhookUrl(exact, strict, resolve)).resolves.toBeInstanceOf(URL);
    const error = await refusal(checkWebhookUrl(exact + 'a', strict, resolve));
    expect(error.message).toMatch(/at most 2048 characters/);
  });

  it('refuses over-long input even when it parses to a short URL', async () => {
    const raw = ' '.repeat(2048) + 'https://hooks.example.com/';
    const error = await refusal(checkWebhookUrl(raw, strict, noDns()));
    expect(error.message).toMatch(/at most 2048 characters/);
  });

  it('refuses a URL that only grows past 2048 characters once encoded', async () => {
    const raw = 'https://hooks.example.com/' + 'é'.repeat(1000);
    const resolve = fakeResolver({ 'hooks.example.com': [PUBLIC_V4] });
    const error = await refusal(checkWebhookUrl(raw, strict, resolve));
    expect(error.message).toMatch(/at most 2048 characters/);
  });

  it.each([
    { raw: 'http://hooks.example.com/' },
    { raw: 'ftp://hooks.example.com/' },
    { raw: 'file:///etc/passwd' },
    { raw: 'javascript:alert(1)' },
  ])('requires https: refuses $raw', async ({ raw }) => {
    const error = await refusal(checkWebhookUrl(raw, strict, noDns()));
    expect(error.message).toBe('Webhook URL must use https');
  });

  it.each([
    { raw: 'https://user:secret@hooks.example.com/' },
    { raw: 'https://user@hooks.example.com/' },
    { raw: 'https://:secret@hooks.example.com/' },
  ])('refuses credentials in $raw', async ({ raw }) => {
    const error = await refusal(checkWebhookUrl(raw, strict, noDns()));
    expect(error.message).toMatch(/must not contain a username or password/);
  });

  // Refused at registration, from the literal alone: nothing is resolved or connected to (the
  // test's resolver throws if asked), so these addresses never leave this process.
  it.each([
    { raw: 'https://127.0.0.1/', host: '127.0.0.1', words: 'a loopback address' },
    { raw: 'https://10.0.0.5:8443/hook', host: '10.0.0.5', words: 'a private address' },
    { raw: 'https://172.16.0.1/', host: '172.16.0.1', words: 'a private address' },
    { raw: 'https://192.168.1.1/', host: '192.168.1.1', words: 'a private address' },
    {
      raw: 'https://169.254.169.254/latest/meta-data/',
      host: '169.254.169.254',
      words: 'a link-local address',
    },
    {
      raw: 'https://100.64.0.1/',
      host: '100.64.0.1',
      words: 'a shared (carrier-grade NAT) address',
    },
    { raw: 'https://0.0.0.0/', host: '0.0.0.0', words: 'an unspecified address' },
    { raw: 'https://224.0.0.1/', host: '224.0.0.1', words: 'a multicast address' },
    { raw: 'https://255.255.255.255/', host: '255.255.255.255', words: 'a broadcast address' },
    { raw: 'https://[::1]/', host: '::1', words: 'a loopback address' },
    { raw: 'https://[fd00:ec2::254]/', host: 'fd00:ec2::254', words: 'a private address' },
    { raw: 'https://[::ffff:127.0.0.1]/', host: '::ffff:7f00:1', words: 'a loopback address' },
    {
      raw: 'https://[::127.0.0.1]/',
      host: '::7f00:1',
      words: 'a reserved or special-purpose address',
    },
    // The URL parser normalises inet_aton shorthands, so these are 127.0.0.1 too.
    { raw: 'https://127.1/', host: '127.0.0.1', words: 'a loopback address' },
    { raw: 'https://2130706433/', host: '127.0.0.1', words: 'a loopback address' },
    { raw: 'https://0x7f.0.0.1/', host: '127.0.0.1', words: 'a loopback address' },
  ])('refuses the IP literal in $raw without DNS', async ({ raw, host, words }) => {
    const resolve = noDns();
    const error = await refusal(checkWebhookUrl(raw, strict, resolve));
    expect(error.message).toBe(
      `Webhook URL host ${host} is ${words}; webhooks go to public addresses only`,
    );
    expect(resolve).not.toHaveBeenCalled();
  });

  it('checks IP literals without the default resolver too (no DNS involved)', async () => {
    await refusal(checkWebhookUrl('https://10.0.0.5/', strict));
    await expect(checkWebhookUrl(`https://${PUBLIC_V4}/`, strict)).resolves.toBeInstanceOf(URL);
  });

  it.each([{ raw: `https://${PUBLIC_V4}/hook` }, { raw: `https://[${PUBLIC_V6}]:8443/hook` }])(
    'accepts the public IP literal in $raw without DNS',
    async ({ raw }) => {
      const resolve = noDns();
      const url = await checkWebhookUrl(raw, strict, resolve);
      expect(url.href).toBe(raw);
      expect(resolve).not.toHaveBeenCalled();
    },
  );

  it('refuses a hostname when any resolved address is private, naming it', async () => {
    const resolve = fakeResolver({ 'mixed.example.com': [PUBLIC_V4, '10.0.0.5', PUBLIC_V6] });
    const error = await refusal(checkWebhookUrl('https://mixed.example.com/', strict, resolve));
    expect(error.message).toBe(
      'Webhook URL host mixed.example.com resolves to 10.0.0.5, a private address; webhooks go to public addresses only',
    );
  });

  it.each([
    { name: 'localhost', addresses: ['::1', '127.0.0.1'] },
    { name: 'metadata.example.com', addresses: ['169.254.169.254'] },
    { name: 'mapped.example.com', addresses: ['::ffff:10.1.2.3'] },
    { name: 'ula.example.com', addresses: [PUBLIC_V6, 'fd00:ec2::254'] },
  ])('refuses $name resolving to $addresses', async ({ name, addresses }) => {
    const resolve = fakeResolver({ [name]: addresses });
    const error = await refusal(checkWebhookUrl(`https://${name}/`, strict, resolve));
    expect(error.message).toMatch(/webhooks go to public addresses only$/);
  });

  it('refuses a host that does not resolve', async () => {
    const resolve = fakeResolver({});
    const error = await refusal(checkWebhookUrl('https://nowhere.example.com/', strict, resolve));
    expect(error.message).toBe(
      'Webhook URL host nowhere.example.com could not be resolved; check that it has a public DNS record',
    );
    expect(error.cause).toMatchObject({ code: 'ENOTFOUND' });
  });

  it('refuses a host that resolves to no addresses', async () => {
    const resolve = fakeResolver({ 'empty.example.com': [] });
    const error = await refusal(checkWebhookUrl('https://empty.example.com/', strict, resolve));
    expect(error.message).toBe(
      'Webhook URL host empty.example.com could not be resolved; check that it has a public DNS record',
    );
  });

  it('refuses a host resolving to something that is not an IP address, saying so', async () => {
    const resolve = fakeResolver({ 'odd.example.com': ['fe80::1%-'] });
    const error = await refusal(checkWebhookUrl('https://odd.example.com/', strict, resolve));
    expect(error.message).toBe(
      'Webhook URL host odd.example.com resolves to fe80::1%-, not a valid IP address; webhooks go to public addresses only',
    );
  });

  // The system resolver, as in production: the hermetic guard answers localhost with loopback
  // and *.test names with a public address nobody owns, so no query leaves the machine.
  describe('with the system resolver', () => {
    it('refuses localhost, which resolves to loopback', async () => {
      const error = await refusal(checkWebhookUrl('https://localhost/hook', strict));
      expect(error.message).toBe(
        'Webhook URL host localhost resolves to 127.0.0.1, a loopback address; webhooks go to public addresses only',
      );
    });

    it('accepts a name that resolves to public addresses only', async () => {
      const url = await checkWebhookUrl('https://hooks.example.test/in', strict);
      expect(url.href).toBe('https://hooks.example.test/in');
    });
  });

  describe('with allowPrivate', () => {
    it.each([
      { raw: 'http://127.0.0.1:1234' },
      { raw: 'http://localhost:3000/hook' },
      { raw: 'https://[::1]:8443/' },
      { raw: 'http://10.0.0.5/' },
    ])('accepts $raw without resolving', async ({ raw }) => {
      const resolve = noDns();
      await expect(checkWebhookUrl(raw, dev, resolve)).resolves.toBeInstanceOf(URL);
      expect(resolve).not.toHaveBeenCalled();
    });

    it('still refuses other schemes and credentials', async () => {
      const scheme = await refusal(checkWebhookUrl('ftp://127.0.0.1/', dev, noDns()));
      expect(scheme.message).toBe('Webhook URL must use http or https');
      await refusal(checkWebhookUrl('http://u:p@127.0.0.1/', dev, noDns()));
    });
  });
});

describe(assertLiteralHostAllowed.name, () => {
  it.each([
    { raw: 'https://127.0.0.1/' },
    { raw: 'https://[::1]:8443/' },
    { raw: 'https://[fd00:ec2::254]/' },
    { raw: 'https://169.254.169.254/' },
    { raw: 'https://[::ffff:10.0.0.1]/' },
  ])('throws for $raw', ({ raw }) => {
    expect(() => assertLiteralHostAllowed(new URL(raw), strict)).toThrow(WebhookUrlError);
  });

  it.each([
    { raw: `https://${PUBLIC_V4}/` },
    { raw: `https://[${PUBLIC_V6}]/` },
    // Hostnames are guardedLookup's job: Node calls lookup for them.
    { raw: 'https://localhost/' },
    { raw: 'https://hooks.example.com/' },
  ])('allows $raw', ({ raw }) => {
    expect(() => assertLiteralHostAllowed(new URL(raw), strict)).not.toThrow();
  });

  it('allows anything under allowPrivate', () => {
    expect(() => assertLiteralHostAllowed(new URL('http://127.0.0.1:1234/'), dev)).not.toThrow();
  });
});

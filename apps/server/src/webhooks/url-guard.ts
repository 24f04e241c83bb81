// SSRF guard for webhook delivery. House rule: webhook URLs must be https and must not resolve
// to loopback, private, link-local or metadata addresses, checked at registration and again at
// connect time; `allowPrivate` relaxes this for local development and tests.
//
// Registration (`checkWebhookUrl`) gives the customer an early, readable error. It cannot be the
// only check: DNS can change after registration, or answer differently per query (rebinding).
// At send time the dispatcher uses `guardedLookup` as the agent's `lookup`, so the addresses that
// pass the check are the very ones the socket connects to, with no second resolution in between.
// Node skips `lookup` for IP-literal hosts, so those go through `assertLiteralHostAllowed`.
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

export interface UrlPolicy {
  /** Allow http:// and loopback/private addresses (development and tests only). */
  allowPrivate: boolean;
}

export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

/** A webhook URL we refuse; the message is a sentence the customer can act on. */
export class WebhookUrlError extends Error {
  override readonly name = 'WebhookUrlError';
}

/** `code` of the error `guardedLookup` fails with, so the dispatcher can tell it from DNS errors. */
const BLOCKED_CODE = 'EWEBHOOKBLOCKED';

const MAX_URL_LENGTH = 2048;

const PUBLIC_ONLY = 'webhooks go to public addresses only';

/**
 * IANA's global unicast space. ipaddr.js calls any IPv6 address outside its special ranges
 * "unicast", including the deprecated IPv4-compatible ::a.b.c.d (URL parsing turns
 * [::127.0.0.1] into [::7f00:1], which ipaddr.js rates unicast) and other unallocated space.
 * Every real public IPv6 address is in 2000::/3, so we require it.
 */
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');

/** Words for ipaddr.js ranges a customer may meet; the rest are "reserved or special-purpose". */
const RANGE_WORDS: Readonly<Record<string, string>> = {
  loopback: 'a loopback address',
  private: 'a private address',
  uniqueLocal: 'a private address',
  linkLocal: 'a link-local address',
  carrierGradeNat: 'a shared (carrier-grade NAT) address',
  unspecified: 'an unspecified address',
  multicast: 'a multicast address',
  broadcast: 'a broadcast address',
};

/** Parses an IP literal in the canonical forms `net` connects to; null for anything else. */
function parseIp(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  // net.isIP first: ipaddr.js also accepts inet_aton forms ("127.1", "0x7f.1", "2130706433")
  // that are not IP literals to Node; refusing them keeps "is an IP" meaning one thing.
  if (net.isIP(address) === 0) return null;
  try {
    // process() turns IPv4-mapped IPv6 (::ffff:127.0.0.1) into the IPv4 address it reaches.
    return ipaddr.process(address);
  } catch {
    return null;
  }
}

/** True if connecting to this IP literal is allowed for a public webhook. */
export function isPublicAddress(address: string): boolean {
  const ip = parseIp(address);
  if (ip === null || ip.range() !== 'unicast') return false;
  // NAT64 (64:ff9b::/96, 64:ff9b:1::/48) is ipaddr.js's 'rfc6052', not 'unicast', so it is
  // already refused above, whatever IPv4 address it embeds; 2000::/3 would refuse it too.
  return ip.kind() === 'ipv4' || ip.match(GLOBAL_UNICAST_V6);
}

/** "a private address", "a loopback address", ... for error messages. */
function describeAddress(address: string): string {
  const ip = parseIp(address);
  if (ip === null) return 'not a valid IP address';
  return RANGE_WORDS[ip.range()] ?? 'a reserved or special-purpose address';
}

function resolvesToMessage(hostname: string, address: string): string {
  return `Webhook URL host ${hostname} resolves to ${address}, ${describeAddress(address)}; ${PUBLIC_ONLY}`;
}

/** URL.hostname keeps an IPv6 literal's brackets (only it has any); net and ipaddr.js want them off. */
function bareHost(url: URL): string {
  const host = url.hostname;
  return host.startsWith('[') ? host.slice(1, -1) : host;
}

function assertLiteralAllowed(host: string): void {
  if (!isPublicAddress(host)) {
    throw new WebhookUrlError(
      `Webhook URL host ${host} is ${describeAddress(host)}; ${PUBLIC_ONLY}`,
    );
  }
}

const defaultResolver: Resolver = (hostname) =>
  dns.promises.lookup(hostname, {
    all: true,
    // Stryker disable next-line BooleanLiteral: every address is checked; the order only decides which blocked one an error names
    verbatim: true,
  });

/**
 * Registration-time check. Parses and validates the URL, resolves the host (default resolver:
 * dns.promises.lookup with {all:true, verbatim:true}) and checks every resolved address.
 * Returns the parsed URL. Throws WebhookUrlError.
 */
export async function checkWebhookUrl(
  raw: string,
  policy: UrlPolicy,
  resolve: Resolver = defaultResolver,
): Promise<URL> {
  // Checked before parsing (bounds the parser's work) and after (percent-encoding and IDNA
  // can make the stored href longer than what the customer typed).
  const tooLong = `Webhook URL must be at most ${MAX_URL_LENGTH} characters`;
  if (raw.length > MAX_URL_LENGTH) throw new WebhookUrlError(tooLong);

  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookUrlError(
      'Webhook URL must be an absolute URL, such as https://example.com/webhooks',
    );
  }
  if (url.href.length > MAX_URL_LENGTH) throw new WebhookUrlError(tooLong);

  const schemeAllowed =
    url.protocol === 'https:' || (policy.allowPrivate && url.protocol === 'http:');
  if (!schemeAllowed) {
    throw new WebhookUrlError(
      policy.allowPrivate ? 'Webhook URL must use http or https' : 'Webhook URL must use https',
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new WebhookUrlError(
      'Webhook URL must not contain a username or password; verify deliveries with the webhook signature instead',
    );
  }
  const host = bareHost(url);
  // Stryker disable next-line all: unreachable today (an http(s) URL always has a host), kept in case the scheme rule widens
  if (host === '') throw new WebhookUrlError('Webhook URL must include a host');

  if (policy.allowPrivate) return url;

  // URL parsing has already normalised IPv4 forms ("127.1", "0x7f.0.0.1") to dotted quads.
  if (net.isIP(host) !== 0) {
    assertLiteralAllowed(host);
    return url;
  }

  let addresses: { address: string; family: number }[];
  try {
    addresses = await resolve(host);
  } catch (cause) {
    throw new WebhookUrlError(
      `Webhook URL host ${host} could not be resolved; check that it has a public DNS record`,
      { cause },
    );
  }
  if (addresses.length === 0) {
    throw new WebhookUrlError(
      `Webhook URL host ${host} could not be resolved; check that it has a public DNS record`,
    );
  }
  // Every address, not just the first: a client may connect to any of them.
  const blocked = addresses.find(({ address }) => !isPublicAddress(address));
  if (blocked) throw new WebhookUrlError(resolvesToMessage(host, blocked.address));
  return url;
}

/**
 * Connect-time: a `lookup` function to pass to `new https.Agent({ lookup })` / `http.Agent`.
 * It resolves with the given dns lookup implementation (default dns.lookup), refuses (callback
 * with an Error whose `code` is 'EWEBHOOKBLOCKED') if ANY resolved address is not public, and
 * otherwise hands exactly the checked addresses to the socket. Honours both call shapes Node
 * uses: `options.all === true` (net.connect with autoSelectFamily wants an array) and
 * all false/undefined (callback(err, address, family)). With `allowPrivate` it just delegates.
 */
export function guardedLookup(
  policy: UrlPolicy,
  lookupImpl: typeof dns.lookup = dns.lookup,
): net.LookupFunction {
  if (policy.allowPrivate) {
    return (hostname, options, callback) => lookupImpl(hostname, options, callback);
  }
  return (hostname, options, callback) => {
    const wantsAll = options.all === true;
    // Stryker disable next-line ArrayDeclaration,StringLiteral: net reads no address along with an error
    const fail = (err: NodeJS.ErrnoException): void => callback(err, wantsAll ? [] : '');
    // Always ask for every address, so that we check every address the socket might try.
    lookupImpl(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return fail(err);
      const blocked = addresses.find(({ address }) => !isPublicAddress(address));
      if (blocked) {
        const error: NodeJS.ErrnoException = new WebhookUrlError(
          resolvesToMessage(hostname, blocked.address),
        );
        error.code = BLOCKED_CODE;
        return fail(error);
      }
      const [first] = addresses;
      if (first === undefined) {
        // Never hand net an empty list: with autoSelectFamily it reads addresses[0] and throws.
        const error: NodeJS.ErrnoException = new Error(
          `${hostname} did not resolve to any address`,
        );
        error.code = 'ENOTFOUND';
        return fail(error);
      }
      if (wantsAll) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}

/**
 * Send-time check for hosts that are IP literals: Node does not call `lookup` for an IP-literal
 * host, so the dispatcher calls this before each request. Throws WebhookUrlError if the URL's
 * host is an IP literal that is not public (and policy disallows private). No-op for hostnames.
 */
export function assertLiteralHostAllowed(url: URL, policy: UrlPolicy): void {
  if (policy.allowPrivate) return;
  const host = bareHost(url);
  if (net.isIP(host) !== 0) assertLiteralAllowed(host);
}

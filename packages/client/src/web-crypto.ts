/**
 * Web Crypto, wherever the SDK runs: the global `crypto` (Node 19+, browsers, Bun, Deno, edge
 * runtimes), or on Node 18, whose global is behind a flag, `node:crypto`'s `webcrypto`, loaded
 * once on first use. Undefined where there is none at all.
 */
let fromNode: Promise<Crypto | undefined> | undefined;

export async function webCrypto(): Promise<Crypto | undefined> {
  const global = (globalThis as { crypto?: Crypto }).crypto;
  if (global) return global;
  const node = (globalThis as { process?: { versions?: { node?: string } } }).process?.versions
    ?.node;
  if (!node) return undefined;
  fromNode ??= importWebCrypto();
  return fromNode;
}

async function importWebCrypto(): Promise<Crypto | undefined> {
  try {
    // Not a literal, so bundlers for browsers leave it alone: only Node 18 comes here.
    const specifier = ['node', 'crypto'].join(':');
    const module = (await import(/* webpackIgnore: true */ /* @vite-ignore */ specifier)) as {
      webcrypto?: Crypto;
    };
    return module.webcrypto;
  } catch {
    return undefined;
  }
}

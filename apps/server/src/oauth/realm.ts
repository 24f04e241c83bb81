/**
 * oidc-provider recognises plain objects by `value.constructor === Object`. Under Jest the
 * server's code runs in a vm context whose `Object` is not the one oidc-provider (loaded with
 * Node's own require, see `oidc-provider.ts`) sees, so the objects we hand it (configuration,
 * adapter payloads, interaction results) are re-created in its realm. In a normal process there
 * is one realm and these functions return their input unchanged.
 */
const { runInThisContext } = process.getBuiltinModule('node:vm');
const ProviderObject = runInThisContext('Object') as ObjectConstructor;
const ProviderArray = runInThisContext('Array') as ArrayConstructor;
const ProviderJSON = runInThisContext('JSON') as JSON;

const SAME_REALM = ProviderObject === Object;

export function toProviderRealm<T>(value: T): T {
  return SAME_REALM ? value : (convert(value) as T);
}

/** `JSON.parse` whose objects belong to oidc-provider's realm. */
export function parseForProvider<T>(text: string): T {
  return ProviderJSON.parse(text) as T;
}

function convert(value: unknown): unknown {
  if (Array.isArray(value)) return ProviderArray.from(value, convert);
  if (value === null || typeof value !== 'object') return value;
  const proto = Object.getPrototypeOf(value) as object | null;
  if (proto !== Object.prototype && proto !== null) return value;
  const out = new ProviderObject() as Record<string, unknown>;
  for (const [key, item] of Object.entries(value)) out[key] = convert(item);
  return out;
}

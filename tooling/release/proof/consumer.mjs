// The ESM consumer: loads @platform/client through its `import` entry (Node, Bun, Deno).
import * as sdk from '@platform/client';
import checks from './checks.cjs';

const label = process.env.PROOF_LABEL ?? 'esm';
const webhooks = process.env.PROOF_WEBHOOKS_ENTRY
  ? await import('@platform/client/webhooks')
  : null;
await checks.run(sdk, label, webhooks);

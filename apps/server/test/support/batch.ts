/** The batch upsert tests' shared parts: the answer's types, a caller, and a short outcome. */
import type { Problem } from '@platform/contract';
import { rawCall, type RawResponse, type TestServer } from './server';

export interface ItemResult {
  index: number;
  external_id: string;
  status: string;
  id: string | null;
  error: { status: number; code: string; detail: string; errors: { path: string }[] } | null;
}

export interface BatchResult {
  object: string;
  counts: Record<string, number>;
  data: ItemResult[];
}

/** `POST <path>` with `{ items }` as `token`: the batch's answer, or the problem of a refusal. */
export function batchCaller(server: TestServer, token: string) {
  return (
    path: string,
    items: unknown[],
    headers: Record<string, string> = {},
  ): Promise<RawResponse<BatchResult & Problem>> =>
    rawCall<BatchResult & Problem>(server, path, {
      token,
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify({ items }),
    });
}

/** Each item's status, error code and first error path, in order. */
export function outcomeOf(res: { body: BatchResult }): (string | null)[][] {
  return res.body.data.map((r) => [
    r.status,
    r.error?.code ?? null,
    r.error?.errors[0]?.path ?? null,
  ]);
}

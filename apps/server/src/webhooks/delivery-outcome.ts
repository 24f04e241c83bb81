/**
 * What an attempt's result means for its message: succeeded, retried on the schedule, or failed.
 * Pure, apart from the jitter; `DeliveryStore.record` writes what it decides.
 */
import type { AttemptResult } from './sender';

/** Retry-After is honoured up to a day; beyond that the schedule decides. */
const MAX_RETRY_AFTER_MS = 86_400_000;

export function isSuccess(result: AttemptResult): boolean {
  return result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
}

/** ±10 %, so endpoints that failed together are not retried in lockstep. */
function withJitter(ms: number): number {
  return Math.round(ms * (0.9 + Math.random() * 0.2));
}

/** A message's state after an attempt. */
export interface MessageUpdate {
  status: string;
  attempts: number;
  retriesUsed: number;
  next: Date | null;
}

/**
 * A message's state after one more attempt (`current`, already counting it, is updated):
 * succeeded; pending with its next attempt on the retry schedule (jittered, and no sooner than
 * a Retry-After of up to a day); or failed once the schedule is used up.
 */
export function afterAttempt(
  current: { attempts: number; retriesUsed: number },
  result: AttemptResult,
  now: Date,
  schedule: readonly number[],
): MessageUpdate {
  const { attempts } = current;
  if (isSuccess(result)) {
    return { status: 'succeeded', attempts, retriesUsed: current.retriesUsed, next: null };
  }
  if (current.retriesUsed >= schedule.length) {
    return { status: 'failed', attempts, retriesUsed: current.retriesUsed, next: null };
  }
  let delay = withJitter(schedule[current.retriesUsed]!);
  if (result.retryAfterMs !== null) {
    delay = Math.max(delay, Math.min(result.retryAfterMs, MAX_RETRY_AFTER_MS));
  }
  current.retriesUsed += 1;
  const next = new Date(now.getTime() + delay);
  return { status: 'pending', attempts, retriesUsed: current.retriesUsed, next };
}

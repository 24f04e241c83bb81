import type { WebhookVerificationErrorReason } from '@platform/client';

/**
 * Why a delivery was not verified: the SDK's reason, or `no_secret` (there is no secret to
 * verify with) or `payload_too_large` (the body is over 1 MiB and was not read).
 */
export type DeliveryErrorReason =
  WebhookVerificationErrorReason | 'no_secret' | 'payload_too_large';

export interface ReceivedDelivery {
  /** Increases by one per delivery received since start; identifies it on the page. */
  seq: number;
  /** When it arrived, ISO 8601. */
  receivedAt: string;
  /** The `webhook-id` header, if any (the same for every attempt of one message). */
  webhookId: string | null;
  /** Every request header as received (names in lower case; repeated ones as arrays). */
  headers: Record<string, string | string[]>;
  /** The raw body, as UTF-8 text ('' when it was too large to read). */
  body: string;
  /** The body parsed as JSON; absent when it is not JSON. Unverified: attacker-controlled. */
  payload?: unknown;
  verified: boolean;
  /** The verified event's id and type. */
  event?: { id: string; type: string };
  /** Why it is not verified. */
  error?: { reason: DeliveryErrorReason; message: string };
}

/** Whether there are secrets to verify with, for the page's status line. */
export type SecretsStatus = { ok: true; count: number } | { ok: false; message: string };

// Type-checked (as .mts) when the packed client has a `./webhooks` entry: the verifier alone.
import { verifyWebhook, WebhookVerificationError } from '@platform/client/webhooks';

export async function eventType(
  rawBody: string,
  headers: Record<string, string>,
  secret: string,
): Promise<string> {
  try {
    const event = await verifyWebhook(rawBody, headers, secret);
    return event.type;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    throw error;
  }
}

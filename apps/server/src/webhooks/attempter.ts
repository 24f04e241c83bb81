import { API_VERSION, isUpdateEventType } from '@platform/contract';
import { encodeFeedCursor } from '../events/feed-cursor';
import { withExternalId } from '../events/event-data';
import type { Clock } from '../common/clock';
import type { WebhookConfig } from '../config/env';
import type { ClaimedMessage, CompletedAttempt } from './delivery-types';
import type { SecretBox } from './secret-box';
import type { Metrics } from '../metrics/metrics';
import { type AttemptResult, WebhookSender } from './sender';
import { EndpointPacing } from './endpoint-pacing';
import { Signer } from './signing';

/**
 * One delivery attempt, the same in both deployments: the body, the Standard Webhooks headers
 * signed with every live secret, the guarded POST. It writes nothing; the caller records.
 */
export class WebhookAttempter {
  private readonly sender: WebhookSender;
  private readonly signer = new Signer();
  /** Opened secrets by endpoint and sealed text: AES-GCM per delivery showed in the profile. */
  private readonly opened = new Map<string, string>();
  private readonly userAgent: string;
  /** Slots by endpoint, narrowed for those timing out; both dispatchers' admissions read it. */
  readonly pacing = new EndpointPacing();

  constructor(
    config: WebhookConfig,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
    private readonly metrics?: Metrics,
  ) {
    this.sender = new WebhookSender(
      { allowPrivate: config.allowPrivateUrls },
      config.timeoutMs,
      clock,
    );
    this.userAgent = config.userAgent;
  }

  async attempt(message: ClaimedMessage): Promise<CompletedAttempt> {
    const attemptedAt = this.clock.now();
    const body = payload(message);
    const signature = this.signer.sign(
      this.liveSecrets(message, attemptedAt),
      message.id,
      attemptedAt,
      body,
    );
    const result = await this.sender.send({
      url: message.url,
      body,
      headers: {
        'content-type': 'application/json',
        'user-agent': this.userAgent,
        'webhook-id': message.id,
        'webhook-timestamp': String(Math.floor(attemptedAt.getTime() / 1000)),
        'webhook-signature': signature,
        ...(message.eventPosition !== null && {
          'webhook-position': String(message.eventPosition),
        }),
        ...(message.previousPosition !== null && {
          'webhook-previous-position': String(message.previousPosition),
        }),
      },
    });
    this.pacing.record(message.endpointId, result.timedOut === true);
    this.observe(message, attemptedAt, result);
    return {
      messageId: message.id,
      endpointId: message.endpointId,
      attemptedAt,
      result,
      requestHeaders: result.requestHeaders ? withholdSignatures(result.requestHeaders) : null,
    };
  }

  private observe(message: ClaimedMessage, attemptedAt: Date, result: AttemptResult): void {
    if (!this.metrics) return;
    const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const outcome = ok ? 'success' : result.statusCode === null ? 'no_response' : 'http_error';
    this.metrics.webhookAttempts.inc({ outcome });
    this.metrics.webhookAttemptDuration.observe(result.latencyMs / 1000);
    if (ok) {
      const delivered = attemptedAt.getTime() + result.latencyMs;
      this.metrics.webhookDeliveryLatency.observe(
        (delivered - message.eventCreatedAt.getTime()) / 1000,
      );
    }
  }

  close(): void {
    this.sender.close();
  }

  private open(sealed: string, endpointId: string): string {
    // Keyed by the sealed text too: a rotated secret is a new entry, never a stale one.
    const key = `${endpointId}:${sealed}`;
    let secret = this.opened.get(key);
    if (secret === undefined) {
      if (this.opened.size >= 1000) this.opened.clear();
      secret = this.secrets.open(sealed, endpointId);
      this.opened.set(key, secret);
    }
    return secret;
  }

  private liveSecrets(message: ClaimedMessage, now: Date): string[] {
    const secrets = [this.open(message.sealedSecret, message.endpointId)];
    if (
      message.sealedPreviousSecret &&
      message.previousSecretExpiresAt &&
      message.previousSecretExpiresAt > now
    ) {
      secrets.push(this.open(message.sealedPreviousSecret, message.endpointId));
    }
    return secrets;
  }
}

/**
 * The headers as an attempt's record keeps them: each `webhook-signature` signature (an HMAC of
 * the body under a secret) replaced by `<withheld>`, its `v1,` scheme kept, so the record shows
 * how many secrets signed without holding material derived from them.
 */
export function withholdSignatures(headers: Record<string, string>): Record<string, string> {
  const signature = headers['webhook-signature'];
  if (signature === undefined) return headers;
  return {
    ...headers,
    'webhook-signature': signature
      .split(' ')
      .map((part) => `${part.slice(0, part.indexOf(',') + 1)}<withheld>`)
      .join(' '),
  };
}

/**
 * The delivery body: the event exactly as `GET /v1/events/{id}` returns it, compact JSON, and for
 * a change its endpoint's `previous_position` after `cursor`. The stored `data` is already
 * compact JSON text, so it is spliced in rather than re-serialised.
 */
export function payload(
  message: Pick<
    ClaimedMessage,
    | 'organizationId'
    | 'eventId'
    | 'eventType'
    | 'eventCreatedAt'
    | 'eventData'
    | 'eventPreviousAttributes'
    | 'eventPosition'
    | 'previousPosition'
  >,
): string {
  const position =
    message.eventPosition === null
      ? 'null,"cursor":null'
      : `${message.eventPosition},"cursor":"${encodeFeedCursor(message.organizationId, message.eventPosition)}","previous_position":${message.previousPosition ?? 'null'}`;
  // An update type's previous_attributes, as `toEventResource` gives it; absent from the others.
  const previous = isUpdateEventType(message.eventType)
    ? `,"previous_attributes":${message.eventPreviousAttributes ?? 'null'}`
    : '';
  // Data recorded before its resource had external_id gets it as null, as toEventResource does.
  const data = message.eventData.includes('"external_id":')
    ? message.eventData
    : JSON.stringify(withExternalId(JSON.parse(message.eventData) as object));
  return `{"id":${JSON.stringify(message.eventId)},"position":${position},"object":"event","type":${JSON.stringify(message.eventType)},"timestamp":${JSON.stringify(message.eventCreatedAt.toISOString())},"api_version":${JSON.stringify(API_VERSION)},"data":${data}${previous}}`;
}

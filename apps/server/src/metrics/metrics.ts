import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The Prometheus metrics of one app (its own registry, so several apps in one process, as in
 * tests, never share counters). Served at `/metrics` by `MetricsController`.
 */
export class Metrics {
  readonly registry = new Registry();

  /**
   * Requests and their latency by route pattern, method and status. Its `_count` series is the
   * request count: a separate counter would double the cost on every request for the same number.
   */
  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Requests by route pattern, method and status: time from receiving to finishing the response (_count is the number of requests)',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  readonly rateLimitRejections = new Counter({
    name: 'rate_limit_rejections_total',
    help: 'Requests refused with 429, by budget: organization, anonymous (API, per client IP), oauth (OAuth endpoints, per client IP), oauth_client (per OAuth client)',
    labelNames: ['budget'] as const,
    registers: [this.registry],
  });

  readonly webhookAttempts = new Counter({
    name: 'webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts by outcome: success (2xx), http_error (any other status), no_response (timeout, refused, blocked, …)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookAttemptDuration = new Histogram({
    name: 'webhook_attempt_duration_seconds',
    help: 'Time one delivery attempt took, request to complete response',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15],
    registers: [this.registry],
  });

  readonly webhookDeliveryLatency = new Histogram({
    name: 'webhook_delivery_latency_seconds',
    help: 'From the event being committed to its successful delivery',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 300, 3600],
    registers: [this.registry],
  });

  private queueDepth: () => Promise<number> = () => Promise.resolve(0);

  constructor() {
    const depth = (): Promise<number> => this.queueDepth();
    new Gauge({
      name: 'webhook_queue_depth',
      help: 'Webhook deliveries waiting to be sent (pending, due now or later)',
      registers: [this.registry],
      async collect() {
        this.set(await depth());
      },
    });
    collectDefaultMetrics({ register: this.registry });
  }

  /** The webhooks module says how to count pending deliveries (read at scrape time). */
  countQueueWith(depth: () => Promise<number>): void {
    this.queueDepth = depth;
  }
}

import type { Clock } from '../common/clock';

/** One pending wake-up at the earliest time asked for (a retry falling due); unref'd. */
export class WakeTimer {
  private wake: { at: number; timer: NodeJS.Timeout } | undefined;

  /** `clock`: the one the wake-up times were read from, so the delay is measured on it too. */
  constructor(
    private readonly onWake: () => void,
    private readonly clock: Clock,
  ) {}

  at(at: number): void {
    if (this.wake && this.wake.at <= at) return;
    if (this.wake) clearTimeout(this.wake.timer);
    const timer = setTimeout(
      () => {
        this.wake = undefined;
        this.onWake();
      },
      Math.max(0, at - this.clock.nowMs()),
    );
    timer.unref();
    this.wake = { at, timer };
  }

  cancel(): void {
    if (this.wake) clearTimeout(this.wake.timer);
    this.wake = undefined;
  }
}

/**
 * When a dispatcher looks for work besides being woken (a new event leaves at once): on a slow
 * poll (work written by other processes), and when a scheduled retry falls due. Both
 * dispatchers use it; `stop` ends both, and `active` says whether wake-ups are to be heeded.
 */
export class WorkTrigger {
  active = false;
  private poll: NodeJS.Timeout | undefined;
  private readonly wake: WakeTimer;

  constructor(
    private readonly kick: () => void,
    clock: Clock,
  ) {
    this.wake = new WakeTimer(kick, clock);
  }

  start(pollIntervalMs: number): void {
    this.active = true;
    this.poll = setInterval(() => this.kick(), pollIntervalMs);
    this.poll.unref();
    this.kick();
  }

  /** A retry falls due at `at`. */
  at(at: number): void {
    if (this.active) this.wake.at(at);
  }

  stop(): void {
    this.active = false;
    clearInterval(this.poll);
    this.wake.cancel();
  }
}

/** `work`, or `'timeout'` if it has not settled within `ms` (bounded shutdowns). */
export async function within<T>(work: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

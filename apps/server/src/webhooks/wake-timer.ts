/** One pending wake-up at the earliest time asked for (a retry falling due); unref'd. */
export class WakeTimer {
  private wake: { at: number; timer: NodeJS.Timeout } | undefined;

  constructor(private readonly onWake: () => void) {}

  at(at: number): void {
    if (this.wake && this.wake.at <= at) return;
    if (this.wake) clearTimeout(this.wake.timer);
    const timer = setTimeout(
      () => {
        this.wake = undefined;
        this.onWake();
      },
      Math.max(0, at - Date.now()),
    );
    timer.unref();
    this.wake = { at, timer };
  }

  cancel(): void {
    if (this.wake) clearTimeout(this.wake.timer);
    this.wake = undefined;
  }
}

import { Clock } from '../common/clock';

/**
 * The system clock shifted by what a test asks for: `advance(25 * HOUR)` expires a key or a
 * token without sleeping, while time still runs, so rows written later sort later.
 */
export class ManualClock extends Clock {
  private offsetMs = 0;

  override nowMs(): number {
    return Date.now() + this.offsetMs;
  }

  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

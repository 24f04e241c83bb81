import { SlidingWindowStore } from './sliding-window.store';

describe(SlidingWindowStore.name, () => {
  const WINDOW = 60_000;
  let now: number;
  let sut: SlidingWindowStore;

  beforeEach(() => {
    now = 1_000_000;
    sut = new SlidingWindowStore(WINDOW, () => now);
  });
  afterEach(() => sut.onModuleDestroy());

  it('accepts up to the limit, then blocks until the oldest request leaves the window', () => {
    expect(sut.hit('k', 3)).toMatchObject({ isBlocked: false, remaining: 2 });
    now += 10_000;
    expect(sut.hit('k', 3)).toMatchObject({ isBlocked: false, remaining: 1 });
    now += 10_000;
    expect(sut.hit('k', 3)).toMatchObject({
      isBlocked: false,
      remaining: 0,
      resetAtMs: 1_000_000 + WINDOW,
    });
    const blocked = sut.hit('k', 3);
    expect(blocked).toMatchObject({ isBlocked: true, remaining: 0, timeToBlockExpire: 40 });
    now = 1_000_000 + WINDOW - 1;
    expect(sut.hit('k', 3).isBlocked).toBe(true);
    now = 1_000_000 + WINDOW;
    expect(sut.hit('k', 3)).toMatchObject({
      isBlocked: false,
      remaining: 0,
      resetAtMs: 1_010_000 + WINDOW,
    });
  });

  it('admits at most the limit in any 60 s window, even across a fixed-window edge', () => {
    // A fixed-window counter would accept 2×limit around a window boundary.
    const limit = 50;
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const accepted: number[] = [];
    for (let i = 0; i < 5_000; i++) {
      now += Math.floor(random() * 200);
      if (!sut.hit('org', limit).isBlocked) accepted.push(now);
    }
    for (let i = limit; i < accepted.length; i++) {
      // the request `limit` places earlier must be at least a full window older
      expect(accepted[i]! - accepted[i - limit]!).toBeGreaterThanOrEqual(WINDOW);
    }
    // and it is not needlessly strict: it used (almost) the whole budget of each window
    const span = accepted.at(-1)! - accepted[0]!;
    expect(accepted.length).toBeGreaterThanOrEqual(Math.floor(span / WINDOW) * limit);
  });

  it('keeps keys separate', () => {
    expect(sut.hit('a', 1).isBlocked).toBe(false);
    expect(sut.hit('a', 1).isBlocked).toBe(true);
    expect(sut.hit('b', 1).isBlocked).toBe(false);
  });

  it('keeps recent history when a limit changes', () => {
    for (let i = 0; i < 5; i++) sut.hit('k', 5);
    expect(sut.hit('k', 5).isBlocked).toBe(true);
    // raised to 8: three more fit now
    expect(sut.hit('k', 8)).toMatchObject({ isBlocked: false, remaining: 2 });
    // lowered to 2: still blocked, the last requests are remembered
    expect(sut.hit('k', 2).isBlocked).toBe(true);
  });

  it('holds memory for the requests made, not for the configured limit', () => {
    for (let i = 0; i < 100; i++) sut.hit('enterprise', 1_000_000);
    expect(sut.capacityOf('enterprise')).toBe(128);
    expect(sut.hit('enterprise', 1_000_000).remaining).toBe(1_000_000 - 101);
  });

  it('holds memory for the requests of the last window, not for every request made', () => {
    // A steady 10 requests/s under a limit the key never reaches: 600 in any 60 s window.
    for (let i = 0; i < 6_000; i++) {
      now += 100;
      expect(sut.hit('enterprise', 1_000_000).isBlocked).toBe(false);
    }
    expect(sut.capacityOf('enterprise')).toBeLessThanOrEqual(1024);
    // the count is still exact: the 600 of the last window, this one included
    now += 100;
    expect(sut.hit('enterprise', 1_000_000).remaining).toBe(1_000_000 - 600);
    // the traffic falls to 1 request every 10 s: the ring gives the memory back
    for (let i = 0; i < 60; i++) {
      now += 10_000;
      sut.hit('enterprise', 1_000_000);
    }
    expect(sut.capacityOf('enterprise')).toBeLessThanOrEqual(32);
    expect(sut.hit('enterprise', 1_000_000).remaining).toBe(1_000_000 - 7);
  });

  it('blocks exactly at the limit while old accepts are dropped and the ring shrinks', () => {
    // Bursts of 100 accepts, then quiet, so the ring grows, empties out and shrinks repeatedly.
    const limit = 100;
    const accepted: number[] = [];
    for (let burst = 0; burst < 20; burst++) {
      for (let i = 0; i < 150; i++) {
        now += 10;
        if (!sut.hit('b', limit).isBlocked) accepted.push(now);
      }
      now += burst % 2 ? 30_000 : 61_000;
    }
    for (let i = limit; i < accepted.length; i++) {
      expect(accepted[i]! - accepted[i - limit]!).toBeGreaterThanOrEqual(WINDOW);
    }
    // not needlessly strict: each burst after a full quiet window gets the whole limit
    expect(accepted.length).toBeGreaterThanOrEqual(10 * limit);
  });

  it('keeps exact accounting across ring growth and wrap-around', () => {
    const limit = 40;
    const accepted: number[] = [];
    for (let i = 0; i < 400; i++) {
      now += 700;
      if (!sut.hit('g', limit).isBlocked) accepted.push(now);
    }
    for (let i = limit; i < accepted.length; i++) {
      expect(accepted[i]! - accepted[i - limit]!).toBeGreaterThanOrEqual(WINDOW);
    }
    expect(sut.capacityOf('g')).toBe(limit);
  });
});

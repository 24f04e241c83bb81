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

  it('answers the throttler storage record: hits in the window, seconds to expiry and to unblock', () => {
    expect(sut.hit('k', 2)).toEqual({
      totalHits: 1,
      isBlocked: false,
      timeToExpire: 60,
      timeToBlockExpire: 0,
      remaining: 1,
      resetAtMs: 1_060_000,
      cost: 1,
    });
    now += 15_500;
    expect(sut.hit('k', 2)).toEqual({
      totalHits: 2,
      isBlocked: false,
      timeToExpire: 45,
      timeToBlockExpire: 0,
      remaining: 0,
      resetAtMs: 1_060_000,
      cost: 1,
    });
    now += 30_000;
    expect(sut.hit('k', 2)).toEqual({
      totalHits: 3,
      isBlocked: true,
      timeToExpire: 15,
      timeToBlockExpire: 15,
      remaining: 0,
      resetAtMs: 1_060_000,
      cost: 1,
    });
  });

  describe('operations that cost several units', () => {
    it('charges all of a cost in one step, or none of it, and refuses until all of it fits', () => {
      // Limit 30: one unit at 0 s, then at 2 s an export (20) and two reads.
      expect(sut.hit('k', 30, 1)).toMatchObject({ isBlocked: false, remaining: 29 });
      now = 1_002_000;
      expect(sut.hit('k', 30, 20)).toEqual({
        totalHits: 21,
        isBlocked: false,
        timeToExpire: 58,
        timeToBlockExpire: 0,
        remaining: 9,
        resetAtMs: 1_060_000,
        cost: 20,
      });
      sut.hit('k', 30);
      expect(sut.hit('k', 30)).toMatchObject({ isBlocked: false, remaining: 7 });
      // 20 more do not fit in the 7 left: refused until 13 units have left the window, the 13th
      // oldest being one of the export's at 2 s (not the 0 s read, which frees only one).
      expect(sut.hit('k', 30, 20)).toEqual({
        totalHits: 43,
        isBlocked: true,
        timeToExpire: 60,
        timeToBlockExpire: 60,
        remaining: 7,
        resetAtMs: 1_062_000,
        cost: 20,
      });
      // The refusal recorded nothing: a one-unit read still passes, and 6 more fill the window.
      expect(sut.hit('k', 30)).toMatchObject({ isBlocked: false, remaining: 6 });
      expect(sut.hit('k', 30, 6)).toMatchObject({ isBlocked: false, remaining: 0, totalHits: 30 });
      expect(sut.hit('k', 30)).toMatchObject({ isBlocked: true, resetAtMs: 1_060_000 });
      // At 60 s the 0 s unit leaves: one read fits, the export still waits for its own.
      now = 1_060_000;
      expect(sut.hit('k', 30, 20)).toMatchObject({
        isBlocked: true,
        remaining: 1,
        resetAtMs: 1_062_000,
        timeToBlockExpire: 2,
      });
      now = 1_062_000;
      expect(sut.hit('k', 30, 20)).toMatchObject({ isBlocked: false, remaining: 10 });
    });

    it('waits for exactly the accepts in the way', () => {
      // Limit 5, one unit at 0, 1, 2 and 3 s: a cost of 3 needs the two oldest gone (1 s + 60 s).
      for (let i = 0; i < 4; i++) {
        sut.hit('k', 5);
        now += 1_000;
      }
      expect(sut.hit('k', 5, 3)).toMatchObject({
        isBlocked: true,
        totalHits: 7,
        remaining: 1,
        resetAtMs: 1_061_000,
        timeToBlockExpire: 57,
        cost: 3,
      });
      expect(sut.hit('k', 5, 4)).toMatchObject({ resetAtMs: 1_062_000, cost: 4 });
      expect(sut.hit('k', 5, 1)).toMatchObject({ isBlocked: false, resetAtMs: 1_060_000 });
    });

    it('waits for the right accept when its ring is smaller than a lowered limit', () => {
      // 40 units 100 ms apart under 1000 a minute; then 50 a minute: a cost of 20 needs the 10
      // oldest gone, the 10th accepted at 0.9 s.
      for (let i = 0; i < 40; i++) {
        sut.hit('k', 1000);
        now += 100;
      }
      expect(sut.hit('k', 50, 20)).toMatchObject({
        isBlocked: true,
        remaining: 10,
        resetAtMs: 1_060_900,
      });
      expect(sut.hit('k', 50, 11)).toMatchObject({ isBlocked: true, resetAtMs: 1_060_000 });
      expect(sut.hit('k', 50, 10)).toMatchObject({ isBlocked: false, remaining: 0 });
    });

    it('charges a cost above the limit as the whole limit, so it is never locked out', () => {
      expect(sut.hit('k', 10, 20)).toEqual({
        totalHits: 10,
        isBlocked: false,
        timeToExpire: 60,
        timeToBlockExpire: 0,
        remaining: 0,
        resetAtMs: 1_060_000,
        cost: 10,
      });
      now += 5_000;
      expect(sut.hit('k', 10, 20)).toMatchObject({
        isBlocked: true,
        remaining: 0,
        resetAtMs: 1_060_000,
        cost: 10,
      });
      now = 1_060_000;
      // A window later it passes again; with one unit spent it waits for that one to leave.
      expect(sut.hit('k', 10)).toMatchObject({ isBlocked: false, remaining: 9 });
      now = 1_070_000;
      expect(sut.hit('k', 10, 20)).toMatchObject({ isBlocked: true, resetAtMs: 1_120_000 });
      now = 1_120_000;
      expect(sut.hit('k', 10, 20)).toMatchObject({ isBlocked: false, remaining: 0 });
    });

    it('admits at most the limit in units in any window, and refuses only what does not fit', () => {
      const limit = 50;
      let seed = 7;
      const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      const units: number[] = [];
      let refusals = 0;
      for (let i = 0; i < 3_000; i++) {
        now += Math.floor(random() * 400);
        const cost = 1 + Math.floor(random() * 25);
        const record = sut.hit('org', limit, cost);
        const inWindow = units.filter((t) => t > now - WINDOW).length;
        if (record.isBlocked) {
          refusals++;
          // Refused only when it does not fit, and told when it will.
          expect(inWindow + cost).toBeGreaterThan(limit);
          expect(record.remaining).toBe(limit - inWindow);
          const stillIn = units.filter((t) => t > record.resetAtMs - WINDOW).length;
          expect(stillIn + cost).toBeLessThanOrEqual(limit);
          expect(units.filter((t) => t >= record.resetAtMs - WINDOW).length + cost).toBeGreaterThan(
            limit,
          );
        } else {
          expect(inWindow + cost).toBeLessThanOrEqual(limit);
          expect(record.remaining).toBe(limit - inWindow - cost);
          for (let u = 0; u < cost; u++) units.push(now);
        }
      }
      expect(refusals).toBeGreaterThan(100);
      for (let i = limit; i < units.length; i++) {
        expect(units[i]! - units[i - limit]!).toBeGreaterThanOrEqual(WINDOW);
      }
    });

    it('sizes its ring for the units, growing only when they do not fit', () => {
      expect(sut.hit('k', 1000, 16)).toMatchObject({ remaining: 984 });
      expect(sut.capacityOf('k')).toBe(16);
      sut.hit('k', 1000);
      expect(sut.capacityOf('k')).toBe(32);
      // 17 + 40 = 57: doubling (64) is enough.
      sut.hit('k', 1000, 40);
      expect(sut.capacityOf('k')).toBe(64);
      // 57 + 100 = 157: more than doubling.
      expect(sut.hit('k', 1000, 100)).toMatchObject({ remaining: 843 });
      expect(sut.capacityOf('k')).toBe(157);
      // Never beyond the limit: 157 + 43 = 200 of 200.
      expect(sut.hit('k', 200, 43)).toMatchObject({ isBlocked: false, remaining: 0 });
      expect(sut.capacityOf('k')).toBe(200);
    });

    it('keeps room for a large cost when its ring shrinks', () => {
      sut.hit('k', 1000, 120);
      now = 1_001_000;
      sut.hit('k', 1000, 8);
      expect(sut.capacityOf('k')).toBe(240);
      // At 60 s the first 120 leave; 8 remain, a quarter of the ring at most, so it halves,
      // but not below the 208 this request needs.
      now = 1_060_000;
      expect(sut.hit('k', 1000, 200)).toMatchObject({ isBlocked: false, remaining: 792 });
      expect(sut.capacityOf('k')).toBe(208);
      // The accepts are intact: the 8 from 1 s leave at 61 s, the 200 at 120 s.
      expect(sut.hit('k', 208, 1)).toMatchObject({ isBlocked: true, resetAtMs: 1_061_000 });
      now = 1_061_000;
      expect(sut.hit('k', 208, 8)).toMatchObject({ isBlocked: false, remaining: 0 });
      expect(sut.hit('k', 208, 9)).toMatchObject({ isBlocked: true, resetAtMs: 1_120_000 });
    });

    it('charges one unit through the throttler interface unless told a cost', async () => {
      await expect(sut.increment('k', WINDOW, 30, 0, 'default')).resolves.toMatchObject({
        remaining: 29,
        cost: 1,
      });
      await expect(sut.increment('k', WINDOW, 30, 0, 'default', 20)).resolves.toMatchObject({
        remaining: 9,
        cost: 20,
      });
    });
  });

  describe('when the limit changes', () => {
    it('a lowered limit keeps the most recent accepts, so the wait counts from them', () => {
      // Accepted at 0 s, 10 s and 20 s under 3 a minute; then the organization gets 2 a minute.
      for (let i = 0; i < 3; i++) {
        expect(sut.hit('k', 3).isBlocked).toBe(false);
        now += 10_000;
      }
      // The two most recent (10 s and 20 s) fill the new limit: blocked until 10 s + 60 s.
      expect(sut.hit('k', 2)).toMatchObject({
        isBlocked: true,
        resetAtMs: 1_070_000,
        timeToBlockExpire: 40,
      });
      now = 1_060_000;
      expect(sut.hit('k', 2).isBlocked).toBe(true);
      now = 1_070_000;
      expect(sut.hit('k', 2)).toMatchObject({
        isBlocked: false,
        remaining: 0,
        resetAtMs: 1_080_000,
      });
    });

    it('keeps the right accepts when the ring has wrapped around', () => {
      // Limit 4: accepts at 0, 10, 20 and 30 s; at 65 s the first has left and a fifth takes its
      // slot at the start of the ring, after the others.
      for (let i = 0; i < 4; i++) {
        expect(sut.hit('k', 4).isBlocked).toBe(false);
        now += 10_000;
      }
      now = 1_065_000;
      expect(sut.hit('k', 4)).toMatchObject({ isBlocked: false, resetAtMs: 1_070_000 });
      // Lowered to 1: only the 65 s accept counts, so the next slot frees at 125 s.
      now = 1_066_000;
      expect(sut.hit('k', 1)).toMatchObject({ isBlocked: true, resetAtMs: 1_125_000 });
      // Raised to 3 again: 65 s is all it remembers, so two more fit.
      expect(sut.hit('k', 3)).toMatchObject({ isBlocked: false, remaining: 1 });
      expect(sut.hit('k', 3)).toMatchObject({ isBlocked: false, remaining: 0 });
      expect(sut.hit('k', 3)).toMatchObject({ isBlocked: true, resetAtMs: 1_125_000 });
    });

    it('a raised limit keeps every accept of the window', () => {
      expect(sut.hit('k', 2).isBlocked).toBe(false);
      now += 10_000;
      expect(sut.hit('k', 2).isBlocked).toBe(false);
      now += 10_000;
      expect(sut.hit('k', 3)).toMatchObject({
        isBlocked: false,
        remaining: 0,
        resetAtMs: 1_060_000,
      });
      expect(sut.hit('k', 3)).toMatchObject({ isBlocked: true, resetAtMs: 1_060_000 });
    });

    it('a lowered limit keeps its accepts exactly, and memory for them only', () => {
      for (let i = 0; i < 40; i++) {
        sut.hit('k', 1000);
        now += 100;
      }
      expect(sut.capacityOf('k')).toBe(64);
      // 500 a minute now: the 40 accepts stay, in a ring sized for them, which then doubles.
      expect(sut.hit('k', 500)).toMatchObject({ isBlocked: false, remaining: 459 });
      expect(sut.capacityOf('k')).toBe(80);
      // 41 a minute: the 41 accepts are all it may have.
      expect(sut.hit('k', 41)).toMatchObject({ isBlocked: true, resetAtMs: 1_060_000 });
    });
  });

  it('gives memory back when traffic falls, without losing the accepts that remain', () => {
    // 80 accepts at 0 s and 20 at 30 s fill a limit of 100 (the ring grew to 100).
    for (let i = 0; i < 80; i++) sut.hit('k', 100);
    now = 1_030_000;
    for (let i = 0; i < 20; i++) sut.hit('k', 100);
    expect(sut.capacityOf('k')).toBe(100);
    // At 61 s the first 80 have left: 20 remain, a fifth of the ring, which halves.
    now = 1_061_000;
    expect(sut.hit('k', 100)).toMatchObject({ isBlocked: false, remaining: 79 });
    expect(sut.capacityOf('k')).toBe(50);
    for (let i = 0; i < 79; i++) expect(sut.hit('k', 100).isBlocked).toBe(false);
    // Full again: the oldest remaining accept (30 s) frees the next slot at 90 s.
    expect(sut.hit('k', 100)).toMatchObject({ isBlocked: true, resetAtMs: 1_090_000 });
    now = 1_090_000;
    for (let i = 0; i < 20; i++) expect(sut.hit('k', 100).isBlocked).toBe(false);
    expect(sut.hit('k', 100)).toMatchObject({ isBlocked: true, resetAtMs: 1_121_000 });
  });

  it('halves its ring once it is down to a quarter full, not before', () => {
    // Two keys whose rings grew to 128: at 60 s, 'a' keeps 32 accepts (a quarter), 'b' 33.
    for (let i = 0; i < 96; i++) sut.hit('a', 1000);
    for (let i = 0; i < 95; i++) sut.hit('b', 1000);
    now = 1_001_000;
    for (let i = 0; i < 32; i++) sut.hit('a', 1000);
    for (let i = 0; i < 33; i++) sut.hit('b', 1000);
    expect([sut.capacityOf('a'), sut.capacityOf('b')]).toEqual([128, 128]);
    now = 1_060_000;
    expect(sut.hit('a', 1000).remaining).toBe(1000 - 33);
    expect(sut.hit('b', 1000).remaining).toBe(1000 - 34);
    expect([sut.capacityOf('a'), sut.capacityOf('b')]).toEqual([64, 128]);
  });

  describe('the idle-key sweeper', () => {
    let swept: SlidingWindowStore;
    beforeEach(() => {
      jest.useFakeTimers();
      swept = new SlidingWindowStore(WINDOW, () => now);
    });
    afterEach(() => {
      swept.onModuleDestroy();
      jest.useRealTimers();
    });

    it('forgets keys idle for a whole window, once a window', () => {
      swept.hit('idle', 5);
      now += 30_000;
      swept.hit('busy', 5);
      swept.hit('busy', 5);
      now = 1_060_000;
      jest.advanceTimersByTime(WINDOW);
      expect(swept.capacityOf('idle')).toBe(0);
      expect(swept.capacityOf('busy')).toBe(5);
      // What it keeps still counts: the busy key's two accepts (until 90 s) and this one.
      expect(swept.hit('busy', 5)).toMatchObject({ remaining: 2, resetAtMs: 1_090_000 });
      now = 1_120_000;
      jest.advanceTimersByTime(WINDOW - 1);
      expect(swept.capacityOf('busy')).toBe(5);
      jest.advanceTimersByTime(1);
      expect(swept.capacityOf('busy')).toBe(0);
    });

    it('stops when the module is destroyed', () => {
      expect(jest.getTimerCount()).toBe(1);
      swept.onModuleDestroy();
      expect(jest.getTimerCount()).toBe(0);
    });
  });
});

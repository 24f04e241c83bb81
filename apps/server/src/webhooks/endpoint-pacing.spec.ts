import { EndpointPacing } from './endpoint-pacing';

describe(EndpointPacing.name, () => {
  it('halves an endpoint’s slots per timed-out attempt, down to one, and restores them on an answer', () => {
    const sut = new EndpointPacing();
    expect(sut.limit('whe_a', 8)).toBe(8);

    sut.record('whe_a', true);
    expect(sut.limit('whe_a', 8)).toBe(4);
    sut.record('whe_a', true);
    sut.record('whe_a', true);
    expect(sut.limit('whe_a', 8)).toBe(1);
    sut.record('whe_a', true);
    expect(sut.limit('whe_a', 8)).toBe(1);
    // Other endpoints keep theirs.
    expect(sut.limit('whe_b', 8)).toBe(8);

    sut.record('whe_a', false);
    expect(sut.limit('whe_a', 8)).toBe(8);
  });
});

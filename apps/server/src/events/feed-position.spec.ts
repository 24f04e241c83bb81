import { decodeFeedCursor, encodeFeedCursor } from './feed-position';

describe('feed cursors', () => {
  it('round-trip every kind of position', () => {
    for (const position of [0, 1, 42n, '9007199254740993']) {
      expect(decodeFeedCursor(encodeFeedCursor(position))).toBe(BigInt(position));
    }
  });

  it('refuse what this API never issues', () => {
    for (const cursor of ['', '-1', '01', '1.5', 'abc', ' 1', '1e3', '9'.repeat(19)]) {
      expect(decodeFeedCursor(cursor)).toBeUndefined();
    }
  });
});

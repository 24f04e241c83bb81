import { decodeFeedCursor, encodeFeedCursor } from './feed-cursor';

describe('feed cursors', () => {
  const organization = 'org_01HZZZZZZZZZZZZZZZZZZZZZZZ';
  const other = 'org_01HYYYYYYYYYYYYYYYYYYYYYYY';

  it('round-trip every kind of position', () => {
    expect(encodeFeedCursor(organization, 0)).toBe('0');
    expect(decodeFeedCursor(organization, '0')).toBe(0n);
    for (const position of [1, 42n, '999999999999999999']) {
      const cursor = encodeFeedCursor(organization, position);
      expect(cursor.startsWith(`${BigInt(position)}.`)).toBe(true);
      expect(decodeFeedCursor(organization, cursor)).toBe(BigInt(position));
    }
  });

  it("refuse another organization's cursor, and a tag moved to another position", () => {
    const cursor = encodeFeedCursor(other, 42);
    expect(decodeFeedCursor(organization, cursor)).toBeUndefined();
    const tag = encodeFeedCursor(organization, 42).split('.')[1];
    expect(decodeFeedCursor(organization, `43.${tag}`)).toBeUndefined();
  });

  it('accept 0, the start of every feed, and refuse bare positions and what it never issues', () => {
    expect(decodeFeedCursor(organization, '0')).toBe(0n);
    const tag = encodeFeedCursor(organization, 1).split('.')[1]!;
    for (const cursor of [
      '',
      '1',
      '42',
      '-1',
      `01.${tag}`,
      `1.${tag}x`,
      `1.${tag.slice(1)}`,
      'abc',
      ` 1.${tag}`,
      `${'9'.repeat(19)}.${tag}`,
    ]) {
      expect(decodeFeedCursor(organization, cursor)).toBeUndefined();
    }
  });

  it('are never made for a negative position', () => {
    expect(() => encodeFeedCursor(organization, -1)).toThrow(RangeError);
  });
});

import {
  displayPrefix,
  generatePersonalAccessToken,
  hashToken,
  isWellFormedPersonalAccessToken,
} from './token-format';

describe('personal access token format', () => {
  it('is pat_ + 36 base62 characters and validates its own checksum', () => {
    const token = generatePersonalAccessToken();
    expect(token).toMatch(/^pat_[0-9A-Za-z]{36}$/);
    expect(isWellFormedPersonalAccessToken(token)).toBe(true);
  });

  it('is different every time', () => {
    const tokens = new Set(Array.from({ length: 1000 }, generatePersonalAccessToken));
    expect(tokens.size).toBe(1000);
  });

  it('detects any single-character change', () => {
    const token = generatePersonalAccessToken();
    for (let i = 4; i < token.length; i++) {
      const replacement = token[i] === 'x' ? 'y' : 'x';
      expect(
        isWellFormedPersonalAccessToken(token.slice(0, i) + replacement + token.slice(i + 1)),
      ).toBe(false);
    }
  });

  it('rejects other shapes', () => {
    for (const bad of [
      '',
      'pat_',
      'ghp_abc',
      `pat_${'a'.repeat(35)}`,
      `pat_${'a'.repeat(37)}`,
      `PAT_${'a'.repeat(36)}`,
    ]) {
      expect(isWellFormedPersonalAccessToken(bad)).toBe(false);
    }
  });

  it('hashes with SHA-256 and shows only a short prefix', () => {
    const token = generatePersonalAccessToken();
    expect(hashToken(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashToken(token)).not.toContain(token.slice(4));
    expect(displayPrefix(token)).toBe(token.slice(0, 12));
  });

  it("is pat_test_ + 36 for a sandbox's, checked the same way, shown as 16 characters", () => {
    const token = generatePersonalAccessToken(true);
    expect(token).toMatch(/^pat_test_[0-9A-Za-z]{36}$/);
    expect(isWellFormedPersonalAccessToken(token)).toBe(true);
    // The live checksum under the other prefix, and a body one character off, are refused.
    expect(isWellFormedPersonalAccessToken(`pat_${token.slice(9)}`)).toBe(true);
    expect(isWellFormedPersonalAccessToken(`pat_test_x${token.slice(10)}`)).toBe(token[9] === 'x');
    expect(isWellFormedPersonalAccessToken(`pat_live_${token.slice(9)}`)).toBe(false);
    expect(displayPrefix(token)).toBe(token.slice(0, 16));
  });
});

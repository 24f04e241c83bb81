const path = require('node:path');
const { changelogEntry, imageContextFiles } = require('../src/release');

const ROOT = path.resolve(__dirname, '../../..');

describe('pnpm release', () => {
  it("takes the release's own section from a Changesets changelog", () => {
    const text = [
      '# @platform/client',
      '',
      '## 0.3.0',
      '',
      '### Minor Changes',
      '',
      '- Adds withResponse().',
      '',
      '## 0.2.0',
      '',
      '- Older.',
    ].join('\n');
    expect(changelogEntry(text, '0.3.0')).toBe('### Minor Changes\n\n- Adds withResponse().');
    expect(changelogEntry(text, '0.2.0')).toBe('- Older.');
    expect(changelogEntry(text, '0.4.0')).toBeNull();
  });

  it("ships the server image's build context without what .dockerignore leaves out", () => {
    const files = imageContextFiles(ROOT);
    expect(files).toEqual(
      expect.arrayContaining([
        'Dockerfile',
        'package.json',
        'pnpm-lock.yaml',
        'apps/server/package.json',
      ]),
    );
    expect(files.filter((f) => /(^|\/)(node_modules|dist|\.git|\.turbo)\//.test(f))).toEqual([]);
    expect(files.filter((f) => f.startsWith('release/'))).toEqual([]);
  });
});

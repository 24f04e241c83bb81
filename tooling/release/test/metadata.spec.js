/**
 * Every published package points its users at the same repository, issue tracker and homepage:
 * the root package.json's, which npm, PyPI and Packagist show on the package's page.
 */
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '../../..');
const read = (file) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const root = JSON.parse(read('package.json'));
const repository = root.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
const issues = root.bugs.url;

describe('package metadata', () => {
  it('the root names an https repository and its issue tracker', () => {
    expect(repository).toMatch(/^https:\/\/\S+$/);
    expect(issues).toBe(`${repository}/issues`);
  });

  it('npm: @platform/client', () => {
    const pkg = JSON.parse(read('packages/client/package.json'));
    expect(pkg.repository).toEqual({ ...root.repository, directory: 'packages/client' });
    expect(pkg.bugs.url).toBe(issues);
    expect(pkg.homepage).toBe(`${repository}/tree/main/packages/client#readme`);
  });

  it('npm: @platform/sync', () => {
    const pkg = JSON.parse(read('packages/platform-sync/package.json'));
    expect(pkg.repository).toEqual({ ...root.repository, directory: 'packages/platform-sync' });
    expect(pkg.bugs.url).toBe(issues);
    expect(pkg.homepage).toBe(`${repository}/tree/main/packages/platform-sync#readme`);
    expect(pkg.bin).toEqual({ 'platform-sync': './bin/platform-sync.js' });
  });

  it('npm: @platform/listen', () => {
    const pkg = JSON.parse(read('packages/platform-listen/package.json'));
    expect(pkg.repository).toEqual({ ...root.repository, directory: 'packages/platform-listen' });
    expect(pkg.bugs.url).toBe(issues);
    expect(pkg.homepage).toBe(`${repository}/tree/main/packages/platform-listen#readme`);
    expect(pkg.bin).toEqual({ 'platform-listen': './bin/platform-listen.js' });
    // The client of the same release, whose command it runs.
    expect(pkg.dependencies).toEqual({ '@platform/client': 'workspace:*' });
  });

  it('PyPI: platform-api', () => {
    const toml = read('packages/client-python/pyproject.toml');
    const urls = Object.fromEntries(
      [
        ...toml
          .split('[project.urls]')[1]
          .split('\n[')[0]
          .matchAll(/^(\w+) = "([^"]+)"$/gm),
      ].map((m) => [m[1], m[2]]),
    );
    expect(urls).toEqual({
      Homepage: `${repository}/tree/main/packages/client-python#readme`,
      Repository: repository,
      Issues: issues,
      Changelog: `${repository}/blob/main/packages/client-python/CHANGELOG.md`,
    });
  });

  it('Packagist: platform/platform-api', () => {
    const composer = JSON.parse(read('packages/client-php/composer.json'));
    expect(composer.homepage).toBe(`${repository}/tree/main/packages/client-php#readme`);
    expect(composer.support).toEqual({ issues, source: repository });
  });
});

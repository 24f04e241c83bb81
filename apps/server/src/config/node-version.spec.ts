import { assertSupportedNode } from './node-version';

describe('assertSupportedNode', () => {
  it('refuses Node 20 with the version it found and the way out', () => {
    expect(() => assertSupportedNode('20.20.2')).toThrow(
      /needs Node 24\+, and this is Node 20\.20\.2\. Start it through pnpm/,
    );
  });

  it('accepts Node 24 and later', () => {
    expect(() => assertSupportedNode('24.0.0')).not.toThrow();
    expect(() => assertSupportedNode('26.1.0')).not.toThrow();
  });

  it('accepts the Node running this test (the workspace runs on 24)', () => {
    expect(() => assertSupportedNode()).not.toThrow();
  });
});

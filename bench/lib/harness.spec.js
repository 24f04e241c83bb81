const { serverNodeFlags } = require('./harness');

describe('serverNodeFlags', () => {
  const saved = process.env.BENCH_SERVER_NODE_OPTIONS;
  afterEach(() => {
    if (saved === undefined) delete process.env.BENCH_SERVER_NODE_OPTIONS;
    else process.env.BENCH_SERVER_NODE_OPTIONS = saved;
  });

  it("reads the Node flags of apps/server's production start script as it is", () => {
    delete process.env.BENCH_SERVER_NODE_OPTIONS;
    const { start } = require('../../apps/server/package.json').scripts;
    const flags = serverNodeFlags();
    expect(flags.length).toBeGreaterThan(0);
    for (const flag of flags) {
      expect(flag).toMatch(/^--/);
      expect(start).toContain(flag);
    }
  });

  it('takes BENCH_SERVER_NODE_OPTIONS instead, empty meaning Node defaults', () => {
    process.env.BENCH_SERVER_NODE_OPTIONS = '--max-old-space-size=512';
    expect(serverNodeFlags()).toEqual(['--max-old-space-size=512']);
    process.env.BENCH_SERVER_NODE_OPTIONS = '';
    expect(serverNodeFlags()).toEqual([]);
  });
});

'use strict';
/**
 * The regression gate's judgement (bench/gate.js): each gated ratio, measured in one short run
 * against its bare baseline, against the floor recorded in bench/floors.json. A ratio fails when
 * it falls more than the floor's margin below it: `value < floor × (1 − margin)`.
 */

/**
 * @param {Record<string, { floor: number, margin: number, what: string }>} floors
 * @param {Record<string, number | null | undefined>} measured
 * @returns {{ name: string, what: string, value: number | null, floor: number, limit: number, ok: boolean }[]}
 */
function judge(floors, measured) {
  return Object.entries(floors).map(([name, { floor, margin, what }]) => {
    if (!(floor > 0) || !(margin >= 0 && margin < 1))
      throw new Error(`floors.json: ${name} needs a floor > 0 and a margin in [0, 1)`);
    const value = measured[name];
    const limit = floor * (1 - margin);
    const ok = typeof value === 'number' && Number.isFinite(value) && value >= limit;
    return { name, what, value: typeof value === 'number' ? value : null, floor, limit, ok };
  });
}

/** The gate's table, one line per ratio. */
function format(rows) {
  const fixed = (n) => (n === null ? 'not measured' : n.toFixed(2));
  return rows
    .map(
      (r) =>
        `${r.ok ? 'ok  ' : 'FAIL'} ${r.what.padEnd(46)} ${fixed(r.value).padStart(12)}` +
        `   floor ${r.floor.toFixed(2)}, fails below ${r.limit.toFixed(2)}`,
    )
    .join('\n');
}

module.exports = { judge, format };

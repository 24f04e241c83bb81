'use strict';
/**
 * Compares two V8 heap snapshots of the same process (node ids are stable within a process):
 *
 *   node --max-old-space-size=4096 compare-heap-snapshots.js before.heapsnapshot after.heapsnapshot
 *
 * Prints, for each snapshot, the live heap by constructor (count, self size, and retained size:
 * what would be freed with the constructor's instances that no other instance of it dominates),
 * then the objects that are in the second snapshot but not the first (allocated between them and
 * still alive) by constructor, with the dominator chain of the largest ones: what keeps them.
 * Weak edges are ignored, as DevTools does.
 */
const fs = require('node:fs');

/** Post-order DFS from the root over strong edges. */
function postOrder({ N, nf, ef, eType, eTo, weak, edges, firstEdge }) {
  const order = new Int32Array(N).fill(-1); // post-order number
  const post = new Uint32Array(N);
  let count = 0;
  const stackNode = new Uint32Array(N);
  const stackEdge = new Uint32Array(N);
  const seen = new Uint8Array(N);
  let sp = 0;
  stackNode[0] = 0;
  stackEdge[0] = firstEdge[0];
  seen[0] = 1;
  sp = 1;
  while (sp > 0) {
    const n = stackNode[sp - 1];
    const e = stackEdge[sp - 1];
    if (e < firstEdge[n + 1]) {
      stackEdge[sp - 1] = e + ef;
      if (edges[e + eType] === weak) continue;
      const to = edges[e + eTo] / nf;
      if (!seen[to]) {
        seen[to] = 1;
        stackNode[sp] = to;
        stackEdge[sp] = firstEdge[to];
        sp++;
      }
    } else {
      order[n] = count;
      post[count++] = n;
      sp--;
    }
  }
  return { order, post, count, seen };
}

/** Predecessors (strong edges between reachable nodes), CSR. */
function predecessors({ N, nf, ef, eType, eTo, weak, edges, firstEdge, seen }) {
  const predCount = new Uint32Array(N + 1);
  for (let n = 0; n < N; n++) {
    if (!seen[n]) continue;
    for (let e = firstEdge[n]; e < firstEdge[n + 1]; e += ef) {
      if (edges[e + eType] === weak) continue;
      predCount[edges[e + eTo] / nf + 1]++;
    }
  }
  for (let i = 0; i < N; i++) predCount[i + 1] += predCount[i];
  const preds = new Uint32Array(predCount[N]);
  const fill = predCount.slice(0, N);
  for (let n = 0; n < N; n++) {
    if (!seen[n]) continue;
    for (let e = firstEdge[n]; e < firstEdge[n + 1]; e += ef) {
      if (edges[e + eType] === weak) continue;
      const to = edges[e + eTo] / nf;
      preds[fill[to]++] = n;
    }
  }
  return { preds, predCount };
}

/** Cooper–Harvey–Kennedy iterative dominators, on post-order numbers. */
function dominators({ count, post, order, preds, predCount }) {
  const UNDEF = 0xffffffff;
  const idom = new Uint32Array(count).fill(UNDEF); // indexed by post-order number
  const root = order[0];
  idom[root] = root;
  let changed = true;
  while (changed) {
    changed = false;
    for (let k = count - 2; k >= 0; k--) {
      const n = post[k];
      let newIdom = UNDEF;
      for (let p = predCount[n]; p < predCount[n + 1]; p++) {
        let b = order[preds[p]];
        if (idom[b] === UNDEF) continue;
        if (newIdom === UNDEF) {
          newIdom = b;
          continue;
        }
        let a = newIdom;
        while (a !== b) {
          while (a < b) a = idom[a];
          while (b < a) b = idom[b];
        }
        newIdom = a;
      }
      if (newIdom !== UNDEF && idom[k] !== newIdom) {
        idom[k] = newIdom;
        changed = true;
      }
    }
  }
  return { idom, root };
}

function load(file) {
  const snap = JSON.parse(fs.readFileSync(file, 'utf8'));
  const { meta } = snap.snapshot;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const N = snap.nodes.length / nf;
  const iType = meta.node_fields.indexOf('type');
  const iName = meta.node_fields.indexOf('name');
  const iId = meta.node_fields.indexOf('id');
  const iSize = meta.node_fields.indexOf('self_size');
  const iEdges = meta.node_fields.indexOf('edge_count');
  const eType = meta.edge_fields.indexOf('type');
  const eTo = meta.edge_fields.indexOf('to_node');
  const weak = edgeTypes.indexOf('weak');
  const nodes = snap.nodes;
  const edges = snap.edges;
  const strings = snap.strings;

  const firstEdge = new Uint32Array(N + 1);
  for (let i = 0, e = 0; i < N; i++) {
    firstEdge[i] = e;
    e += nodes[i * nf + iEdges] * ef;
    firstEdge[i + 1] = e;
  }
  const typeOf = (n) => nodeTypes[nodes[n * nf + iType]];
  const nameOf = (n) => strings[nodes[n * nf + iName]];
  const idOf = (n) => nodes[n * nf + iId];
  const sizeOf = (n) => nodes[n * nf + iSize];
  const keyOf = (n) => {
    const t = typeOf(n);
    if (t === 'object' || t === 'native') return nameOf(n);
    if (t === 'closure') return `(closure) ${nameOf(n) || 'anonymous'}`;
    return `(${t})`;
  };

  const { order, post, count, seen } = postOrder({ N, nf, ef, eType, eTo, weak, edges, firstEdge });
  const { preds, predCount } = predecessors({
    N,
    nf,
    ef,
    eType,
    eTo,
    weak,
    edges,
    firstEdge,
    seen,
  });
  const { idom, root } = dominators({ count, post, order, preds, predCount });
  const retained = new Float64Array(count);
  for (let k = 0; k < count; k++) {
    retained[k] += sizeOf(post[k]);
    if (k !== root) retained[idom[k]] += retained[k];
  }
  return { N, count, post, order, idom, retained, typeOf, nameOf, idOf, sizeOf, keyOf, root, seen };
}

function byConstructor(h, filter = () => true) {
  const rows = new Map();
  for (let k = 0; k < h.count; k++) {
    const n = h.post[k];
    if (!filter(n)) continue;
    const key = h.keyOf(n);
    let row = rows.get(key);
    if (!row) rows.set(key, (row = { key, count: 0, self: 0, retained: 0 }));
    row.count++;
    row.self += h.sizeOf(n);
    // Retained: only instances not dominated by another instance of the same constructor.
    let d = h.idom[k];
    let nested = false;
    for (let hops = 0; d !== h.root && hops < 64; hops++, d = h.idom[d]) {
      if (h.keyOf(h.post[d]) === key) {
        nested = true;
        break;
      }
    }
    if (!nested) row.retained += h.retained[k];
  }
  return [...rows.values()];
}

const mib = (b) => (b / 1048576).toFixed(2).padStart(8);
function table(title, rows, sortKey, limit = 25) {
  console.log(`\n${title}`);
  console.log(
    `${'count'.padStart(9)} ${'self MiB'.padStart(8)} ${'ret. MiB'.padStart(8)}  constructor`,
  );
  for (const r of rows.sort((a, b) => b[sortKey] - a[sortKey]).slice(0, limit)) {
    console.log(
      `${String(r.count).padStart(9)} ${mib(r.self)} ${mib(r.retained)}  ${r.key.slice(0, 100)}`,
    );
  }
}

function chain(h, k) {
  const parts = [];
  for (let d = k, hops = 0; d !== h.root && hops < 12; d = h.idom[d], hops++) {
    const n = h.post[d];
    parts.push(`${h.keyOf(n).slice(0, 60)}@${h.idOf(n)} (${mib(h.retained[d]).trim()} MiB)`);
  }
  return parts.join('\n      ← ');
}

const [beforeFile, afterFile] = process.argv.slice(2);
const before = load(beforeFile);
const total = (h) => {
  let s = 0;
  for (let k = 0; k < h.count; k++) s += h.sizeOf(h.post[k]);
  return s;
};
console.log(`before: ${before.count} live objects, ${mib(total(before))} MiB`);
table('before, by retained size', byConstructor(before), 'retained', 20);
if (afterFile) {
  const beforeIds = new Set();
  for (let k = 0; k < before.count; k++) beforeIds.add(before.idOf(before.post[k]));
  const after = load(afterFile);
  console.log(`\nafter: ${after.count} live objects, ${mib(total(after))} MiB`);
  table('after, by retained size', byConstructor(after), 'retained', 20);
  const b = new Map(byConstructor(before).map((r) => [r.key, r]));
  const diff = byConstructor(after).map((r) => {
    const o = b.get(r.key) ?? { count: 0, self: 0, retained: 0 };
    return {
      key: r.key,
      count: r.count - o.count,
      self: r.self - o.self,
      retained: r.retained - o.retained,
    };
  });
  table('after − before, by self size', diff, 'self', 25);
  const isNew = (n) => !beforeIds.has(after.idOf(n));
  const fresh = byConstructor(after, isNew);
  table('allocated between the snapshots and still alive, by self size', fresh, 'self', 25);
  // What keeps the new objects: group them by their nearest dominator that existed before.
  const holders = new Map();
  for (let k = 0; k < after.count; k++) {
    const n = after.post[k];
    if (!isNew(n)) continue;
    let d = after.idom[k];
    while (d !== after.root && isNew(after.post[d])) d = after.idom[d];
    const dn = after.post[d];
    const key = `${after.keyOf(dn).slice(0, 60)}@${after.idOf(dn)}`;
    let row = holders.get(key);
    if (!row) holders.set(key, (row = { key, count: 0, self: 0, k: d }));
    row.count++;
    row.self += after.sizeOf(n);
  }
  console.log('\nnew objects by the oldest-existing object that dominates them (top 10):');
  for (const r of [...holders.values()].sort((a, b) => b.self - a.self).slice(0, 10)) {
    console.log(
      `  ${r.count} objects, ${mib(r.self).trim()} MiB, kept by ${r.key}\n      ← ${chain(after, after.idom[r.k])}`,
    );
  }
}

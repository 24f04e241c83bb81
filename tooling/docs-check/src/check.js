// The documentation's checks, as functions of a repository root so that the tests can run them
// on the real checkout and on fixtures that break each rule.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const MarkdownIt = require('markdown-it');

const markdown = new MarkdownIt({ html: true });

/** Line length limits: the page, and the most lines it may have. */
const LINE_LIMITS = { 'README.md': 250, 'bench/README.md': 300 };

/** The info-string word that marks a fenced `sh` block as safe to run in a fresh checkout. */
const RUNNABLE = 'runnable';
const SHELLS = new Set(['sh', 'bash', 'shell']);

/** Every Markdown page whose links are checked, relative to root, sorted. */
function documentationFiles(root) {
  const files = [];
  const add = (file) => {
    if (fs.existsSync(path.join(root, file))) files.push(file);
  };
  add('README.md');
  add('CONTRIBUTING.md');
  add('bench/README.md');
  const docs = path.join(root, 'docs');
  if (fs.existsSync(docs)) {
    for (const entry of fs.readdirSync(docs, { recursive: true })) {
      if (String(entry).endsWith('.md')) files.push(path.join('docs', String(entry)));
    }
  }
  for (const dir of ['apps', 'packages']) {
    const base = path.join(root, dir);
    if (!fs.existsSync(base)) continue;
    for (const name of fs.readdirSync(base)) add(path.join(dir, name, 'README.md'));
  }
  return files.map((file) => file.split(path.sep).join('/')).sort();
}

function lineCount(root, file) {
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/** Pages longer than their limit, as `file: N lines (limit M)`. */
function overLimit(root, limits = LINE_LIMITS) {
  return Object.entries(limits)
    .map(([file, limit]) => ({ file, limit, lines: lineCount(root, file) }))
    .filter(({ lines, limit }) => lines > limit)
    .map(({ file, lines, limit }) => `${file}: ${lines} lines (limit ${limit})`);
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
function slug(text) {
  return text
    .toLowerCase()
    .trim()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

const parsed = new Map();
function parse(root, file) {
  const full = path.join(root, file);
  if (!parsed.has(full)) parsed.set(full, markdown.parse(fs.readFileSync(full, 'utf8'), {}));
  return parsed.get(full);
}

/** The anchors a page offers: one per heading, repeated titles numbered as GitHub does. */
function anchors(root, file) {
  const tokens = parse(root, file);
  const seen = new Map();
  const result = new Set();
  tokens.forEach((token, i) => {
    if (token.type !== 'heading_open') return;
    const inline = tokens[i + 1];
    const text = (inline.children ?? [])
      .filter((child) => child.type === 'text' || child.type === 'code_inline')
      .map((child) => child.content)
      .join('');
    const base = slug(text);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  });
  // Explicit anchors: <a id="…"> or name="…".
  const source = fs.readFileSync(path.join(root, file), 'utf8');
  for (const match of source.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) result.add(match[1]);
  return result;
}

/** Every link and image target in a page, with the line it is on. */
function links(root, file) {
  const found = [];
  const source = fs.readFileSync(path.join(root, file), 'utf8').split('\n');
  for (const token of parse(root, file)) {
    if (token.type !== 'inline') continue;
    let line = token.map ? token.map[0] + 1 : 0;
    for (const child of token.children ?? []) {
      if (child.type === 'softbreak' || child.type === 'hardbreak') line += 1;
      const target =
        child.type === 'link_open'
          ? child.attrGet('href')
          : child.type === 'image'
            ? child.attrGet('src')
            : null;
      if (target === null) continue;
      // Table cells carry no line map: find the target in the source instead.
      const at = line || source.findIndex((text) => text.includes(`](${target}`)) + 1;
      found.push({ target, line: at });
    }
  }
  return found;
}

/** Relative links (and their #anchors) that lead nowhere, as `file:line → target (why)`. */
function brokenLinks(root, files = documentationFiles(root)) {
  const broken = [];
  for (const file of files) {
    for (const { target, line } of links(root, file)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue;
      const [rawPath, anchor] = target.split('#', 2);
      const decoded = decodeURIComponent(rawPath);
      const resolved = decoded
        ? decoded.startsWith('/')
          ? path.join(root, decoded)
          : path.join(root, path.dirname(file), decoded)
        : path.join(root, file);
      const where = `${file}:${line} → ${target}`;
      if (!path.resolve(resolved).startsWith(path.resolve(root))) {
        broken.push(`${where} (outside the repository)`);
      } else if (!fs.existsSync(resolved)) {
        broken.push(`${where} (no such file)`);
      } else if (anchor !== undefined && resolved.endsWith('.md')) {
        const relative = path.relative(root, resolved).split(path.sep).join('/');
        if (!anchors(root, relative).has(anchor)) broken.push(`${where} (no such heading)`);
      }
    }
  }
  return broken;
}

/** The fenced shell blocks whose info string carries the runnable marker. */
function runnableBlocks(root, files = documentationFiles(root)) {
  const blocks = [];
  for (const file of files) {
    for (const token of parse(root, file)) {
      if (token.type !== 'fence') continue;
      const words = token.info.trim().split(/\s+/);
      if (SHELLS.has(words[0]) && words.includes(RUNNABLE)) {
        blocks.push({ file, line: token.map[0] + 1, code: token.content });
      }
    }
  }
  return blocks;
}

/** Runs one block with bash (-e, pipefail) in root; its status and output. */
function runBlock(root, block, { timeoutMs = 120000 } = {}) {
  const result = spawnSync('bash', ['-eo', 'pipefail', '-c', block.code], {
    cwd: root,
    encoding: 'utf8',
    timeout: timeoutMs,
    env: { ...process.env, FORCE_COLOR: '0' },
  });
  return {
    status: result.status,
    signal: result.signal,
    output: `${result.stdout ?? ''}${result.stderr ?? ''}`,
  };
}

module.exports = {
  LINE_LIMITS,
  RUNNABLE,
  anchors,
  brokenLinks,
  documentationFiles,
  lineCount,
  links,
  overLimit,
  runBlock,
  runnableBlocks,
  slug,
};

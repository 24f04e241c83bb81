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

/** The pages whose file paths and `pnpm` commands are checked: CONTRIBUTING.md and docs/. */
function referencePages(root) {
  return documentationFiles(root).filter(
    (file) => file === 'CONTRIBUTING.md' || file.startsWith('docs/'),
  );
}

/** A page's inline code and fenced shell blocks, each with the line it starts on. */
function codeSpans(root, file) {
  const spans = [];
  const source = fs.readFileSync(path.join(root, file), 'utf8').split('\n');
  for (const token of parse(root, file)) {
    if (token.type === 'fence') {
      const shell = SHELLS.has(token.info.trim().split(/\s+/)[0]);
      if (shell) spans.push({ code: token.content, line: token.map[0] + 2 });
      continue;
    }
    if (token.type !== 'inline') continue;
    let line = token.map ? token.map[0] + 1 : 0;
    for (const child of token.children ?? []) {
      if (child.type === 'softbreak' || child.type === 'hardbreak') line += 1;
      if (child.type !== 'code_inline') continue;
      // Table cells carry no line map: find the code in the source instead.
      const at = line || source.findIndex((text) => text.includes(`\`${child.content}\``)) + 1;
      spans.push({ code: child.content, line: at });
    }
  }
  return spans;
}

/**
 * A code span's commands: split on `&&`, `||`, `;`, `|` and new lines, each with the directory
 * an earlier `cd` in the same span moved to (relative to the repository root).
 */
function commands(code) {
  const result = [];
  let cwd = '.';
  for (const text of code.split(/&&|\|\||[;|\n]/)) {
    const words = text
      .replace(/\s#.*$/, '')
      .trim()
      .split(/\s+/)
      .filter(Boolean);
    if (words[0] === 'cd' && words[1]) cwd = path.posix.join(cwd, words[1]);
    else if (words.length) result.push({ words, cwd });
  }
  return result;
}

/** A word that names a file: a slash and an extension, made of path characters only. */
const FILE_PATH = /^(?:\.{1,2}\/)*[\w@.-]+(?:\/[\w@.-]+)+\.[A-Za-z][\w-]*$/;
/** Placeholders (`<name>`, `NNNN`, `*`, `…`) name no file of their own. */
const PLACEHOLDER = /[<>*{}…$]|\bN{3,}\b|X{3,}/;

/** The root .gitignore as a predicate: files that exist only once built or run. */
function ignoredBy(root) {
  const file = path.join(root, '.gitignore');
  const patterns = fs.existsSync(file)
    ? fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line && !line.startsWith('#') && !line.startsWith('!'))
    : [];
  const toRegExp = (glob) =>
    new RegExp(
      `^${glob
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '[^/]*')
        .replace(/\?/g, '[^/]')}$`,
    );
  const rules = patterns.map((pattern) => {
    const dir = pattern.endsWith('/');
    const body = pattern.replace(/^\/|\/$/g, '');
    return { anchored: pattern.startsWith('/') || body.includes('/'), dir, re: toRegExp(body) };
  });
  return (relative) => {
    const parts = relative.split('/');
    return rules.some(({ anchored, dir, re }) => {
      if (anchored) {
        return parts.some(
          (_, i) => (!dir || i < parts.length - 1) && re.test(parts.slice(0, i + 1).join('/')),
        );
      }
      return parts.some((part, i) => (!dir || i < parts.length - 1) && re.test(part));
    });
  };
}

/**
 * Where a page's paths may start: the repository root, the page's folder, and each app's,
 * package's and tool's folder and `src/` (pages name server files as `webhooks/sender.ts`).
 */
function pathBases(root, file) {
  const bases = ['.', path.posix.dirname(file)];
  for (const dir of ['apps', 'packages', 'tooling']) {
    const base = path.join(root, dir);
    if (!fs.existsSync(base)) continue;
    for (const name of fs.readdirSync(base).sort()) {
      if (!fs.statSync(path.join(base, name)).isDirectory()) continue;
      bases.push(`${dir}/${name}`, `${dir}/${name}/src`);
    }
  }
  return bases;
}

/**
 * File paths named in backticks that lead nowhere, as `file:line → path`. A path is this
 * repository's when its first folder is found under one of the bases (`vendor/autoload.php`
 * of a PHP project is not); it must then exist under one of them. Placeholders and files that
 * .gitignore keeps out of the repository (`dist/main.js`, `data/platform.sqlite`) are skipped.
 */
function missingPaths(root, files = referencePages(root)) {
  const ignored = ignoredBy(root);
  const missing = [];
  for (const file of files) {
    const bases = pathBases(root, file);
    for (const { code, line } of codeSpans(root, file)) {
      for (const { words, cwd } of commands(code)) {
        for (const word of words) {
          // `VAR=$(scripts/x.sh start)`, quoted or in parentheses: the path inside.
          const candidate = word.replace(/^\w+=/, '').replace(/^(?:\$\(|['"(])+|['"),:.]+$/g, '');
          if (!FILE_PATH.test(candidate) || PLACEHOLDER.test(candidate)) continue;
          const from = cwd === '.' ? bases : [cwd];
          const inRepo = (base) => path.posix.normalize(path.posix.join(base, candidate));
          if (from.some((base) => ignored(inRepo(base)))) continue;
          const first = candidate.split('/').find((part) => part !== '.' && part !== '..');
          const ours = from.some((base) => {
            const dir = path.join(root, base, candidate.slice(0, candidate.indexOf(first)), first);
            return fs.existsSync(dir) && fs.statSync(dir).isDirectory();
          });
          // After a `cd` the path is the repository's whatever its first folder.
          if (cwd === '.' && !ours) continue;
          if (!from.some((base) => fs.existsSync(path.join(root, inRepo(base))))) {
            missing.push(`${file}:${line} → ${candidate}`);
          }
        }
      }
    }
  }
  return missing;
}

/** pnpm's own commands: `pnpm <one of these>` runs no script. `test` and `start` run scripts. */
const PNPM_COMMANDS = new Set(
  (
    'add approve-builds audit bin cache config create dedupe deploy dlx doctor env exec fetch ' +
    'i import init install install-test licenses link list ll ls outdated pack patch ' +
    'patch-commit prune publish rebuild remove rm root self-update server setup store ' +
    'uninstall unlink up update why'
  ).split(' '),
);

/** Each workspace package.json by package name (the root's as `//`), with its scripts. */
function workspacePackages(root) {
  const packages = new Map();
  const read = (dir) => {
    const file = path.join(root, dir, 'package.json');
    if (!fs.existsSync(file)) return;
    const json = JSON.parse(fs.readFileSync(file, 'utf8'));
    const entry = { dir, scripts: json.scripts ?? {} };
    if (dir === '.') packages.set('//', entry);
    else if (json.name) packages.set(json.name, entry);
  };
  read('.');
  for (const top of fs.readdirSync(root).sort()) {
    const base = path.join(root, top);
    if (top === 'node_modules' || top.startsWith('.') || !fs.statSync(base).isDirectory()) continue;
    read(top);
    for (const name of fs.readdirSync(base).sort()) {
      if (name === 'node_modules' || !fs.statSync(path.join(base, name)).isDirectory()) continue;
      read(`${top}/${name}`);
    }
  }
  return packages;
}

/** The package whose folder holds `dir` (pnpm runs a bare `pnpm <script>` there). */
function packageAt(packages, dir) {
  const byDir = new Map([...packages.values()].map((entry) => [entry.dir, entry]));
  for (let at = path.posix.normalize(dir); ; at = path.posix.dirname(at)) {
    if (byDir.has(at)) return byDir.get(at);
    if (at === '.' || at === '/' || at.startsWith('..')) return packages.get('//');
  }
}

/**
 * What one `pnpm` command runs: `{ filter, script }` (filter null for the root), or null when it
 * runs no script of ours (pnpm's own commands, `exec`, several or pattern filters, `-r`).
 */
function pnpmScript(words) {
  const at = words.indexOf('pnpm');
  if (at < 0) return null;
  const args = words.slice(at + 1);
  let filter = null;
  while (args.length && args[0].startsWith('-')) {
    const flag = args.shift();
    if (flag === '--filter' || flag === '-F') {
      if (filter !== null) return null;
      filter = args.shift() ?? '';
    } else if (flag.startsWith('--filter=')) {
      if (filter !== null) return null;
      filter = flag.slice('--filter='.length);
    } else if (flag === '-r' || flag === '--recursive' || flag === '-C' || flag === '--dir') {
      return null;
    }
  }
  if (filter !== null && (filter.includes('...') || !/^@?[\w.-]+(?:\/[\w.-]+)?$/.test(filter))) {
    return null;
  }
  let script = args[0];
  if (script === 'run' || script === 'run-script') script = args[1];
  if (!script || PNPM_COMMANDS.has(script) || PLACEHOLDER.test(script)) return null;
  return { filter, script };
}

/**
 * `pnpm <script>` and `pnpm --filter <package> <script>` commands, in backticks or shell blocks,
 * whose script does not exist, as `file:line → command (why)`. At the root, a command that is
 * no script may be a dependency's binary (`pnpm platform`: node_modules/.bin).
 */
function missingScripts(root, files = referencePages(root)) {
  const packages = workspacePackages(root);
  const missing = [];
  for (const file of files) {
    for (const { code, line } of codeSpans(root, file)) {
      for (const { words, cwd } of commands(code)) {
        const run = pnpmScript(words);
        if (!run) continue;
        const where = `${file}:${line} → ${words.slice(words.indexOf('pnpm')).join(' ')}`;
        const pkg = run.filter === null ? packageAt(packages, cwd) : packages.get(run.filter);
        if (!pkg) {
          missing.push(`${where} (no package ${run.filter})`);
        } else if (!(run.script in pkg.scripts)) {
          const bin = path.join(root, pkg.dir, 'node_modules', '.bin', run.script);
          if (run.filter === null && fs.existsSync(bin)) continue;
          missing.push(`${where} (no script ${run.script} in ${pkg.dir}/package.json)`);
        }
      }
    }
  }
  return missing;
}

/**
 * Decision records out of order, as `file: why`: `docs/decisions/NNNN-title.md` numbered 1, 2, 3
 * without a gap or a repeat, each opening with `# N. Title` of its own number, and each listed
 * in the decisions README.
 */
function decisionProblems(root) {
  const dir = path.join(root, 'docs', 'decisions');
  if (!fs.existsSync(dir)) return [];
  const records = fs
    .readdirSync(dir)
    .filter((name) => /^\d{4}-.+\.md$/.test(name))
    .sort();
  const index = fs.existsSync(path.join(dir, 'README.md'))
    ? fs.readFileSync(path.join(dir, 'README.md'), 'utf8')
    : '';
  const problems = [];
  records.forEach((name, i) => {
    const file = `docs/decisions/${name}`;
    const number = Number(name.slice(0, 4));
    if (number !== i + 1) problems.push(`${file}: numbered ${number}, expected ${i + 1}`);
    const title = fs.readFileSync(path.join(dir, name), 'utf8').split('\n')[0];
    if (!title.startsWith(`# ${number}. `)) {
      problems.push(`${file}: its title "${title}" does not start with "# ${number}. "`);
    }
    if (!index.includes(`](${name})`)) problems.push(`${file}: not in docs/decisions/README.md`);
  });
  return problems;
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
  codeSpans,
  commands,
  decisionProblems,
  documentationFiles,
  lineCount,
  links,
  missingPaths,
  missingScripts,
  overLimit,
  pnpmScript,
  referencePages,
  runBlock,
  runnableBlocks,
  slug,
};

/**
 * The inspector's page, rendered on the server. Everything a delivery carries (headers, body,
 * even the event type of an unverified one) is attacker-controlled text: every value goes
 * through `escapeHtml`, and the page's CSP allows no script but its own.
 */
import type { ReceivedDelivery, SecretsStatus } from './types';

export interface PageInput {
  /** Newest first. */
  deliveries: readonly ReceivedDelivery[];
  secrets: SecretsStatus;
  /** Where deliveries are received, for the empty state. */
  receiveUrl: string;
  /** The CSP nonce of the page's one script. */
  nonce: string;
}

export const REFRESH_SECONDS = 2;

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text made safe for HTML element content and quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);
}

export function renderPage({ deliveries, secrets, receiveUrl, nonce }: PageInput): string {
  const count = deliveries.length;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${count ? `(${count}) ` : ''}Webhook inspector</title>
<noscript><meta http-equiv="refresh" content="${REFRESH_SECONDS}"></noscript>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>Webhook inspector</h1>
<p>Receives at <code>POST ${escapeHtml(receiveUrl)}</code> and verifies each delivery with
<code>verifyWebhook</code> from <code>@platform/client</code>. Newest first; refreshes every
${REFRESH_SECONDS} s; also as JSON at <a href="/deliveries">/deliveries</a>.</p>
</header>
<div id="live">
${renderSecrets(secrets)}
<main id="deliveries">
${count ? deliveries.map((d) => renderDelivery(d, deliveries)).join('\n') : renderEmpty(receiveUrl)}
</main>
</div>
<script nonce="${escapeHtml(nonce)}">${SCRIPT}</script>
</body>
</html>
`;
}

function renderSecrets(secrets: SecretsStatus): string {
  if (secrets.ok) {
    const n = secrets.count;
    return `<p class="secrets ok">Verifying with ${n} signing secret${n === 1 ? '' : 's'}.</p>`;
  }
  return `<p class="secrets bad"><strong>Cannot verify:</strong> ${escapeHtml(secrets.message)}</p>`;
}

function renderEmpty(receiveUrl: string): string {
  return `<section class="empty">
<h2>No deliveries yet</h2>
<p>Make the API emit an event: create an enrollment with the API (for instance with the demo
token and curl command <code>pnpm dev</code> printed). Seeding registered this inspector as a
webhook endpoint, so the delivery shows up here within a few seconds.</p>
<p>Anything POSTed to <code>${escapeHtml(receiveUrl)}</code> is listed here too, verified or not.</p>
</section>`;
}

function renderDelivery(d: ReceivedDelivery, all: readonly ReceivedDelivery[]): string {
  const claimedType = d.event?.type ?? typeField(d.payload);
  const attempt =
    d.webhookId === null
      ? 1
      : all.filter((other) => other.webhookId === d.webhookId && other.seq <= d.seq).length;
  const status = d.verified
    ? '<span class="status">✓ verified</span>'
    : `<span class="status">✗ not verified${d.error ? `: <code>${escapeHtml(d.error.reason)}</code>` : ''}</span>`;
  const type = claimedType
    ? `<code class="type">${escapeHtml(claimedType)}</code>${d.verified ? '' : ' <small>(claimed)</small>'}`
    : '<span class="type none">(no event type)</span>';
  const id = d.webhookId
    ? `<code title="webhook-id">${escapeHtml(d.webhookId)}</code>`
    : '<span class="none">(no webhook-id)</span>';

  const headerRows = Object.entries(d.headers)
    .map(([name, value]) => {
      const text = Array.isArray(value) ? value.join('\n') : value;
      return `<tr><th>${escapeHtml(name)}</th><td>${escapeHtml(text)}</td></tr>`;
    })
    .join('');
  const bodyText =
    d.payload !== undefined
      ? JSON.stringify(d.payload, null, 2)
      : d.body === ''
        ? '(empty body)'
        : d.body;

  return `<article class="delivery ${d.verified ? 'ok' : 'bad'}" id="delivery-${d.seq}">
<div class="summary">${status} ${type} ${id}${attempt > 1 ? ` <small>attempt ${attempt}</small>` : ''}
<time datetime="${escapeHtml(d.receivedAt)}">${escapeHtml(formatTime(d.receivedAt))}</time></div>
${d.event ? `<div class="event">event <code>${escapeHtml(d.event.id)}</code></div>` : ''}
${d.error ? `<p class="error">${escapeHtml(d.error.message)}</p>` : ''}
<details data-key="${d.seq}-headers"><summary>Headers (${Object.keys(d.headers).length})</summary>
<table>${headerRows}</table></details>
<details data-key="${d.seq}-payload"><summary>Payload${d.payload === undefined ? ' (not JSON)' : ''}, ${Buffer.byteLength(d.body)} bytes</summary>
<pre>${escapeHtml(bodyText)}</pre></details>
</article>`;
}

function typeField(payload: unknown): string | undefined {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return undefined;
  const type = (payload as Record<string, unknown>).type;
  return typeof type === 'string' ? type : undefined;
}

/** `2025-11-22 10:45:03 UTC`. */
function formatTime(iso: string): string {
  return iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

const STYLE = `
:root { color-scheme: light dark; --ok: #1a7f37; --bad: #cf222e; --muted: #6e7781; }
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 72rem; padding: 1rem 1.5rem 3rem; }
h1 { margin: 0.5rem 0; font-size: 1.4rem; }
header p { margin: 0.25rem 0 1rem; color: var(--muted); }
code, pre, td, th { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
.secrets { padding: 0.5rem 0.75rem; border-radius: 6px; border: 1px solid; }
.secrets.ok { border-color: var(--ok); }
.secrets.bad { border-color: var(--bad); }
.empty { border: 1px dashed var(--muted); border-radius: 8px; padding: 0.5rem 1.25rem; margin-top: 1rem; }
.delivery { border: 1px solid var(--muted); border-left: 6px solid; border-radius: 6px; padding: 0.5rem 0.75rem; margin: 0.75rem 0; overflow-wrap: anywhere; }
.delivery.ok { border-left-color: var(--ok); }
.delivery.bad { border-left-color: var(--bad); }
.summary { display: flex; flex-wrap: wrap; gap: 0.4rem 1rem; align-items: baseline; }
.summary time { margin-left: auto; color: var(--muted); }
.status { font-weight: 600; }
.ok .status { color: var(--ok); }
.bad .status { color: var(--bad); }
.type { font-weight: 600; }
.none, small, .event { color: var(--muted); }
.error { margin: 0.4rem 0; color: var(--bad); }
details { margin-top: 0.3rem; }
summary { cursor: pointer; }
table { border-collapse: collapse; margin: 0.3rem 0; }
th, td { text-align: left; vertical-align: top; padding: 0.1rem 0.75rem 0.1rem 0; white-space: pre-wrap; }
th { font-weight: 600; }
pre { margin: 0.3rem 0; padding: 0.5rem; border-radius: 4px; background: rgba(127, 127, 127, 0.12); overflow: auto; max-height: 32rem; white-space: pre-wrap; }
`;

/**
 * Every 2 s: fetch the page again and swap the live part in, keeping open <details> open and
 * leaving the page alone while text is selected in it or the tab is hidden.
 */
const SCRIPT = `
setInterval(async () => {
  if (document.hidden || String(getSelection() || '')) return;
  try {
    const res = await fetch(location.pathname, { cache: 'no-store' });
    if (!res.ok) return;
    const next = new DOMParser().parseFromString(await res.text(), 'text/html');
    const live = next.getElementById('live');
    const current = document.getElementById('live');
    if (!live || !current) return;
    const open = new Set([...current.querySelectorAll('details[open]')].map((d) => d.dataset.key));
    for (const d of live.querySelectorAll('details')) d.open = open.has(d.dataset.key);
    current.replaceWith(document.adoptNode(live));
    document.title = next.title;
  } catch {}
}, ${REFRESH_SECONDS * 1000});
`;

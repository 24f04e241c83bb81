/**
 * The local mail catcher of `pnpm dev`: an SMTP server on loopback (smtp-server) that keeps the
 * messages the API sends (invitations), parsed with mailparser, for the inspector's `/mail` page.
 * It delivers nothing anywhere: a message stops here.
 */
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { escapeHtml } from './page';

/** Messages kept, newest first; older ones are dropped. */
export const DEFAULT_MAX_MESSAGES = 200;
/** A message above this is refused (552), not kept. */
export const MAX_MESSAGE_BYTES = 5 * 1024 * 1024;

export interface CaughtMail {
  seq: number;
  receivedAt: string;
  from: string;
  to: string[];
  subject: string;
  text: string;
  /** The HTML part as sent; shown only as text (escaped), never rendered. */
  html: string | null;
}

export interface MailCatcher {
  /** Not listening yet: call `smtp.listen(port, host)`. */
  smtp: SMTPServer;
  /** Newest first (a copy). */
  messages(): CaughtMail[];
}

export function createMailCatcher(maxMessages = DEFAULT_MAX_MESSAGES): MailCatcher {
  const store: CaughtMail[] = [];
  let seq = 0;
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    disableReverseLookup: true,
    size: MAX_MESSAGE_BYTES,
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((mail) => {
          if ((stream as { sizeExceeded?: boolean }).sizeExceeded) {
            callback(Object.assign(new Error('Message too large'), { responseCode: 552 }));
            return;
          }
          const to = session.envelope.rcptTo.map((r) => r.address);
          store.unshift({
            seq: ++seq,
            receivedAt: new Date().toISOString(),
            from: mail.from?.text ?? (session.envelope.mailFrom || { address: '' }).address,
            to,
            subject: mail.subject ?? '(no subject)',
            text: mail.text ?? '',
            html: typeof mail.html === 'string' ? mail.html : null,
          });
          if (store.length > maxMessages) store.length = maxMessages;
          callback();
        })
        .catch((error: Error) => callback(error));
    },
  });
  return { smtp, messages: () => [...store] };
}

/** `GET /mail`: the messages caught, newest first, links in their text made clickable. */
export function renderMailPage(messages: readonly CaughtMail[], smtpUrl: string): string {
  const items = messages.map(
    (m) => `<article>
<h2>${escapeHtml(m.subject)}</h2>
<p class="meta">To ${escapeHtml(m.to.join(', '))} · from ${escapeHtml(m.from)} · <time>${escapeHtml(m.receivedAt)}</time></p>
<pre>${linkify(m.text)}</pre>
</article>`,
  );
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="5">
<title>${messages.length ? `(${messages.length}) ` : ''}Mail catcher</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}
article{border:1px solid #ccc;border-radius:6px;padding:0 1rem;margin:1rem 0}
.meta{color:#555}pre{white-space:pre-wrap;word-break:break-word}</style>
</head>
<body>
<h1>Mail catcher</h1>
<p>What the API sends to <code>${escapeHtml(smtpUrl)}</code> stops here (nothing leaves this
machine). Newest first; refreshes every 5 s; as JSON at <a href="/mail.json">/mail.json</a>.
Webhooks: <a href="/">the inspector</a>.</p>
${items.length ? items.join('\n') : '<p>No mail yet. Invite a member in the portal: the invitation arrives here.</p>'}
</body>
</html>
`;
}

/** The text escaped, with each http(s) URL in it a link. */
function linkify(text: string): string {
  return text
    .split(/(https?:\/\/[^\s<>"]+)/)
    .map((part, i) =>
      i % 2 === 1 ? `<a href="${escapeHtml(part)}">${escapeHtml(part)}</a>` : escapeHtml(part),
    )
    .join('');
}

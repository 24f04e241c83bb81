import { connect, type AddressInfo } from 'node:net';
import { createInspector, type Inspector } from './inspector';
import { type CaughtMail, createMailCatcher, type MailCatcher } from './mail-catcher';

let catcher: MailCatcher;
let inspector: Inspector;
let smtpPort: number;
let url: string;

beforeEach(async () => {
  catcher = createMailCatcher(2);
  await new Promise<void>((resolve) => catcher.smtp.listen(0, '127.0.0.1', resolve));
  smtpPort = (catcher.smtp.server.address() as AddressInfo).port;
  inspector = createInspector({
    secrets: () => [],
    mail: { messages: () => catcher.messages(), smtpUrl: () => `smtp://127.0.0.1:${smtpPort}` },
  });
  await new Promise<void>((resolve) => inspector.server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(inspector.server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  await new Promise<void>((resolve) => catcher.smtp.close(() => resolve()));
  await new Promise<void>((resolve) => {
    inspector.server.close(() => resolve());
    inspector.server.closeAllConnections();
  });
});

/** Speaks SMTP as a mail client would, one command per server reply (a real SMTP exchange). */
async function send(to: string, subject: string, text: string): Promise<void> {
  const socket = connect(smtpPort, '127.0.0.1');
  socket.setEncoding('utf8');
  const replies: string[] = [];
  let waiting: (() => void) | undefined;
  socket.on('data', (chunk: string) => {
    replies.push(chunk);
    waiting?.();
  });
  const reply = () =>
    new Promise<string>((resolve) => {
      const take = () => {
        if (replies.length === 0) return;
        waiting = undefined;
        resolve(replies.shift()!);
      };
      waiting = take;
      take();
    });
  expect(await reply()).toMatch(/^220/);
  const lines = [
    'EHLO test.local',
    'MAIL FROM:<no-reply@platform.test>',
    `RCPT TO:<${to}>`,
    'DATA',
    `From: Platform <no-reply@platform.test>\r\nTo: ${to}\r\nSubject: ${subject}\r\n\r\n${text}\r\n.`,
    'QUIT',
  ];
  for (const line of lines) {
    socket.write(`${line}\r\n`);
    expect(await reply()).toMatch(/^(2|3)\d\d/);
  }
  socket.end();
}

it('keeps each message, newest first, and shows it at /mail with its links clickable', async () => {
  await send(
    'invitee@school.test',
    'Dana <b>Head</b> invited you',
    'Open http://127.0.0.1:3000/invitations/accept?token=invt_abc to join.',
  );
  const json = (await (await fetch(`${url}/mail.json`)).json()) as CaughtMail[];
  expect(json).toHaveLength(1);
  expect(json[0]).toMatchObject({
    to: ['invitee@school.test'],
    subject: 'Dana <b>Head</b> invited you',
  });
  const page = await fetch(`${url}/mail`);
  expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
  const html = await page.text();
  expect(html).toContain('Dana &lt;b&gt;Head&lt;/b&gt; invited you');
  expect(html).toContain(
    '<a href="http://127.0.0.1:3000/invitations/accept?token=invt_abc">http://127.0.0.1:3000/invitations/accept?token=invt_abc</a>',
  );
});

it('keeps only the newest messages', async () => {
  for (const n of [1, 2, 3]) await send(`p${n}@school.test`, `Message ${n}`, 'Hello');
  expect(catcher.messages().map((m) => m.subject)).toEqual(['Message 3', 'Message 2']);
});

it('has no /mail without a catcher', async () => {
  const plain = createInspector({ secrets: () => [] });
  await new Promise<void>((resolve) => plain.server.listen(0, '127.0.0.1', resolve));
  const port = (plain.server.address() as AddressInfo).port;
  expect((await fetch(`http://127.0.0.1:${port}/mail`)).status).toBe(404);
  await new Promise<void>((resolve) => plain.server.close(() => resolve()));
});

/**
 * What the mail sender logs when the SMTP server refuses a recipient: the refusal, with the
 * address it quotes masked (a log line carries no personal data it does not need). Its own file:
 * the log destination is the process's first server's.
 */
import { startMailCatcher } from './support/mail-catcher';
import { rawCall, startServer } from './support/server';

describe('mail sender logs', () => {
  it('logs a refused message without the address the SMTP server quotes', async () => {
    const refusing = await startMailCatcher(0, true);
    const lines: string[] = [];
    const quiet = await startServer(
      { SMTP_URL: refusing.url, MAIL_RETRY_SCHEDULE: '1h', LOG_LEVEL: 'warn' },
      { logDestination: { write: (line: string) => void lines.push(line) } },
    );
    try {
      const org = (await quiet.createOrganization({ name: 'Quiet School' })).id;
      const { token } = await quiet.createToken(org, ['all']);
      const res = await rawCall(quiet, '/v1/invitations', {
        token,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ email: 'unknown.person@quiet.example', role: 'viewer' }),
      });
      expect(res.status).toBe(201);
      const deadline = Date.now() + 10_000;
      while (!lines.some((l) => l.includes('failed')) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      const logged = lines.join('\n');
      expect(logged).toContain('Recipient address rejected');
      expect(logged).toContain('<address>');
      expect(logged).not.toContain('unknown.person@quiet.example');
      // The outbox row keeps the server's answer for support, and the message waits for a retry.
      const [row] = await quiet.dataSource.query(
        `SELECT last_error, sent_at FROM mail_outbox WHERE recipient = 'unknown.person@quiet.example'`,
      );
      expect(row.last_error).toContain('Recipient address rejected');
      expect(row.sent_at).toBeNull();
    } finally {
      await quiet.close();
      await refusing.close();
    }
  });
});

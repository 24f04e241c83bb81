import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** A real SMTP server on loopback that keeps what it receives, parsed (mailparser). */
export interface MailCatcher {
  url: string;
  port: number;
  messages: ParsedMail[];
  /** The first message to `to` whose subject matches, waiting up to `timeoutMs` for it. */
  waitFor(to: string, timeoutMs?: number): Promise<ParsedMail>;
  close(): Promise<void>;
}

/** `refuse`: every recipient is refused (550), quoting the address as real servers do. */
export async function startMailCatcher(port = 0, refuse = false): Promise<MailCatcher> {
  const messages: ParsedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    disableReverseLookup: true,
    logger: false,
    onRcptTo(address, _session, callback) {
      if (!refuse) return callback();
      const error = new Error(`<${address.address}>: Recipient address rejected: User unknown`);
      callback(Object.assign(error, { responseCode: 550 }));
    },
    onData(stream, _session, callback) {
      simpleParser(stream)
        .then((mail) => {
          messages.push(mail);
          callback();
        })
        .catch((error: Error) => callback(error));
    },
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.server.address() as AddressInfo).port;
  const recipients = (mail: ParsedMail) =>
    [mail.to ?? []].flat().flatMap((a) => a.value.map((v) => v.address));
  return {
    url: `smtp://127.0.0.1:${bound}`,
    port: bound,
    messages,
    async waitFor(to, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = messages.find((m) => recipients(m).includes(to));
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no mail to ${to} within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

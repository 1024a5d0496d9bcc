/**
 * A real SMTP server for the mail tests (`smtp-server`): plain SMTP on 127.0.0.1, no AUTH, no
 * STARTTLS, every accepted message collected with its envelope and raw source. It can be stopped and
 * started again on the same port (SMTP down, then back).
 */
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  /** Header names in lower case; folded lines unfolded. The first occurrence of each. */
  headers: Map<string, string>;
}

export class Mailbox {
  readonly messages: ReceivedMail[] = [];
  port = 0;
  private server: SMTPServer | undefined;

  /** Listens on `port` (0: a free one, remembered for restarts). */
  async start(port = this.port): Promise<void> {
    const server = new SMTPServer({
      disabledCommands: ['AUTH', 'STARTTLS'],
      authOptional: true,
      disableReverseLookup: true,
      logger: false,
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          const envelope = session.envelope;
          this.messages.push({
            from: envelope.mailFrom ? envelope.mailFrom.address : '',
            to: envelope.rcptTo.map((r) => r.address),
            raw,
            headers: headersOf(raw),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    const address = server.server.address();
    this.port = typeof address === 'object' && address ? address.port : port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  /** Resolves when `count` messages have arrived; rejects after `ms`. */
  async waitFor(count: number, ms = 10_000): Promise<ReceivedMail[]> {
    const deadline = Date.now() + ms;
    while (this.messages.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} messages within ${ms} ms, got ${this.messages.length}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return this.messages;
  }
}

/** Messages to `address` (case-insensitive) among `messages`. */
export function mailsTo(messages: readonly ReceivedMail[], address: string): ReceivedMail[] {
  return messages.filter((m) => m.to.some((to) => to.toLowerCase() === address.toLowerCase()));
}

/** Resolves with the `n`-th message (from 1) to `address` once it has arrived; rejects after `ms`. */
export async function nthMailTo(mailbox: Mailbox, address: string, n: number, ms = 10_000): Promise<ReceivedMail> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = mailsTo(mailbox.messages, address)[n - 1];
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`expected ${n} messages to ${address} within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The verification code and link of a code mail (English "verification code: X", German "Bestätigungscode: X"). */
export function codeMail(mail: ReceivedMail): { code: string; link: string; text: string; html: string } {
  const text = partOf(mail.raw, 'text/plain') ?? '';
  const html = partOf(mail.raw, 'text/html') ?? '';
  const code = /code: ([A-Z0-9]{6})\b/.exec(text)?.[1];
  const link = /^https?:\/\/\S+$/m.exec(text)?.[0];
  if (code === undefined || link === undefined) throw new Error(`not a code mail: ${text}`);
  return { code, link, text, html };
}

function headersOf(raw: string): Map<string, string> {
  const end = raw.indexOf('\r\n\r\n');
  const block = (end === -1 ? raw : raw.slice(0, end)).replace(/\r\n[ \t]+/g, ' ');
  const headers = new Map<string, string>();
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon === -1) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  return headers;
}

/** The decoded body of the MIME part with this content type (quoted-printable, base64 or 7bit). */
export function partOf(raw: string, contentType: string): string | undefined {
  const parts = raw.split(/\r\n--[^\r\n]+\r\n/);
  for (const part of parts) {
    const end = part.indexOf('\r\n\r\n');
    if (end === -1) continue;
    const head = part.slice(0, end).replace(/\r\n[ \t]+/g, ' ');
    if (!new RegExp(`^content-type:\\s*${contentType.replace('/', '\\/')}`, 'im').test(head)) continue;
    let body = part.slice(end + 4).replace(/\r\n--[^\r\n]+--\s*$/, '');
    const encoding = /^content-transfer-encoding:\s*(\S+)/im.exec(head)?.[1]?.toLowerCase();
    if (encoding === 'quoted-printable') {
      body = Buffer.from(
        body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
        'latin1',
      ).toString('utf8');
    } else if (encoding === 'base64') {
      body = Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
    }
    return body;
  }
  return undefined;
}

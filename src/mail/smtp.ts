/**
 * The SMTP transport of the mail worker (docs/decisions.md#mail-delivery): nodemailer, configured
 * from GATEHOUSE_SMTP_URL. `smtp://` speaks plain SMTP and upgrades with STARTTLS when the server
 * offers it; `smtps://` is TLS from the first byte (port 465). User and password come from the URL
 * (percent-encoded); query parameters are nodemailer options (`?requireTLS=true`,
 * `?tls.rejectUnauthorized=false`, ...). Timeouts are short so that a dead server fails a send within
 * seconds: the worker retries later.
 */
import nodemailer, { type Transporter } from 'nodemailer';

export type MailTransport = Transporter;

/** How long to wait for the TCP (and TLS) connection, and for the server's greeting. */
export const CONNECTION_TIMEOUT_MS = 5_000;
/** A silent connection after it was established (a stuck server) is given up after this. */
export const SOCKET_TIMEOUT_MS = 15_000;

/** The URL without user and password, for log lines and errors. */
export function redactedSmtpUrl(smtpUrl: string): string {
  try {
    const url = new URL(smtpUrl);
    return `${url.protocol}//${url.host}`;
  } catch {
    return 'an invalid SMTP URL';
  }
}

/** A nodemailer transport for an smtp:// or smtps:// URL; throws for anything else. */
export function createSmtpTransport(smtpUrl: string): MailTransport {
  let url: URL;
  try {
    url = new URL(smtpUrl);
  } catch {
    throw new Error('GATEHOUSE_SMTP_URL is not a URL (expected smtp://host:port or smtps://host:port)');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    throw new Error(`GATEHOUSE_SMTP_URL must use smtp:// or smtps://, got ${url.protocol}//`);
  }
  if (url.hostname === '') throw new Error('GATEHOUSE_SMTP_URL has no host');
  return nodemailer.createTransport({
    url: smtpUrl,
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    greetingTimeout: CONNECTION_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
    dnsTimeout: CONNECTION_TIMEOUT_MS,
  });
}

/**
 * The texts of the mail Gatehouse sends (docs/decisions.md#mail-delivery): English and German,
 * chosen by the user's preferred language (`de`, `de-CH`, ... → German; anything else or none →
 * English). Every message has a subject, a plain-text body and an HTML body in which every inserted
 * value is escaped.
 *
 * Mail to an address nobody has shown to be the user's carries no text the user chose:
 * whoever registers may type anything as a name, and a greeting would carry it, in Gatehouse's
 * name, to any address. So the verification mail (always to an unverified address) greets no one by
 * name; the password reset and passkey link mails go to verified addresses only and greet the user.
 */

export type MailLanguage = 'en' | 'de';

export interface MailContent {
  subject: string;
  text: string;
  html: string;
}

export interface VerificationMailInput {
  /** The user's preferred language (BCP 47), or null. */
  language: string | null | undefined;
  /** The verification code. */
  code: string;
  /** The rendered verification link. */
  link: string;
}

export function mailLanguage(preferred: string | null | undefined): MailLanguage {
  return /^de(?:[-_]|$)/i.test(preferred?.trim() ?? '') ? 'de' : 'en';
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

const TEXTS = {
  en: {
    subject: 'Verify your email address',
    greeting: (name: string | undefined) => (name ? `Hello ${name},` : 'Hello,'),
    intro: 'please confirm that this email address belongs to you.',
    codeLine: 'Your verification code:',
    linkLine: 'Or open this link:',
    button: 'Verify email address',
    validity: 'The code is valid for one hour. If you did not ask for it, you can ignore this message.',
  },
  de: {
    subject: 'Bestätige deine E-Mail-Adresse',
    greeting: (name: string | undefined) => (name ? `Hallo ${name},` : 'Hallo,'),
    intro: 'bitte bestätige, dass diese E-Mail-Adresse dir gehört.',
    codeLine: 'Dein Bestätigungscode:',
    linkLine: 'Oder öffne diesen Link:',
    button: 'E-Mail-Adresse bestätigen',
    validity: 'Der Code ist eine Stunde lang gültig. Wenn du ihn nicht angefordert hast, kannst du diese Nachricht ignorieren.',
  },
} as const;

interface CodeMailTexts {
  subject: string;
  greeting: (name: string | undefined) => string;
  intro: string;
  codeLine: string;
  linkLine: string;
  button: string;
  validity: string;
}

/** A mail that carries a code, and a link to use it when there is one. */
function codeMail(t: CodeMailTexts, input: { code: string; link: string | undefined; name?: string | null | undefined }): MailContent {
  const name = input.name?.trim() || undefined;
  const linkText = input.link === undefined ? [] : [t.linkLine, input.link, ''];
  const text = [t.greeting(name), '', t.intro, '', `${t.codeLine} ${input.code}`, '', ...linkText, t.validity, ''].join('\n');
  const linkHtml =
    input.link === undefined
      ? []
      : [`<p><a href="${escapeHtml(input.link)}">${escapeHtml(t.button)}</a></p>`, `<p>${escapeHtml(t.linkLine)}<br>${escapeHtml(input.link)}</p>`];
  const html = [
    '<!DOCTYPE html>',
    `<html><head><meta charset="utf-8"><title>${escapeHtml(t.subject)}</title></head><body>`,
    `<p>${escapeHtml(t.greeting(name))}</p>`,
    `<p>${escapeHtml(t.intro)}</p>`,
    `<p>${escapeHtml(t.codeLine)} <strong style="font-family:monospace;font-size:1.4em">${escapeHtml(input.code)}</strong></p>`,
    ...linkHtml,
    `<p>${escapeHtml(t.validity)}</p>`,
    '</body></html>',
    '',
  ].join('\n');
  return { subject: t.subject, text, html };
}

/** The mail with a contact email verification code and link: to an unverified address, so no name. */
export function verificationMail(input: VerificationMailInput): MailContent {
  return codeMail(TEXTS[mailLanguage(input.language)], { code: input.code, link: input.link });
}

const RESET_TEXTS = {
  en: {
    subject: 'Reset your password',
    greeting: (name: string | undefined) => (name ? `Hello ${name},` : 'Hello,'),
    intro: 'someone asked to reset the password of your account.',
    codeLine: 'Your reset code:',
    linkLine: 'Set a new password here:',
    button: 'Set a new password',
    validity: 'The code is valid for one hour. If you did not ask for it, you can ignore this message; your password stays as it is.',
  },
  de: {
    subject: 'Setze dein Passwort zurück',
    greeting: (name: string | undefined) => (name ? `Hallo ${name},` : 'Hallo,'),
    intro: 'jemand hat angefragt, das Passwort deines Kontos zurückzusetzen.',
    codeLine: 'Dein Code zum Zurücksetzen:',
    linkLine: 'Hier setzt du ein neues Passwort:',
    button: 'Neues Passwort setzen',
    validity: 'Der Code ist eine Stunde lang gültig. Wenn du ihn nicht angefordert hast, kannst du diese Nachricht ignorieren; dein Passwort bleibt unverändert.',
  },
} as const;

/**
 * The mail with a password reset code: the management API's PasswordReset (a link when the caller
 * gave a URL template) and the login UI's "Forgot your password?" (a link to its "Set a new
 * password" page, docs/login-ui.md#forgot-your-password). `name` greets the user: reset codes go to
 * verified addresses only.
 */
export function passwordResetMail(input: { language: string | null | undefined; code: string; link: string | undefined; name?: string | null | undefined }): MailContent {
  return codeMail(RESET_TEXTS[mailLanguage(input.language)], input);
}

const PASSKEY_TEXTS = {
  en: {
    subject: 'Add a passkey to your account',
    greeting: (name: string | undefined) => (name ? `Hello ${name},` : 'Hello,'),
    intro: 'you can now add a passkey to your account: sign in with your fingerprint, face or device PIN instead of a password.',
    linkLine: 'Add your passkey here:',
    button: 'Add a passkey',
    validity: 'The link is valid for one hour and works once. If you did not expect it, you can ignore this message.',
  },
  de: {
    subject: 'Füge deinem Konto einen Passkey hinzu',
    greeting: (name: string | undefined) => (name ? `Hallo ${name},` : 'Hallo,'),
    intro: 'du kannst deinem Konto jetzt einen Passkey hinzufügen: Melde dich mit Fingerabdruck, Gesicht oder Geräte-PIN an statt mit einem Passwort.',
    linkLine: 'Hier fügst du deinen Passkey hinzu:',
    button: 'Passkey hinzufügen',
    validity: 'Der Link ist eine Stunde lang gültig und funktioniert einmal. Wenn du ihn nicht erwartet hast, kannst du diese Nachricht ignorieren.',
  },
} as const;

/**
 * The mail with a passkey registration link (CreatePasskeyRegistrationLink): a link only, no code to
 * type. `name` greets the user: links go to verified addresses only.
 */
export function passkeyRegistrationMail(input: { language: string | null | undefined; link: string; name?: string | null | undefined }): MailContent {
  const t = PASSKEY_TEXTS[mailLanguage(input.language)];
  const name = input.name?.trim() || undefined;
  const text = [t.greeting(name), '', t.intro, '', t.linkLine, input.link, '', t.validity, ''].join('\n');
  const html = [
    '<!DOCTYPE html>',
    `<html><head><meta charset="utf-8"><title>${escapeHtml(t.subject)}</title></head><body>`,
    `<p>${escapeHtml(t.greeting(name))}</p>`,
    `<p>${escapeHtml(t.intro)}</p>`,
    `<p><a href="${escapeHtml(input.link)}">${escapeHtml(t.button)}</a></p>`,
    `<p>${escapeHtml(t.linkLine)}<br>${escapeHtml(input.link)}</p>`,
    `<p>${escapeHtml(t.validity)}</p>`,
    '</body></html>',
    '',
  ].join('\n');
  return { subject: t.subject, text, html };
}

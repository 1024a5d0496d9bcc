/**
 * One-time codes: what email verification codes, password reset codes and passkey registration
 * codes have in common. Each kind describes itself in a CodeKind (its alphabet, length, lifetime,
 * tries, table, event and mail); this module does the rest, alike for all.
 *
 * A code is drawn at random from its kind's alphabet; the user has one pending code of a kind (a new
 * one replaces it and its counts of wrong tries). It is stored as sha256(salt + code) with a random
 * salt per row: a 6-character code has only ~31 bits, too few to store as it is. It is valid for
 * its kind's lifetime, used once, and void after its kind's number of wrong tries.
 *
 * Codes of some kinds have an id, which their mailed link carries beside the code. The pages such a
 * link leads to need no sign-in, so anyone may try any user's code there: only a try that presents
 * the id counts towards the code's tries, so that whoever merely knows a user's id can neither void
 * the code nor keep its link from working (see TriesWithoutId).
 *
 * A mailed code is queued in the outbox in the transaction that stores it. Code mails must not let
 * Gatehouse relay someone else's message (docs/security.md, mail links and mail limits): a link
 * leads only to Gatehouse or to an application of the user's organization, and code mails of every
 * kind are limited per user and per recipient address. A refusal (TemplateError, MailLimitReached)
 * rolls the caller's transaction back, so the previous code stays pending.
 */
import { randomBytes, randomInt } from 'node:crypto';
import type { MailContent } from '../../mail/messages.ts';
import { parseUrlTemplate, renderUrlTemplate, TemplateError } from '../../mail/template.ts';
import { listOrgRedirectUris } from '../../store/apps.ts';
import type { DB } from '../../store/database.ts';
import { safeEqual, sha256 } from '../kernel/crypto.ts';
import { appendEvent, type ChangeDetails, type EventInput } from '../kernel/events.ts';
import { httpOrigin } from '../kernel/origin.ts';
import { Refusal } from '../kernel/refusals.ts';
import { enqueueMail, lockRecipient, mailLimitReached, type MailCount } from '../kernel/outbox.ts';


/** The events a new one-time code appends. */
export type CodeAddedEvent = 'user.human.email.code.added' | 'user.human.password.code.added' | 'user.human.passwordless.initialization.code.added';

/** The alphabet of codes a person types (read without regard to case: they contain no small letters). */
export const CAPITALS_AND_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** Who gets a code, as the caller loaded (and locked) the user. */
export interface CodeUser {
  id: string;
  instanceId: string;
  orgId: string;
  email: string;
  preferredLanguage: string | null;
  /** How to greet the user, in mail to a verified address only (password reset, passkey links). */
  name?: string | null;
}

export type CodeDelivery =
  /** Return the code to the caller; no mail. */
  | { kind: 'return' }
  /** Mail it, with the link rendered from `urlTemplate` (see src/mail/template.ts), else the kind's default. */
  | { kind: 'send'; urlTemplate?: string | undefined };

/** What a try that does not present the code's id does (an authenticated caller's always counts). */
export type TriesWithoutId =
  /** It counts towards the code's tries: codes without an id, tried only by their user or its administrator. */
  | 'count'
  /** It is refused unchecked and counts nowhere: the id travels only in the link. */
  | 'refuse'
  /** It is checked, but counted apart; past this many wrong ones, such tries are refused unchecked (the code stays valid). */
  | { countApartUpTo: number };

/** A pending code as its kind's table keeps it, its row locked. */
export interface PendingCode {
  /** Null or absent for codes without an id. */
  id?: string | null;
  code_hash: string;
  salt: string;
  expires_at: Date;
  attempts: number;
  anonymous_attempts?: number;
}

/** A new code as its table stores it. */
export interface StoredCode<Id> {
  id: Id;
  code_hash: string;
  salt: string;
  expires_at: Date;
  created_at: Date;
}

/** The table of a kind: one pending code per user. */
export interface CodeTable<Row extends PendingCode, Id> {
  /** Stores the user's code, replacing any previous one and its counts of wrong tries. */
  save(db: DB, userId: string, code: StoredCode<Id>): Promise<void>;
  findForUpdate(db: DB, userId: string): Promise<Row | undefined>;
  countWrongTry(db: DB, userId: string, counter: 'attempts' | 'anonymous_attempts'): Promise<void>;
  remove(db: DB, userId: string): Promise<void>;
}

/** A new code in clear, and its id (null for kinds without ids). */
export interface NewCode<Id> {
  id: Id;
  code: string;
}

/**
 * A kind of code. `Id` is `string` for kinds whose codes have ids, else `null`; `Link` is `string`
 * for kinds whose mail always carries a link (a page of Gatehouse's when the caller gave no
 * template), `undefined` for kinds that carry one only with the caller's template.
 */
export interface CodeKind<Row extends PendingCode, Id extends string | null, Link extends string | undefined> {
  alphabet: string;
  length: number;
  lifetimeSeconds: number;
  /** Wrong tries (of those that count) after which the code is void. */
  maxTries: number;
  newId(): Id;
  withoutId: TriesWithoutId;
  table: CodeTable<Row, Id>;
  /** The event a new code appends. */
  addedEvent: CodeAddedEvent;
  /** The link template when the caller gave none. */
  defaultLink(externalUrl: string): Link;
  mail(user: CodeUser, code: NewCode<Id>, link: string | Link): MailContent;
}

export function drawCode(kind: { alphabet: string; length: number }): string {
  let code = '';
  for (let i = 0; i < kind.length; i++) code += kind.alphabet[randomInt(kind.alphabet.length)];
  return code;
}

function hashOf(salt: string, code: string): string {
  return sha256(salt + code);
}

/** Stores a new code for the user, replacing any previous one; resolves to the code in clear and its id. */
export async function storeNewCode<Row extends PendingCode, Id extends string | null, Link extends string | undefined>(
  db: DB,
  kind: CodeKind<Row, Id, Link>,
  userId: string,
  now: Date,
): Promise<NewCode<Id>> {
  const issued = { id: kind.newId(), code: drawCode(kind) };
  const salt = randomBytes(16).toString('hex');
  const expires = new Date(now.getTime() + kind.lifetimeSeconds * 1000);
  await kind.table.save(db, userId, { id: issued.id, code_hash: hashOf(salt, issued.code), salt, expires_at: expires, created_at: now });
  return issued;
}

/**
 * How a kind issues its codes to the management API: in the transaction that checked and locked the
 * user (for `send`: its address verified), asked by `creator`; `externalUrl` is
 * GATEHOUSE_EXTERNAL_URL.
 */
export type CodeIssuer<Issued> = (
  trx: DB,
  user: CodeUser,
  delivery: CodeDelivery,
  context: { externalUrl: string; creator: string },
  now?: Date,
) => Promise<Issued>;

export interface IssueOptions<Id> {
  /** GATEHOUSE_EXTERNAL_URL: the default link, and an origin links may always lead to. */
  externalUrl: string;
  /** Who asks (the event's creator), when not the user itself. */
  creator?: string | undefined;
  now: Date;
  /** The event's payload. */
  payload(code: NewCode<Id>): Record<string, unknown>;
  /** The caller checked the mail limits in this transaction already. */
  limitsChecked?: boolean;
}

/**
 * Issues a new code of `kind` for `user`, mails it when asked to, and appends the kind's event. Call
 * it in the transaction that checked and locked the user. Throws TemplateError for an invalid
 * template or a link leading elsewhere than allowed, and MailLimitReached over a mail limit.
 */
export async function issueCode<Row extends PendingCode, Id extends string | null, Link extends string | undefined>(
  trx: DB,
  kind: CodeKind<Row, Id, Link>,
  user: CodeUser,
  delivery: CodeDelivery,
  options: IssueOptions<Id>,
): Promise<{ code: NewCode<Id>; details: ChangeDetails; outboxId?: string }> {
  if (delivery.kind === 'send' && options.limitsChecked !== true) await checkMailLimits(trx, user);
  const code = await storeNewCode(trx, kind, user.id, options.now);
  let outboxId: string | undefined;
  if (delivery.kind === 'send') {
    const template = delivery.urlTemplate ?? kind.defaultLink(options.externalUrl);
    const link = template === undefined ? template : await codeLink(trx, user, code, template, options.externalUrl);
    outboxId = await enqueueMail(trx, { instanceId: user.instanceId, to: user.email, userId: user.id, ...kind.mail(user, code, link) });
  }
  const details = await appendEvent(trx, {
    instanceId: user.instanceId,
    aggregateId: user.id,
    resourceOwner: user.orgId,
    type: kind.addedEvent,
    creator: options.creator,
    payload: options.payload(code),
  } as EventInput<CodeAddedEvent>);
  return { code, details, ...(outboxId === undefined ? {} : { outboxId }) };
}

/** A try of a code: what was typed, and the code's id as the link carried it. */
export interface CodeTry {
  code: string;
  codeId?: string | undefined;
  /** By the user itself or its administrator, authenticated: no stranger, so the try counts towards the code's tries. */
  authenticated?: boolean;
  /** A right code stays pending: a check before costly work, the code being used with that work's result. */
  keep?: boolean;
}

export type CodeCheck<Row> = { result: 'right'; row: Row } | { result: 'wrong' | 'expired' | 'missing' };

/**
 * Tries the user's pending code under its row lock: a right one is used up (deleted) unless the try
 * keeps it, a wrong one counts a try (apart, for a try without the id where the kind says so). A
 * void code, or a try without the id that its kind refuses, is `wrong` unchecked. The caller
 * commits on anything but `right`, so that the try counts.
 */
export async function tryCode<Row extends PendingCode, Id extends string | null, Link extends string | undefined>(
  db: DB,
  kind: CodeKind<Row, Id, Link>,
  userId: string,
  given: CodeTry,
  now: Date,
): Promise<CodeCheck<Row>> {
  const row = await kind.table.findForUpdate(db, userId);
  if (row === undefined) return { result: 'missing' };
  const linked = kind.withoutId === 'count' || given.authenticated === true || presentsId(row, given.codeId);
  if (row.attempts >= kind.maxTries || (!linked && refusesWithoutId(kind.withoutId, row))) return { result: 'wrong' };
  if (row.expires_at.getTime() <= now.getTime()) return { result: 'expired' };
  const typed = given.code.trim();
  // Codes without small letters are typed by people: read without regard to case.
  const read = kind.alphabet === kind.alphabet.toUpperCase() ? typed.toUpperCase() : typed;
  if (!safeEqual(hashOf(row.salt, read), row.code_hash)) {
    await kind.table.countWrongTry(db, userId, linked ? 'attempts' : 'anonymous_attempts');
    return { result: 'wrong' };
  }
  if (given.keep !== true) await kind.table.remove(db, userId);
  return { result: 'right', row };
}

function presentsId(row: PendingCode, codeId: string | undefined): boolean {
  return codeId !== undefined && typeof row.id === 'string' && safeEqual(row.id, codeId);
}

function refusesWithoutId(rule: TriesWithoutId, row: PendingCode): boolean {
  return rule === 'refuse' || (typeof rule === 'object' && (row.anonymous_attempts ?? 0) >= rule.countApartUpTo);
}

// --- links ---

/** `{{.CodeID}}`: the code's id, in the links Gatehouse writes itself and in passkey links. */
const CODE_ID_ACTION = /\{\{ *\.CodeID *\}\}/g;

/**
 * The template with `{{.CodeID}}` filled in, before src/mail/template.ts renders the rest (it knows
 * only the fields API callers may use). Code ids are decimal digits: nothing to encode, nothing
 * that could add to the URL's shape.
 */
function fillCodeId(template: string, codeId: string): string {
  return template.replace(CODE_ID_ACTION, codeId);
}

/** A template's syntax (TemplateError when wrong): src/mail/template.ts's rules, plus {{.CodeID}}. */
export function checkLinkTemplate(template: string): void {
  parseUrlTemplate(fillCodeId(template, '0'));
}

/** The code's link: rendered from the template, and leading only where code mail links may lead. */
async function codeLink(db: DB, user: CodeUser, code: NewCode<string | null>, template: string, externalUrl: string): Promise<string> {
  const filled = code.id === null ? template : fillCodeId(template, code.id);
  const link = renderUrlTemplate(filled, { UserID: user.id, Code: code.code, OrgID: user.orgId });
  if (!(await mailLinkOrigins(db, externalUrl, user)).has(new URL(link).origin)) {
    throw new TemplateError("url template must lead to this server or to the origin of a redirect URI of an application of the user's organization");
  }
  return link;
}

/**
 * The origins a code mail's link may lead to: Gatehouse's own, and those of the redirect URIs
 * registered on the applications of the user's organization (the user's own apps, whose pages may
 * take the code). Redirect URIs without an http(s) origin (custom schemes) add none.
 */
async function mailLinkOrigins(db: DB, externalUrl: string, user: Pick<CodeUser, 'instanceId' | 'orgId'>): Promise<Set<string>> {
  const redirectUris = await listOrgRedirectUris(db, user.instanceId, user.orgId);
  const origins = new Set([new URL(externalUrl).origin]);
  for (const uri of redirectUris.flat()) {
    const origin = httpOrigin(uri);
    if (origin !== undefined) origins.add(origin);
  }
  return origins;
}

// --- mail limits ---

/** Code mails per user per hour, and per recipient address per 10 minutes. */
export const CODE_MAILS_PER_USER = { limit: 5, windowSeconds: 3600 } as const;
export const CODE_MAILS_PER_RECIPIENT = { limit: 3, windowSeconds: 600 } as const;

/** A code mail over a limit: nothing was changed, the pending code stays valid. */
export class MailLimitReached extends Refusal {
  override name = 'MailLimitReached';
  /** Which limit: mails about this user, or mails to this address. */
  readonly scope: 'user' | 'recipient';
  override readonly retryAfterSeconds: number;
  constructor(scope: 'user' | 'recipient', retryAfterSeconds: number) {
    const minutes = Math.max(1, Math.ceil(retryAfterSeconds / 60));
    // One wording for both limits: telling which one was reached would tell a caller that someone
    // else had mail sent to an address lately (the per-recipient count spans every user).
    super(
      'exhausted',
      'EMAIL-TooManyMails',
      `too many code mails (at most ${CODE_MAILS_PER_USER.limit} an hour for a user, ${CODE_MAILS_PER_RECIPIENT.limit} in 10 minutes to an address): try again in ${minutes} minute(s)`,
      { retryAfterSeconds },
    );
    this.scope = scope;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Refuses (MailLimitReached) a code mail over the per-user or per-recipient limit, counted over every kind of code mail. */
export async function checkMailLimits(db: DB, user: Pick<CodeUser, 'id' | 'email'>): Promise<void> {
  await lockRecipient(db, user.email);
  const limits: Array<[MailLimitReached['scope'], MailCount, { limit: number; windowSeconds: number }]> = [
    ['user', { userId: user.id }, CODE_MAILS_PER_USER],
    ['recipient', { recipient: user.email }, CODE_MAILS_PER_RECIPIENT],
  ];
  for (const [scope, which, { limit, windowSeconds }] of limits) {
    const reached = await mailLimitReached(db, which, limit, windowSeconds);
    if (reached) throw new MailLimitReached(scope, reached.retryAfterSeconds);
  }
}

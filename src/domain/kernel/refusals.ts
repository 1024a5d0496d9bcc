/**
 * The domain's refusals: what a caller asked for cannot be done, for a reason it may be told. Every
 * wing throws these (or a subclass) with a static message; the API maps each kind to one status in
 * one table (api/domain-errors.ts), and the bootstrap file reports them at a path of the document.
 * Anything else a wing throws is a fault, not an answer.
 */

export type RefusalKind =
  /** The request names a value the rules refuse (InvalidArgument): `field` says which. */
  | 'invalid'
  /** The thing exists already, or its name or id is taken (AlreadyExists). */
  | 'exists'
  /** What the request names is not there (NotFound). */
  | 'not_found'
  /** The state of what it names does not allow it (FailedPrecondition). */
  | 'conflict'
  /** A limit is reached (ResourceExhausted), for `retryAfterSeconds`. */
  | 'exhausted';

export class Refusal extends Error {
  override name = 'Refusal';
  readonly kind: RefusalKind;
  /** A stable id for clients and logs (ZITADEL's ErrorDetail id), e.g. `PROJECT-IdTaken`. */
  readonly id: string;
  /** The request field the refusal is about, when there is one: the message then starts with it. */
  readonly field: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  constructor(kind: RefusalKind, id: string, message: string, options: { field?: string; retryAfterSeconds?: number } = {}) {
    super(options.field === undefined ? message : `${options.field}: ${message}`);
    this.kind = kind;
    this.id = id;
    this.field = options.field;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

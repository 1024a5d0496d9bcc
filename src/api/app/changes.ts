/** What every change of an application shares: its event, and the answers to a taken name or id. */
import { Code } from '@connectrpc/connect';
import { appendEvent, type ChangeDetails } from '../../domain/kernel/events.ts';
import { IdentifierTaken } from '../../domain/kernel/identifiers.ts';
import { creatorOf, type Principal } from '../../domain/kernel/principal.ts';
import { APP_NAME_INDEX, violatedUniqueIndex } from '../../store/apps.ts';
import type { DB } from '../../store/database.ts';
import { apiError } from '../errors.ts';

/** Appends the event of a change of application `app` (aggregate `app`, owned by its organization). */
export function appEvent(
  trx: DB,
  principal: Principal,
  app: { id: string; org_id: string },
  type: string,
  payload: Record<string, unknown>,
): Promise<ChangeDetails> {
  return appendEvent(trx, {
    instanceId: principal.instanceId,
    aggregateType: 'app',
    aggregateId: app.id,
    resourceOwner: app.org_id,
    type,
    creator: creatorOf(principal),
    payload,
  });
}

export function nameTaken() {
  return apiError(Code.AlreadyExists, 'APP-NameTaken', 'name: an application of the project already has this name');
}

/**
 * The answer when a write ran into a unique index (a concurrent request won the name or the id):
 * AlreadyExists naming the field; anything else is rethrown as it is.
 */
export function asConflict(error: unknown): unknown {
  if (error instanceof IdentifierTaken) return idTaken();
  const index = violatedUniqueIndex(error);
  if (index === undefined) return error;
  if (index === APP_NAME_INDEX) return nameTaken();
  return idTaken();
}

/**
 * The one answer for an id whose application id or client id is taken, whatever holds it (another
 * application, a project, a machine user, of any organization, or one deleted): the answer must not
 * tell which kind of object or organization has it.
 */
export function idTaken() {
  return apiError(Code.AlreadyExists, 'APP-IdTaken', 'id: the id is taken');
}

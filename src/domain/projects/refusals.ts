/**
 * The refusals of the projects wing that carry more than their static message. The API answers
 * with the message alone (api/domain-errors.ts); the bootstrap file reports the extra at the path of
 * the document it came from (which value is taken, which object holds it), as it always has.
 */
import { claimIdentifiersFor, claimNewIdentifiers, IdentifierTaken, type IdentifierOwner } from '../kernel/identifiers.ts';
import { Refusal } from '../kernel/refusals.ts';
import type { DB } from '../../store/database.ts';

/** A value of the namespace of token names is taken (kernel/identifiers.ts): the same answer whoever holds it. */
export class ValueTaken extends Refusal {
  /** The value as the request spelled it. */
  readonly value: string;
  constructor(id: string, value: string) {
    super('exists', id, 'the id is taken', { field: 'id' });
    this.value = value;
  }
}

/**
 * Claims an object's values in the instance's namespace: an object being created (`fresh`) may hold
 * no value ever held; an existing one (a client id the bootstrap file changes) may take back its own
 * earlier ones. A taken value is refused as `ValueTaken` with `refusalId`.
 */
export async function claimValues(
  trx: DB,
  instanceId: string,
  owner: IdentifierOwner,
  values: readonly string[],
  refusalId: string,
  fresh = true,
): Promise<void> {
  try {
    if (fresh) await claimNewIdentifiers(trx, instanceId, owner, values);
    else await claimIdentifiersFor(trx, instanceId, owner, values);
  } catch (error) {
    throw error instanceof IdentifierTaken ? new ValueTaken(refusalId, error.value) : error;
  }
}

/** Another application of the project has the name (compared ignoring case). */
export class AppNameTaken extends Refusal {
  /** The application holding the name; undefined when a concurrent write won it. */
  readonly holderId: string | undefined;
  constructor(holderId: string | undefined) {
    super('exists', 'APP-NameTaken', 'an application of the project already has this name', { field: 'name' });
    this.holderId = holderId;
  }
}

/** A key id another application's key has (the bootstrap file names its keys). */
export class AppKeyTaken extends Refusal {
  readonly keyId: string;
  readonly holderId: string;
  constructor(index: number, keyId: string, holderId: string) {
    super('exists', 'APP-KeyTaken', 'the key id belongs to another application', { field: `publicKeys[${index}].keyId` });
    this.keyId = keyId;
    this.holderId = holderId;
  }
}

/** Role keys the project does not define. */
export class UndefinedRoles extends Refusal {
  /** Every key the project lacks, in the order given. */
  readonly keys: readonly string[];
  constructor(field: string, keys: readonly string[]) {
    // The id and words the management API has always given this (as for any field it refuses).
    super('invalid', 'API-InvalidArgument', `the project defines no role "${keys[0]}"`, { field });
    this.keys = keys;
  }
}

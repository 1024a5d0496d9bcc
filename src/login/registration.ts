/**
 * Self-registration (seed §4.4 prompt=create): a human user in the instance's default organization,
 * the password hashed with argon2id, the email unverified, and the `user.human.added` event in the
 * same transaction (SPEC §5). SPEC 10.12: only while that organization allows registration
 * (`allowRegister` in the bootstrap file), and only with a user name no user of the instance has
 * (case-insensitively), so that every existing short login name keeps naming one user.
 */
import type { Gatehouse } from '../context.ts';
import { hashSecret } from '../domain/crypto.ts';
import { appendEvent } from '../domain/events.ts';
import { newId } from '../domain/ids.ts';
import { findRegistrationTarget } from '../store/instances.ts';
import { insertUser, isUniqueViolation, userNameTaken } from '../store/users.ts';

export interface Registration {
  userName: string;
  email: string;
  givenName: string;
  familyName: string;
  password: string;
  preferredLanguage: string;
}

export type RegistrationResult = { kind: 'created'; userId: string } | { kind: 'taken' } | { kind: 'unavailable' };

/**
 * The organization self-registration creates users in, when registration is open: the instance's
 * default organization, if it allows it (SPEC 10.12: `allowRegister`, unset meaning true for the
 * default org).
 */
export async function registrationOrg(gh: Gatehouse): Promise<string | undefined> {
  const target = await findRegistrationTarget(gh.db, gh.instanceId);
  return target && (target.allow_register ?? true) ? target.id : undefined;
}

export async function registerHuman(gh: Gatehouse, input: Registration): Promise<RegistrationResult> {
  const orgId = await registrationOrg(gh);
  if (!orgId) {
    gh.log.info('registration refused: the default organization does not allow it, or there is none');
    return { kind: 'unavailable' };
  }
  if (await userNameTaken(gh.db, gh.instanceId, input.userName)) return { kind: 'taken' };
  const passwordHash = await hashSecret(input.password); // slow: never inside the transaction
  const userId = newId();
  try {
    await gh.db.transaction().execute(async (trx) => {
      await insertUser(trx, {
        id: userId,
        instance_id: gh.instanceId,
        org_id: orgId,
        kind: 'human',
        user_name: input.userName,
        password_hash: passwordHash,
        email: input.email,
        email_verified: false,
        given_name: input.givenName,
        family_name: input.familyName,
        display_name: `${input.givenName} ${input.familyName}`,
        preferred_language: input.preferredLanguage,
        phone: null,
        nickname: null,
        gender: null,
        address: null,
        secret_hash: null,
      });
      await appendEvent(trx, {
        instanceId: gh.instanceId,
        aggregateType: 'user',
        aggregateId: userId,
        resourceOwner: orgId,
        type: 'user.human.added',
        creator: userId,
        payload: { userName: input.userName, email: input.email, selfRegistered: true },
      });
    });
  } catch (error) {
    if (isUniqueViolation(error)) return { kind: 'taken' }; // a concurrent registration won the name
    throw error;
  }
  return { kind: 'created', userId };
}

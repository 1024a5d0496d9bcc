/**
 * zitadel.user.v2.UserService: creating, reading, listing, updating and the lifecycle of users
 * (docs/management-api.md; docs/security.md 10.1, 10.13). The rules for values, uniqueness and the
 * lifecycle are in domain/user-admin.ts; this file decides who may do what:
 *
 * - Creating: IAM_OWNER in any organization, ORG_OWNER in its own; the organization is the
 *   request's (`organization` / `organizationId`), else the caller's. An organization the caller may
 *   not manage is PermissionDenied; one that does not exist is NotFound for an IAM_OWNER.
 * - One user (target.ts): a user may read itself and update its own profile, email, phone and
 *   password (with its current password); deactivating, reactivating, locking, unlocking and
 *   deleting are for its administrators only.
 * - docs/security.md 10.1: `isVerified` and `returnCode` are for administrators acting on another
 *   user.
 * - ListUsers: PermissionDenied without a management role; an ORG_OWNER sees its organizations'
 *   users except those holding an instance-wide role, and `totalResult` counts only those.
 *
 * Deactivating, locking and deleting end the user's access in the same transaction; this process's
 * caches follow after the commit (user-lifecycle.ts).
 */
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { Code, type HandlerContext, type ServiceImpl } from '@connectrpc/connect';
import type { Organization } from '../../../gen/zitadel/object/v2/object_pb.js';
import type { IDPLink } from '../../../gen/zitadel/user/v2/idp_pb.js';
import type { UpdateHumanUserRequest, UserService } from '../../../gen/zitadel/user/v2/user_service_pb.js';
import { addLink } from '../../domain/federation/links.ts';
import type { Gatehouse } from '../../context.ts';
import { latestSequence } from '../../domain/kernel/events.ts';
import { creatorOf, type Principal } from '../../domain/kernel/principal.ts';
import {
  addHuman,
  addMachine,
  changeHuman,
  checkCurrentPassword,
  prepareHuman,
  prepareHumanChanges,
  prepareMachine,
  type AdminContext,
  type HumanChanges,
} from '../../domain/users/user-admin.ts';
import { changeLifecycle, removeUser, type LifecycleAction } from '../../domain/users/user-states.ts';
import { afterAccessEnded, passwordChangeBy, type EndedAccess } from '../../domain/users/user-lifecycle.ts';
import type { DB } from '../../store/database.ts';
import { findOrg, findOtherOrgWithDomain } from '../../store/orgs.ts';
import { countUsers, listUsers } from '../../store/users.ts';
import { requirePrincipal } from '../auth-interceptor.ts';
import { apiError } from '../errors.ts';
import { adminContext, listFilter, requireManager, visibleOrg, type ManagedOrgs } from '../management/access.ts';
import { changeDetails, listDetails, rowDetails } from '../management/details.ts';
import { targetUser, type TargetUser } from './target.ts';
import { addHumanInput, emailInput, invalidField, passwordInput, phoneInput, profileInput } from './user-input.ts';
import { userMessage } from './user-message.ts';
import { readListUsers } from './user-query.ts';

/** Links a new user may come with: a person has a few accounts elsewhere, not hundreds. */
const MAX_NEW_USER_LINKS = 20;

export function userMethods(gh: Gatehouse): Partial<ServiceImpl<typeof UserService>> {
  const admin = (principal: Principal): AdminContext => adminContext(gh, principal);

  /** The organization a new user goes to, after the permission check. */
  async function creationOrg(db: DB, principal: Principal, managed: ManagedOrgs, ref: Organization['org']): Promise<string> {
    let orgId: string | undefined = principal.orgId;
    if (ref.case === 'orgId' && ref.value !== '') {
      const org = await findOrg(db, ref.value);
      orgId = org?.instance_id === gh.instanceId ? org.id : undefined;
    } else if (ref.case === 'orgDomain' && ref.value !== '') {
      orgId = (await findOtherOrgWithDomain(db, gh.instanceId, ref.value.toLowerCase(), undefined))?.id;
    }
    return visibleOrg(managed, orgId, 'organization', 'ORG-NotFound');
  }

  /** After a commit that ended the user's access, or changed it otherwise. */
  function afterCommit(ended: EndedAccess | undefined): void {
    if (ended !== undefined) afterAccessEnded(ended, { directory: gh.directory, revocations: gh.tokens.revocations });
    else gh.directory.clear();
  }

  async function lifecycle(ctx: HandlerContext, userId: string, action: LifecycleAction | 'delete') {
    const principal = requirePrincipal(ctx);
    const result = await gh.db.transaction().execute(async (trx) => {
      const target = await targetUser(trx, gh.instanceId, principal, userId, { allowSelf: false });
      return action === 'delete' ? removeUser(trx, admin(principal), target.row.id) : changeLifecycle(trx, admin(principal), target.row.id, action);
    });
    afterCommit(result.ended);
    return { details: changeDetails(result.details) };
  }

  /** What UpdateHumanUser asks, checked against who asks (docs/security.md 10.1: no vouching for oneself). */
  async function humanChanges(req: UpdateHumanUserRequest, target: TargetUser): Promise<HumanChanges> {
    const self = target.access === 'self';
    const email = req.email === undefined ? undefined : emailInput(req.email, 'email');
    const phone = req.phone === undefined ? undefined : phoneInput(req.phone, 'phone', { emptyIsNone: false });
    if (self && (email?.verification.kind === 'verified' || email?.verification.kind === 'return' || phone?.verified)) {
      throw apiError(Code.PermissionDenied, 'USER-VerifySelf', 'isVerified and returnCode are only for administrators (ORG_OWNER, IAM_OWNER) acting on another user');
    }
    let password: string | undefined;
    if (req.password !== undefined) {
      const given = req.password;
      if (given.passwordType.case === undefined) throw invalidField('password.password', 'is required');
      password = passwordInput(given.passwordType.value, 'password.password');
      if (self) await proveSelf(target, given.verification);
    }
    return { userName: req.username, profile: req.profile === undefined ? undefined : profileInput(req.profile, 'profile'), email, phone, password };
  }

  /** A user setting its own password proves it with its current one (an administrator needs not). */
  async function proveSelf(target: TargetUser, proof: NonNullable<UpdateHumanUserRequest['password']>['verification']): Promise<void> {
    if (proof.case === 'verificationCode') throw invalidField('password.verificationCode', 'is not accepted here: set a password with a reset code through SetPassword');
    if (proof.case !== 'currentPassword' || proof.value === '') throw invalidField('password.currentPassword', 'is required to change your own password');
    const check = await checkCurrentPassword(gh, target.row, proof.value);
    if (check.kind === 'invalid') throw invalidField('password.currentPassword', 'is not the current password');
  }

  /**
   * Links the new user to accounts at identity providers (`idp_links` of AddHumanUser and
   * CreateUser, as ZITADEL's login creates a user after a sign-in at a provider), in the user's own
   * transaction: a link that cannot be made creates no user.
   */
  async function linkNewUser(trx: DB, principal: Principal, user: { id: string; orgId: string; hasPassword: boolean }, links: readonly IDPLink[], field: string): Promise<void> {
    if (links.length > MAX_NEW_USER_LINKS) throw invalidField(field, `must be at most ${MAX_NEW_USER_LINKS}`);
    for (const [i, link] of links.entries()) {
      await addLink(trx, creatorOf(principal), { ...user, instanceId: gh.instanceId, kind: 'human' }, { idpId: link.idpId, externalUserId: link.userId, externalUserName: link.userName }, `${field}[${i}].`);
    }
  }

  return {
    async addHumanUser(req, ctx) {
      const principal = requirePrincipal(ctx);
      const managed = requireManager(principal);
      const orgId = await creationOrg(gh.db, principal, managed, req.organization?.org ?? { case: undefined });
      const prepared = await prepareHuman(addHumanInput(req));
      const added = await gh.db.transaction().execute(async (trx) => {
        const user = await addHuman(trx, admin(principal), orgId, prepared);
        await linkNewUser(trx, principal, { id: user.id, orgId, hasPassword: prepared.columns.password_hash != null }, req.idpLinks, 'idpLinks');
        return user;
      });
      gh.directory.clear();
      return { userId: added.id, details: changeDetails(added.details, added.createdAt), ...(added.emailCode !== undefined ? { emailCode: added.emailCode } : {}) };
    },

    async createUser(req, ctx) {
      const principal = requirePrincipal(ctx);
      const managed = requireManager(principal);
      const orgId = await creationOrg(gh.db, principal, managed, { case: 'orgId', value: req.organizationId });
      const type = req.userType;
      if (type.case === undefined) throw invalidField('human', 'or machine is required');
      let added;
      if (type.case === 'human') {
        const human = type.value;
        const input = {
          id: req.userId,
          userName: req.username,
          profile: profileInput(human.profile, 'human.profile'),
          email: emailInput(human.email, 'human.email'),
          phone: phoneInput(human.phone, 'human.phone', { emptyIsNone: true }),
          password: human.passwordType.case === 'password' ? passwordInput(human.passwordType.value, 'human.password') : undefined,
          totpSecret: human.totpSecret,
        };
        const prepared = await prepareHuman(input, 'human.');
        added = await gh.db.transaction().execute(async (trx) => {
          const user = await addHuman(trx, admin(principal), orgId, prepared);
          await linkNewUser(trx, principal, { id: user.id, orgId, hasPassword: prepared.columns.password_hash != null }, human.idpLinks, 'human.idpLinks');
          return user;
        });
      } else {
        const machine = type.value;
        const prepared = prepareMachine({ id: req.userId, userName: req.username, name: machine.name, description: machine.description });
        added = await gh.db.transaction().execute((trx) => addMachine(trx, admin(principal), orgId, prepared));
      }
      gh.directory.clear();
      return { id: added.id, creationDate: timestampFromDate(added.createdAt), ...(added.emailCode !== undefined ? { emailCode: added.emailCode } : {}) };
    },

    async getUserByID(req, ctx) {
      const principal = requirePrincipal(ctx);
      const target = await targetUser(gh.db, gh.instanceId, principal, req.userId, { allowSelf: true });
      return { details: rowDetails(target.row, target.row.org_id), user: userMessage(target.row) };
    },

    async listUsers(req, ctx) {
      const principal = requirePrincipal(ctx);
      const managed = requireManager(principal);
      const request = readListUsers(req);
      const scope = { instanceId: gh.instanceId, orgIds: listFilter(managed), rolesWithin: listFilter(managed), filter: request.filter };
      const sequence = await latestSequence(gh.db);
      const [total, rows] = await Promise.all([countUsers(gh.db, scope), listUsers(gh.db, scope, request)]);
      return { details: listDetails(total, sequence), sortingColumn: req.sortingColumn, result: rows.map((row) => userMessage(row)) };
    },

    async updateHumanUser(req, ctx) {
      const principal = requirePrincipal(ctx);
      const target = await targetUser(gh.db, gh.instanceId, principal, req.userId, { allowSelf: true });
      if (target.row.kind !== 'human') throw apiError(Code.FailedPrecondition, 'USER-NotHuman', 'the user is a machine user: UpdateHumanUser changes human users');
      const prepared = await prepareHumanChanges(await humanChanges(req, target));
      const self = target.access === 'self';
      // a user proves its own new password with the current one (proveSelf); anyone else sets it outright
      const passwordChange = passwordChangeBy({ self, provedWithCurrentPassword: self, actorId: principal.actorId, sessionId: principal.sessionId }, gh.config.lifetimes);
      const changed = await gh.db.transaction().execute((trx) => changeHuman(trx, admin(principal), target.row.id, prepared, { self, passwordChange }));
      afterCommit(changed.ended);
      return {
        details: changed.details === undefined ? rowDetails(target.row, target.row.org_id) : changeDetails(changed.details),
        ...(changed.emailCode !== undefined ? { emailCode: changed.emailCode } : {}),
      };
    },

    deactivateUser: (req, ctx) => lifecycle(ctx, req.userId, 'deactivate'),
    reactivateUser: (req, ctx) => lifecycle(ctx, req.userId, 'reactivate'),
    lockUser: (req, ctx) => lifecycle(ctx, req.userId, 'lock'),
    unlockUser: (req, ctx) => lifecycle(ctx, req.userId, 'unlock'),
    deleteUser: (req, ctx) => lifecycle(ctx, req.userId, 'delete'),
  };
}

import { accessTo, holdsInstanceRole, rolesWithin, type ManagedUser } from './permissions.ts';
import type { Principal, RoleGrant } from '../kernel/principal.ts';

function caller(userId: string, roles: RoleGrant[]): Principal {
  return { instanceId: 'i', userId, orgId: 'org-a', kind: 'human', clientId: 'c', scopes: new Set(), audience: [], roles, tokenId: 't' };
}

const iamOwner = caller('root', [{ role: 'IAM_OWNER', orgId: '' }]);
const orgOwner = caller('owner-a', [{ role: 'ORG_OWNER', orgId: 'org-a' }]);
const plain = caller('plain', []);

const member: ManagedUser = { id: 'member', orgId: 'org-a', roles: [] };
const otherOrg: ManagedUser = { id: 'stranger', orgId: 'org-b', roles: [] };
const coOwner: ManagedUser = { id: 'co-owner', orgId: 'org-a', roles: [{ role: 'ORG_OWNER', orgId: 'org-a' }] };
const instanceOwner: ManagedUser = { id: 'root-2', orgId: 'org-a', roles: [{ role: 'IAM_OWNER', orgId: '' }] };
const impersonator: ManagedUser = { id: 'helpdesk', orgId: 'org-a', roles: [{ role: 'IAM_ADMIN_IMPERSONATOR', orgId: '' }] };
const ownerElsewhere: ManagedUser = { id: 'gamma-owner', orgId: 'org-a', roles: [{ role: 'ORG_OWNER', orgId: 'org-c' }] };
const impersonatorElsewhere: ManagedUser = { id: 'delta-helper', orgId: 'org-a', roles: [{ role: 'ORG_ADMIN_IMPERSONATOR', orgId: 'org-d' }] };
const ownerOfTwo = caller('owner-ac', [{ role: 'ORG_OWNER', orgId: 'org-a' }, { role: 'ORG_OWNER', orgId: 'org-c' }]);
const itself = (principal: Principal, roles: RoleGrant[]): ManagedUser => ({ id: principal.userId, orgId: 'org-a', roles });

describe('accessTo', () => {
  it.each([
    ['IAM_OWNER on a member', iamOwner, member, 'manage'],
    ['IAM_OWNER on another org', iamOwner, otherOrg, 'manage'],
    ['IAM_OWNER on another instance owner', iamOwner, instanceOwner, 'manage'],
    ['IAM_OWNER on itself', iamOwner, itself(iamOwner, iamOwner.roles as RoleGrant[]), 'self'],
    ['ORG_OWNER on a member of its org', orgOwner, member, 'manage'],
    ['ORG_OWNER on a co-owner of its org', orgOwner, coOwner, 'manage'],
    ['ORG_OWNER on a user of another org', orgOwner, otherOrg, 'none'],
    ['ORG_OWNER on an instance owner of its org', orgOwner, instanceOwner, 'none'],
    ['ORG_OWNER on an instance-wide impersonator of its org', orgOwner, impersonator, 'none'],
    ['ORG_OWNER on a member of its org who owns another org', orgOwner, ownerElsewhere, 'none'],
    ['ORG_OWNER on a member of its org who impersonates in another org', orgOwner, impersonatorElsewhere, 'none'],
    ['ORG_OWNER of both orgs on a member who owns the other one', ownerOfTwo, ownerElsewhere, 'manage'],
    ['ORG_OWNER on itself', orgOwner, itself(orgOwner, orgOwner.roles as RoleGrant[]), 'self'],
    ['a user without roles on another user', plain, member, 'none'],
    ['a user without roles on itself', plain, itself(plain, []), 'self'],
  ])('%s', (_name, principal, user, expected) => {
    expect(accessTo(principal, user)).toBe(expected);
  });

  it('counts every IAM_ role and every role without an organization as instance-wide', () => {
    expect(holdsInstanceRole({ roles: [{ role: 'IAM_SOMETHING_NEW', orgId: 'org-a' }] })).toBe(true);
    expect(holdsInstanceRole({ roles: [{ role: 'CUSTOM', orgId: '' }] })).toBe(true);
    expect(holdsInstanceRole({ roles: [{ role: 'ORG_OWNER', orgId: 'org-a' }, { role: 'ORG_ADMIN_IMPERSONATOR', orgId: 'org-a' }] })).toBe(false);
  });
});

describe('rolesWithin', () => {
  it.each([
    ['no roles', [], true],
    ['roles in the organizations', [{ role: 'ORG_OWNER', orgId: 'org-a' }, { role: 'ORG_ADMIN_IMPERSONATOR', orgId: 'org-c' }], true],
    ['a role in another organization', [{ role: 'ORG_OWNER', orgId: 'org-a' }, { role: 'ORG_OWNER', orgId: 'org-b' }], false],
    ['an instance-wide role', [{ role: 'IAM_OWNER', orgId: '' }], false],
    ['an IAM_ role scoped to an organization', [{ role: 'IAM_ADMIN_IMPERSONATOR', orgId: 'org-a' }], false],
  ])('%s', (_name, roles, expected) => {
    expect(rolesWithin({ roles }, new Set(['org-a', 'org-c']))).toBe(expected);
  });
});

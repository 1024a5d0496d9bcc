/**
 * zitadel.user.v2.UserService (docs/management-api.md): the users' own records and lifecycle
 * (user-v2/users.ts) and their credentials (user-v2/credentials.ts), passkeys included
 * (user-v2/passkeys.ts, docs/passkeys.md#the-api), sign-ins at external identity providers and the
 * users' links to them (user-v2/idp-intents.ts, user-v2/idp-links.ts, docs/federation.md).
 */
import type { ServiceImpl } from '@connectrpc/connect';
import type { UserService as UserServiceV2 } from '../../gen/zitadel/user/v2/user_service_pb.js';
import type { Gatehouse } from '../context.ts';
import { credentialMethods } from './user-v2/credentials.ts';
import { intentMethods } from './user-v2/idp-intents.ts';
import { linkMethods } from './user-v2/idp-links.ts';
import { passkeyMethods } from './user-v2/passkeys.ts';
import { userMethods } from './user-v2/users.ts';

export function createUserV2Service(gh: Gatehouse): Partial<ServiceImpl<typeof UserServiceV2>> {
  return { ...userMethods(gh), ...credentialMethods(gh), ...passkeyMethods(gh), ...intentMethods(gh), ...linkMethods(gh) };
}

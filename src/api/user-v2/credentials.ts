/**
 * zitadel.user.v2.UserService: a user's credentials (docs/management-api.md): passwords and reset
 * codes, the contact email, the authenticator app (TOTP), machine keys, secrets and personal access
 * tokens, and the list of authentication methods. Each group lives in its own file; every call loads
 * its user through target.ts (the user itself, or an administrator of it) and answers with the
 * `details` of the event it appended.
 */
import type { ServiceImpl } from '@connectrpc/connect';
import type { UserService } from '../../../gen/zitadel/user/v2/user_service_pb.js';
import type { Gatehouse } from '../../context.ts';
import { emailMethods } from './credentials-email.ts';
import { machineMethods } from './credentials-machine.ts';
import { personalAccessTokenMethods } from './personal-access-tokens.ts';
import { passwordMethods } from './credentials-password.ts';
import { totpMethods } from './credentials-totp.ts';

export function credentialMethods(gh: Gatehouse): Partial<ServiceImpl<typeof UserService>> {
  return { ...passwordMethods(gh), ...emailMethods(gh), ...totpMethods(gh), ...machineMethods(gh), ...personalAccessTokenMethods(gh) };
}

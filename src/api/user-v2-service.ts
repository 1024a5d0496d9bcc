/** UserService of the management API (SPEC §12): being written (issue 12); methods not listed here answer Unimplemented. */
import type { ServiceImpl } from '@connectrpc/connect';
import type { UserService as UserServiceV2 } from '../../gen/zitadel/user/v2/user_service_pb.js';
import type { Gatehouse } from '../context.ts';

export function createUserV2Service(_gh: Gatehouse): Partial<ServiceImpl<typeof UserServiceV2>> {
  return {};
}

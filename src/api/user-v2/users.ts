/** zitadel.user.v2.UserService: creating, reading, listing, updating and the lifecycle of users (SPEC §12). */
import type { ServiceImpl } from '@connectrpc/connect';
import type { UserService } from '../../../gen/zitadel/user/v2/user_service_pb.js';
import type { Gatehouse } from '../../context.ts';

export function userMethods(_gh: Gatehouse): Partial<ServiceImpl<typeof UserService>> {
  return {};
}

/**
 * The API services that need the whole running server (keys, caches, configuration), registered on
 * the one router beside the FeatureService. Each issue adds its service here.
 */
import type { ConnectRouter } from '@connectrpc/connect';
import { AuthService } from '../../gen/zitadel/auth_pb.js';
import { UserService } from '../../gen/zitadel/user/v3alpha/user_service_pb.js';
import type { Gatehouse } from '../context.ts';
import { createAuthService } from './auth-service.ts';
import { createUserService } from './user-service.ts';

export function registerServices(router: ConnectRouter, gh: Gatehouse): void {
  router.service(AuthService, createAuthService(gh));
  router.service(UserService, createUserService(gh));
}

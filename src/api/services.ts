/**
 * Every service the API serves, in one list: its descriptor, what its implementation is built from,
 * and whether it is public. The router (and through it the REST routes, transport/rest/routes.ts),
 * health, reflection and the auth interceptor's public services all derive from this list, so a new
 * service is one line here (and its scopes in auth-interceptor.ts).
 *
 * Services that need the whole running server (keys, caches, configuration) are built from its
 * context `gh`, the others from the API's own dependencies; each is served when what it is built
 * from is given, so that the API can be served without a running server (test/api).
 */
import type { DescService } from '@bufbuild/protobuf';
import type { ConnectRouter, ServiceImpl } from '@connectrpc/connect';
import { Health } from '../../gen/grpc/health/v1/health_pb.js';
import { ServerReflection as ReflectionV1 } from '../../gen/grpc/reflection/v1/reflection_pb.js';
import { ServerReflection as ReflectionV1Alpha } from '../../gen/grpc/reflection/v1alpha/reflection_pb.js';
import { AuthService } from '../../gen/zitadel/auth_pb.js';
import { FeatureService } from '../../gen/zitadel/feature/v2/feature_service_pb.js';
import { UserService } from '../../gen/zitadel/user/v3alpha/user_service_pb.js';
import { AppService } from '../../gen/zitadel/app/v2beta/app_service_pb.js';
import { AuthorizationService } from '../../gen/zitadel/authorization/v2beta/authorization_service_pb.js';
import { OrganizationService } from '../../gen/zitadel/org/v2/org_service_pb.js';
import { ProjectService } from '../../gen/zitadel/project/v2beta/project_service_pb.js';
import { UserService as UserServiceV2 } from '../../gen/zitadel/user/v2/user_service_pb.js';
import { ManagementService } from '../../gen/zitadel/management_pb.js';
import { AdminService } from '../../gen/zitadel/admin_pb.js';
import { SettingsService } from '../../gen/zitadel/settings/v2/settings_service_pb.js';
import { IdentityProviderService } from '../../gen/zitadel/idp/v2/idp_service_pb.js';
import type { Gatehouse } from '../context.ts';
import { createAuthService } from './auth-service.ts';
import { createFeatureService, type FeatureServiceDeps } from './feature-service.ts';
import { createHealthService } from './health-service.ts';
import { createReflectionIndex, type ReflectionIndex } from './reflection-index.ts';
import { createReflectionV1, createReflectionV1Alpha } from './reflection-service.ts';
import type { ServingProbe } from './serving-probe.ts';
import { createUserService } from './user-service.ts';
import { createAppService } from './app-service.ts';
import { createAuthorizationService } from './authorization-service.ts';
import { createOrganizationService } from './org-service.ts';
import { createProjectService } from './project-service.ts';
import { createUserV2Service } from './user-v2-service.ts';
import { createManagementService } from './management-service.ts';
import { createAdminService } from './admin-service.ts';
import { createSettingsService } from './settings-service.ts';
import { createIdentityProviderService } from './idp-service.ts';

/** What the services that do not need the running server are built from. */
export interface ApiServiceDeps extends FeatureServiceDeps {
  /** Whether the server can serve (the database answers): what grpc.health.v1.Health reports. */
  probe: ServingProbe;
  /** GATEHOUSE_GRPC_REFLECTION: serve gRPC server reflection. */
  reflection: boolean;
  /** A health Watch ends with OK once it is this old; default stream-limits.ts `STREAM_LIMITS`. */
  watchMaxAgeMs?: number;
}

/** What services are built from; a service whose source is absent is not served. */
export interface ServiceSources {
  /** The running server's context. */
  gh: Gatehouse | undefined;
  /** The API's own dependencies. */
  api: ApiServiceDeps | undefined;
}

export interface ApiService {
  readonly service: DescService;
  /** Served without a token: the auth interceptor lets every call through. */
  readonly public: boolean;
  servedWith(sources: ServiceSources): boolean;
  /** Builds and registers the implementation; `served`: every service served, this one included. */
  register(router: ConnectRouter, sources: ServiceSources, served: readonly DescService[]): void;
}

/** A service built from the running server's context; methods left out answer Unimplemented. */
function fromServer<S extends DescService>(service: S, create: (gh: Gatehouse) => Partial<ServiceImpl<S>>): ApiService {
  return {
    service,
    public: false,
    servedWith: (sources) => sources.gh !== undefined,
    register(router, { gh }) {
      if (gh !== undefined) router.service(service, create(gh));
    },
  };
}

interface ApiDepsOptions {
  public?: boolean;
  /** Whether the configuration serves it; always when absent. */
  when?: (api: ApiServiceDeps) => boolean;
}

/** A service built from the API's own dependencies. */
function fromApiDeps<S extends DescService>(
  service: S,
  create: (api: ApiServiceDeps, served: readonly DescService[]) => ServiceImpl<S>,
  options: ApiDepsOptions = {},
): ApiService {
  return {
    service,
    public: options.public ?? false,
    servedWith: ({ api }) => api !== undefined && (options.when?.(api) ?? true),
    register(router, { api }, served) {
      if (api !== undefined) router.service(service, create(api, served));
    },
  };
}

// One index for both reflection versions, computed once per set of served services.
const reflectionIndexes = new WeakMap<readonly DescService[], ReflectionIndex>();
function reflectionIndex(served: readonly DescService[]): ReflectionIndex {
  let index = reflectionIndexes.get(served);
  if (index === undefined) reflectionIndexes.set(served, (index = createReflectionIndex(served)));
  return index;
}

const servesReflection = (api: ApiServiceDeps): boolean => api.reflection;

/** In registration order. */
export const API_SERVICES: readonly ApiService[] = [
  fromApiDeps(FeatureService, (api) => createFeatureService(api)),
  fromServer(AuthService, createAuthService),
  fromServer(UserService, createUserService),
  // The management API (docs/management-api.md).
  fromServer(OrganizationService, createOrganizationService),
  fromServer(UserServiceV2, createUserV2Service),
  fromServer(ProjectService, createProjectService),
  fromServer(AppService, createAppService),
  fromServer(AuthorizationService, createAuthorizationService),
  // Branding and the login policy (docs/branding-and-login-policy.md).
  fromServer(ManagementService, createManagementService),
  fromServer(AdminService, createAdminService),
  fromServer(SettingsService, createSettingsService),
  // External identity providers (docs/federation.md); their configuration is in the two above.
  fromServer(IdentityProviderService, createIdentityProviderService),
  // The gRPC ecosystem's own services, public because load balancers, Kubernetes probes and grpcurl
  // carry no token. They cover every service served, themselves included.
  fromApiDeps(Health, (api, served) => createHealthService(served.map((s) => s.typeName), api.probe, { watchMaxAgeMs: api.watchMaxAgeMs }), {
    public: true,
  }),
  fromApiDeps(ReflectionV1, (_api, served) => createReflectionV1(reflectionIndex(served)), { public: true, when: servesReflection }),
  fromApiDeps(ReflectionV1Alpha, (_api, served) => createReflectionV1Alpha(reflectionIndex(served)), { public: true, when: servesReflection }),
];

/** Full names of the services the auth interceptor lets through without a token. */
export const PUBLIC_SERVICES: ReadonlySet<string> = new Set(API_SERVICES.filter((s) => s.public).map((s) => s.service.typeName));

/**
 * Registers on the router, in the list's order, every service that can be built from what is
 * given: `gh`, the running server's context, and `api`, the API's own dependencies.
 */
export function registerServices(router: ConnectRouter, gh: Gatehouse | undefined, api?: ApiServiceDeps): void {
  const sources: ServiceSources = { gh, api };
  const serving = API_SERVICES.filter((s) => s.servedWith(sources));
  const served = serving.map((s) => s.service);
  for (const entry of serving) entry.register(router, sources, served);
}

import { routeLabel } from './routes.ts';

describe('route labels for metrics', () => {
  it('names known paths, with or without a query', () => {
    expect(routeLabel('/oauth/v2/token')).toBe('/oauth/v2/token');
    expect(routeLabel('/.well-known/openid-configuration?x=1')).toBe('/.well-known/openid-configuration');
    expect(routeLabel('/ui/login/password')).toBe('/ui');
    expect(routeLabel('/v2/users/123')).toBe('rest:v2');
    expect(routeLabel('/idps/callback?state=x&code=y')).toBe('/idps/callback');
    expect(routeLabel('/management/v1/policies/login')).toBe('rest:management');
    expect(routeLabel('/admin/v1/idps/templates/_search')).toBe('rest:admin');
    expect(routeLabel('/assets/v1/123/policy/label/logo-1')).toBe('/assets');
  });

  it("names the API's procedures by service and method", () => {
    expect(routeLabel('/zitadel.user.v2.UserService/AddHumanUser')).toBe('/zitadel.user.v2.UserService/AddHumanUser');
    expect(routeLabel('/zitadel.auth.v1.AuthService/AddMyAuthFactorOTP')).toBe('/zitadel.auth.v1.AuthService/AddMyAuthFactorOTP');
  });

  it('gives every other path one label, so a client cannot add series', () => {
    for (const path of ['/zitadel.user.v2.UserService/NoSuchMethod', '/zitadel.user.v2.UserService/AddHumanUser/more', '/zitadel.nope.Service/Call', '/zitadel.x/y/z', '/zitadel.', `/zitadel.${'a'.repeat(5000)}/b`, '/anything/else']) {
      expect(routeLabel(path)).toBe('other');
    }
  });
});

/**
 * Paths other modules need without importing the endpoint: client authentication names the token
 * endpoint as an accepted audience of client assertions at every endpoint (docs/security.md 10.9),
 * and the token endpoint itself imports client authentication.
 */
export const TOKEN_PATH = '/oauth/v2/token';

/** The identifiers of RFC 8693 the token-exchange suites send, written out (not taken from src/). */
export const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';

export const TOKEN_TYPE = {
  access: 'urn:ietf:params:oauth:token-type:access_token',
  refresh: 'urn:ietf:params:oauth:token-type:refresh_token',
  id: 'urn:ietf:params:oauth:token-type:id_token',
  jwt: 'urn:ietf:params:oauth:token-type:jwt',
  /** GATEHOUSE_SERVICE_NAME is `gatehouse` in the tests. */
  userId: 'urn:gatehouse:params:oauth:token-type:user_id',
} as const;

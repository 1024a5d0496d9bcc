/**
 * @node-rs/argon2 for the modules the jest workers share (environment.ts routes the project's import
 * here): `hash` gives a secret it has hashed before, with the same options, the hash it made then.
 * The suites' bootstrap documents hash the same fixture secrets for every test server, 874 argon2id
 * runs in a PostgreSQL run (about 14 ms of CPU each) for fewer than a hundred different secrets. A
 * hash is still a real argon2id hash of its secret; only its salt, which is randomness (which tests
 * may fix), is reused. `verify` is the real one: every check a test makes still runs argon2id.
 */
import * as argon2 from '@node-rs/argon2';

export * from '@node-rs/argon2';

const made = new Map<string, Promise<string>>();

export function hash(...args: Parameters<typeof argon2.hash>): Promise<string> {
  const [password, options] = args;
  const key = JSON.stringify([typeof password === 'string' ? password : Buffer.from(password).toString('base64'), options ?? null]);
  let result = made.get(key);
  if (result === undefined) {
    result = argon2.hash(...args);
    made.set(key, result);
    result.catch(() => made.delete(key));
  }
  return result;
}

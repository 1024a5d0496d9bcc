/**
 * Keeps the password-hashing queue full while `during` runs. Test servers run in the test's own
 * process, so topping the queue up on every turn of the event loop makes "the queue is full" a state
 * the test controls, instead of a race between a burst of requests and how fast the machine hashes.
 * The hogs verify, which is always a real argon2id run: the shared modules answer a repeated hash
 * from memory (test/support/argon2-memo.ts), so hashing hogs drained the queue within one turn and
 * the test's request could find room in it (seen once in a full run).
 */
import { hashingLoad, hashSecret, MAX_WAITING_ARGON2, verifySecret } from '../../src/domain/kernel/crypto.ts';

export async function whileHashingQueueFull<T>(during: () => Promise<T>): Promise<T> {
  const hogHash = await hashSecret('hog');
  let filling = true;
  const hogs: Array<Promise<unknown>> = [];
  const fill = (): void => {
    if (!filling) return;
    while (hashingLoad().waiting < MAX_WAITING_ARGON2) hogs.push(verifySecret(hogHash, 'not the hog'));
    setImmediate(fill);
  };
  fill();
  try {
    return await during();
  } finally {
    filling = false;
    await Promise.all(hogs);
  }
}

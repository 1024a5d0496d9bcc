/**
 * `npm run bench` helper: how long one argon2id verification of a password takes on the core this
 * process runs on (the server's core), with Gatehouse's own parameters. Prints milliseconds.
 */
import { hashSecret, verifySecret } from '../src/domain/kernel/crypto.ts';

const hash = await hashSecret('Correct-Horse-9');
const started = process.hrtime.bigint();
let runs = 0;
while (Number(process.hrtime.bigint() - started) < 2e9) {
  await verifySecret(hash, 'Correct-Horse-9');
  runs += 1;
}
process.stdout.write(`${(Number(process.hrtime.bigint() - started) / 1e6 / runs).toFixed(2)}\n`);

/**
 * The password policy (docs/decisions.md#registration), of registration and of the management API:
 * stated on the page rule by rule, and enforced with the same rules. Lengths count Unicode code
 * points.
 */
export type PolicyRule = 'length' | 'upper' | 'lower' | 'digit' | 'symbol';

/** Shortest accepted password. */
export const PASSWORD_MIN_LENGTH = 8;
/** Longest accepted password: long enough for any passphrase, short enough to bound hashing work. */
export const PASSWORD_MAX_LENGTH = 256;

const RULES: readonly [PolicyRule, (password: string) => boolean][] = [
  ['length', (p) => [...p].length >= PASSWORD_MIN_LENGTH],
  ['upper', (p) => /\p{Lu}/u.test(p)],
  ['lower', (p) => /\p{Ll}/u.test(p)],
  ['digit', (p) => /\p{Nd}/u.test(p)],
  ['symbol', (p) => /[^\p{L}\p{N}\s]/u.test(p)],
];

export const POLICY_RULES: readonly PolicyRule[] = RULES.map(([rule]) => rule);

/** The rules a password does not meet, in the order the page lists them. */
export function unmetRules(password: string): PolicyRule[] {
  return RULES.filter(([, met]) => !met(password)).map(([rule]) => rule);
}

const RULE_TEXT: Record<PolicyRule, string> = {
  length: `at least ${PASSWORD_MIN_LENGTH} characters`,
  upper: 'an uppercase letter',
  lower: 'a lowercase letter',
  digit: 'a digit',
  symbol: 'a symbol',
};

/** Why a password is refused, in the API's words, or undefined when the policy accepts it. */
export function passwordPolicyProblem(password: string): string | undefined {
  if ([...password].length > PASSWORD_MAX_LENGTH) return `must be at most ${PASSWORD_MAX_LENGTH} characters`;
  const unmet = unmetRules(password);
  return unmet.length === 0 ? undefined : `does not meet the password policy: it needs ${unmet.map((rule) => RULE_TEXT[rule]).join(', ')}`;
}

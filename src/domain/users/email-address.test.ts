import { isValidEmail, MAX_EMAIL_LENGTH } from './email-address.ts';

describe('isValidEmail', () => {
  it.each([
    ['alice@acme.test'],
    ['frank.new@acme.test'],
    ['admin@gatehouse.localhost'],
    ["o'brien+tag@mail.example.org"],
    [`${'a'.repeat(64)}@acme.test`],
    [`a@${'b'.repeat(63)}.test`],
  ])('accepts %s', (address) => {
    expect(isValidEmail(address)).toBe(true);
  });

  it.each([
    ['', 'empty'],
    ['not-an-email', 'no @'],
    ['@acme.test', 'no local part'],
    ['alice@localhost', 'a single label'],
    ['alice@acme', 'a single label'],
    ['alice@10.0.0.1', 'a numeric last label'],
    ['alice@acme..test', 'an empty label'],
    ['alice@-acme.test', 'a label starting with a hyphen'],
    ['alice@acme.test.', 'a trailing dot'],
    ['.alice@acme.test', 'a leading dot in the local part'],
    ['al..ice@acme.test', 'two dots in the local part'],
    ['al ice@acme.test', 'a space'],
    ['"alice"@acme.test', 'a quoted local part'],
    [`${'a'.repeat(65)}@acme.test`, 'a local part over 64'],
    [`a@${'b'.repeat(64)}.test`, 'a label over 63'],
    [`${'a'.repeat(60)}@${`${'b'.repeat(60)}.`.repeat(4)}test`, `over ${MAX_EMAIL_LENGTH} characters`],
  ])('refuses %j (%s)', (address) => {
    expect(isValidEmail(address)).toBe(false);
  });
});

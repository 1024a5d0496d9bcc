/**
 * Validation of `branding` and `loginPolicy` (docs/bootstrap.md#branding-and-login-policy), at the
 * top of the document (the instance) and per organization. Field names are those of the v1
 * requests (UpdateCustomLabelPolicyRequest, UpdateCustomLoginPolicyRequest) in camelCase, enums by
 * their names; images are files relative to the bootstrap file, read and checked here so that a
 * missing or wrong file is reported before anything is applied.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { colourProblem } from '../domain/instance/colours.ts';
import { MAX_IMAGE_BYTES, sniffImage } from '../domain/instance/images.ts';
import {
  COLOUR_FIELDS, DURATION_FIELDS, IMAGE_KINDS, lifetimeProblem, MULTI_FACTORS, redirectUriProblem, SECOND_FACTORS, type ImageFile, type ImageKind, type LoginPolicy,
} from '../domain/instance/policies.ts';
import type { ThemeModeName } from '../store/schema.ts';
import type { BrandingSpec, LoginPolicySpec } from './document.ts';
import { Fields, type Issues } from './validator.ts';

const THEME_MODES: Record<string, ThemeModeName> = {
  THEME_MODE_UNSPECIFIED: 'unspecified', THEME_MODE_AUTO: 'auto', THEME_MODE_DARK: 'dark', THEME_MODE_LIGHT: 'light',
};
const PASSWORDLESS_TYPES = ['PASSWORDLESS_TYPE_NOT_ALLOWED', 'PASSWORDLESS_TYPE_ALLOWED'] as const;
const upper = (prefix: string, names: readonly string[]) => names.map((name) => `${prefix}${name.toUpperCase()}`);

const BRANDING_KEYS = [...COLOUR_FIELDS, 'hideLoginNameSuffix', 'disableWatermark', 'themeMode', ...IMAGE_KINDS];
const LOGIN_BOOLEANS = [
  'allowUsernamePassword', 'allowRegister', 'allowExternalIdp', 'forceMfa', 'hidePasswordReset', 'ignoreUnknownUsernames', 'allowDomainDiscovery',
  'disableLoginWithEmail', 'disableLoginWithPhone', 'forceMfaLocalOnly',
] as const;
const LOGIN_KEYS = [...LOGIN_BOOLEANS, 'passwordlessType', 'defaultRedirectUri', ...DURATION_FIELDS, 'secondFactors', 'multiFactors', 'idps'];

/** The image a path names, relative to the bootstrap file; undefined (reported) when it is not one. */
function readImage(issues: Issues, at: string, file: string): ImageFile | undefined {
  const full = path.resolve(path.dirname(path.resolve(issues.file)), file);
  try {
    if (statSync(full).size > MAX_IMAGE_BYTES) {
      issues.add(at, `${file} is larger than 512 KiB`);
      return undefined;
    }
    const data = new Uint8Array(readFileSync(full));
    const contentType = sniffImage(data);
    if (contentType === undefined) {
      issues.add(at, `${file} is not an image: PNG, JPEG, GIF, WebP or SVG`);
      return undefined;
    }
    return { contentType, data };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    issues.add(at, code === 'ENOENT' ? `${file}: no such file (paths are relative to the bootstrap file)` : `${file} cannot be read (${code ?? 'error'})`);
    return undefined;
  }
}

export function readBranding(issues: Issues, at: string, value: unknown): BrandingSpec | undefined {
  const fields = Fields.of(issues, at, value, BRANDING_KEYS);
  if (!fields) return undefined;
  const colours: BrandingSpec['colours'] = {};
  for (const field of COLOUR_FIELDS) {
    const colour = fields.string(field, { check: colourProblem });
    if (colour !== undefined) colours[field] = colour;
  }
  const mode = fields.enumValue('themeMode', Object.keys(THEME_MODES));
  const images: Partial<Record<ImageKind, ImageFile>> = {};
  for (const kind of IMAGE_KINDS) {
    const file = fields.string(kind);
    const image = file === undefined ? undefined : readImage(issues, fields.at(kind), file);
    if (image !== undefined) images[kind] = image;
  }
  return {
    path: at,
    colours,
    hideLoginNameSuffix: fields.boolean('hideLoginNameSuffix'),
    disableWatermark: fields.boolean('disableWatermark'),
    themeMode: mode === undefined ? undefined : THEME_MODES[mode],
    images,
  };
}

// Durations as protobuf's JSON writes them ("864000s") or in hours and minutes ("240h", "1h30m").
const DURATION = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

function readDuration(fields: Fields, key: string): number | undefined {
  const text = fields.string(key, {
    check: (value) => (DURATION.test(value) ? undefined : 'must be a duration like "240h", "30m", "1h30m" or "864000s"'),
  });
  if (text === undefined) return undefined;
  const [, h, m, s] = DURATION.exec(text)!;
  const seconds = Number(h ?? 0) * 3600 + Number(m ?? 0) * 60 + Number(s ?? 0);
  const problem = lifetimeProblem(seconds);
  if (problem !== undefined) {
    fields.issues.add(fields.at(key), problem);
    return undefined;
  }
  return seconds;
}

export function readLoginPolicy(issues: Issues, at: string, value: unknown): LoginPolicySpec | undefined {
  const fields = Fields.of(issues, at, value, LOGIN_KEYS);
  if (!fields) return undefined;
  const values: Partial<LoginPolicy> = {};
  for (const key of LOGIN_BOOLEANS) {
    const flag = fields.boolean(key);
    if (flag !== undefined) values[key] = flag;
  }
  const passwordless = fields.enumValue('passwordlessType', PASSWORDLESS_TYPES);
  if (passwordless !== undefined) values.passwordlessAllowed = passwordless === 'PASSWORDLESS_TYPE_ALLOWED';
  const uri = fields.string('defaultRedirectUri', { check: redirectUriProblem });
  if (uri !== undefined) values.defaultRedirectUri = uri;
  for (const key of DURATION_FIELDS) {
    const seconds = readDuration(fields, key);
    if (seconds !== undefined) values[key] = seconds;
  }
  const second = upper('SECOND_FACTOR_TYPE_', SECOND_FACTORS);
  const secondFactors = fields.stringList('secondFactors', (item, where) => (typeof item === 'string' && second.includes(item) ? item : bad(issues, where, item, second)));
  if (secondFactors !== undefined) values.secondFactors = secondFactors.map((name) => SECOND_FACTORS[second.indexOf(name)]!);
  const multi = upper('MULTI_FACTOR_TYPE_', MULTI_FACTORS);
  const multiFactors = fields.stringList('multiFactors', (item, where) => (typeof item === 'string' && multi.includes(item) ? item : bad(issues, where, item, multi)));
  if (multiFactors !== undefined) values.multiFactors = multiFactors.map((name) => MULTI_FACTORS[multi.indexOf(name)]!);
  // The providers it offers (docs/federation.md), by name or id; resolved when the file is applied.
  const idps = fields.stringList('idps', (item, where) => {
    if (typeof item === 'string' && item.trim() !== '') return item.trim();
    issues.add(where, 'must be the name or id of an identity provider');
    return undefined;
  });
  return { path: at, values, idps };
}

function bad(issues: Issues, where: string, item: unknown, allowed: readonly string[]): undefined {
  issues.add(where, `must be one of ${allowed.map((name) => JSON.stringify(name)).join(', ')}, got ${typeof item === 'string' ? JSON.stringify(item) : String(item)}`);
  return undefined;
}

/**
 * The organization's registration switch: `loginPolicy.allowRegister`, or the older `allowRegister`
 * beside it (docs/bootstrap.md#organizations); both given and different is a problem at the policy's.
 */
export function registrationSwitch(issues: Issues, orgPath: string, allowRegister: boolean | undefined, loginPolicy: LoginPolicySpec | undefined): boolean | undefined {
  const inPolicy = loginPolicy?.values.allowRegister;
  if (inPolicy !== undefined && allowRegister !== undefined && inPolicy !== allowRegister) {
    issues.add(`${loginPolicy!.path}.allowRegister`, `is ${String(inPolicy)} but ${orgPath}.allowRegister is ${String(allowRegister)}: give it once, in loginPolicy`);
  }
  return inPolicy ?? allowRegister;
}

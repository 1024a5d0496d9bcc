/**
 * Branding colours (docs/branding-and-login-policy.md#colours): which strings count as colours, and
 * which text colour stays readable on a given background.
 *
 * The login pages put these strings into CSS, so only a closed set of forms is accepted: `#rgb`,
 * `#rgba`, `#rrggbb`, `#rrggbbaa`, `rgb()`/`rgba()` with comma-separated numbers, and
 * `hsl()`/`hsla()` with a hue and two percentages; at most 50 characters (ZITADEL's limit). Named
 * colours and other CSS functions are refused: nothing else can reach a style sheet.
 */

/** ZITADEL's length limit of a colour (zitadel/management.proto AddCustomLabelPolicyRequest). */
export const COLOUR_MAX_LENGTH = 50;

type Rgb = readonly [number, number, number];

const HEX = /^#([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/i;
const ALPHA = String.raw`(?:\s*,\s*(?:0|1|0?\.\d+|1\.0+|\d{1,3}%))?`;
const RGB = new RegExp(String.raw`^rgba?\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})${ALPHA}\s*\)$`, 'i');
const NUMBER = String.raw`(\d{1,3}(?:\.\d+)?)`;
const HSL = new RegExp(String.raw`^hsla?\(\s*${NUMBER}(?:deg)?\s*,\s*${NUMBER}%\s*,\s*${NUMBER}%${ALPHA}\s*\)$`, 'i');

/** The colour's red, green and blue (0–255), alpha ignored; undefined when it is not an accepted colour. */
export function parseColour(value: string): Rgb | undefined {
  if (value.length > COLOUR_MAX_LENGTH) return undefined;
  const hex = HEX.exec(value)?.[1];
  if (hex !== undefined) {
    const digits = hex.length <= 4 ? [...hex.slice(0, 3)].map((d) => d + d) : [hex.slice(0, 2), hex.slice(2, 4), hex.slice(4, 6)];
    return digits.map((d) => Number.parseInt(d, 16)) as unknown as Rgb;
  }
  const rgb = RGB.exec(value);
  if (rgb !== null) {
    const channels = [rgb[1], rgb[2], rgb[3]].map(Number);
    return channels.every((c) => c <= 255) ? (channels as unknown as Rgb) : undefined;
  }
  const hsl = HSL.exec(value);
  if (hsl !== null) {
    const [h, s, l] = [Number(hsl[1]), Number(hsl[2]), Number(hsl[3])];
    return h <= 360 && s <= 100 && l <= 100 ? hslToRgb(h, s / 100, l / 100) : undefined;
  }
  return undefined;
}

// CSS Color Module Level 4 §7.1 (hsl to sRGB).
function hslToRgb(h: number, s: number, l: number): Rgb {
  const f = (n: number) => {
    const k = (n + h / 30) % 12;
    const a = s * Math.min(l, 1 - l);
    return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return [f(0), f(8), f(4)];
}

/** Why `value` is not an accepted colour, or undefined when it is. */
export function colourProblem(value: string): string | undefined {
  if (value.length > COLOUR_MAX_LENGTH) return `must be at most ${COLOUR_MAX_LENGTH} characters`;
  if (parseColour(value) === undefined) return 'must be a colour: #rgb, #rrggbb (with optional alpha), rgb(), rgba(), hsl() or hsla()';
  return undefined;
}

// WCAG 2.2 "relative luminance": sRGB channels linearised, weighted 0.2126, 0.7152, 0.0722.
function relativeLuminance([r, g, b]: Rgb): number {
  const linear = (channel: number) => {
    const c = channel / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
}

/** WCAG 2.2 "contrast ratio" of two relative luminances: (L1 + 0.05) / (L2 + 0.05), lighter over darker. */
export function contrastRatio(a: number, b: number): number {
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}

/**
 * The text colour to put on `background` (the primary colour of a button): black or white,
 * whichever has the higher WCAG contrast ratio with it (black on a tie). A string that is not a
 * colour gets white text, as on ZITADEL's default primary colour.
 */
export function textColourOn(background: string): '#000000' | '#ffffff' {
  const rgb = parseColour(background);
  if (rgb === undefined) return '#ffffff';
  const luminance = relativeLuminance(rgb);
  return contrastRatio(luminance, 0) >= contrastRatio(luminance, 1) ? '#000000' : '#ffffff';
}

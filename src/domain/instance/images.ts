/**
 * Which uploaded files are images (docs/branding-and-login-policy.md#uploading-a-logo-or-an-icon):
 * told by their bytes, never by a declared type, for the asset uploads and the bootstrap file alike.
 */

/** The largest image: 512 KiB, ZITADEL's limit (internal/api/assets/asset.go maxMemory 1 << 19). */
export const MAX_IMAGE_BYTES = 512 * 1024;

/** The images a browser may show, recognised by their first bytes (WHATWG MIME Sniffing §6.1). */
export function sniffImage(data: Uint8Array): string | undefined {
  const starts = (...bytes: number[]) => bytes.every((byte, index) => data[index] === byte);
  const ascii = (from: number, text: string) => [...text].every((char, index) => data[from + index] === char.charCodeAt(0));
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (ascii(0, 'GIF87a') || ascii(0, 'GIF89a')) return 'image/gif';
  if (ascii(0, 'RIFF') && ascii(8, 'WEBP')) return 'image/webp';
  if (isSvg(data)) return 'image/svg+xml';
  return undefined;
}

// An SVG document: UTF-8 text whose root element is <svg>, after an optional XML declaration,
// comments and a doctype.
const SVG_ROOT = /^\uFEFF?\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--[\s\S]*?-->\s*)*(?:<!DOCTYPE[^>[]*(?:\[[\s\S]*?\])?\s*>\s*)?(?:<!--[\s\S]*?-->\s*)*<svg[\s>/]/i;
function isSvg(data: Uint8Array): boolean {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(data.subarray(0, 4096));
  } catch {
    return false;
  }
  return SVG_ROOT.test(text);
}

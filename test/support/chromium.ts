/**
 * Debian's Chromium for the browser suites, driven by playwright-core: its path, a `describe` that
 * skips (and says why) when it is missing, and the launch every suite uses (headless, no sandbox as
 * root, and none of the background connections this machine's closed network would refuse).
 */
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

const present = fs.existsSync(CHROMIUM);
if (!present) process.stderr.write(`browser tests skipped: ${CHROMIUM} is missing (apt-get install chromium)\n`);

/** `describe` when Chromium is installed, else `describe.skip`. */
export const describeWithChromium = present ? describe : describe.skip;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

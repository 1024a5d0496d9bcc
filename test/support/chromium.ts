/**
 * Debian's Chromium for the browser suites, driven by playwright-core: its path, a `describe` that
 * skips (and says why) when it is missing, and the launch every suite uses (headless, no sandbox as
 * root, and none of the background connections this machine's closed network would refuse), and
 * the README's screenshots.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

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

/** Where the README's screenshots live. */
const SCREENSHOTS = path.resolve('docs/screenshots');

/**
 * Writes a full-page screenshot to docs/screenshots/NAME when the run is asked for them
 * (`GATEHOUSE_SCREENSHOTS=1 npm test -- test/browser`); an ordinary test run leaves the committed
 * pictures alone, so it never changes the working tree.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env['GATEHOUSE_SCREENSHOTS'] !== '1') return;
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, name), fullPage: true });
}

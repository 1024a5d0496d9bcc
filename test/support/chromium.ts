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

/**
 * Chromium's features off in the suites' browser. Chromium reads only the last `--disable-features`
 * switch, so this one repeats playwright-core's own list (1.65, `chromiumSwitches`) and adds the
 * omnibox popups: headless Chromium preloads them in a WebUI renderer of their own that kept 20–25% of
 * a core busy for as long as the browser ran, with no tab open (measured: 1.2 s of CPU in 5 s idle,
 * 0.09 s without them).
 */
const DISABLED_FEATURES = [
  // playwright-core's
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'TcpPortRandomizationWin',
  'OptimizationHints',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
  // ours
  'WebUIOmniboxPopup',
  'WebUIOmniboxAimPopup',
  'WebUIOmniboxFullPopup',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--disable-features=${DISABLED_FEATURES.join(',')}`,
    ],
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

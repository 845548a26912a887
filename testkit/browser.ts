import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

/**
 * Debian's Chromium, headless, for the suites that need a real browser (the browser phone, the
 * console). Each launch gets its own empty profile, no background networking (the machine's
 * network is closed and Chromium would otherwise retry Google's hosts), and optionally a fake
 * microphone fed from a WAV file.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface BrowserOptions {
  /** A WAV file the fake microphone plays in a loop (16-bit PCM; 8 or 48 kHz). */
  fakeAudioWav?: string;
  /** Accept self-signed certificates (WSS/HTTPS tests with a test CA or a self-signed cert). */
  ignoreCertificateErrors?: boolean;
  /** Extra command-line switches. */
  args?: string[];
}

export interface TestBrowser {
  browser: Browser;
  /** A new page whose console errors and page errors are collected in `errors`. */
  page(): Promise<Page>;
  errors: string[];
  close(): Promise<void>;
}

export function chromiumAvailable(): boolean {
  return fs.existsSync(CHROMIUM_PATH);
}

export async function launchBrowser(opts: BrowserOptions = {}): Promise<TestBrowser> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'ov-chromium-'));
  const args = [
    '--headless=new',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-default-apps',
    '--disable-extensions',
    '--metrics-recording-only',
    '--use-fake-ui-for-media-stream',
    '--use-fake-device-for-media-stream',
    '--autoplay-policy=no-user-gesture-required',
    // WebRTC host candidates on loopback only: no mDNS names and no other interfaces.
    '--disable-features=WebRtcHideLocalIpsWithMdns',
    '--force-webrtc-ip-handling-policy=default_public_and_private_interfaces',
    ...(opts.fakeAudioWav ? [`--use-file-for-fake-audio-capture=${opts.fakeAudioWav}`] : []),
    ...(opts.ignoreCertificateErrors ? ['--ignore-certificate-errors'] : []),
    ...(opts.args ?? []),
  ];
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM_PATH,
    userDataDir: profile,
    args,
    acceptInsecureCerts: opts.ignoreCertificateErrors ?? false,
    protocolTimeout: 60_000,
  });
  const errors: string[] = [];
  return {
    browser,
    errors,
    async page() {
      const page = await browser.newPage();
      page.on('pageerror', (err) => errors.push(`pageerror: ${err instanceof Error ? err.message : String(err)}`));
      page.on('console', (msg) => {
        if (msg.type() === 'error') errors.push(`console: ${msg.text()}`);
      });
      return page;
    },
    async close() {
      await browser.close().catch(() => undefined);
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Replaces an input's text as a user does (select it all, delete, type): the page hears an input event
 * for each change, so its state holds the new text and a redraw (a page's clock, a live event) cannot put
 * the old text back, as it can after setting `.value` behind the page's back.
 */
export async function fill(page: Page, selector: string, value: string): Promise<void> {
  await page.click(selector, { count: 3 });
  await page.keyboard.press('Backspace');
  await page.type(selector, value);
}

// Debian's Chromium as the browser tests launch it (/docs here, the console in apps/console):
// Playwright's own browser download cannot be reached on these machines.

/** Where `apt-get install -y chromium` puts it; .ci/run installs it when missing. */
export const CHROMIUM = '/usr/bin/chromium';

/** The flags known to work on these machines (no GPU, no sandbox for root, no network chatter). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

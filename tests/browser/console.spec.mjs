// The web console in a real headless Chromium (Debian's `chromium`), driven by playwright-core.
// Run by tests/console.rs, which starts gpubill's HTTP server in-process, seeds it through the
// API and passes what the API answers as the expected figures:
//
//   GPUBILL_CONSOLE_URL     the server, e.g. http://127.0.0.1:40123
//   GPUBILL_CONSOLE_EXPECT  JSON: { admin, keys: { acme, beta }, open_period, usage: [...],
//                           cost_to_date, currency, spend_limit, prepaid_balance, wallet_balance,
//                           dead_letter_reason, november: { acme, beta }, accounts,
//                           decisions, prices (GET /v1/prices), regional: { account,
//                           region, currency, total } (an account whose November is in a
//                           region of its own currency), closed (invoices November's close
//                           issues), organization: { url, ... }, notifications: { url,
//                           key, admin, account, view (GET /v1/accounts/{id}/notify),
//                           notifications, endpoint, deliveries, new_budget } }; each usage entry has
//                           `families`: { gpu|storage|vgpu: { total, groups } }
//   GPUBILL_CHROMIUM        the browser (default /usr/bin/chromium)
//   GPUBILL_ARTIFACTS       where screenshots go (default ../../target/test-artifacts)
//   GPUBILL_DOCS_SCREENSHOT where the README's screenshot goes (unset: none)
//
// Prints one line per step and a closing "console: N passed, M failed"; exits 1 on the first
// failure (after a screenshot of the page as it was), 2 when it cannot start.

import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

function fail(message) {
  console.error(`console.spec: ${message}`);
  process.exit(2);
}

let chromium;
try {
  ({ chromium } = await import('playwright-core'));
} catch (e) {
  fail(`playwright-core is not installed in ${here} (${e.message}): run ./scripts/services.sh browser-deps (npm ci in tests/browser)`);
}

const base = process.env.GPUBILL_CONSOLE_URL || fail('GPUBILL_CONSOLE_URL is not set');
const expect = JSON.parse(process.env.GPUBILL_CONSOLE_EXPECT || fail('GPUBILL_CONSOLE_EXPECT is not set'));
const executablePath = process.env.GPUBILL_CHROMIUM || '/usr/bin/chromium';
if (!existsSync(executablePath)) {
  fail(`no Chromium at ${executablePath}: run ./scripts/services.sh chromium (Debian: apt-get install chromium fonts-noto-cjk)`);
}
const artifacts = resolve(process.env.GPUBILL_ARTIFACTS || join(here, '../../target/test-artifacts'));
mkdirSync(artifacts, { recursive: true });

/** Most time the whole run may take. */
const RUN_TIMEOUT_MS = 240_000;
setTimeout(() => {
  console.error(`console.spec: still running after ${RUN_TIMEOUT_MS / 1000} s`);
  process.exit(1);
}, RUN_TIMEOUT_MS).unref();

// ---- exact decimals (the page's figures are exact; so are these comparisons) ----------------

function dec(text) {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(String(text).trim());
  if (!m) {
    throw new Error(`not a decimal: ${JSON.stringify(text)}`);
  }
  const frac = (m[3] || '').replace(/0+$/, '');
  const digits = `${m[2]}${frac}`.replace(/^0+(?=\d)/, '');
  return `${m[1] === '-' && /[1-9]/.test(digits) ? '-' : ''}${digits}e-${frac.length}`;
}

function sameDecimal(a, b) {
  return dec(a) === dec(b);
}

// ---- steps -------------------------------------------------------------------------------

let passed = 0;
let page;

function check(condition, message) {
  if (!condition) {
    throw new Error(message);
  }
}

function equalDecimal(actual, expected, what) {
  check(sameDecimal(actual, expected), `${what}: the page shows ${JSON.stringify(actual)}, the API ${JSON.stringify(expected)}`);
}

async function step(name, fn) {
  try {
    await fn();
    passed += 1;
    console.log(`ok ${passed} - ${name}`);
  } catch (e) {
    console.log(`not ok ${passed + 1} - ${name}`);
    console.log(`  ${String(e && e.stack ? e.stack : e).split('\n').join('\n  ')}`);
    if (page) {
      try {
        await page.screenshot({ path: join(artifacts, 'console-failure.png'), fullPage: true });
        console.log(`  screenshot: ${join(artifacts, 'console-failure.png')}`);
        console.log(`  url: ${page.url()}`);
      } catch {
        // The browser is gone; the message above says why.
      }
    }
    console.log(`console: ${passed} passed, 1 failed`);
    process.exit(1);
  }
}

const byTestId = (id) => page.getByTestId(id);
const text = async (id) => (await byTestId(id).first().textContent()).trim();

/** Waits until <main> has drawn the route starting with `prefix` (`exact`: the route itself);
 * returns its state. */
async function drawn(prefix, { allowError = false, exact = false } = {}) {
  await page.waitForFunction(
    ([p, whole]) => {
      const m = document.getElementById('page');
      const r = (m && m.dataset.route) || '';
      return m && m.dataset.state !== 'loading' && (whole ? r === p : r.startsWith(p));
    },
    [prefix, exact],
  );
  const state = await page.locator('#page').getAttribute('data-state');
  if (state === 'error' && !allowError) {
    const message = await page.locator('[data-testid=page-error]').first().textContent().catch(() => '');
    throw new Error(`${prefix} failed to draw: ${message}`);
  }
  return state;
}

async function go(hash, opts) {
  await page.evaluate((h) => {
    location.hash = h;
  }, hash);
  return drawn(hash, { ...opts, exact: true });
}

async function shot(name) {
  const path = join(artifacts, `console-${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

async function signIn(token, landing) {
  await go('#/signin');
  await byTestId('signin-key').fill(token);
  await byTestId('signin-submit').click();
  await drawn(landing);
}

async function signOut() {
  await byTestId('signout').click();
  await drawn('#/signin');
}

/** The API from inside the page, with the key signed in with (as the console calls it). */
async function apiStatus(path) {
  return page.evaluate(async (p) => {
    const s = JSON.parse(sessionStorage.getItem('gpubill.session') || 'null');
    const r = await fetch(p, { headers: { Authorization: `Bearer ${s.token}` } });
    return { status: r.status, body: await r.text() };
  }, path);
}

/** Every usage chart: its unit, axis name, series names and the sum of what it draws. */
async function unitCharts() {
  return page.evaluate(() =>
    [...document.querySelectorAll('[data-testid="usage-chart"]')].map((el) => {
      const option = window.echarts.getInstanceByDom(el).getOption();
      return {
        family: el.dataset.family,
        unit: el.dataset.unit,
        axis: option.yAxis[0].name,
        series: option.series.map((s) => s.name),
        sum: option.series.reduce((acc, s) => acc + s.data.reduce((a, v) => a + (typeof v === 'number' ? v : v.value), 0), 0),
      };
    }),
  );
}

/** Units never share a chart (issue 24.12): one chart per family of skus, each with its own
 * axis, drawing exactly what GET /v1/usage?family= answers; grouped by sku, a chart stacks
 * only its own family's skus. */
async function checkUnitCharts(expected) {
  const drawnCharts = await unitCharts();
  const families = Object.keys(expected.families).sort();
  check(
    JSON.stringify(drawnCharts.map((c) => c.family)) === JSON.stringify(families),
    `one chart per unit: charts of ${drawnCharts.map((c) => c.family)}, families ${families}`,
  );
  check(new Set(drawnCharts.map((c) => c.axis)).size === drawnCharts.length, `every chart has its own unit on its axis: ${drawnCharts.map((c) => c.axis)}`);
  for (const c of drawnCharts) {
    const f = expected.families[c.family];
    const want = Number(f.total) / 3600;
    check(Math.abs(c.sum - want) < 1e-6 * Math.max(1, want), `the ${c.family} chart draws ${c.sum} ${c.unit}s, the API says ${want}`);
    if (expected.group_by === 'sku') {
      check(c.series.every((name) => name.split('.')[0] === c.family), `the ${c.family} chart stacks only its own skus: ${c.series}`);
    }
    const section = page.locator(`[data-testid=usage-unit][data-family="${c.family}"]`);
    equalDecimal(await section.locator('[data-testid=usage-unit-seconds]').textContent(), f.total, `${c.family} unit-seconds`);
    equalDecimal(await section.locator('[data-testid=usage-unit-groups]').textContent(), String(f.groups), `${c.family} groups`);
  }
}

async function download(testid) {
  const [file] = await Promise.all([page.waitForEvent('download'), byTestId(testid).first().click()]);
  const path = join(artifacts, `console-download-${file.suggestedFilename()}`);
  await file.saveAs(path);
  return { name: file.suggestedFilename(), body: readFileSync(path, 'utf8') };
}

// ---- the run -----------------------------------------------------------------------------

const browser = await chromium
  .launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
  })
  .catch((e) => fail(`cannot start ${executablePath}: ${e.message}`));
const context = await browser.newContext({
  viewport: { width: 1400, height: 900 },
  locale: 'en-US',
  timezoneId: 'UTC',
  acceptDownloads: true,
});
// Content-Security-Policy violations, counted in the page (this script is injected by the
// browser's debugging protocol, not by the page, so the policy does not stop it).
await context.addInitScript(() => {
  window.__cspViolations = [];
  document.addEventListener('securitypolicyviolation', (e) => {
    window.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`);
  });
});
page = await context.newPage();
page.setDefaultTimeout(20_000);
const pageErrors = [];
page.on('pageerror', (e) => pageErrors.push(String(e)));
page.on('console', (m) => {
  if (m.type() === 'error' && /Content Security Policy|Refused to/.test(m.text())) {
    pageErrors.push(`console: ${m.text()}`);
  }
});
// Answers of 400 and above and requests that never got an answer: a normal sign-in makes
// none (issue 24.11: the console asked an admin route who a key is and got a 403).
const failedRequests = [];
page.on('response', (r) => {
  if (r.status() >= 400) {
    failedRequests.push(`${r.status()} ${r.request().method()} ${r.url()}`);
  }
});
page.on('requestfailed', (r) => failedRequests.push(`${r.method()} ${r.url()}: ${r.failure()?.errorText}`));

async function signInCleanly(token, landing) {
  failedRequests.length = 0;
  await signIn(token, landing);
  check(failedRequests.length === 0, `the sign-in made failed requests: ${failedRequests.join('; ')}`);
}

const outside = [];
page.on('request', (r) => {
  const url = r.url();
  const ours = [base, expect.organization && expect.organization.url, expect.notifications && expect.notifications.url].filter(Boolean);
  if (!ours.some((o) => url.startsWith(o)) && !url.startsWith('blob:') && !url.startsWith('data:')) {
    outside.push(url);
  }
});

async function clean() {
  const violations = await page.evaluate(() => window.__cspViolations || []);
  check(violations.length === 0, `Content-Security-Policy violations: ${violations.join('; ')}`);
  check(pageErrors.length === 0, `errors in the page: ${pageErrors.join('; ')}`);
  check(outside.length === 0, `the console loaded from outside the server: ${outside.join(', ')}`);
}

const [novHour, novDay] = expect.usage;
let acmeInvoiceId;
let betaInvoiceId;

await step('the console is served at / with a strict Content-Security-Policy', async () => {
  const res = await page.goto(`${base}/`);
  check(res.status() === 200, `GET / answered ${res.status()}`);
  const headers = res.headers();
  check(headers['content-type'].startsWith('text/html'), `content type ${headers['content-type']}`);
  const csp = headers['content-security-policy'] || '';
  check(csp.includes("script-src 'self'") && !csp.includes('unsafe-inline') && !csp.includes('http'), `CSP ${csp}`);
  await drawn('#/signin');
  await clean();
});

await step('a wrong key is refused at sign-in', async () => {
  await byTestId('signin-key').fill('gbk_not-a-key');
  await byTestId('signin-submit').click();
  await byTestId('signin-error').waitFor({ state: 'visible' });
  check(await page.evaluate(() => sessionStorage.getItem('gpubill.session') === null), 'no session after a wrong key');
});

await step('the customer signs in with an API key and lands on usage and cost, with no failed request', async () => {
  await signInCleanly(expect.keys.acme, '#/overview');
  check((await text('signed-in-as')).includes('acme'), 'the top bar names acme');
  check(await page.evaluate(() => localStorage.getItem('gpubill.session') === null), 'the key is not in localStorage');
  check((await byTestId('usage-period').inputValue()) === expect.open_period, `the open period ${expect.open_period} is shown first`);
  await clean();
});

await step('cost to date equals GET /v1/cost/current, limits equal GET /v1/balance', async () => {
  equalDecimal(await text('cost-to-date'), expect.cost_to_date, 'cost to date');
  check((await text('cost-period')) === expect.open_period, 'the open period');
  equalDecimal(await text('spend-limit'), expect.spend_limit, 'spend limit');
  equalDecimal(await text('prepaid-balance'), expect.prepaid_balance, 'prepaid balance');
  equalDecimal(await text('wallet-balance'), expect.wallet_balance, 'wallet balance');
  const bars = await page.evaluate(() => window.echarts.getInstanceByDom(document.querySelector('[data-testid="cost-chart"]')).getOption().series[0].data.length);
  check(bars >= 3, `the cost chart draws cost, limit and prepaid balance (${bars} bars)`);
});

await step('the period picker goes to November; the usage total equals GET /v1/usage (hour, sku)', async () => {
  await byTestId('usage-prev').click();
  await drawn('#/overview?period=2026-11');
  check((await byTestId('usage-period').inputValue()) === novHour.period, 'the picker shows 2026-11');
  const range = byTestId('usage-range-raw');
  check((await range.getAttribute('data-from')) === novHour.from, `from ${await range.getAttribute('data-from')} != ${novHour.from}`);
  check((await range.getAttribute('data-to')) === novHour.to, `to ${await range.getAttribute('data-to')} != ${novHour.to}`);
  await checkUnitCharts(novHour);
  await shot('usage-hour');
});

await step('granularity day, stacked by resource: the total equals GET /v1/usage (day, resource)', async () => {
  await byTestId('usage-granularity').selectOption('day');
  await drawn('#/overview?period=2026-11&granularity=day');
  await byTestId('usage-group-by').selectOption('resource');
  await drawn('#/overview?period=2026-11&granularity=day&group_by=resource');
  const range = byTestId('usage-range-raw');
  check((await range.getAttribute('data-from')) === novDay.from, `from ${await range.getAttribute('data-from')} != ${novDay.from}`);
  await checkUnitCharts(novDay);
  const path = await shot('overview');
  if (process.env.GPUBILL_DOCS_SCREENSHOT) {
    copyFileSync(path, process.env.GPUBILL_DOCS_SCREENSHOT);
  }
  await clean();
});

await step('balance shows the wallet, the quotas and what the account holds', async () => {
  await go('#/balance');
  equalDecimal(await text('wallet-balance'), expect.wallet_balance, 'wallet balance');
  equalDecimal(await page.locator('[data-testid=quota-row][data-quota=spend_limit] [data-testid=quota-limit]').textContent(), expect.spend_limit, 'spend limit quota');
  // Section 17: each plan with its next cycle (a renewal) and what ending it now would refund.
  for (const sub of expect.subscriptions) {
    const r = page.locator(`[data-testid=subscription-row][data-subscription="${sub.id}"]`);
    check((await r.count()) === 1, `a row for plan ${sub.id}`);
    check((await r.getAttribute('data-next-cycle')) === (sub.next_cycle_start || ''), `plan ${sub.id} renews on ${sub.next_cycle_start}`);
    equalDecimal(await r.locator('[data-testid=subscription-refund]').textContent(), sub.refund_if_ended_now, `plan ${sub.id}: the refund ending it now gives`);
  }
  await shot('balance');
});

await step('the prices page shows what GET /v1/prices answers: every sku, off-peak and spot, egress', async () => {
  await byTestId('nav-prices').click();
  await drawn('#/prices');
  const p = expect.prices;
  // The home region's prices come first, each region's after in its own currency.
  const regions = await page.locator('[data-testid=prices-region]').evaluateAll((s) => s.map((r) => [r.dataset.region, r.dataset.currency]));
  const want = [['', p.currency], ...p.regions.map((r) => [r.region, r.currency])];
  check(JSON.stringify(regions) === JSON.stringify(want), `regions ${JSON.stringify(regions)} != ${JSON.stringify(want)}`);
  for (const r of p.regions) {
    const section = page.locator(`[data-testid=prices-region][data-region="${r.region}"]`);
    const currency = (await section.locator('[data-testid=prices-currency]').textContent()).trim();
    check(currency === r.currency, `${r.region}: currency ${currency}, the API ${r.currency}`);
    for (const sku of r.skus) {
      const onDemand = await section.locator(`[data-testid=price-row][data-sku="${sku.sku}"] [data-testid=price-on-demand]`).textContent();
      for (const tier of sku.on_demand) {
        check(onDemand.includes(tier.rate_per_hour), `${r.region} ${sku.sku}: on-demand ${onDemand} lacks ${tier.rate_per_hour}`);
      }
    }
  }
  check(p.regions.some((r) => r.region === expect.regional.region && r.currency === expect.regional.currency), `the API prices ${expect.regional.region}`);
  const home = page.locator('[data-testid=prices-region][data-region=""]');
  const skus = await home.locator('[data-testid=price-row]').evaluateAll((rows) => rows.map((r) => r.dataset.sku));
  check(JSON.stringify(skus) === JSON.stringify(p.skus.map((x) => x.sku)), `skus ${skus} != ${p.skus.map((x) => x.sku)}`);
  check(skus.includes('storage.ssd'), 'storage is priced');
  for (const sku of p.skus) {
    const r = home.locator(`[data-testid=price-row][data-sku="${sku.sku}"]`);
    check((await r.getAttribute('data-unit')) === sku.unit, `${sku.sku}: unit ${sku.unit}`);
    const onDemand = await r.locator('[data-testid=price-on-demand]').textContent();
    for (const tier of sku.on_demand) {
      check(onDemand.includes(tier.rate_per_hour), `${sku.sku}: on-demand ${onDemand} lacks ${tier.rate_per_hour}`);
    }
    const offpeak = await r.locator('[data-testid=price-offpeak]').textContent();
    for (const w of sku.offpeak) {
      for (const rate of w.rates_per_hour) {
        check(offpeak.includes(rate), `${sku.sku}: off-peak ${offpeak} lacks ${rate}`);
      }
    }
    const spot = (await r.locator('[data-testid=price-spot]').textContent()).trim();
    check(spot === (sku.spot_rate_per_hour ?? '—'), `${sku.sku}: spot ${spot}, the API ${sku.spot_rate_per_hour}`);
  }
  for (const e of p.egress) {
    const rates = await home.locator(`[data-testid=egress-row][data-dest="${e.dest}"] [data-testid=egress-rates]`).textContent();
    for (const tier of e.tiers) {
      check(rates.includes(tier.rate_per_gb), `egress ${e.dest}: ${rates} lacks ${tier.rate_per_gb}`);
    }
  }
  await shot('prices');
  await clean();
});

await step('quota decisions and invoices draw (no invoices before the close)', async () => {
  await go('#/quota');
  await byTestId('decisions-table').waitFor();
  const decisions = await page.locator('[data-testid=decision-row]').count();
  check(decisions === expect.decisions, `${decisions} quota decisions on the page, ${expect.decisions} from the API`);
  await shot('quota');
  await go('#/invoices');
  await byTestId('invoices-none').waitFor();
});

await step('a customer cannot reach admin pages or another account\'s data', async () => {
  for (const hash of ['#/admin/accounts', '#/admin/close', '#/admin/dead-letters']) {
    await go(hash);
    await byTestId('page-refused').waitFor();
    check((await byTestId('close-submit').count()) === 0, `${hash}: no close button for a customer`);
  }
  const accounts = await apiStatus('/v1/admin/accounts');
  check(accounts.status === 403, `GET /v1/admin/accounts with a customer key: ${accounts.status}`);
  const other = await apiStatus('/v1/balance?account=beta');
  // Issue 27: an account outside the key's scope is a 404, worded as an unknown account.
  check(other.status === 404 && JSON.parse(other.body).message === 'unknown account "beta"', `?account=beta with acme's key is a 404 as for an unknown account: ${other.body.slice(0, 120)}`);
  const close = await page.evaluate(async () => {
    const s = JSON.parse(sessionStorage.getItem('gpubill.session'));
    return (await fetch('/v1/admin/invoices/close?period=2026-11', { method: 'POST', headers: { Authorization: `Bearer ${s.token}` } })).status;
  });
  check(close === 403, `closing with a customer key: ${close}`);
  await shot('refused');
});

await step('the admin signs in with the admin token and sees the accounts with their quotas', async () => {
  await signOut();
  await signInCleanly(expect.admin, '#/admin/accounts');
  const ids = await page.locator('[data-testid=account-row]').evaluateAll((rows) => rows.map((r) => r.dataset.accountId));
  check(JSON.stringify(ids) === JSON.stringify(expect.accounts), `accounts ${ids} != ${expect.accounts}`);
  equalDecimal(await page.locator('[data-testid=account-row][data-account-id=acme] [data-testid=account-spend-limit]').textContent(), expect.spend_limit, "acme's spend limit");
  await go('#/overview');
  await byTestId('page-refused').waitFor();
  await go('#/admin/accounts/acme');
  equalDecimal(await text('wallet-balance'), expect.wallet_balance, "acme's wallet, as the admin sees it");
  await go('#/admin/accounts');
  await shot('admin-accounts');
  await clean();
});

await step('dead letters show their reasons', async () => {
  await go('#/admin/dead-letters');
  const reasons = await page.locator('[data-testid=dead-letter-reason]').allTextContents();
  check(reasons.includes(expect.dead_letter_reason), `reasons ${reasons} include ${expect.dead_letter_reason}`);
  await byTestId('dead-letters-chart').waitFor();
  await shot('admin-dead-letters');
  await go('#/admin/adjustments');
  await byTestId('adjustments-none').waitFor();
});

await step('the admin closes 2026-11 and sees the invoices', async () => {
  await go('#/admin/close');
  await byTestId('close-period').fill('2026-11');
  await byTestId('close-submit').click();
  await page.waitForSelector('[data-testid=close-result][data-state=done]');
  const rows = page.locator('[data-testid=closed-invoice-row]');
  const accounts = Object.keys(expect.november);
  check((await rows.count()) === expect.closed, `${await rows.count()} invoices, ${expect.closed} expected`);
  check((await page.locator('[data-testid=closed-total]').count()) === 2, 'one total per currency (CNY and USD are never added up)');
  for (const account of accounts) {
    const r = page.locator(`[data-testid=closed-invoice-row][data-account=${account}]`);
    equalDecimal(await r.locator('[data-testid=closed-invoice-total]').textContent(), expect.november[account], `${account}'s November total`);
  }
  acmeInvoiceId = await page.locator('[data-testid=closed-invoice-row][data-account=acme]').getAttribute('data-invoice-id');
  betaInvoiceId = await page.locator('[data-testid=closed-invoice-row][data-account=beta]').getAttribute('data-invoice-id');
  await shot('admin-close');
  await byTestId('close-see-invoices').click();
  await drawn('#/admin/invoices?period=2026-11');
  check((await page.locator('[data-testid=period-invoice-row]').count()) === expect.closed, 'the period lists every invoice');
  const regional = page.locator(`[data-testid=period-invoice-row][data-account=${expect.regional.account}][data-region="${expect.regional.region}"]`);
  check((await regional.getAttribute('data-region')) === expect.regional.region, 'the regional invoice says its region');
  check((await regional.locator('[data-testid=period-invoice-currency]').textContent()).trim() === expect.regional.currency, 'the regional invoice says its currency');
  // One total per currency, never CNY and USD added up.
  const totals = await page.locator('[data-testid=period-invoices-total]').count();
  check(totals === 2, `${totals} period totals (one per currency)`);
  const csv = await download('export-invoices-csv');
  check(csv.body.startsWith('invoice_id,') && csv.body.includes(acmeInvoiceId), `the invoices CSV (${csv.name})`);
  const journal = await download('export-journal-csv');
  check(journal.body.length > 0 && journal.name === 'journal-2026-11.csv', `the journal CSV (${journal.name})`);
  await clean();
});

await step('the language switch shows every label in Chinese', async () => {
  await byTestId('lang-switch').click();
  await drawn('#/admin/invoices');
  check((await page.locator('html').getAttribute('lang')) === 'zh-CN', 'html lang zh-CN');
  check((await text('nav-admin-accounts')) === '账户', `nav: ${await text('nav-admin-accounts')}`);
  check((await text('nav-admin-close')) === '关账', `nav: ${await text('nav-admin-close')}`);
  check((await page.locator('h1').first().textContent()) === '账单与导出', 'the title in Chinese');
  const missing = await page.evaluate(async () => (await import('/console/i18n.js')).missingKeys());
  check(missing.length === 0, `labels missing in a language: ${missing.join(', ')}`);
  await shot('zh-admin');
});

await step('the customer sees the November invoice with its lines and downloads it (in Chinese too)', async () => {
  await signOut();
  await signIn(expect.keys.acme, '#/overview');
  await shot('zh-overview');
  await byTestId('lang-switch').click();
  await drawn('#/overview');
  await go('#/invoices');
  const row = page.locator(`[data-testid=invoice-row][data-invoice-id="${acmeInvoiceId}"]`);
  equalDecimal(await row.locator('[data-testid=invoice-total]').textContent(), expect.november.acme, 'the invoice total');
  check((await page.locator('[data-testid=invoice-row]').count()) === 1, 'acme sees its own invoice only');
  await shot('invoices');
  await go(`#/invoices/${acmeInvoiceId}`);
  equalDecimal(await text('invoice-detail-total'), expect.november.acme, 'the invoice total');
  check((await page.locator('[data-testid=invoice-line]').count()) > 0, 'the invoice lines');
  const csv = await download('download-csv');
  check(csv.body.startsWith('invoice_id,') && csv.body.includes(acmeInvoiceId), `the invoice CSV (${csv.name})`);
  const html = await download('download-html');
  check(html.body.includes('<html') && html.name.endsWith('.html'), `the printable invoice (${html.name})`);
  await shot('invoice');
  await clean();
});

await step('an invoice of another region shows its region and its own currency', async () => {
  const r = expect.regional;
  await signOut();
  await signIn(expect.keys[r.account], '#/overview');
  await go('#/invoices');
  const rows = page.locator('[data-testid=invoice-row]');
  check((await rows.count()) === 2, `${await rows.count()} invoices of ${r.account} (home and ${r.region})`);
  const row = rows.filter({ has: page.locator(`[data-testid=invoice-region][data-region="${r.region}"]`) });
  check((await row.count()) === 1, `one invoice of ${r.region}`);
  const homeRow = rows.filter({ has: page.locator('[data-testid=invoice-region][data-region=""]') });
  check((await homeRow.locator('[data-testid=invoice-currency]').textContent()).trim() === expect.prices.currency, 'the home invoice is in the home currency');
  check((await row.locator('[data-testid=invoice-currency]').textContent()).trim() === r.currency, 'the row says its currency');
  equalDecimal(await row.locator('[data-testid=invoice-total]').textContent(), r.total, 'the regional invoice total');
  check((await row.locator('.money .currency').first().textContent()).trim() === r.currency, 'the total is shown in the invoice\'s currency');
  await shot('invoices-regional');
  await row.locator('[data-testid=invoice-number]').click();
  await drawn('#/invoices/');
  check((await text('invoice-detail-currency')).trim() === r.currency, `the invoice's currency: ${await text('invoice-detail-currency')}`);
  check((await text('invoice-detail-region')).trim() === r.region, `the invoice's region: ${await text('invoice-detail-region')}`);
  equalDecimal(await text('invoice-detail-total'), r.total, 'the regional invoice total');
  await shot('invoice-regional');
  await clean();
  await signOut();
  await signIn(expect.keys.acme, '#/overview');
});

await step('another account\'s invoice is not found, by the console and by the API', async () => {
  await go(`#/invoices/${betaInvoiceId}`, { allowError: true });
  check((await byTestId('page-error').getAttribute('data-status')) === '404', 'the page says 404');
  check((await byTestId('invoice-detail-total').count()) === 0, "no figure of beta's invoice");
  const csv = await apiStatus(`/v1/invoices/${betaInvoiceId}.csv`);
  check(csv.status === 404, `beta's invoice CSV with acme's key: ${csv.status}`);
  await shot('not-found');
  await clean();
});

await step('an owner key sees its organization: every node with the API\'s cost and budget, the chart by project, an account\'s allocation', async () => {
  const o = expect.organization;
  await page.goto(`${o.url}/`);
  await signIn(o.owner, '#/overview');
  check((await byTestId('nav-organization').count()) === 1, 'an owner key has the organization in its menu');
  await byTestId('nav-organization').click();
  await drawn('#/organization');
  await go(`#/organization?period=${o.period}`);
  equalDecimal(await text('org-total'), o.answer.total, 'the tree\'s cost to date');
  const rows = page.locator('[data-testid=org-node]');
  check((await rows.count()) === o.answer.nodes.length, `${await rows.count()} nodes drawn, the API answers ${o.answer.nodes.length}`);
  for (const n of o.answer.nodes) {
    const r = page.locator(`[data-testid=org-node][data-account="${n.id}"]`);
    check((await r.count()) === 1, `the node ${n.id}`);
    check((await r.getAttribute('data-depth')) === (n.parent ? '1' : '0'), `${n.id} is indented by its depth`);
    equalDecimal(await r.locator('[data-testid=org-cost]').textContent(), n.cost, `${n.id}'s cost`);
    equalDecimal(await r.locator('[data-testid=org-subtree-cost]').textContent(), n.subtree_cost, `${n.id}'s subtree cost`);
    const budget = (await r.locator('[data-testid=org-budget]').textContent()).trim();
    if (n.budget === null) {
      check(budget === '—', `${n.id} has no budget: ${budget}`);
    } else {
      equalDecimal(budget, n.budget, `${n.id}'s budget`);
      const pct = ((Number(n.subtree_cost) / Number(n.budget)) * 100).toFixed(1);
      check((await r.locator('[data-testid=org-used]').textContent()).trim() === `${pct} %`, `${n.id}'s budget used`);
    }
  }
  // The chart stacks one series per project and draws the cost of every cell.
  const chart = await page.evaluate(() => {
    const el = document.querySelector('[data-testid="org-chart"]');
    const option = window.echarts.getInstanceByDom(el).getOption();
    return {
      categories: option.xAxis[0].data,
      stacks: [...new Set(option.series.map((s) => s.stack))],
      series: option.series.length,
      sum: option.series.reduce((acc, s) => acc + s.data.reduce((a, v) => a + (typeof v === 'number' ? v : v.value), 0), 0),
    };
  });
  const projects = new Set(o.answer.by_project.map((r) => r.tag));
  check(chart.series === projects.size && chart.stacks.length === 1, `one stacked series per project: ${JSON.stringify(chart)}`);
  check(JSON.stringify(chart.categories) === JSON.stringify(o.answer.nodes.map((n) => n.id)), `a bar per account: ${chart.categories}`);
  check(Math.abs(chart.sum - Number(o.answer.total)) < 1e-6, `the chart draws ${chart.sum}, the API ${o.answer.total}`);
  // Drill-down: web's allocation rows.
  await page.locator('[data-testid=org-node][data-account="web"] [data-testid=org-node-link]').click();
  await drawn(`#/organization?period=${o.period}&account=web`, { exact: true });
  const alloc = page.locator('[data-testid=org-alloc-row]');
  check((await alloc.count()) === o.web_rows.length, `${await alloc.count()} allocation rows of web, the API ${o.web_rows.length}`);
  for (const w of o.web_rows) {
    const r = page.locator(`[data-testid=org-alloc-row][data-tag="${w.tag}"]`);
    equalDecimal(await r.locator('[data-testid=org-alloc-total]').textContent(), w.total, `web's ${w.tag}`);
  }
  await shot('organization');
  await clean();
});

await step('a member key has no organization page: not in its menu, refused by the console and the API', async () => {
  const o = expect.organization;
  await signOut();
  await signIn(o.member, '#/overview');
  check((await byTestId('nav-organization').count()) === 0, 'no organization in a member\'s menu');
  await go('#/organization', { allowError: true });
  check((await byTestId('page-error').getAttribute('data-status')) === '403', 'the page says 403');
  check((await byTestId('org-node').count()) === 0, 'no node shown');
  const r = await apiStatus('/v1/organization');
  check(r.status === 403 && r.body.includes('a member key may not'), `GET /v1/organization with a member key: ${r.status} ${r.body}`);
});

/** The API from inside the page with a JSON body (as the console sends it). */
async function apiSend(method, path, body) {
  return page.evaluate(async ([m, p, b]) => {
    const s = JSON.parse(sessionStorage.getItem('gpubill.session') || 'null');
    const r = await fetch(p, { method: m, headers: { Authorization: `Bearer ${s.token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(b) });
    return { status: r.status, body: await r.text() };
  }, [method, path, body]);
}

await step('notifications (issue 28): the budget set over the API, the crossing from usage, the arrears state and what happens next', async () => {
  const n = expect.notifications;
  await page.goto(`${n.url}/`);
  await signIn(n.key, '#/overview');
  await byTestId('nav-notifications').click();
  await drawn('#/notifications');
  // The budget the test set with the customer's key.
  const b = n.view.settings.budgets.monthly;
  const r = page.locator('[data-testid=budget-row][data-budget=monthly]');
  check((await r.count()) === 1, 'the budget monthly has a row');
  equalDecimal(await r.locator('[data-testid=budget-row-amount]').textContent(), b.amount, 'the budget amount');
  const thresholds = (await r.locator('[data-testid=budget-row-thresholds]').textContent()).split(',').map((x) => x.replace('%', '').trim());
  check(thresholds.length === b.thresholds.length && thresholds.every((x, i) => sameDecimal(x, b.thresholds[i])), `thresholds ${thresholds} != ${b.thresholds}`);
  check((await r.locator('[data-testid=budget-row-action]').getAttribute('data-action')) === b.action, 'the budget action');
  // Every notification the API lists, with its type and seq; the crossing among them.
  const rows = await page.locator('[data-testid=notification-row]').evaluateAll((els) => els.map((e) => `${e.dataset.seq} ${e.dataset.type}`));
  const want = n.notifications.map((x) => `${x.seq} ${x.type}`).reverse();
  check(JSON.stringify(rows) === JSON.stringify(want), `notifications ${JSON.stringify(rows)} != ${JSON.stringify(want)}`);
  const crossed = n.notifications.find((x) => x.type === 'budget.crossed');
  const data = await page.locator(`[data-testid=notification-row][data-seq="${crossed.seq}"] [data-testid=notification-data]`).textContent();
  check(data.includes(`threshold_percent ${crossed.body.data.threshold_percent}`) && data.includes(`cost ${crossed.body.data.cost}`), `the crossing's data: ${data}`);
  // The arrears state: its phase, the next step and when.
  const a = n.view.arrears;
  check((await byTestId('arrears-phase').getAttribute('data-phase')) === a.phase, `phase ${await byTestId('arrears-phase').getAttribute('data-phase')} != ${a.phase}`);
  const next = byTestId('arrears-next');
  check((await next.getAttribute('data-step')) === a.next[0], `next step ${await next.getAttribute('data-step')} != ${a.next[0]}`);
  check((await next.getAttribute('data-at')) === String(a.next[1]), `next at ${await next.getAttribute('data-at')} != ${a.next[1]}`);
  const at = new Date(a.next[1] * 1000);
  const shown = await text('arrears-next-time');
  check(shown.includes(String(at.getUTCFullYear())) && shown.includes(String(at.getUTCDate())), `the stop's time ${shown} (${at.toISOString()})`);
  // The endpoint's delivery log: each delivery with its attempt and the receiver's 204.
  const ep = page.locator(`[data-testid=endpoint][data-endpoint="${n.endpoint}"]`);
  check((await ep.count()) === 1, 'the endpoint is listed');
  const log = await ep.locator('[data-testid=delivery-row]').evaluateAll((els) => els.map((e) => `${e.dataset.notification} ${e.dataset.status}`));
  const wantLog = n.deliveries.map((d) => `${d.notification} ${d.status}`);
  check(JSON.stringify(log) === JSON.stringify(wantLog), `delivery log ${JSON.stringify(log)} != ${JSON.stringify(wantLog)}`);
  const codes = await ep.locator('[data-testid=delivery-attempt]').evaluateAll((els) => els.map((e) => e.dataset.statusCode));
  check(codes.length === n.deliveries.length && codes.every((c) => c === '204'), `attempts ${codes}`);
  await shot('notifications');
  await clean();
});

await step('notifications: a budget added through the form is the API\'s; a refused one shows the API\'s message', async () => {
  const n = expect.notifications;
  const nb = n.new_budget;
  // "stop" needs a threshold of 100: the API refuses, the form says why in the API's words.
  await byTestId('budget-id').fill(nb.id);
  await byTestId('budget-amount').fill(nb.amount);
  await byTestId('budget-thresholds').fill('25, 75');
  await byTestId('budget-forecast').check();
  await byTestId('budget-action').selectOption(nb.action);
  await byTestId('budget-form-submit').click();
  await page.waitForSelector('[data-testid=budget-form][data-state=failed]');
  const refused = await apiSend('PUT', `/v1/accounts/${n.account}/budgets/${nb.id}`, { amount: nb.amount, thresholds: ['25', '75'], forecast: true, action: nb.action });
  check(refused.status >= 400, `the API refuses stop without 100: ${refused.status}`);
  const message = JSON.parse(refused.body).message;
  const shownError = await text('budget-form-error');
  check(shownError.includes(message), `the form shows ${JSON.stringify(shownError)}, the API says ${JSON.stringify(message)}`);
  await byTestId('budget-thresholds').fill(nb.thresholds.join(', '));
  await byTestId('budget-form-submit').click();
  await page.waitForSelector(`[data-testid=budget-row][data-budget="${nb.id}"]`);
  await drawn('#/notifications');
  const got = JSON.parse((await apiStatus(`/v1/accounts/${n.account}/notify`)).body).settings.budgets[nb.id];
  check(got && sameDecimal(got.amount, nb.amount) && got.forecast === true && got.action === nb.action, `the API has the budget: ${JSON.stringify(got)}`);
  check(got.thresholds.length === nb.thresholds.length && got.thresholds.every((x, i) => sameDecimal(x, nb.thresholds[i])), `its thresholds: ${got.thresholds}`);
  const r = page.locator(`[data-testid=budget-row][data-budget="${nb.id}"]`);
  equalDecimal(await r.locator('[data-testid=budget-row-amount]').textContent(), nb.amount, 'the new budget on the page');
  await clean();
});

await step('notifications: "send test event" writes a test notification the API lists; a delivery is resent', async () => {
  const n = expect.notifications;
  const ep = () => page.locator(`[data-testid=endpoint][data-endpoint="${n.endpoint}"]`);
  await ep().locator('[data-testid=endpoint-test]').click();
  await page.waitForSelector('[data-testid=test-sent]');
  const seq = Number(await byTestId('test-sent').getAttribute('data-seq'));
  const listed = JSON.parse((await apiStatus('/v1/notifications')).body).notifications;
  const test = listed.find((x) => x.seq === seq);
  check(test && test.type === 'test', `the API lists a test notification of seq ${seq}: ${JSON.stringify(listed.map((x) => [x.seq, x.type]))}`);
  check(seq > Math.max(...n.notifications.map((x) => x.seq)), `the test event comes after the others (seq ${seq})`);
  check((await page.locator(`[data-testid=notification-row][data-seq="${seq}"][data-type=test]`).count()) === 1, 'the page lists the test event');
  // The new event waits for the worker in the log; a delivered one can be sent again.
  const first = n.deliveries[0].notification;
  const row = () => ep().locator(`[data-testid=delivery-row][data-notification="${first}"]`);
  check((await row().getAttribute('data-status')) === 'delivered', 'delivered before the resend');
  await row().locator('[data-testid=delivery-resend]').click();
  await page.waitForSelector(`[data-testid=endpoint][data-endpoint="${n.endpoint}"] [data-testid=delivery-row][data-notification="${first}"][data-status=pending]`);
  await shot('notifications-test');
  await clean();
});

await step('notifications in Chinese, and the admin opens the same view for the account', async () => {
  const n = expect.notifications;
  await byTestId('lang-switch').click();
  await drawn('#/notifications');
  check((await text('nav-notifications')) === '通知', `nav: ${await text('nav-notifications')}`);
  const missing = await page.evaluate(async () => (await import('/console/i18n.js')).missingKeys());
  check(missing.length === 0, `labels missing in a language: ${missing.join(', ')}`);
  await shot('zh-notifications');
  await byTestId('lang-switch').click();
  await drawn('#/notifications');
  await signOut();
  await signIn(n.admin, '#/admin/accounts');
  await go(`#/admin/accounts/${n.account}`);
  await byTestId('account-notifications').click();
  await drawn(`#/admin/accounts/${n.account}/notifications`);
  check((await page.locator('[data-testid=budget-row]').count()) === 2, 'the admin sees both budgets');
  check((await byTestId('arrears-phase').getAttribute('data-phase')) === n.view.arrears.phase, 'the admin sees the arrears state');
  await clean();
});

await browser.close();
console.log(`console: ${passed} passed, 0 failed`);

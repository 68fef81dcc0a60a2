// Browser test of the Compare view (#/compare): the demo corpus beside
// another synthetic corpus (other patients, from `synth` with another seed,
// imported with the CLI on the server's database). The page's
// chi-square p, OOV rates, grouped bars, highlighted residuals and both
// name-pattern tables are checked against the GraphQL API, and against a
// count made here from the API's own per-group numbers.
//
//   node --test compare.test.mjs     (run.sh installs what it needs first)
// Environment: DEIDCORPUS_BIN (a built binary, skips `go build`), CHROMIUM.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const shots = join(here, 'screenshots');
const FLAGS = ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--disable-quic'];

let tmp, bin, db, server, serverLog = '', base, browser, page, link, token;
const pageErrors = [];
const OTHER = 'synthetic-other';

function startServer() {
  bin = process.env.DEIDCORPUS_BIN;
  if (!bin) {
    bin = join(tmp, 'deidcorpus');
    execFileSync('go', ['build', '-o', bin, './cmd/deidcorpus'], { cwd: root, stdio: 'inherit' });
  }
  db = join(tmp, 'compare.db');
  server = spawn(bin, ['serve', '--demo', '--addr', '127.0.0.1:0', '--db', db], { stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`server printed no URL in 180 s:\n${serverLog.slice(-3000)}`)), 180_000);
    server.stderr.setEncoding('utf8');
    server.stderr.on('data', (chunk) => {
      serverLog += chunk;
      const m = serverLog.match(/serving on (http:\/\/\S+)/);
      const l = serverLog.match(/sign in as admin: (http:\/\/\S+#token=(\S+))/);
      if (m && l) {
        clearTimeout(timer);
        link = l[1];
        token = l[2];
        ok(m[1]);
      }
    });
    server.on('exit', (code) => { clearTimeout(timer); fail(new Error(`server exited with ${code}:\n${serverLog.slice(-3000)}`)); });
  });
}

async function gql(query, variables = {}) {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` }, body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  if (body.errors?.length) throw new Error(`GraphQL: ${body.errors.map((e) => e.message).join('; ')}`);
  return body.data;
}

async function ready(route, action) {
  const prev = await page.evaluate(() => document.getElementById('main')?.dataset.ready || '').catch(() => '');
  await action();
  await page.waitForFunction(([r, b]) => {
    const m = document.getElementById('main');
    return m && m.dataset.ready && m.dataset.ready !== b && m.dataset.route === r;
  }, [route, prev], { timeout: 20_000 });
}

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'deidcorpus-e2e-compare-'));
  await mkdir(shots, { recursive: true });
  base = await startServer();
  const dir = join(tmp, 'other');
  execFileSync(bin, ['synth', '--patients', '25', '--seed', '11', '--out', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
  execFileSync(bin, ['import', '--corpus', OTHER, '--tagset', 'i2b2-2014', '--db', db, dir], { stdio: ['ignore', 'ignore', 'pipe'] });
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true, args: FLAGS });
  page = await (await browser.newContext({ viewport: { width: 1360, height: 900 } })).newPage();
  page.on('pageerror', (e) => pageErrors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(`console: ${m.text()}`); });
  await ready('home', () => page.goto(link));
});

after(async () => {
  await browser?.close();
  server?.kill('SIGTERM');
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const p4 = (x) => (x < 0.0001 ? x.toExponential(1) : x.toFixed(4));
const pct = (x) => `${(100 * x).toFixed(1)}%`;

test('the Compare view shows chi-square, OOV rates, grouped bars with the largest residuals highlighted, and both name-pattern tables', async () => {
  assert.equal(await page.locator('#nav a', { hasText: 'Compare' }).count(), 1, 'Compare is in the navigation');
  await ready('compare', () => page.locator('#nav a', { hasText: 'Compare' }).click());
  await page.selectOption('#cmp-corpus-a', 'demo');
  await page.selectOption('#cmp-corpus-b', OTHER);
  await page.selectOption('#cmp-by', 'TYPE');
  await ready('compare', () => page.click('.compare-corpora-form button[type="submit"]'));

  const { compareCorpora: c } = await gql(`{ compareCorpora(a: "demo", b: "${OTHER}", by: TYPE) {
    chiSquare { statistic dof p } oov { tokenRate phiRate }
    a { nameSpans namePatterns { count } } b { nameSpans namePatterns { count } }
    groups { group residual a { total } b { total } } } }`);
  assert.equal(await page.locator('#chi-p').innerText(), p4(c.chiSquare.p), 'p of the chi-square');
  assert.equal(await page.locator('#token-oov').innerText(), pct(c.oov.tokenRate));
  assert.equal(await page.locator('#phi-oov').innerText(), pct(c.oov.phiRate));
  assert.ok(c.oov.phiRate > 0.2, `other patients, other PHI: PHI OOV ${c.oov.phiRate}`);
  assert.match(await page.locator('.chi-summary').innerText(), new RegExp(`dof ${c.chiSquare.dof}`));

  // Two bars per group, each group's numbers in data attributes.
  const bars = page.locator('figure[data-chart="compare-groups"] g.group');
  assert.equal(await bars.count(), c.groups.length);
  assert.equal(await page.locator('figure[data-chart="compare-groups"] rect.bar-a').count(), c.groups.length);
  assert.equal(await page.locator('figure[data-chart="compare-groups"] rect.bar-b').count(), c.groups.length);

  // The three groups with the largest |residual| (ties at the cut too) are
  // highlighted, in the chart and in the table; no other is.
  const ranked = c.groups.filter((g) => g.residual !== 0).sort((x, y) => Math.abs(y.residual) - Math.abs(x.residual));
  const cut = ranked.length > 3 ? Math.abs(ranked[2].residual) : 0;
  const want = ranked.filter((g) => Math.abs(g.residual) >= cut).map((g) => g.group).sort();
  assert.ok(want.length >= 3, 'two samples differ somewhere');
  const shown = (await page.locator('figure[data-chart="compare-groups"] g.group[data-highlight="true"]').evaluateAll(
    (gs) => gs.map((g) => g.dataset.label))).sort();
  assert.deepEqual(shown, want, 'highlighted bars');
  const rows = (await page.locator('table.compare-groups tbody tr.highlight').evaluateAll((trs) => trs.map((t) => t.dataset.group))).sort();
  assert.deepEqual(rows, want, 'highlighted rows');

  // Both name-pattern tables, each adding up to its corpus's name spans.
  for (const [side, cls] of [[c.a, 'patterns-a'], [c.b, 'patterns-b']]) {
    assert.equal(await page.locator(`table.${cls} tbody tr`).count(), side.namePatterns.length, cls);
    assert.equal(side.namePatterns.reduce((n, p) => n + p.count, 0), side.nameSpans);
  }
  assert.ok(c.a.nameSpans > 0);
  await page.screenshot({ path: join(shots, 'compare-corpora.png'), fullPage: true });
});

test('a bad corpus name in the address shows the server\'s message naming the argument', async () => {
  await ready('error', () => page.evaluate(() => { location.hash = '#/compare?a=demo&b=no-such-corpus'; }));
  assert.match(await page.locator('[role="alert"]').innerText(), /b: no corpus named "no-such-corpus"/);
});

test('no script errors', () => {
  const unexpected = pageErrors.filter((e) => !/no corpus named|Failed to load resource/.test(e));
  assert.deepEqual(unexpected, []);
});

// Browser tests of the dashboard: build and start the real server on its
// demo corpus, drive Debian's Chromium with playwright-core, check what the
// pages show against the GraphQL API, and save screenshots.
//
//   node dashboard.test.mjs            (run.sh installs what it needs first)
// Environment: DEIDCORPUS_BIN (a built binary, skips `go build`), CHROMIUM
// (default /usr/bin/chromium), E2E_BUDGET_MS (page budget, default 1000).

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
const budget = Number(process.env.E2E_BUDGET_MS || 1000);
const FLAGS = ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--disable-quic'];

let tmp, server, serverLog = '', base, browser, page;
const pageErrors = [];
const timings = {};

async function startServer() {
  let bin = process.env.DEIDCORPUS_BIN;
  if (!bin) {
    bin = join(tmp, 'deidcorpus');
    execFileSync('go', ['build', '-o', bin, './cmd/deidcorpus'], { cwd: root, stdio: 'inherit' });
  }
  server = spawn(bin, ['serve', '--demo', '--addr', '127.0.0.1:0', '--db', join(tmp, 'e2e.db')], { stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`server printed no URL in 180 s:\n${serverLog.slice(-3000)}`)), 180_000);
    server.stderr.setEncoding('utf8');
    server.stderr.on('data', (chunk) => {
      serverLog += chunk;
      if (serverLog.length > 1e6) serverLog = serverLog.slice(-5e5);
      const m = serverLog.match(/serving on (http:\/\/\S+)/);
      if (m) {
        clearTimeout(timer);
        resolveUrl(m[1]);
      }
    });
    server.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before serving:\n${serverLog.slice(-3000)}`));
    });
  });
}

async function gql(query, variables = {}) {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  if (body.errors?.length) throw new Error(`GraphQL: ${body.errors.map((e) => e.message).join('; ')}`);
  return body.data;
}

/** ready runs action and waits for the page route to render; returns the ms it took (page and test share a clock). */
async function ready(route, action) {
  const before = await page.evaluate(() => document.getElementById('main')?.dataset.ready || '').catch(() => '');
  const t0 = Date.now();
  await action();
  const handle = await page.waitForFunction(([r, b]) => {
    const m = document.getElementById('main');
    return m && m.dataset.ready && m.dataset.ready !== b && (r === null || m.dataset.route === r) && m.dataset.ready;
  }, [route, before], { timeout: 15_000 });
  return Number(await handle.jsonValue()) - t0;
}

function timed(name, ms) {
  timings[name] = Math.round(ms);
  assert.ok(ms < budget, `${name} took ${Math.round(ms)} ms, over the ${budget} ms budget`);
}

const shot = (name) => page.screenshot({ path: join(shots, name), fullPage: true });

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'deidcorpus-e2e-'));
  await mkdir(shots, { recursive: true });
  base = await startServer();
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true, args: FLAGS });
  page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
  page.on('pageerror', (e) => pageErrors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(`console: ${m.text()}`); });
});

after(async () => {
  await browser?.close();
  server?.kill('SIGTERM');
  if (tmp) await rm(tmp, { recursive: true, force: true });
  console.log('page timings (ms):', JSON.stringify(timings));
});

let corpus; // {id, name}

test('corpora page lists the demo corpus with its counts', async () => {
  const ms = await ready('home', () => page.goto(base + '/'));
  const { corpora } = await gql('{ corpora { edges { node { id name documents { totalCount } patients { totalCount } } } } }');
  assert.ok(corpora.edges.length > 0, 'the demo corpus is loaded');
  const nodes = corpora.edges.map((e) => e.node);
  const c = nodes.find((n) => n.name === process.env.E2E_CORPUS) || nodes.find((n) => /demo/i.test(n.name)) || nodes[0];
  corpus = c;
  const row = page.locator('table.corpora tbody tr', { has: page.locator(`a.corpus-link:text-is("${c.name}")`) });
  const cells = await row.locator('td').allInnerTexts();
  assert.ok(cells.includes(c.documents.totalCount.toLocaleString('en-US')), `row shows ${c.documents.totalCount} documents: ${cells}`);
  assert.ok(cells.includes(c.patients.totalCount.toLocaleString('en-US')), `row shows ${c.patients.totalCount} patients: ${cells}`);
  await shot('corpora.png');
  timed('corpora', ms);
});

test('the keyboard reaches the corpus link, with a visible focus, and Enter opens it', async () => {
  await page.locator('body').focus();
  let found = false;
  for (let i = 0; i < 30 && !found; i++) {
    await page.keyboard.press('Tab');
    found = await page.evaluate((name) => document.activeElement?.matches('a.corpus-link') && document.activeElement.textContent === name, corpus.name);
  }
  assert.ok(found, 'Tab reaches the corpus link');
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  assert.notEqual(outline, 'none', 'the focused link has an outline');
  const ms = await ready('corpus/:name', () => page.keyboard.press('Enter'));
  timed('corpus', ms);
});

test("the category chart's numbers are the GraphQL statistics", async () => {
  const fig = page.locator('figure[data-chart="category"]');
  await fig.waitFor();
  const bars = await fig.locator('g.bar').evaluateAll((gs) => gs.map((g) => ({
    label: g.dataset.label, value: Number(g.dataset.value), unique: Number(g.dataset.unique),
    shown: g.querySelector('text.value').textContent,
  })));
  const { corpusStatistics: st } = await gql(`query($id: ID!) { corpusStatistics(corpus: $id, by: [CATEGORY]) { spans groups { category total unique } } }`, { id: corpus.id });
  assert.equal(bars.length, st.groups.length, 'one bar per category');
  for (const g of st.groups) {
    const b = bars.find((x) => x.label === g.category);
    assert.ok(b, `a bar for ${g.category}`);
    assert.equal(b.value, g.total, `${g.category} total`);
    assert.equal(b.unique, g.unique, `${g.category} unique`);
    assert.equal(b.shown, `${g.total.toLocaleString('en-US')} (${g.unique.toLocaleString('en-US')})`, `${g.category} is written on its bar`);
  }
  // The other charts add up to the same total.
  for (const id of ['type', 'split', 'note-type']) {
    const sum = await page.locator(`figure[data-chart="${id}"] g.bar`).evaluateAll((gs) => gs.reduce((a, g) => a + Number(g.dataset.value), 0));
    assert.equal(sum, st.spans, `the ${id} chart sums to ${st.spans} spans`);
  }
  await shot('corpus.png');
});

let doc; // {externalID}

test("a patient's timeline lists the notes in record order", async () => {
  const link = page.locator('ul.patients a').first();
  const patient = await link.innerText();
  const ms = await ready('corpus/:name/patient/:patient', () => link.click());
  timed('patient', ms);
  const { patients } = await gql(`query($c: ID!, $p: String!) { patients(where: {corpusID: $c, externalID: $p}) {
    edges { node { documents(orderBy: {field: RECORD_ORDER}) { edges { node { externalID recordOrder } } } } } } }`, { c: corpus.id, p: patient });
  const want = patients.edges[0].node.documents.edges.map((e) => e.node.externalID);
  const rows = await page.locator('table.notes tbody tr td:nth-child(2) a').allInnerTexts();
  assert.deepEqual(rows, want);
  assert.equal(await page.locator('svg.timeline circle').count(), want.length, 'one dot per note');
  doc = { externalID: want[0] };
  await shot('patient.png');
});

let spans;

test("a document's spans are highlighted by type, with a tooltip", async () => {
  const ms = await ready('corpus/:name/doc/:doc', () => page.locator('table.notes tbody a').first().click());
  timed('document', ms);
  const { documents } = await gql(`query($c: ID!, $d: String!) { documents(where: {corpusID: $c, externalID: $d}) {
    edges { node { text annotations { start end text category type } } } } }`, { c: corpus.id, d: doc.externalID });
  doc = { ...doc, ...documents.edges[0].node };
  spans = doc.annotations;
  assert.ok(spans.length > 0, 'the demo document has gold spans');
  const marks = await page.locator('mark.phi[tabindex="0"]').evaluateAll((ms) => ms.map((m) => ({
    text: m.textContent, type: m.dataset.type, category: m.dataset.category, bg: getComputedStyle(m).backgroundColor,
  })));
  assert.equal(marks.length, spans.length, 'one highlight per span');
  spans.forEach((s, i) => {
    assert.equal(marks[i].text, s.text, `span ${i} covers its text`);
    assert.equal(marks[i].type, s.type);
    assert.notEqual(marks[i].bg, 'rgba(0, 0, 0, 0)', `span ${i} is coloured`);
  });
  const colors = new Map(marks.map((m) => [m.category, m.bg]));
  assert.equal(new Set(colors.values()).size, colors.size, 'each category has its own colour');
  const first = page.locator('mark.phi[tabindex="0"]').first();
  await first.focus();
  const tip = await first.evaluate((m) => getComputedStyle(m, '::after').content);
  assert.ok(tip.includes(spans[0].type), `tooltip ${tip} names the type ${spans[0].type}`);
  await shot('document.png');
});

// A second annotation set with one error of each kind, through the API's
// own import, so the overlay has something to show.
function perturb(text, spans) {
  const cps = Array.from(text);
  const slice = (a, b) => cps.slice(a, b).join('');
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  const clashType = (s) => (s.type === 'DOCTOR' ? ['NAME', 'PATIENT'] : s.type === 'PATIENT' ? ['NAME', 'DOCTOR'] : s.type === 'IDNUM' ? ['ID', 'MEDICALRECORD'] : ['ID', 'IDNUM']);
  const out = [];
  const stretch = sorted.findIndex((s, i) => i >= 2 && s.end - s.start >= 2);
  assert.ok(sorted.length >= 4 && stretch >= 0, 'the document has enough spans to perturb');
  sorted.forEach((s, i) => {
    if (i === 0) return; // missed
    if (i === 1) {
      const [category, type] = clashType(s);
      out.push({ ...s, category, type }); // tag-clash
    } else if (i === stretch) out.push({ ...s, end: s.end - 1, text: slice(s.start, s.end - 1) }); // span-clash
    else out.push(s);
  });
  // spurious: a word no span touches
  const re = /[A-Za-z]{5,}/g;
  let m;
  while ((m = re.exec(text))) {
    const start = Array.from(text.slice(0, m.index)).length;
    const end = start + m[0].length;
    if (!spans.some((s) => s.start < end && start < s.end)) {
      out.push({ start, end, text: m[0], category: 'OTHER', type: 'OTHER' });
      break;
    }
  }
  return out;
}

const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function i2b2(text, spans) {
  const tags = spans.map((s, i) => `<${s.category} id="P${i}" start="${s.start}" end="${s.end}" text="${esc(s.text)}" TYPE="${s.type}" comment="" />`);
  return `<?xml version="1.0" encoding="UTF-8" ?>\n<deIdi2b2>\n<TEXT><![CDATA[${text}]]></TEXT>\n<TAGS>\n${tags.join('\n')}\n</TAGS>\n</deIdi2b2>\n`;
}

test('two annotation sets overlaid show each error kind', async () => {
  const sys = perturb(doc.text, spans);
  const form = new FormData();
  form.append('operations', JSON.stringify({
    query: 'mutation($input: ImportInput!, $files: [Upload!]!) { importDocuments(input: $input, files: $files) { documents spans } }',
    variables: { input: { corpus: corpus.name, set: 'e2e-system' }, files: [null] },
  }));
  form.append('map', JSON.stringify({ 0: ['variables.files.0'] }));
  form.append('0', new Blob([i2b2(doc.text, sys)], { type: 'application/xml' }), `${doc.externalID}.xml`);
  const res = await (await fetch(`${base}/graphql`, { method: 'POST', body: form })).json();
  assert.ok(!res.errors, `import of the perturbed set: ${JSON.stringify(res.errors)}`);

  const ms = await ready('corpus/:name/doc/:doc', () => page.evaluate(([c, d]) => {
    location.hash = `#/corpus/${encodeURIComponent(c)}/doc/${encodeURIComponent(d)}?set=gold&vs=e2e-system`;
  }, [corpus.name, doc.externalID]));
  timed('overlay', ms);
  const counts = Object.fromEntries(await page.locator('ul.kinds li').evaluateAll((lis) => lis.map((li) => [li.dataset.kind, Number(li.querySelector('.count').textContent)])));
  assert.deepEqual(counts, { missed: 1, spurious: 1, 'tag-clash': 1, 'span-clash': 1, 'both-clash': 0, match: spans.length - 3 });
  for (const kind of ['missed', 'spurious', 'tag-clash', 'span-clash']) {
    assert.ok(await page.locator(`mark.cmp[data-kind="${kind}"]`).count() > 0, `a ${kind} highlight`);
  }
  await page.locator('mark.cmp[data-kind="tag-clash"][tabindex="0"]').focus();
  await shot('overlay.png');
});

test('no script errors so far', () => {
  assert.deepEqual(pageErrors, []);
});

test('failures show a message, not a blank page', async () => {
  await ready('error', () => page.evaluate(() => { location.hash = '#/corpus/no-such-corpus'; }));
  const alert = page.locator('[role="alert"]');
  assert.match(await alert.innerText(), /no corpus named/i);
  await page.route('**/graphql', (r) => r.abort('connectionrefused'));
  await ready('error', () => page.evaluate(() => { location.hash = '#/'; }));
  assert.match(await alert.innerText(), /cannot reach the server/i);
  assert.ok(await page.locator('[role="alert"] button', { hasText: 'Try again' }).isVisible());
  await shot('error.png');
  await page.unroute('**/graphql');
  await ready('home', () => page.locator('[role="alert"] button', { hasText: 'Try again' }).click());
});

test('a token saved in Settings goes with every request as a Bearer header', async () => {
  await ready('settings', () => page.evaluate(() => { location.hash = '#/settings'; }));
  await page.fill('#token', 'e2e-token');
  await page.click('button[type="submit"]');
  const req = page.waitForRequest((r) => r.url().endsWith('/graphql') && r.method() === 'POST');
  await ready('home', () => page.evaluate(() => { location.hash = '#/'; }));
  assert.equal((await req).headers().authorization, 'Bearer e2e-token');
  await page.evaluate(() => localStorage.removeItem('deidcorpus.token'));
});

// Browser tests of the dashboard: build and start the real server on its
// demo corpus, drive Debian's Chromium with playwright-core, check what the
// pages show against the GraphQL API, and save screenshots. The browser signs
// in through the link `serve --demo` prints (#token=…, the admin); a
// researcher made with the CLI on the same database gets a page of its own,
// and the accounts and tokens made last, on the dashboard's own Accounts and
// Account pages, browser contexts of their own.
//
//   node dashboard.test.mjs            (run.sh installs what it needs first)
// Environment: DEIDCORPUS_BIN (a built binary, skips `go build`), CHROMIUM
// (default /usr/bin/chromium), E2E_BUDGET_MS (page budget, default 1000).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtemp, mkdir, rm, readFile, writeFile } from 'node:fs/promises';
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

let tmp, bin, db, server, serverLog = '', base, browser, page; // page: the admin's
let adminLink, adminToken; // the sign-in link serve --demo prints, and its token
const pageErrors = [];
const timings = {};

async function startServer() {
  bin = process.env.DEIDCORPUS_BIN;
  if (!bin) {
    bin = join(tmp, 'deidcorpus');
    execFileSync('go', ['build', '-o', bin, './cmd/deidcorpus'], { cwd: root, stdio: 'inherit' });
  }
  db = join(tmp, 'e2e.db');
  server = spawn(bin, ['serve', '--demo', '--addr', '127.0.0.1:0', '--db', db], { stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`server printed no URL in 180 s:\n${serverLog.slice(-3000)}`)), 180_000);
    server.stderr.setEncoding('utf8');
    server.stderr.on('data', (chunk) => {
      serverLog += chunk;
      if (serverLog.length > 1e6) serverLog = serverLog.slice(-5e5);
      // The address, then the link that signs the browser in as the admin.
      const m = serverLog.match(/serving on (http:\/\/\S+)/);
      const link = serverLog.match(/sign in as admin: (http:\/\/\S+#token=(\S+))/);
      if (m && link) {
        clearTimeout(timer);
        adminLink = link[1];
        adminToken = link[2];
        resolveUrl(m[1]);
      }
    });
    server.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before serving:\n${serverLog.slice(-3000)}`));
    });
  });
}

/** gql asks the API as the admin (or as the account of token). */
async function gql(query, variables = {}, token = adminToken) {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` }, body: JSON.stringify({ query, variables }),
  });
  const body = await res.json();
  if (body.errors?.length) throw new Error(`GraphQL: ${body.errors.map((e) => e.message).join('; ')}`);
  return body.data;
}

/** cli runs the deidcorpus command on the test database; its stdout, trimmed. */
const cli = (...args) => execFileSync(bin, [...args, '--db', db], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** newPage opens a page in a browser context of its own (its own localStorage: another account). */
async function newPage() {
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  const p = await context.newPage();
  p.on('pageerror', (e) => pageErrors.push(`pageerror: ${e.message}`));
  p.on('console', (m) => { if (m.type() === 'error') pageErrors.push(`console: ${m.text()}`); });
  return p;
}

/**
 * ready runs action and waits for the route to render on page p (the
 * admin's unless given); returns the ms it took (page and test share a clock).
 */
async function ready(route, action, p = page) {
  const before = await p.evaluate(() => document.getElementById('main')?.dataset.ready || '').catch(() => '');
  const t0 = Date.now();
  await action();
  const handle = await p.waitForFunction(([r, b]) => {
    const m = document.getElementById('main');
    return m && m.dataset.ready && m.dataset.ready !== b && (r === null || m.dataset.route === r) && m.dataset.ready;
  }, [route, before], { timeout: 15_000 });
  return Number(await handle.jsonValue()) - t0;
}

function timed(name, ms) {
  timings[name] = Math.round(ms);
  assert.ok(ms < budget, `${name} took ${Math.round(ms)} ms, over the ${budget} ms budget`);
}

const shot = (name, p = page) => p.screenshot({ path: join(shots, name), fullPage: true });

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'deidcorpus-e2e-'));
  await mkdir(shots, { recursive: true });
  base = await startServer();
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true, args: FLAGS });
  page = await newPage();
});

after(async () => {
  await browser?.close();
  server?.kill('SIGTERM');
  if (tmp) await rm(tmp, { recursive: true, force: true });
  console.log('page timings (ms):', JSON.stringify(timings));
});

// ---- Signing in --------------------------------------------------------------

const storedToken = (p = page) => p.evaluate(() => localStorage.getItem('deidcorpus.token'));

test('without a token the sign-in view says where a token comes from, and refuses a wrong one', async () => {
  const ms = await ready('signin', () => page.goto(base + '/'));
  timed('sign-in', ms);
  assert.equal(await page.locator('main h1').innerText(), 'Sign in');
  const help = await page.locator('#signin-help').innerText();
  assert.match(help, /\.admin-token/, 'names the admin token file beside the database');
  assert.match(help, /deidcorpus tokens create --user NAME/);
  assert.equal(await page.locator('#nav a').count(), 0, 'no navigation before signing in');
  assert.equal(await page.locator('#account').innerText(), '', 'nobody is signed in');
  await page.waitForFunction(() => document.activeElement?.id === 'signin-token');
  await shot('signin.png');
  // A wrong token: the server's reason, and nothing kept.
  await page.keyboard.type('dct_not-a-real-token');
  await page.keyboard.press('Enter');
  const status = page.locator('#signin-status[role="alert"]');
  await status.waitFor();
  assert.match(await status.innerText(), /^The server refused this token: \S/);
  assert.equal(await storedToken(), null);
});

test('the pasted admin token signs in; signing out forgets it', async () => {
  await page.fill('#signin-token', adminToken);
  const ms = await ready('home', () => page.keyboard.press('Enter'));
  timed('signed in', ms);
  assert.equal(await page.locator('#account .who-name').innerText(), 'admin');
  assert.equal(await page.locator('#account .role-badge').textContent(), 'admin');
  assert.equal(await storedToken(), adminToken);
  await ready('signin', () => page.click('#sign-out'));
  assert.match(await page.locator('#signin-reason').innerText(), /^Signed out/);
  assert.equal(await storedToken(), null);
  assert.equal(await page.locator('#nav a').count(), 0);
});

test('the #token= link of serve --demo signs in, and leaves the address bar at once', async () => {
  const ms = await ready('home', async () => {
    await page.goto('about:blank');
    await page.goto(adminLink);
  });
  timed('sign-in link', ms);
  assert.ok(!page.url().includes('token'), `the token left the address bar: ${page.url()}`);
  assert.equal(await storedToken(), adminToken);
  assert.equal(await page.locator('#account .who-name').innerText(), 'admin');
  const nav = await page.locator('#nav a').allInnerTexts();
  assert.ok(nav.includes('Audit log'), `an admin has the audit log: ${nav}`);
});

let corpus; // {id, name}

test('corpora page lists the demo corpus with its counts', async () => {
  const ms = await ready('home', () => page.goto(base + '/'));
  const { corpora } = await gql('{ corpora { edges { node { id name documents { totalCount } patients { totalCount } } } } }');
  assert.ok(corpora.edges.length > 0, 'the demo corpus is loaded');
  const nodes = corpora.edges.map((e) => e.node);
  const c = nodes.find((n) => n.name === process.env.E2E_CORPUS) || nodes.find((n) => n.name === 'demo') || nodes[0];
  corpus = c;
  const row = page.locator('table.corpora tbody tr', { has: page.locator(`a.corpus-link:text-is("${c.name}")`) });
  const cells = await row.locator('td').allInnerTexts();
  assert.ok(cells.includes(c.documents.totalCount.toLocaleString('en-US')), `row shows ${c.documents.totalCount} documents: ${cells}`);
  assert.ok(cells.includes(c.patients.totalCount.toLocaleString('en-US')), `row shows ${c.patients.totalCount} patients: ${cells}`);
  await shot('corpora.png');
  timed('corpora', ms);
});

test('serve --demo fills every page: its jobs make a surrogate twin, a release, a model and an evaluation', async () => {
  // The demo's jobs run in the background from the first start.
  const deadline = Date.now() + 60_000;
  let jobs;
  for (;;) {
    ({ jobs } = await gql('{ jobs(where: {createdBy: "system", kindNEQ: "part"}) { edges { node { kind status } } } }'));
    if (jobs.edges.length === 3 && jobs.edges.every((e) => e.node.status === 'succeeded')) break;
    assert.ok(Date.now() < deadline, `the demo's jobs did not finish in a minute: ${JSON.stringify(jobs.edges)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.deepEqual(jobs.edges.map((e) => e.node.kind).sort(), ['resynthesize', 'tag', 'train']);
  const rows = async (route, hash, selector) => {
    await ready(route, () => page.evaluate((h) => { location.hash = h; }, hash));
    const n = await page.locator(selector).count();
    assert.ok(n > 0, `${hash}: nothing in ${selector}`);
    return n;
  };
  assert.equal(await rows('runs', '#/runs', 'table.jobs tbody tr[data-status="succeeded"]'), 3);
  const kinds = await page.locator('#filter-kind option').allInnerTexts();
  for (const k of ['import', 'experiment', 'resynthesize', 'train', 'tag']) assert.ok(kinds.includes(k), `kind ${k} is offered: ${kinds}`);
  await rows('evaluations', '#/evaluations', 'table.evaluations tbody tr');
  await rows('models', '#/models', 'table.models tbody tr');
  await rows('releases', '#/releases', 'table.releases tbody tr');
  assert.match(await page.locator('table.releases tbody').innerText(), /demo-twin@1\.0\.0/);
  await ready('corpus/:name', () => page.evaluate(() => { location.hash = '#/corpus/demo-twin'; }));
  assert.equal(await page.locator('h1 .corpus-kind').innerText(), 'surrogate');
  assert.equal(await page.locator('[data-ok]').getAttribute('data-ok'), 'true', 'the twin shows its resynthesis check');
  assert.equal(await rows('home', '#/', 'table.corpora tbody tr'), 2, 'the demo corpus and its twin');
  assert.equal(await page.locator('table.corpora tbody tr', { hasText: 'demo-twin' }).locator('.corpus-kind').innerText(), 'surrogate');
  await shot('demo-filled.png');
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
let surDoc; // doc's id in the surrogate corpus made from the form

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
  const res = await (await fetch(`${base}/graphql`, { method: 'POST', body: form, headers: { Authorization: `Bearer ${adminToken}` } })).json();
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

// Chromium logs every refused request as a console error: the refused
// tokens and downloads are the tests' own doing, as are the refused
// connections of the failure test.
const OWN_DOING = /status of 401 \(Unauthorized\)|net::ERR_CONNECTION_REFUSED/;
const unexpectedErrors = () => pageErrors.filter((e) => !OWN_DOING.test(e));

test('no script errors so far', () => {
  assert.deepEqual(unexpectedErrors(), []);
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

test('Settings shows the account; a wrong token there leaves the admin signed in, and requests carry the token', async () => {
  await ready('settings', () => page.locator('#account a.who').click());
  assert.equal(await page.locator('.account-name').innerText(), 'admin');
  assert.equal(await page.locator('.account-role').innerText(), 'admin');
  await page.fill('#token', 'dct_wrong');
  await page.click('#token-form button[type="submit"]');
  const status = page.locator('#token-status[role="alert"]');
  await status.waitFor();
  assert.match(await status.innerText(), /refused this token, so you stay signed in as admin/);
  assert.equal(await storedToken(), adminToken);
  await shot('settings.png');
  const req = page.waitForRequest((r) => r.url().endsWith('/graphql') && r.method() === 'POST');
  await ready('home', () => page.evaluate(() => { location.hash = '#/'; }));
  assert.equal((await req).headers().authorization, `Bearer ${adminToken}`);
});

test('the GraphQL IDE sends the token the dashboard stored', async () => {
  const ide = await page.context().newPage(); // same origin, same localStorage
  ide.on('pageerror', (e) => pageErrors.push(`IDE pageerror: ${e.message}`));
  const req = ide.waitForRequest((r) => r.url().endsWith('/graphql') && r.method() === 'POST');
  await ide.goto(base + '/graphiql/');
  const r = await req;
  assert.equal(r.headers().authorization, `Bearer ${adminToken}`);
  assert.equal((await r.response()).status(), 200, 'the schema loads');
  assert.match(await ide.locator('#signed-in').innerText(), /carry the dashboard’s API token/);
  await ide.close();
});

// ---- Roles -------------------------------------------------------------------
// A researcher made with the CLI on the server's own database, in a browser
// context of its own: the demo corpus is original text, so it sees none.

let researcher, researcherToken; // its page and token

test('a researcher sees no original corpus (only the surrogate twin), no audit log and no resynthesis', async () => {
  cli('users', 'add', '--role', 'researcher', 'e2e-researcher');
  researcherToken = cli('tokens', 'create', '--user', 'e2e-researcher');
  assert.match(researcherToken, /^dct_\S+$/, 'tokens create prints the token alone');
  researcher = await newPage();
  const ms = await ready('home', () => researcher.goto(`${base}/#token=${researcherToken}`), researcher);
  timed('corpora (researcher)', ms);
  assert.equal(await researcher.locator('#account .who-name').innerText(), 'e2e-researcher');
  assert.equal(await researcher.locator('#account .role-badge').textContent(), 'researcher');
  // Only the demo's surrogate twin is listed, never the original.
  const listed = await researcher.locator('table.corpora tbody tr a.corpus-link').allInnerTexts();
  assert.deepEqual(listed, ['demo-twin'], 'only the surrogate corpus is listed');
  const { corpora } = await gql('{ corpora { edges { node { name kind } } } }', {}, researcherToken);
  assert.deepEqual(corpora.edges.map((e) => e.node), [{ name: 'demo-twin', kind: 'surrogate' }], 'the API agrees');
  const nav = await researcher.locator('#nav a').allInnerTexts();
  assert.ok(!nav.includes('Audit log'), `no audit log in the navigation: ${nav}`);
  assert.ok(nav.includes('Runs') && nav.includes('Releases'), `runs and releases are: ${nav}`);
  await shot('researcher-corpora.png', researcher);
  // The original corpus is as if it did not exist; the audit log is refused in words.
  await ready('error', () => researcher.evaluate((n) => { location.hash = `#/corpus/${encodeURIComponent(n)}`; }, corpus.name), researcher);
  assert.match(await researcher.locator('[role="alert"]').innerText(), /no corpus named/i);
  await ready('error', () => researcher.evaluate(() => { location.hash = '#/audit'; }), researcher);
  assert.equal(await researcher.locator('[role="alert"] h1').innerText(), 'Not allowed');
  assert.match(await researcher.locator('[role="alert"]').innerText(), /The audit log needs the admin role; you are signed in as e2e-researcher, a researcher/);
  await ready('runs', () => researcher.evaluate(() => { location.hash = '#/runs?start=resynthesize'; }), researcher);
  assert.equal(await researcher.locator('#form-resynthesize, button[data-kind="resynthesize"]').count(), 0, 'no resynthesis form');
  assert.equal(await researcher.locator('#form-release').count(), 0);
});

test('the audit log (admins): newest first, filtered, a page at a time, every id a keystroke away', async () => {
  const ms = await ready('audit', () => page.locator('#nav a', { hasText: 'Audit log' }).click());
  timed('audit log', ms);
  const { auditEntries: newest } = await gql('{ auditEntries(first: 1, orderBy: {field: SEQ, direction: DESC}) { edges { node { seq } } } }');
  const seqsOf = () => page.locator('table.audit tbody tr').evaluateAll((rs) => rs.map((r) => Number(r.dataset.seq)));
  const seqs = await seqsOf();
  assert.ok(seqs.length > 0, 'entries are listed');
  assert.equal(seqs[0], newest.edges[0].node.seq, 'the newest entry comes first');
  assert.deepEqual(seqs, [...seqs].sort((a, b) => b - a), 'newest first throughout');
  assert.match(await page.locator('.audit-page').innerText(), /deidcorpus audit verify/);
  await shot('audit.png');
  // Reads of note text (the document pages', and ten notes read through the
  // API here, one entry with ten ids): filtered by actor, action and target.
  await gql('{ documents(first: 10) { edges { node { text } } } }');
  await page.fill('#audit-actor', 'admin');
  await page.selectOption('#audit-action', 'read');
  await page.fill('#audit-target', 'document.TEXT');
  await ready('audit', () => page.locator('#audit-target').press('Enter'));
  const rows = await page.locator('table.audit tbody tr').evaluateAll((rs) => rs.map((r) => ({
    action: r.dataset.action, actor: r.querySelector('.actor').textContent, target: r.querySelector('.target').textContent,
  })));
  assert.ok(rows.length > 1, 'the document pages and the API read note text');
  assert.ok(rows.every((r) => r.action === 'read' && r.actor === 'admin' && r.target === 'Document.text'), JSON.stringify(rows));
  // Many ids: three shown, the rest behind "+N more", opened from the keyboard.
  const more = page.locator('table.audit tbody tr').first().locator('details.ids-more');
  const seq = Number(await more.evaluate((d) => d.closest('tr').dataset.seq));
  const { auditEntries: one } = await gql('query($s: Int!) { auditEntries(where: {seq: $s}) { edges { node { ids } } } }', { s: seq });
  const ids = one.edges[0].node.ids;
  assert.equal(ids.length, 10, `entry ${seq} has the ten ids`);
  assert.equal(await more.locator('summary').innerText(), `+${ids.length - 3} more`);
  await more.locator('summary').focus();
  await page.keyboard.press('Enter');
  assert.equal(await more.getAttribute('open'), '', 'Enter opens the list');
  assert.equal(await more.locator('.ids-all').innerText(), ids.join(', '));
  // Pages of three: older, and back to the newer.
  await ready('audit', () => page.evaluate(() => { location.hash = '#/audit?n=3'; }));
  const first = await seqsOf();
  assert.equal(first.length, 3);
  await ready('audit', () => page.locator('a.pager-older').first().click());
  const second = await seqsOf();
  assert.equal(second.length, 3);
  assert.ok(Math.max(...second) < Math.min(...first), `older entries: ${first} then ${second}`);
  await ready('audit', () => page.locator('a.pager-newer').first().click());
  assert.deepEqual(await seqsOf(), first, 'Newer goes back');
});

// ---- Runs, evaluations, models, surrogates ---------------------------------
// The demo has no model: train one from the form (10 iterations, a second or
// so), watch it reach 100% through the job(id) subscription, tag the demo
// corpus with it, and read the evaluation it produced.

const sockets = [];
const progressSeen = [];

/** runRow waits until the runs table's row for a job of this kind, newer than `after`, is final. */
async function finishedRow(kind, after, timeout = 30_000) {
  const handle = await page.waitForFunction(([k, a]) => {
    const err = [...document.querySelectorAll('form.run-form:not([hidden]) .form-status.error-inline')].map((e) => e.textContent).join(' ');
    if (err) return `form: ${err}`;
    const rows = [...document.querySelectorAll(`table.jobs tr[data-kind="${k}"]`)].filter((r) => !a.includes(r.dataset.job));
    const r = rows[0];
    return r && ['succeeded', 'failed', 'cancelled', 'check_failed'].includes(r.dataset.status) && r.dataset.job;
  }, [kind, after], { timeout, polling: 100 });
  const id = await handle.jsonValue();
  assert.ok(!id.startsWith('form: '), `the ${kind} form failed: ${id}`);
  return { id, row: page.locator(`table.jobs tr[data-job="${id}"]`) };
}
const jobIds = () => page.locator('table.jobs tbody tr').evaluateAll((rs) => rs.map((r) => r.dataset.job));
const jobQuery = (id) => gql(`query($id: ID!) { jobs(where: {id: $id}) { edges { node { status error progress
  output { __typename ... on TrainOutput { modelName } ... on TagOutput { evaluation } } } } } }`, { id }).then((d) => d.jobs.edges[0].node);

let model;

test('a training run started from the form (keyboard only) is followed live to 100%', async () => {
  page.on('websocket', (ws) => {
    const s = { frames: [] };
    sockets.push(s);
    ws.on('framereceived', (f) => s.frames.push(String(f.payload)));
  });
  const ms = await ready('runs', () => page.evaluate(() => { location.hash = '#/runs'; }));
  timed('runs', ms);
  assert.ok(await page.locator('#nav a', { hasText: 'Runs' }).isVisible(), 'Runs is in the navigation');
  const before = await jobIds();
  // Record every progress value the new row shows, as it changes (not the
  // rows of earlier training jobs, such as serve --demo's, at 100%).
  await page.evaluate((old) => {
    window.__progress = [];
    new MutationObserver(() => {
      for (const row of document.querySelectorAll('table.jobs tr[data-kind="train"]')) {
        const el = row.querySelector('[role="progressbar"]');
        const v = el?.dataset.progress;
        if (!old.includes(row.dataset.job) && v && window.__progress.at(-1) !== v) window.__progress.push(v);
      }
    }).observe(document.querySelector('table.jobs tbody'), { childList: true, subtree: true });
  }, before);
  model = `e2e-crf-${Date.now() % 100000}`;
  await page.locator('button[data-kind="train"]').focus();
  await page.keyboard.press('Enter');
  await page.selectOption('#train-corpus', corpus.name);
  await page.locator('#train-model').focus();
  await page.keyboard.type(model);
  await page.keyboard.press('Tab');
  await page.keyboard.type('10');
  await page.keyboard.press('Enter'); // submits the form
  const { id, row } = await finishedRow('train', before);
  assert.equal(await row.getAttribute('data-status'), 'succeeded', `training: ${await row.innerText()}`);
  const bar = row.locator('[role="progressbar"]');
  assert.equal(await bar.getAttribute('aria-valuenow'), '100');
  assert.equal(await bar.locator('.pct').innerText(), '100%');
  progressSeen.push(...await page.evaluate(() => window.__progress));
  const events = sockets.flatMap((s) => s.frames).map((f) => JSON.parse(f)).filter((m) => m.type === 'next' && m.payload?.data?.job?.id === id);
  console.log(`training job ${id}: ${events.length} subscription events, progress ${events.map((m) => m.payload.data.job.progress ?? '·').join(' → ')}; shown ${progressSeen.join(' → ')}`);
  const nums = progressSeen.map(Number);
  assert.equal(nums.at(-1), 1, `progress reached 1: ${progressSeen}`);
  assert.deepEqual(nums, [...nums].sort((a, b) => a - b), 'progress never went back');
  assert.ok(sockets.some((s) => s.frames.some((f) => f.includes('"next"') && f.includes(id))), 'the job came through the job(id) subscription');
  const j = await jobQuery(id);
  assert.equal(j.status, 'succeeded');
  assert.equal(j.output.__typename, 'TrainOutput');
  assert.equal(j.output.modelName, model);
  const { jobs } = await gql(`query($id: ID!) { jobs(where: {id: $id}) { edges { node { params } } } }`, { id });
  assert.deepEqual(jobs.edges[0].node.params, { corpus: corpus.name, split: 'train', set: 'gold', model, config: { training: { max_iterations: 10 } } });
  assert.ok(await row.locator('a.result-model').isVisible(), 'the row links to the model');
});

let evaluationId;

test('tagging with that model from the form produces an evaluation with per-type bars', async () => {
  const before = await jobIds();
  await page.click('button[data-kind="tag"]');
  await page.waitForFunction((m) => [...document.querySelectorAll('#tag-model option')].some((o) => o.value === m), model, { timeout: 5000 });
  await page.selectOption('#tag-model', model);
  await page.selectOption('#tag-corpus', corpus.name);
  await page.fill('#tag-curve', '-2, 0, 2');
  await page.click('#form-tag button[type="submit"]');
  const { id, row } = await finishedRow('tag', before);
  assert.equal(await row.getAttribute('data-status'), 'succeeded', `tagging: ${await row.innerText()}`);
  assert.equal(await row.locator('[role="progressbar"]').getAttribute('aria-valuenow'), '100');
  const j = await jobQuery(id);
  evaluationId = String(j.output.evaluation);
  assert.ok(evaluationId, 'tagging a corpus with gold scores it');
  await shot('runs.png');

  const ms = await ready('evaluations/:id', () => row.locator('a.result-evaluation').click());
  timed('evaluation', ms);
  const { evaluations } = await gql(`query($id: ID!) { evaluations(where: {id: $id}) { edges { node { precision recall f1 report } } } }`, { id: evaluationId });
  const ev = evaluations.edges[0].node;
  // A number from the i2b2 table: the Strict row's micro F1 is the evaluation's F1.
  const strict = page.locator('table.measures tr[data-measure="Strict"]');
  assert.equal(await strict.locator('td.micro-f1').innerText(), ev.f1.toFixed(4));
  assert.equal(await strict.locator('td.micro-p').innerText(), ev.precision.toFixed(4));
  const token = ev.report.measures.find((m) => m.label === 'Token');
  assert.equal(await page.locator('table.measures tr[data-measure="Token"] td.micro-r').innerText(), token.micro_recall.toFixed(4));
  // Per-type bars: one per type, each the type's strict F1.
  const bars = await page.locator('figure[data-chart="per-type-f1"] g.bar').evaluateAll((gs) => gs.map((g) => ({ label: g.dataset.label, value: Number(g.dataset.value) })));
  assert.equal(bars.length, ev.report.per_type.length, 'one bar per type');
  for (const t of ev.report.per_type) {
    const b = bars.find((x) => x.label === t.type);
    assert.ok(b, `a bar for ${t.type}`);
    assert.ok(Math.abs(b.value - t.strict.f1) < 1e-9, `${t.type} F1 ${b.value} = ${t.strict.f1}`);
  }
  // The heat map and the error taxonomy carry the report's numbers.
  const types = ev.report.confusion.types;
  const diag = await page.locator(`figure[data-chart="confusion"] g.cell[data-row="${types[0]}"][data-col="${types[0]}"]`).getAttribute('data-value');
  assert.equal(Number(diag), ev.report.confusion.cells[0][0]);
  assert.equal(await page.locator('.error-kinds li[data-kind="missed"] .count').innerText(), ev.report.errors.total.missed.toLocaleString('en-US'));
  // The recall-bias curve asked for in the form: one point per bias, at the
  // report's precision and recall.
  const curve = ev.report.recall_bias_curve;
  assert.deepEqual(curve.map((p) => p.bias), [-2, 0, 2]);
  const pts = await page.locator('figure[data-chart="recall-bias-curve"] g.point').evaluateAll((gs) => gs.map((g) => ({
    label: g.dataset.label, p: Number(g.dataset.precision), r: Number(g.dataset.recall) })));
  assert.deepEqual(pts, curve.map((p) => ({ label: String(p.bias), p: p.precision, r: p.recall })));
  await shot('evaluation.png');
});

test('evaluations and models pages list what the runs made', async () => {
  let ms = await ready('evaluations', () => page.evaluate(() => { location.hash = '#/evaluations'; }));
  timed('evaluations', ms);
  const link = page.locator('a.eval-link', { hasText: `#${evaluationId}` });
  assert.ok(await link.isVisible(), 'the new evaluation is listed');
  ms = await ready('models', () => page.evaluate(() => { location.hash = '#/models'; }));
  timed('models', ms);
  const { models } = await gql(`query($n: String!) { models(where: {name: $n}) { edges { node { hash trainingSplit labels } } } }`, { n: model });
  const m = models.edges[0].node;
  const row = page.locator(`table.models tr[data-model="${model}"]`);
  assert.equal(await row.locator('code.hash').innerText(), m.hash.slice(0, 12));
  await shot('models.png');
});

test('every page fits a window 800 px wide and one of 1,366 px: nothing reaches past it', async () => {
  const routes = [['', 'home'], ['compare', 'compare'], ['corpus/demo', 'corpus/:name'], ['corpus/demo-twin', 'corpus/:name'], ['runs', 'runs'],
    ['evaluations', 'evaluations'], ['models', 'models'], ['models/demo-crf', 'models/:name'], ['releases', 'releases'],
    ['releases/demo-twin@1.0.0', 'releases/:ref'], ['audit', 'audit'], ['accounts', 'accounts'], ['settings', 'settings']];
  try {
    for (const width of [800, 1366]) {
      await page.setViewportSize({ width, height: 900 });
      for (const [path, route] of routes) {
        await ready(route, () => page.evaluate((h) => { location.hash = h; }, `#/${path}?w=${width}`));
        const over = await page.evaluate(() => {
          const w = document.documentElement.clientWidth;
          const outside = [...document.querySelectorAll('body *')].filter((el) => {
            const r = el.getBoundingClientRect();
            return r.width > 0 && r.right > w + 1 && !el.closest('.table-wrap, pre, .chart-scroll');
          }).map((el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}.${[...el.classList].join('.')}`);
          return { scroll: document.documentElement.scrollWidth, w, outside: outside.slice(0, 6) };
        });
        assert.ok(over.scroll <= over.w && !over.outside.length, `#/${path} at ${width} px: ${over.scroll} px wide in ${over.w}; past the window: ${over.outside.join(', ')}`);
      }
      await shot(`runs-${width}.png`);
    }
  } finally {
    await page.setViewportSize({ width: 1360, height: 900 });
  }
});

test('notes imported from the Corpora page: a CSV whose columns are named, followed to its corpus; a bad file says which', async () => {
  await ready('home', () => page.evaluate(() => { location.hash = '#/?import'; }));
  const csv = 'NOTE_ID,PERSON_ID,NOTE_TEXT\nn1,p1,"Seen by Dr. Adams on 2089-03-14."\nn2,p1,Follow-up.\nn3,p2,"Two\nlines."\n';
  await page.locator('#import-files').setInputFiles({ name: 'ehr.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
  await page.locator('#import-corpus').fill('ehr-notes');
  await page.locator('#import-tagset').selectOption('open');
  await page.locator('#import-format').selectOption('csv');
  await page.locator('#import-form button[type="submit"]').click();
  await page.waitForFunction(() => /Could not|failed/.test(document.getElementById('import-status').innerText));
  assert.match(await page.locator('#import-status').innerText(), /ehr\.csv/, 'the error names the file');
  await page.locator('#import-columns').fill('id=NOTE_ID,patient=PERSON_ID,text=NOTE_TEXT');
  await page.locator('#import-form button[type="submit"]').click();
  await page.waitForFunction(() => /succeeded/.test(document.getElementById('import-status').innerText), null, { timeout: 30_000 });
  const link = page.locator('#import-status a', { hasText: 'ehr-notes' });
  assert.equal(await link.getAttribute('href'), '#/corpus/ehr-notes');
  const { corpusByName } = await gql('{ corpusByName(name: "ehr-notes") { patients { totalCount } documents { totalCount } } }');
  assert.deepEqual(corpusByName, { patients: { totalCount: 2 }, documents: { totalCount: 3 } });
  await shot('import.png');
});

test('the demo ships two annotators who disagree: Adjudicate offers their sets, and their open notes rank by the model\'s uncertainty', async () => {
  await ready('corpus/:name/annotate', () => page.evaluate(() => { location.hash = '#/corpus/demo/annotate'; }));
  const rows = await page.locator('.annotate-sets table tbody tr th, .annotate-sets table tbody tr td:first-child').allInnerTexts();
  assert.ok(rows.some((r) => /:demo-ann$/.test(r)) && rows.some((r) => /:demo-bob$/.test(r)), `the demo's annotator sets are listed: ${rows}`);
  const set = (await page.locator('#queue-set option').allInnerTexts()).find((n) => n.endsWith(':demo-bob'));
  await page.locator('#queue-set').selectOption(set);
  await page.locator('#queue-model').selectOption('demo-crf');
  await page.locator('#queue-form button[type="submit"]').click();
  await page.waitForFunction(() => document.querySelector('#queue-out table, #queue-out .empty, #queue-out [role="alert"]'));
  const nats = await page.locator('#queue-out table tbody tr td:last-child').allInnerTexts();
  assert.ok(nats.length > 0, 'demo-bob has notes left to do');
  const values = nats.map(Number);
  assert.deepEqual(values, [...values].sort((a, b) => b - a), 'the most uncertain note first');
  await ready('corpus/:name/adjudicate', () => page.evaluate(() => { location.hash = '#/corpus/demo/adjudicate'; }));
  const offered = await page.locator('#adj-form input[name="set"]').evaluateAll((xs) => xs.map((x) => x.value));
  assert.ok(offered.filter((n) => /:demo-(ann|bob)$/.test(n)).length === 2, `Adjudicate offers both annotators' sets: ${offered}`);
});

test('two taggings compared with significance tests', async () => {
  await ready('runs', () => page.evaluate(() => { location.hash = '#/runs?start=tag'; }));
  const before = await jobIds();
  await page.selectOption('#tag-model', model);
  await page.fill('#tag-set', 'system-e2e-biased');
  await page.fill('#tag-bias', '2');
  await page.click('#form-tag button[type="submit"]');
  const { id, row } = await finishedRow('tag', before);
  assert.equal(await row.getAttribute('data-status'), 'succeeded', `biased tagging: ${await row.innerText()}`);
  const biased = String((await jobQuery(id)).output.evaluation);
  await ready('evaluations', () => page.evaluate(() => { location.hash = '#/evaluations'; }));
  await page.selectOption('#cmp-a', evaluationId);
  await page.selectOption('#cmp-b', biased);
  const ms = await ready('evaluations/:a/vs/:b', () => page.click('.compare-form button[type="submit"]'));
  timed('compare', ms);
  const { compareEvaluations: c } = await gql(`query($a: ID!, $b: ID!) { compareEvaluations(a: $a, b: $b) }`, { a: evaluationId, b: biased });
  const all = c.tests.find((t) => t.scope === 'ALL');
  const shown = await page.locator('table.tests tr[data-scope="ALL"] td.p').innerText();
  assert.equal(Number(shown), Number(all.p < 0.0001 ? all.p.toExponential(1) : all.p.toFixed(4)), 'p of the all-tags test');
  assert.match(await page.locator('table.tests caption').innerText(), /Bonferroni threshold/);
  assert.equal(await page.locator('figure[data-chart="ci"] g.interval').count(), 6, 'P, R, F1 intervals for both systems');
  await shot('compare.png');
});

let surrogate; // the surrogate corpus's name

test('resynthesis from the form with a policy of its own: broken JSON is named at once, a placeholder for ages reaches the surrogate text', async () => {
  await ready('runs', () => page.evaluate(() => { location.hash = '#/runs?start=resynthesize&policy'; }));
  await page.selectOption('#resynth-corpus', corpus.name);
  await page.fill('#resynth-out', 'masked-ages');
  await page.fill('#resynth-policy', '{"types": {"AGE": {"strategy": "placeholder"}');
  await page.click('#form-resynthesize button[type="submit"]');
  assert.match(await page.locator('#form-resynthesize .form-status').innerText(), /^Policy: .*JSON/);
  await page.fill('#resynth-policy', '{"types": {"AGE": {"strategy": "placeholder"}}}');
  const before = await jobIds();
  await page.click('#form-resynthesize button[type="submit"]');
  try {
    const { row } = await finishedRow('resynthesize', before);
    assert.equal(await row.getAttribute('data-status'), 'succeeded', `resynthesis: ${await row.innerText()}`);
    const { documents } = await gql('{ documents(first: 200, where: {hasCorpusWith: {name: "masked-ages"}}) { edges { node { text annotations(set: "gold") { type text } } } } }');
    const ages = documents.edges.flatMap((e) => e.node.annotations).filter((a) => a.type === 'AGE');
    assert.ok(ages.length > 0 && ages.every((a) => a.text === '[AGE]'), `every age is [AGE]: ${ages.slice(0, 3).map((a) => a.text)}`);
  } finally {
    await gql('mutation { deleteCorpus(name: "masked-ages") }').catch(() => {});
  }
});

test('de-identification from the form: the demo\'s notes tagged at demo-crf\'s privacy point, resynthesized, the risk left stated', async () => {
  await ready('runs', () => page.evaluate(() => { location.hash = '#/runs?start=deidentify'; }));
  await page.selectOption('#deid-corpus', corpus.name);
  await page.selectOption('#deid-model', 'demo-crf');
  await page.fill('#deid-out', 'demo-deid');
  await page.fill('#deid-target', '0.5'); // the browser's own bounds let 0.5 through; the form's (0.5, 1] does not
  await page.click('#form-deidentify button[type="submit"]');
  assert.match(await page.locator('#form-deidentify .form-status').innerText(), /Target recall: a fraction in \(0\.5, 1\]/);
  await page.fill('#deid-target', '');
  await page.fill('#deid-policy', '{"maxNoteLeakRate": 0.5}');
  const before = await jobIds();
  await page.click('#form-deidentify button[type="submit"]');
  try {
    const { row } = await finishedRow('deidentify', before, 60_000);
    const status = await row.getAttribute('data-status');
    assert.ok(['succeeded', 'check_failed'].includes(status), `deidentify: ${await row.innerText()}`);
    const { corpusByName } = await gql('{ corpusByName(name: "demo-deid") { kind documents { totalCount } provenance } }');
    assert.equal(corpusByName.kind, 'surrogate');
    assert.ok(corpusByName.documents.totalCount > 0);
    assert.equal(corpusByName.provenance.tagger?.model, 'demo-crf', 'the corpus records the tagger whose spans it replaced');
  } finally {
    await gql('mutation { deleteCorpus(name: "demo-deid") }').catch(() => {});
  }
});

test('resynthesis from the form: the surrogate corpus shows its check, and the original beside a surrogate note', async () => {
  await ready('runs', () => page.evaluate(() => { location.hash = '#/runs?start=resynthesize'; }));
  const before = await jobIds();
  await page.selectOption('#resynth-corpus', corpus.name);
  const out = await page.inputValue('#resynth-out');
  surrogate = out;
  await page.click('#form-resynthesize button[type="submit"]');
  const { row } = await finishedRow('resynthesize', before);
  assert.equal(await row.getAttribute('data-status'), 'succeeded', `resynthesis: ${await row.innerText()}`);
  const ms = await ready('corpus/:name', () => row.locator('a', { hasText: `Corpus ${out}` }).click());
  timed('surrogate corpus', ms);
  const { corpusByName: sc } = await gql(`query($n: String!) { corpusByName(name: $n) { provenance } }`, { n: out });
  const check = sc.provenance.check;
  assert.equal(await page.locator('[data-ok]').getAttribute('data-ok'), String(check.ok));
  assert.equal(await page.locator('table.name-patterns tbody tr').count(), check.namePatterns.length);
  // The whole corpus's unannotated finds, as the sharing check counts them.
  const whole = Object.values(sc.provenance.unannotatedDocuments || {}).reduce((a, n) => a + n, 0);
  assert.equal(await page.locator('table.check tr', { hasText: 'Unannotated, whole corpus' }).locator('td.num').innerText(), String(whole));
  await page.locator('table.name-patterns').scrollIntoViewIfNeeded();
  await shot('surrogate-corpus.png');
  // The surrogate corpus names the note by a pseudonym of its id.
  const { surrogateIDs } = await gql(`query($c: String!, $d: String!) { surrogateIDs(corpus: $c, source: [$d]) { kind surrogate } }`, { c: out, d: doc.externalID });
  surDoc = surrogateIDs.find((p) => p.kind === 'document').surrogate;
  assert.match(surDoc, /^[1-9]\d{17}$/);
  await ready('corpus/:name/doc/:doc', () => page.evaluate(([c, d]) => { location.hash = `#/corpus/${encodeURIComponent(c)}/doc/${encodeURIComponent(d)}`; }, [out, surDoc]));
  await ready('corpus/:name/doc/:doc/original', () => page.click('a.original-link'));
  const left = await page.locator('pre[data-side="org"] mark[tabindex="0"]').count();
  const right = await page.locator('pre[data-side="sur"] mark[tabindex="0"]').count();
  assert.equal(left, spans.length, 'the original shows its gold spans');
  assert.equal(right, spans.length, 'the surrogate has as many spans');
  assert.equal(await page.locator('table.replacements tbody tr').count(), spans.length);
  await page.locator('pre[data-side="sur"] mark[tabindex="0"]').first().focus();
  assert.equal(await page.locator('mark.paired').count() >= 2, true, 'focusing a surrogate span marks its original');
  await shot('original-beside-surrogate.png');
});

// A note whose patient's surname is also in a date no pattern reads, whose
// words resynthesis keeps for review: the check finds the surname there.
const LEAKING_NOTE = `<?xml version="1.0" encoding="UTF-8" ?>
<deIdi2b2>
<TEXT><![CDATA[Mr. Garfunkel was seen on Garfunkel Day 2001.]]></TEXT>
<TAGS>
<NAME id="P0" start="4" end="13" text="Garfunkel" TYPE="PATIENT" comment="" />
<DATE id="P1" start="26" end="44" text="Garfunkel Day 2001" TYPE="DATE" comment="" />
</TAGS>
</deIdi2b2>
`;

test('a resynthesis whose check finds a leak shows as check failed, and its corpus as quarantined', async () => {
  const dir = join(tmp, 'leaky');
  await mkdir(dir);
  await writeFile(join(dir, '900-01.xml'), LEAKING_NOTE);
  execFileSync(bin, ['import', '--db', db, '--corpus', 'leaky', '--tagset', 'i2b2-2014', dir], { stdio: 'ignore' });
  await ready('runs', () => page.evaluate(() => { location.hash = '#/runs?start=resynthesize'; }));
  const before = await jobIds();
  await page.selectOption('#resynth-corpus', 'leaky');
  const out = await page.inputValue('#resynth-out');
  await page.click('#form-resynthesize button[type="submit"]');
  const { id, row } = await finishedRow('resynthesize', before);
  assert.equal(await row.getAttribute('data-status'), 'check_failed', `resynthesis: ${await row.innerText()}`);
  assert.equal(await row.locator('.status').innerText(), 'check failed');
  assert.ok(await row.locator('.status').evaluate((e) => {
    const failed = document.body.appendChild(Object.assign(document.createElement('span'), { className: 'status s-failed' }));
    const same = ['color', 'backgroundColor'].every((k) => getComputedStyle(failed)[k] === getComputedStyle(e)[k]);
    failed.remove();
    return same;
  }), 'coloured as a failed run');
  assert.match(await row.innerText(), /quarantined/);
  const job = await jobQuery(id);
  assert.equal(job.status, 'check_failed');
  await shot('runs-check-failed.png');

  await ready('home', () => page.evaluate(() => { location.hash = '#/'; }));
  const badge = page.locator('table.corpora tr', { hasText: out }).locator('.k-quarantined');
  assert.equal(await badge.innerText(), 'quarantined');
  await ready('corpus/:name', () => page.locator('table.corpora a.corpus-link', { hasText: out }).click());
  assert.match(await page.locator('p.quarantine').innerText(), /Quarantined: .* 1 unresolved problems/);
  assert.equal(await page.locator('[data-ok]').getAttribute('data-ok'), 'false');
  await shot('corpus-quarantined.png');
});

test('the researcher sees the surrogate corpus, but neither the original beside it nor resynthesis', async () => {
  const ms = await ready('home', () => researcher.evaluate(() => { location.hash = '#/'; }), researcher);
  timed('corpora (researcher, surrogate)', ms);
  const { corpora } = await gql('{ corpora { edges { node { name kind } } } }', {}, researcherToken);
  // The demo's twin and the one made from the form: surrogate corpora only.
  const byName = (a, b) => a.name.localeCompare(b.name);
  assert.deepEqual(corpora.edges.map((e) => e.node).sort(byName), [{ name: 'demo-twin', kind: 'surrogate' }, { name: surrogate, kind: 'surrogate' }].sort(byName));
  assert.deepEqual((await researcher.locator('table.corpora a.corpus-link').allInnerTexts()).sort(), ['demo-twin', surrogate].sort());
  assert.deepEqual(await researcher.locator('table.corpora .corpus-kind').allInnerTexts(), ['surrogate', 'surrogate']);
  await ready('corpus/:name/doc/:doc', () => researcher.evaluate(([c, d]) => {
    location.hash = `#/corpus/${encodeURIComponent(c)}/doc/${encodeURIComponent(d)}`;
  }, [surrogate, surDoc]), researcher);
  assert.ok(await researcher.locator('mark.phi').count() > 0, 'the surrogate note with its spans');
  assert.equal(await researcher.locator('a.original-link').count(), 0, 'no way to the original');
  await ready('error', () => researcher.evaluate(([c, d]) => {
    location.hash = `#/corpus/${encodeURIComponent(c)}/doc/${encodeURIComponent(d)}/original`;
  }, [surrogate, surDoc]), researcher);
  assert.match(await researcher.locator('[role="alert"]').innerText(), /original note beside its surrogate needs the admin or curator role/);
  await ready('runs', () => researcher.evaluate(() => { location.hash = '#/runs'; }), researcher);
  const tabs = await researcher.locator('.segmented button').allInnerTexts();
  assert.ok(tabs.includes('Training') && tabs.includes('Tagging') && tabs.includes('Export'), `runs a researcher may start: ${tabs}`);
  assert.ok(!tabs.includes('Resynthesis'), `no resynthesis: ${tabs}`);
  assert.equal(await researcher.locator('#form-resynthesize').count(), 0);
  await shot('researcher-runs.png', researcher);
});

/** save clicks a download button and returns the file the browser saved: {name, bytes}. */
async function save(button) {
  const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 15_000 }), button.click()]);
  const name = dl.suggestedFilename();
  const file = join(tmp, `dl-${Date.now()}-${name}`);
  await dl.saveAs(file);
  return { name, bytes: await readFile(file) };
}

/** The file name and type the server gives a download, asked with the token. */
async function served(url) {
  const res = await fetch(base + url, { headers: { Authorization: `Bearer ${adminToken}` } });
  assert.equal(res.status, 200, `${url} with the token`);
  const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') || '')?.[1];
  return { name, type: res.headers.get('content-type') };
}

test('an export run ends with a download, fetched with the token and saved under the server\'s file name', async () => {
  await ready('runs', () => page.evaluate(() => { location.hash = '#/runs?start=export'; }));
  const before = await jobIds();
  await page.selectOption('#export-corpus', corpus.name);
  await page.click('#form-export button[type="submit"]');
  const { row } = await finishedRow('export', before);
  assert.equal(await row.getAttribute('data-status'), 'succeeded');
  const button = row.locator('button.result-download');
  const url = await button.getAttribute('data-url');
  assert.match(url, /^\/download\/artifacts\/\d+$/);
  const noToken = await fetch(base + url);
  assert.equal(noToken.status, 401, 'a plain link would not do');
  const { name, bytes } = await save(button);
  assert.equal(name, (await served(url)).name, 'the name of Content-Disposition');
  assert.ok(bytes.length > 100, `${bytes.length} bytes`);
  assert.equal(bytes.subarray(0, 2).toString('latin1'), 'PK', 'a zip archive');
  assert.equal(await row.locator('.download-status.ok').innerText(), `Saved ${name} (${Math.max(1, Math.round(bytes.length / 1024))} KB).`);
  // When the server refuses, its own words are shown: here the request loses its token on the way.
  await page.route('**/download/**', (r) => {
    const headers = { ...r.request().headers() };
    delete headers.authorization;
    r.continue({ headers });
  });
  await button.click();
  const alert = row.locator('.download-status[role="alert"]');
  await alert.waitFor();
  assert.match(await alert.innerText(), /^Download failed: send an API token/);
  await page.unroute('**/download/**');
  await shot('export-download.png');
});

test('a run can be cancelled and retried from its row', async () => {
  await ready('runs', () => page.evaluate(() => { location.hash = '#/runs'; }));
  const before = await jobIds();
  // A training that cannot stop early (no convergence test), so the job is
  // still running when Cancel is pressed; the form sets iterations only.
  await gql(`mutation($c: String!, $m: String!) { startTraining(input: {corpus: $c, model: $m,
    config: {training: {max_iterations: 100000, epsilon: 0, gradient_threshold: 0}}}) { id } }`,
  { c: corpus.name, m: `${model}-long` });
  await ready(null, () => page.evaluate(() => { location.hash = '#/models'; }));
  await ready('runs', () => page.evaluate(() => { location.hash = '#/runs'; }));
  const cancel = page.locator('table.jobs tbody tr').first().locator('button[data-action="cancel"]');
  await cancel.click();
  const { id, row } = await finishedRow('train', before, 20_000);
  assert.equal(await row.getAttribute('data-status'), 'cancelled', `cancelled: ${await row.innerText()}`);
  await row.locator('button[data-action="retry"]').click();
  await page.waitForFunction((i) => ['queued', 'running'].includes(document.querySelector(`tr[data-job="${i}"]`)?.dataset.status), id, { timeout: 10_000 });
  await page.locator(`tr[data-job="${id}"] button[data-action="cancel"]`).click();
  await page.waitForFunction((i) => document.querySelector(`tr[data-job="${i}"]`)?.dataset.status === 'cancelled', id, { timeout: 20_000 });
  const j = await gql(`query($id: ID!) { jobs(where: {id: $id}) { edges { node { status attempts } } } }`, { id });
  assert.equal(j.jobs.edges[0].node.status, 'cancelled');
  assert.equal(await page.locator(`tr[data-job="${id}"] td.num`).innerText(), String(j.jobs.edges[0].node.attempts));
});

// ---- Releases and provenance ---------------------------------------------
// Freeze the demo corpus from the form, read its datasheet and download it,
// freeze it again unchanged and see the diff say so, be refused sharing of
// original text, and follow lineage chains on the object pages.

let rel; // the first release's name
const refOf = (v) => `${rel}@${v}`;
const releaseQuery = (ref) => gql(`query($r: String!) { release(ref: $r) { id ref documents spans rootHash parentRef datasheet } }`, { r: ref }).then((d) => d.release);

/** createFromForm fills the release form (name typed, so the version and parent are suggested) and submits it with the keyboard. */
async function createFromForm(name, { share = false, pseudonymous = false } = {}) {
  await page.selectOption('#rel-corpus', corpus.name);
  await page.fill('#rel-name', '');
  await page.locator('#rel-name').focus();
  await page.keyboard.type(name);
  if (share) await page.check('#rel-share');
  if (pseudonymous) await page.check('#rel-pseudonymous');
  await page.fill('#rel-description', 'made by the browser tests');
  await page.locator('#form-release button[type="submit"]').focus();
  await page.keyboard.press('Enter');
}

test('a release of the demo corpus made from the form is listed, and its datasheet shows its document count', async () => {
  let ms = await ready('releases', () => page.evaluate(() => { location.hash = '#/releases'; }));
  timed('releases', ms);
  assert.ok(await page.locator('#nav a', { hasText: 'Releases' }).isVisible(), 'Releases is in the navigation');
  rel = `e2e-${corpus.name}-${Date.now() % 100000}`;
  await ready('releases', () => createFromForm(rel));
  const r = await releaseQuery(refOf('1.0.0'));
  assert.ok(r, `${refOf('1.0.0')} was created`);
  const row = page.locator(`table.releases tr[data-ref="${r.ref}"]`);
  assert.ok(await row.isVisible(), 'the new release is listed');
  assert.equal(await row.locator('td.documents').innerText(), r.documents.toLocaleString('en-US'));
  assert.equal(await row.locator('td.spans').innerText(), r.spans.toLocaleString('en-US'));
  assert.equal(await row.locator('code.hash').innerText(), r.rootHash.slice(0, 12));
  assert.match(await page.locator('#created-note').innerText(), new RegExp(`Release ${r.ref} created`));
  await shot('releases.png');

  ms = await ready('releases/:ref', () => row.locator('a.release-link').click());
  timed('release', ms);
  const { corpusByName: c } = await gql(`query($n: String!) { corpusByName(name: $n) { documents { totalCount } } }`, { n: corpus.name });
  assert.equal(r.documents, c.documents.totalCount, 'the release holds every document of the corpus');
  const n = r.documents.toLocaleString('en-US');
  assert.equal(await page.locator('.figures .documents').innerText(), n);
  const sheet = page.locator('.datasheet');
  assert.match(await sheet.locator('p', { hasText: 'documents of' }).innerText(), new RegExp(`^${r.documents} documents of \\d+ patients`));
  // The Markdown is rendered: headings, tables, the provenance in words.
  assert.equal(await sheet.locator('h3').first().innerText(), r.ref);
  assert.ok(await sheet.locator('h4', { hasText: 'PHI by type' }).isVisible());
  assert.ok(await sheet.locator('table').count() >= 4, 'the datasheet tables are tables');
  assert.equal(await sheet.locator('pre.code').count(), 0, 'provenance in words, not JSON');
  assert.match(await sheet.locator('tr', { hasText: 'made by' }).innerText(), /made by\s+synthesis \(no real PHI\)/);
  assert.equal(await sheet.locator('tr', { hasText: 'root hash (SHA-256)' }).locator('code').innerText(), r.rootHash);
  assert.equal(await sheet.evaluate((el) => el.innerHTML.includes('```') || el.innerHTML.includes('|---')), false, 'no raw Markdown left');
  // Provenance: the release, then the corpus it froze, linked.
  const steps = page.locator('#provenance li.step');
  assert.equal(await steps.first().getAttribute('data-kind'), 'Release');
  assert.equal(await page.locator('#provenance li.step[data-kind="Corpus"] a.step-link').first().innerText(), corpus.name);
  assert.match(await steps.first().locator('.code-version').innerText(), /code version \S+/);
  await shot('release.png');

  // Every format downloads as a zip, through the button (fetch with the token, then a blob).
  for (const f of ['i2b2', 'brat', 'jsonl']) {
    const button = page.locator(`button.download[data-format="${f}"]`);
    const url = await button.getAttribute('data-url');
    assert.match(url, new RegExp(`^/download/releases/.+format=${f}$`));
    const want = await served(url);
    assert.equal(want.type, 'application/zip', `${f} content type`);
    const { name, bytes } = await save(button);
    assert.equal(name, want.name, `${f}: the server's file name`);
    assert.equal(name, `${r.ref.replace(/[^A-Za-z0-9._-]/g, '_')}-${f}.zip`);
    assert.equal(bytes.subarray(0, 2).toString('latin1'), 'PK', `${f}: a zip archive`);
  }
});

test('a second version with nothing changed: its parent is suggested, and the diff says no changes', async () => {
  await ready('releases', () => page.evaluate(() => { location.hash = '#/releases'; }));
  await page.selectOption('#rel-corpus', corpus.name);
  await page.fill('#rel-name', rel);
  assert.equal(await page.inputValue('#rel-version'), '1.0.1', 'the next patch version is suggested');
  assert.equal(await page.inputValue('#rel-parent'), refOf('1.0.0'), 'the newest release of the name is the parent');
  await ready('releases', () => page.click('#form-release button[type="submit"]'));
  const r2 = await releaseQuery(refOf('1.0.1'));
  assert.equal(r2.parentRef, refOf('1.0.0'));
  await ready('releases/:ref', () => page.locator(`table.releases tr[data-ref="${r2.ref}"] a.release-link`).click());
  assert.equal(await page.locator('a.parent-link').innerText(), refOf('1.0.0'));
  assert.equal(await page.inputValue('#diff-other'), refOf('1.0.0'));
  const ms = await ready('releases/:a/diff/:b', () => page.click('.diff-form button[type="submit"]'));
  timed('release diff', ms);
  const { releaseDiff: d } = await gql(`query($a: String!, $b: String!) { releaseDiff(a: $a, b: $b) }`, { a: refOf('1.0.0'), b: refOf('1.0.1') });
  for (const k of ['documentsAdded', 'documentsRemoved', 'documentsChanged', 'spansAdded', 'spansRemoved', 'spansRelabelled']) {
    assert.deepEqual(d[k], [], `${k} is empty`);
    assert.equal(await page.locator(`.figures .count.${k}`).innerText(), '0');
  }
  assert.equal(await page.locator('.diff-page').getAttribute('data-changes'), '0');
  assert.match(await page.locator('.no-changes').innerText(), /^No changes: .*same documents and spans.*same root hash/);
  await shot('release-diff.png');
});

test('a release with pseudonymous ids says so in its datasheet', async () => {
  await ready('releases', () => page.evaluate(() => { location.hash = '#/releases'; }));
  const name = `${rel}-pseudonymous`;
  await ready('releases', () => createFromForm(name, { pseudonymous: true }));
  const r = await releaseQuery(`${name}@1.0.0`);
  assert.ok(r, 'the release was created');
  assert.match(r.datasheet, /\| document and patient ids \| pseudonymous/);
  const first = await releaseQuery(refOf('1.0.0'));
  assert.match(first.datasheet, /\| document and patient ids \| the corpus's own \|/);
  assert.notEqual(r.rootHash, first.rootHash, 'the content hashes cover the ids');
});

test('sharing the original-text demo corpus is refused with a visible message', async () => {
  await ready('releases', () => page.evaluate(() => { location.hash = '#/releases'; }));
  const name = `${rel}-shared`;
  await createFromForm(name, { share: true });
  const msg = page.locator('#rel-status.refused[role="alert"]');
  await msg.waitFor({ state: 'visible', timeout: 10_000 });
  const text = await msg.innerText();
  assert.match(text, /^Sharing refused: /);
  assert.match(text, /holds original text .*cannot be released for outside sharing/);
  assert.equal(await releaseQuery(`${name}@1.0.0`), null, 'nothing was released');
  await msg.scrollIntoViewIfNeeded();
  await shot('release-refused.png');
});

test('provenance on the evaluation, model and surrogate corpus pages: jobs, parameters, code versions, links', async () => {
  // The evaluation: made by the tagging job, of the model, trained on the corpus.
  let ms = await ready('evaluations/:id', () => page.evaluate((id) => { location.hash = `#/evaluations/${id}`; }, evaluationId));
  timed('evaluation with provenance', ms);
  const { lineage } = await gql(`query($id: ID!) { lineage(id: $id) { kind name job { id kind status } codeVersion } }`, { id: evaluationId });
  const shown = await page.locator('#provenance li.step').evaluateAll((ls) => ls.map((l) => ({
    kind: l.dataset.kind, name: l.querySelector('.step-head a, .step-head .step-name').textContent,
    job: l.querySelector('.step-job')?.dataset.job, status: l.querySelector('.step-job')?.dataset.status,
  })));
  assert.deepEqual(shown.map((s) => s.kind), lineage.map((s) => s.kind));
  assert.deepEqual(shown.map((s) => s.name), lineage.map((s) => s.name));
  assert.deepEqual(shown.map((s) => s.job), lineage.map((s) => s.job?.id));
  assert.equal(shown[0].status, 'succeeded');
  assert.ok(lineage.some((s) => s.kind === 'Corpus'), 'the chain reaches the corpus');
  assert.ok(lineage.some((s) => s.kind === 'Model'), 'the chain reaches the model that tagged the system set');
  assert.equal(await page.locator('#provenance li.step[data-kind="Corpus"] a.step-link').last().getAttribute('href'), `#/corpus/${encodeURIComponent(corpus.name)}`);
  await page.locator('#provenance').scrollIntoViewIfNeeded();
  await shot('evaluation-provenance.png');
  // The model: its training job's parameters; its corpus step opened from the keyboard.
  await ready('models', () => page.evaluate(() => { location.hash = '#/models'; }));
  ms = await ready('models/:name', () => page.locator(`table.models tr[data-model="${model}"] a.model-name`).click());
  timed('model', ms);
  const m = page.locator('#provenance li.step').first();
  assert.equal(await m.getAttribute('data-kind'), 'Model');
  assert.equal(await m.locator('.step-job .status').innerText(), 'succeeded');
  assert.equal(await m.locator('dl.params [data-key="model"] dd').innerText(), model);
  assert.match(await m.locator('dl.params [data-key="config"] dd').innerText(), /max_iterations/);
  await shot('model.png');
  await page.locator('#provenance li.step[data-kind="Corpus"] a.step-link').focus();
  ms = await ready('corpus/:name', () => page.keyboard.press('Enter'));
  assert.ok(await page.locator('#provenance li.step[data-kind="Corpus"]').first().isVisible());
  // The surrogate corpus: the resynthesis job with its seed, then the source corpus.
  await ready('corpus/:name', () => page.evaluate((n) => { location.hash = `#/corpus/${encodeURIComponent(n)}`; }, surrogate));
  const first = page.locator('#provenance li.step').first();
  assert.equal(await first.locator('.step-job').innerText().then((t) => t.includes('(resynthesize)')), true);
  assert.equal(await first.locator('dl.params [data-key="seed"] dd').innerText(), '1');
  assert.match(await first.locator('.code-version').innerText(), /code version \S+/);
  assert.equal(await page.locator('#provenance li.step[data-kind="Corpus"] a.step-link').nth(1).innerText(), corpus.name);
  await page.locator('#provenance').scrollIntoViewIfNeeded();
  await shot('corpus-provenance.png');
});

test('a missing release shows a message', async () => {
  await ready('error', () => page.evaluate(() => { location.hash = '#/releases/nothing@9.9.9'; }));
  assert.match(await page.locator('[role="alert"]').innerText(), /no release nothing@9\.9\.9/i);
});

test('a missing evaluation shows a message; no script errors on the new pages', async () => {
  await ready('error', () => page.evaluate(() => { location.hash = '#/evaluations/999999999'; }));
  assert.match(await page.locator('[role="alert"]').innerText(), /no evaluation/i);
  assert.deepEqual(unexpectedErrors(), []);
});

test('a revoked token brings back the sign-in view, with the server\'s reason', async () => {
  const { tokens } = await gql('{ tokens { id user { name } revokedAt } }');
  const t = tokens.find((x) => x.user.name === 'e2e-researcher' && !x.revokedAt);
  await gql('mutation($id: ID!) { revokeToken(id: $id) { id } }', { id: t.id });
  await ready('signin', () => researcher.evaluate(() => { location.hash = '#/releases'; }), researcher);
  assert.match(await researcher.locator('#signin-reason[role="alert"]').innerText(), /^The server refused the stored token: \S/);
  assert.equal(await storedToken(researcher), null, 'the refused token is forgotten');
  assert.equal(await researcher.locator('#account').innerText(), '');
  await shot('signin-revoked.png', researcher);
});

// ---- Accounts and tokens -------------------------------------------------------
// The admin makes accounts and tokens on the dashboard (no CLI): a researcher
// with a token shown once that signs in a fresh browser, revoked and then
// refused; the last admin kept by the server; a corpus assigned to an
// annotator. Tokens are made through the GraphQL API as well, where the
// browser has no say.

const tokensOf = async (name) => (await gql('{ tokens { id name prefix expiresAt revokedAt user { name } } }')).tokens.filter((t) => t.user.name === name);
const accountRows = (p = page) => p.locator('table.accounts tbody tr').evaluateAll((rs) => rs.map((r) => ({ name: r.dataset.account, role: r.dataset.role })));

/** rawGql returns the whole answer (errors included) as the admin. */
async function rawGql(query, variables = {}) {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${adminToken}` }, body: JSON.stringify({ query, variables }),
  });
  return res.json();
}

/** makeAccount fills the Accounts page's form and lands on the new account's page. */
async function makeAccount(name, role, { keyboard = false } = {}) {
  if (await page.evaluate(() => location.hash) !== '#/accounts') await ready('accounts', () => page.evaluate(() => { location.hash = '#/accounts'; }));
  if (keyboard) {
    await page.fill('#new-account-name', '');
    await page.locator('#new-account-name').focus();
    await page.keyboard.type(name);
    await page.keyboard.press('Tab'); // the role
    await page.keyboard.type(role.slice(0, 3)); // a closed select picks the option its letters start
    assert.equal(await page.inputValue('#new-account-role'), role, 'the role picked from the keyboard');
    await page.keyboard.press('Tab'); // Make account
    return ready('accounts/:name', () => page.keyboard.press('Enter'));
  }
  await page.fill('#new-account-name', name);
  await page.selectOption('#new-account-role', role);
  return ready('accounts/:name', () => page.click('#new-account-form button[type="submit"]'));
}

const rita = 'e2e-rita';
let ritaToken, ritaPage;

test('the Accounts page (admins) lists every account; a researcher made from its form, keyboard only, lands on its own page', async () => {
  let ms = await ready('accounts', () => page.locator('#nav a', { hasText: 'Accounts' }).click());
  timed('accounts', ms);
  const { users } = await gql('{ users(first: 500, orderBy: {field: NAME}) { edges { node { name role } } } }');
  assert.deepEqual(await accountRows(), users.edges.map((e) => e.node), 'every account, by name, with its role');
  // An empty role is the form's to catch; a bad name is the server's, in its words.
  await page.fill('#new-account-name', 'e2e bad name');
  await page.click('#new-account-form button[type="submit"]');
  assert.equal(await page.locator('#new-account-status[role="alert"]').innerText(), 'Choose the account’s role.');
  await page.selectOption('#new-account-role', 'researcher');
  await page.click('#new-account-form button[type="submit"]');
  await page.waitForFunction(() => /Could not make/.test(document.querySelector('#new-account-status')?.textContent));
  assert.match(await page.locator('#new-account-status[role="alert"]').innerText(), /^Could not make the account: account name "e2e bad name" must be non-empty, without spaces or ':'$/);

  ms = await makeAccount(rita, 'researcher', { keyboard: true });
  timed('account', ms);
  assert.equal(await page.locator('.account-title').innerText(), rita);
  assert.match(await page.locator('#account-note').innerText(), /^Account e2e-rita made, with the researcher role\. Make it a token below/);
  await page.waitForFunction(() => document.activeElement?.id === 'account-token-name');
  const { users: made } = await gql('query($n: String!) { users(where: {name: $n}) { edges { node { role disabled } } } }', { n: rita });
  assert.deepEqual(made.edges[0].node, { role: 'researcher', disabled: false });
  assert.equal(await page.locator('#assign-form').count(), 0, 'no corpus is assigned to a researcher');
  assert.match(await page.locator('.not-annotator').innerText(), /Only annotators are given corpora/);
});

test('a token made for the researcher is shown once, copied with a button, and signs in a fresh browser as the researcher', async () => {
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  // Keyboard only: the focus is on the token's name.
  await page.keyboard.type('e2e laptop');
  await page.keyboard.press('Tab');
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.type('30');
  await page.keyboard.press('Enter');
  const panel = page.locator('.new-token');
  await panel.waitFor();
  const value = await page.inputValue('.new-token-value');
  assert.match(value, /^dct_[a-z2-7]{52}$/, 'the token itself');
  ritaToken = value;
  assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('new-token-value')), true, 'the token has the focus, selected');
  assert.match(await panel.locator('.warn').innerText(), /Copy it now: it will not be shown again/);
  assert.equal(await panel.getAttribute('data-owner'), rita);
  await panel.locator('button.copy-token').click();
  await page.waitForFunction(() => document.querySelector('.copy-status')?.textContent);
  assert.equal(await panel.locator('.copy-status').innerText(), 'Copied to the clipboard.');
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), ritaToken, 'the clipboard holds the token');
  // Listed with its prefix, 30 days, active; the API agrees.
  const [t] = await tokensOf(rita);
  assert.ok(ritaToken.startsWith(t.prefix));
  assert.equal(t.name, 'e2e laptop');
  const days = (Date.parse(t.expiresAt) - Date.now()) / 86_400_000;
  assert.ok(days > 29.9 && days <= 30, `expires in 30 days: ${t.expiresAt}`);
  const row = page.locator(`table.tokens tr[data-token="${t.id}"]`);
  await row.waitFor();
  assert.equal(await row.getAttribute('data-status'), 'active');
  assert.equal(await row.locator('td.prefix').innerText(), `${t.prefix}…`);
  await shot('account-new-token.png');
  // A lifetime the server refuses: its words, and the token still on show.
  await page.fill('#account-token-days', '-5');
  await page.click('#account-token-form button[type="submit"]');
  const refused = page.locator('#account-token-form-status[role="alert"]');
  await refused.waitFor();
  assert.equal(await refused.innerText(), 'Could not make the token: a token lasts 1 to 36500 days, or 0 for no expiry (not -5)');
  assert.equal(await page.inputValue('.new-token-value'), ritaToken, 'a failure does not take the new token away');
  assert.equal((await tokensOf(rita)).length, 1);
  // Shown once: the page again has the prefix only.
  await ready('accounts/:name', () => page.reload());
  assert.equal(await page.locator('.new-token').count(), 0);
  assert.equal((await page.content()).includes(ritaToken), false, 'the token is nowhere on the page');
  assert.equal(await page.locator(`table.tokens tr[data-token="${t.id}"] td.prefix`).innerText(), `${t.prefix}…`);

  // A fresh browser (no stored token) signs in with it, and sees a researcher's dashboard.
  ritaPage = await newPage();
  await ready('signin', () => ritaPage.goto(base + '/'), ritaPage);
  await ritaPage.fill('#signin-token', ritaToken);
  const ms = await ready('home', () => ritaPage.keyboard.press('Enter'), ritaPage);
  timed('signed in (new researcher)', ms);
  assert.equal(await ritaPage.locator('#account .who-name').innerText(), rita);
  assert.equal(await ritaPage.locator('#account .role-badge').textContent(), 'researcher');
  const nav = await ritaPage.locator('#nav a').allInnerTexts();
  assert.ok(!nav.includes('Accounts') && !nav.includes('Audit log'), `no admin pages: ${nav}`);
  assert.ok(await ritaPage.locator('.empty-state[data-role="researcher"], table.corpora').count() > 0, 'the researcher’s corpora page');
  await ready('error', () => ritaPage.evaluate(() => { location.hash = '#/accounts'; }), ritaPage);
  assert.match(await ritaPage.locator('[role="alert"]').innerText(), /Managing accounts needs the admin role; you are signed in as e2e-rita, a researcher/);
  // Its own tokens only, this one marked as this browser's.
  await ready('settings', () => ritaPage.locator('#account a.who').click(), ritaPage);
  const rows = await ritaPage.locator('table.tokens tbody tr').evaluateAll((rs) => rs.map((r) => ({ user: r.dataset.user, current: r.dataset.current })));
  assert.deepEqual(rows, [{ user: rita, current: 'true' }]);
  assert.equal(await ritaPage.locator('table.tokens th', { hasText: 'Account' }).count(), 0, 'no account column for your own tokens');
  await shot('researcher-account.png', ritaPage);
});

test('a token the admin revokes (after a confirmation that Escape cancels) is refused at once', async () => {
  const [t] = await tokensOf(rita);
  const revoke = page.locator(`table.tokens tr[data-token="${t.id}"] button.revoke`);
  await revoke.focus();
  await page.keyboard.press('Enter');
  const dialog = page.locator('dialog.confirm[open]');
  await dialog.waitFor();
  assert.match(await dialog.innerText(), new RegExp(`Token ${t.prefix}… \\(“e2e laptop”\\) of e2e-rita is refused from now on`));
  assert.equal(await page.evaluate(() => document.activeElement?.className), 'confirm-cancel', 'Cancel has the focus');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  assert.equal((await tokensOf(rita))[0].revokedAt, null, 'Escape revoked nothing');
  assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('revoke')), true, 'the focus is back on Revoke');
  await page.keyboard.press('Enter');
  await dialog.waitFor();
  await dialog.locator('button.confirm-ok').click();
  const row = page.locator(`table.tokens tr[data-token="${t.id}"][data-status="revoked"]`);
  await row.waitFor();
  assert.equal(await row.locator('.token-status').innerText(), 'revoked');
  assert.equal(await row.locator('button.revoke').count(), 0);
  assert.match(await page.locator('.tokens-status').innerText(), new RegExp(`^Token ${t.prefix}… of e2e-rita revoked`));
  assert.ok((await tokensOf(rita))[0].revokedAt, 'the API says revoked');
  const res = await fetch(`${base}/graphql`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${ritaToken}` }, body: '{"query":"{ me { name } }"}' });
  assert.equal(res.status, 401);
  assert.match((await res.json()).errors[0].message, /was revoked/);
  await shot('token-revoked.png');
  // The researcher's browser is sent back to sign in, with the reason.
  await ready('signin', () => ritaPage.evaluate(() => { location.hash = '#/'; }), ritaPage);
  assert.match(await ritaPage.locator('#signin-reason').innerText(), /^The server refused the stored token: API token \S+… was revoked/);
  await ritaPage.context().close();
});

test('revoking the token this browser is signed in with warns first, then signs out', async () => {
  const { createToken } = await gql('mutation { createToken(name: "e2e second browser") { token info { id prefix } } }');
  const second = await newPage();
  await ready('home', () => second.goto(`${base}/#token=${createToken.token}`), second);
  const ms = await ready('settings', () => second.evaluate(() => { location.hash = '#/settings'; }), second);
  timed('settings with tokens', ms);
  // The admin's list: every account's tokens, with whose each is.
  const all = (await gql('{ tokens { id } }')).tokens.map((t) => t.id);
  assert.deepEqual(await second.locator('table.tokens tbody tr').evaluateAll((rs) => rs.map((r) => r.dataset.token)), all, 'every token, newest first');
  assert.equal(await second.locator(`table.tokens tr[data-token] td.owner`, { hasText: rita }).count(), 1, 'the researcher’s token, with its owner');
  await second.selectOption('.tokens-whose', rita);
  assert.equal(await second.locator('table.tokens tbody tr').count(), 1, 'filtered to one account');
  await second.selectOption('.tokens-whose', '');
  const current = second.locator('table.tokens tr[data-current="true"]');
  assert.equal(await current.count(), 1, 'one token is this browser’s');
  assert.equal(await current.getAttribute('data-token'), createToken.info.id);
  await second.locator('.tokens-card, .card', { hasText: 'API tokens' }).first().scrollIntoViewIfNeeded();
  await shot('settings-tokens.png', second);
  await current.locator('button.revoke').click();
  const dialog = second.locator('dialog.confirm[open]');
  await dialog.waitFor();
  assert.match(await dialog.locator('.warn').innerText(), /This browser is signed in with it: you will be signed out here/);
  assert.equal(await dialog.locator('button.confirm-ok').innerText(), 'Revoke and sign out');
  await shot('revoke-own-token.png', second);
  await second.keyboard.press('Tab'); // from Cancel to the confirm button
  await ready('signin', () => second.keyboard.press('Enter'), second);
  assert.match(await second.locator('#signin-reason').innerText(), new RegExp(`^You revoked the token this browser was signed in with \\(${createToken.info.prefix}…\\)`));
  assert.equal(await storedToken(second), null);
  const mine = (await gql('{ tokens { id revokedAt } }')).tokens.find((t) => t.id === createToken.info.id);
  assert.ok(mine.revokedAt, 'revoked');
  await second.context().close();
  assert.equal(await storedToken(), adminToken, 'the other browser keeps its own token');
});

test('demoting or disabling the only admin is refused, with the server\'s own message', async () => {
  await ready('accounts/:name', () => page.evaluate(() => { location.hash = '#/accounts/admin'; }));
  assert.match(await page.locator('.last-admin').innerText(), /only enabled admin/);
  // What the server says to the same request.
  const direct = await rawGql('mutation { updateUser(name: "admin", role: curator) { role } }');
  assert.equal(direct.errors[0].extensions.code, 'conflict');
  const said = direct.errors[0].message;
  await page.selectOption('#account-role', 'curator');
  await page.click('#account-role-submit');
  const dialog = page.locator('dialog.confirm[open]');
  await dialog.waitFor();
  assert.match(await dialog.innerText(), /Give up your admin role\?/);
  await dialog.locator('button.confirm-ok').click();
  const alert = page.locator('#account-role-status[role="alert"]');
  await alert.waitFor();
  assert.equal(await alert.innerText(), `The role was not changed: ${said}`);
  await shot('account-last-admin.png');
  await page.click('#account-disable');
  await dialog.waitFor();
  assert.match(await dialog.locator('.warn').innerText(), /your own account/);
  await dialog.locator('button.confirm-ok').click();
  const refused = page.locator('#account-access-status[role="alert"]');
  await refused.waitFor();
  assert.match(await refused.innerText(), /^admin was not disabled: admin is the last enabled admin/);
  const { me } = await gql('{ me { role disabled } }');
  assert.deepEqual(me, { role: 'admin', disabled: false });
  assert.equal(await page.locator('#account .role-badge').textContent(), 'admin');
});

test('an admin who demotes itself (another admin exists) lands on its account page in its new role; disabled, its browser is refused', async () => {
  const boss = 'e2e-boss';
  await makeAccount(boss, 'admin');
  const { createToken } = await gql('mutation($u: String) { createToken(user: $u, name: "e2e") { token } }', { u: boss });
  const b = await newPage();
  await ready('home', () => b.goto(`${base}/#token=${createToken.token}`), b);
  await ready('accounts/:name', () => b.evaluate((n) => { location.hash = `#/accounts/${n}`; }, boss), b);
  assert.equal(await b.locator('.last-admin').count(), 0, 'there are two admins');
  await b.selectOption('#account-role', 'curator');
  await b.click('#account-role-submit');
  const dialog = b.locator('dialog.confirm[open]');
  await dialog.waitFor();
  assert.equal(await dialog.locator('button.confirm-ok').innerText(), 'Make me a curator');
  await ready('settings', () => dialog.locator('button.confirm-ok').click(), b);
  assert.equal(await b.locator('.account-role').innerText(), 'curator');
  assert.equal(await b.locator('#account .role-badge').textContent(), 'curator');
  assert.ok(!(await b.locator('#nav a').allInnerTexts()).includes('Accounts'), 'no Accounts for a curator');
  // The admin (still on its page) sees the change, disables it, and its browser is refused.
  await ready('accounts/:name', () => page.reload());
  assert.equal(await page.locator('h1 .role-badge').textContent(), 'curator');
  await page.click('#account-disable');
  await page.locator('dialog.confirm[open] button.confirm-ok').click();
  await page.locator('#account-enable').waitFor();
  assert.equal(await page.locator('#account-access-status').innerText(), `${boss} is disabled: its tokens are refused.`);
  assert.equal(await page.locator('h1 .disabled-tag').innerText(), 'disabled');
  assert.equal(await page.locator('#account-enable').evaluate((e) => e === document.activeElement || document.activeElement?.id === 'account-access-status'), true, 'the focus stays on the card');
  await ready('signin', () => b.evaluate(() => { location.hash = '#/'; }), b);
  assert.match(await b.locator('#signin-reason').innerText(), /account e2e-boss is disabled/);
  await page.click('#account-enable');
  await page.locator('#account-disable').waitFor();
  assert.equal((await gql('query($n: String!) { users(where: {name: $n}) { edges { node { disabled role } } } }', { n: boss })).users.edges[0].node.disabled, false);
  await b.context().close();
});

test('the demo corpus is assigned to a new annotator account, which then sees it; the server\'s refusal shows when the role changed meanwhile', async () => {
  const ann = 'e2e-ann';
  await makeAccount(ann, 'annotator');
  assert.match(await page.locator('.assigned-corpora, .card p.empty').first().innerText(), /No corpus is assigned to e2e-ann/);
  await page.selectOption('#assign-corpus', corpus.name);
  await page.locator('#assign-submit').focus();
  await page.keyboard.press('Enter');
  const li = page.locator(`ul.assigned-corpora li[data-corpus="${corpus.name}"]`);
  await li.waitFor();
  assert.equal(await page.locator('#assign-status').innerText(), `${corpus.name} is assigned to ${ann}.`);
  const { users } = await gql('query($n: String!) { users(where: {name: $n}) { edges { node { assignedCorpora { name } } } } }', { n: ann });
  assert.deepEqual(users.edges[0].node.assignedCorpora, [{ name: corpus.name }]);
  // Its token, made here, never to expire (0 days).
  await page.fill('#account-token-name', 'e2e annotation');
  await page.fill('#account-token-days', '0');
  await page.press('#account-token-days', 'Enter');
  await page.locator('.new-token').waitFor();
  const annToken = await page.inputValue('.new-token-value');
  const row = page.locator('table.tokens tbody tr');
  await row.waitFor();
  assert.equal(await row.locator('td.expires').innerText(), 'never');
  assert.equal((await tokensOf(ann))[0].expiresAt, null, 'no expiry');
  const { corpora } = await gql('{ corpora { edges { node { name } } } }', {}, annToken);
  assert.deepEqual(corpora.edges.map((e) => e.node.name), [corpus.name], 'the annotator sees its corpus, and only it');
  await shot('account-annotator.png');
  // Unassigned from its button.
  await li.locator('button.unassign').click();
  await li.waitFor({ state: 'detached' });
  assert.equal(await page.locator('#assign-status').innerText(), `${corpus.name} is no longer assigned to ${ann}.`);
  // Made a researcher elsewhere while this page still offers the form: the server refuses, in its words.
  await gql('mutation($n: String!) { updateUser(name: $n, role: researcher) { role } }', { n: ann });
  await page.selectOption('#assign-corpus', corpus.name);
  await page.click('#assign-submit');
  const alert = page.locator('#assign-status[role="alert"]');
  await alert.waitFor();
  assert.equal(await alert.innerText(), `${corpus.name} was not assigned: ${ann} is a researcher: only annotators work on assigned corpora (change the role first)`);
  // The accounts list shows both new accounts.
  await ready('accounts', () => page.evaluate(() => { location.hash = '#/accounts'; }));
  const rows = await accountRows();
  assert.ok(rows.some((r) => r.name === rita && r.role === 'researcher') && rows.some((r) => r.name === ann && r.role === 'researcher'), JSON.stringify(rows));
  await shot('accounts.png');
});

test('an evaluation of a MEDDOCAN corpus opens on its own metric, with every confusion-matrix label whole', async () => {
  const dir = join(tmp, 'meddocan');
  await mkdir(dir);
  const long = ['IDENTIF_VEHICULOS_NRSERIE_PLACAS', 'ID_TITULACION_PERSONAL_SANITARIO', 'FAMILIARES_SUJETO_ASISTENCIA'];
  const text = 'Matrícula 1234-BCD, colegiado 28/2812345, su hijo Pedro.';
  await writeFile(join(dir, 'm1.txt'), text);
  await writeFile(join(dir, 'm1.ann'), `T1\t${long[0]} 10 18\t1234-BCD\nT2\t${long[1]} 30 40\t28/2812345\nT3\t${long[2]} 50 55\tPedro\n`);
  const name = 'meddocan-e2e';
  cli('import', '--corpus', name, '--tagset', 'meddocan', '--format', 'brat', dir);
  // The system calls the second span what the first is: an error off the diagonal.
  await writeFile(join(dir, 'm1.ann'), `T1\t${long[0]} 10 18\t1234-BCD\nT2\t${long[0]} 30 40\t28/2812345\nT3\t${long[2]} 50 55\tPedro\n`);
  cli('import', '--corpus', name, '--set', 'crf', '--kind', 'system', '--format', 'brat', dir);

  await ready('runs', () => page.evaluate(() => { location.hash = '#/runs?start=evaluate'; }));
  await page.selectOption('#eval-corpus', name);
  assert.equal(await page.inputValue('#eval-metric'), 'meddocan', 'the corpus’s own metric is chosen');
  const before = await jobIds();
  await page.selectOption('#eval-system', 'crf');
  await page.click('#form-evaluate button[type="submit"]');
  const { row } = await finishedRow('evaluate', before);
  assert.equal(await row.getAttribute('data-status'), 'succeeded', `evaluation: ${await row.innerText()}`);
  await ready('evaluations/:id', () => row.locator('a.result-evaluation').click());
  assert.equal(await page.locator('h1 .tag').first().innerText(), 'meddocan');
  // Each label of the heat map lies inside its drawing.
  const cut = await page.locator('figure[data-chart="confusion"] svg').evaluate((svg) => {
    const box = svg.getBoundingClientRect();
    return [...svg.querySelectorAll('text.label, text.col-label')].filter((t) => {
      const r = t.getBoundingClientRect();
      return r.left < box.left - 0.5 || r.top < box.top - 0.5 || r.right > box.right + 0.5 || r.bottom > box.bottom + 0.5;
    }).map((t) => t.textContent);
  });
  assert.deepEqual(cut, [], 'no label runs out of the confusion matrix');
  const labels = await page.locator('figure[data-chart="confusion"] text.label').evaluateAll((ts) => ts.map((t) => t.textContent));
  for (const l of long) assert.ok(labels.includes(l), `${l} is a row`);
  await shot('evaluation-meddocan.png');
});

test('a surrogate corpus’s provenance reads as words, not JSON', async () => {
  await ready('corpus/:name', () => page.evaluate((n) => { location.hash = `#/corpus/${encodeURIComponent(n)}`; }, surrogate));
  const prov = await page.locator('section.provenance').innerText();
  assert.doesNotMatch(prov, /[{}"]|\bnull\b/, prov);
  const dd = (key) => page.locator(`section.provenance [data-key="${key}"] dd`).innerText();
  const dt = (key) => page.locator(`section.provenance [data-key="${key}"] dt`).innerText();
  assert.match(await dd('policy'), /^built-in/);
  assert.equal(await dt('labels'), 'label rules', 'keys in words');
  assert.match(await dd('labels'), /^[A-Z/_-]+: \S+/);
  assert.equal(await dt('from'), 'made from');
});

test('no script errors on the account pages', () => {
  assert.deepEqual(unexpectedErrors(), []);
});

// The dashboard's role table (web/static/js/roles.js) against the server's
// (auth/rules.go): every action the dashboard hides or shows by role must
// allow exactly the roles of the server rule it mirrors, so that nobody is
// offered what the server refuses, nor denied what it allows.
//   node --test roles.test.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROLES, allowed, can, setRole, refusal, mirrors } from '../static/js/roles.js';

const here = dirname(fileURLToPath(import.meta.url));

/** serverRules reads auth/rules.go: {op: [roles]}. */
function serverRules() {
  const src = readFileSync(resolve(here, '../../auth/rules.go'), 'utf8');
  const Go = { Admin: 'admin', Curator: 'curator', Annotator: 'annotator', Researcher: 'researcher' };
  const groups = {};
  for (const m of src.matchAll(/^\s*(\w+)\s*=\s*\[\]Role\{([^}]*)\}/gm)) {
    groups[m[1]] = m[2].split(',').map((r) => Go[r.trim()]).filter(Boolean);
  }
  assert.ok(Object.keys(groups).length >= 4, `role groups found in rules.go: ${Object.keys(groups)}`);
  const rules = {};
  for (const m of src.matchAll(/^\s*"([\w.]+)":\s*\{Roles:\s*(\w+)([^\n]*)/gm)) {
    assert.ok(groups[m[2]], `rules.go: ${m[1]} uses an unknown role group ${m[2]}`);
    rules[m[1]] = groups[m[2]];
    // A Self argument may name another account only for the role Check exempts.
    if (/\bSelf:\s*"\w+"/.test(m[3])) {
      const exempt = /r\.Self != "" && v\.Role != (\w+)/.exec(src);
      assert.ok(exempt && Go[exempt[1]], 'rules.go: Check exempts one role from Self');
      rules[`${m[1]}:Self`] = [Go[exempt[1]]];
    }
  }
  return rules;
}

test('every action allows exactly the roles of the server rule it mirrors', () => {
  const rules = serverRules();
  for (const { action, roles, op } of mirrors()) {
    assert.ok(rules[op], `${action} mirrors ${op}, which rules.go does not have`);
    assert.deepEqual([...roles].sort(), [...rules[op]].sort(), `${action} (${op})`);
  }
});

test('can() follows the signed-in role; nobody signed in, or an unknown action, may nothing', () => {
  setRole(null);
  assert.equal(can('train'), false);
  assert.equal(can(), true, 'no action needed');
  setRole('researcher');
  assert.equal(can('train'), true);
  assert.equal(can('auditLog'), false);
  assert.equal(can(['train', 'resynthesize']), false, 'a list needs every action');
  assert.equal(can('no-such-action'), false);
  assert.equal(refusal('auditLog', 'r'), 'The audit log needs the admin role; you are signed in as r, a researcher.');
  setRole('curator');
  assert.equal(refusal('auditLog'), 'The audit log needs the admin role; you are a curator.');
  setRole(null);
  for (const r of ROLES) assert.equal(allowed(r, 'auditLog'), r === 'admin');
});

test('accounts and other accounts\' tokens are for admins; everyone has tokens of their own', () => {
  for (const r of ROLES) {
    for (const a of ['accounts', 'createAccount', 'changeAccount', 'assignCorpora', 'othersTokens']) assert.equal(allowed(r, a), r === 'admin', `${r} ${a}`);
    for (const a of ['tokens', 'createToken', 'revokeToken']) assert.equal(allowed(r, a), true, `${r} ${a}`);
  }
  setRole('annotator');
  assert.equal(refusal('accounts', 'ann'), 'Managing accounts needs the admin role; you are signed in as ann, an annotator.');
  setRole(null);
});

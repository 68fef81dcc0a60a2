// node --test web/e2e/overlay.test.mjs (run.sh runs it)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compare, segments, codePointIndex } from '../static/js/overlay.js';

const sp = (start, end, type, category = type === 'DOCTOR' || type === 'PATIENT' ? 'NAME' : type) => ({ start, end, type, category });

test('each error kind', () => {
  const gold = [sp(0, 4, 'DATE'), sp(10, 15, 'PATIENT'), sp(20, 25, 'AGE'), sp(30, 35, 'DATE'), sp(40, 45, 'PATIENT')];
  const sys = [sp(0, 4, 'DATE'), sp(10, 15, 'DOCTOR'), sp(20, 24, 'AGE'), sp(31, 36, 'AGE'), sp(50, 52, 'ID')];
  const { items, counts } = compare(gold, sys);
  assert.deepEqual(items.map((i) => i.kind), ['match', 'tag-clash', 'span-clash', 'both-clash', 'missed', 'spurious']);
  assert.deepEqual(counts, { match: 1, missed: 1, spurious: 1, 'tag-clash': 1, 'span-clash': 1, 'both-clash': 1 });
});

test('one long system span over two gold spans is clashes, not a spurious', () => {
  const gold = [sp(0, 5, 'CITY'), sp(7, 9, 'STATE')];
  const sys = [sp(0, 9, 'CITY')];
  const { counts } = compare(gold, sys);
  assert.equal(counts.spurious, 0);
  assert.equal(counts['span-clash'], 1);
  assert.equal(counts['both-clash'], 1);
});

test('identical layers are all matches', () => {
  const gold = [sp(0, 4, 'DATE'), sp(5, 9, 'AGE')];
  assert.deepEqual(compare(gold, gold.map((x) => ({ ...x }))).counts.match, 2);
});

test('segments cut at every boundary', () => {
  const a = [sp(2, 6, 'DATE')];
  const b = [sp(4, 8, 'DATE')];
  const segs = segments(10, [a, b]);
  assert.deepEqual(segs.map((x) => [x.start, x.end, x.cover[0].length, x.cover[1].length]), [[2, 4, 1, 0], [4, 6, 1, 1], [6, 8, 0, 1]]);
});

test('code points to UTF-16', () => {
  const idx = codePointIndex('a😀b');
  assert.deepEqual(idx, [0, 1, 3, 4]);
});

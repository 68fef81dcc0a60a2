// node --test web/e2e/markdown.test.mjs (run.sh runs it): the datasheet
// Markdown reader, without a browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse, cells, inline, safeHref } from '../static/js/markdown.js';

test('headings, paragraphs, tables with alignment, code fences, lists', () => {
  const md = [
    '# demo@1.0.0', '', 'A first', 'paragraph.', '',
    '| | |', '|---|---|', '| corpus | demo |', '| root | `ab|cd` |', '',
    '## Size', '', '| split | documents |', '|---|---:|', '| dev | 5 |', '',
    '```json', '{"a": "<b>"}', '```', '', '- one', '- two', '', '1. first',
  ].join('\n');
  const b = parse(md);
  assert.deepEqual(b.map((x) => x.type), ['heading', 'paragraph', 'table', 'heading', 'table', 'code', 'list', 'list']);
  assert.deepEqual(b[0], { type: 'heading', level: 1, text: 'demo@1.0.0' });
  assert.equal(b[1].text, 'A first paragraph.');
  assert.deepEqual(b[2].rows, [['corpus', 'demo'], ['root', '`ab|cd`']]);
  assert.deepEqual(b[4].align, ['', 'right']);
  assert.deepEqual(b[5], { type: 'code', lang: 'json', text: '{"a": "<b>"}' });
  assert.deepEqual(b[6].items, ['one', 'two']);
  assert.equal(b[7].ordered, true);
});

test('an unclosed fence runs to the end; escaped pipes stay in their cell', () => {
  assert.deepEqual(parse('```\nx\ny'), [{ type: 'code', lang: '', text: 'x\ny' }]);
  assert.deepEqual(cells('| a \\| b | c |'), ['a | b', 'c']);
});

test('inline runs; unsafe links stay text', () => {
  assert.deepEqual(inline('see `x` and **y**'), [{ text: 'see ' }, { code: 'x' }, { text: ' and ' }, { strong: 'y' }]);
  assert.deepEqual(inline('[a](javascript:alert(1))').map((r) => Object.keys(r)[0]), ['text', 'text']);
  assert.deepEqual(inline('[a](https://x.org/)'), [{ link: 'a', href: 'https://x.org/' }]);
  assert.equal(safeHref('//evil.org'), false);
  assert.equal(safeHref('data:text/html,x'), false);
});

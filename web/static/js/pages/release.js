// #/releases/:ref — one release (name@version): its figures, downloads in
// each format, its parent and children, a diff against any other release,
// the datasheet (Markdown rendered as text-only elements) and its provenance.

import { gql, notFound } from '../api.js';
import { h, num, date, href, card, figures, breadcrumbs } from '../dom.js';
import { render as markdown } from '../markdown.js';
import { provenanceCard } from '../lineage.js';
import { shortHash, cmpVersion } from './releases.js';
import { downloadButton } from '../downloads.js';

const RELEASE = `query Release($ref: String!) {
  release(ref: $ref) {
    id ref name version corpus sets rootHash documents spans share datasheet createdBy createdAt
    parentRef children { ref }
    i2b2: downloadURL(format: "i2b2") brat: downloadURL(format: "brat") jsonl: downloadURL(format: "jsonl")
  }
  releases(first: 500, orderBy: {field: CREATED_AT, direction: DESC}) { edges { node { ref name version corpus createdAt } } }
}`;

export const FORMATS = [
  ['i2b2', 'i2b2 XML', 'one XML file per document, as in the i2b2 2014 challenge'],
  ['brat', 'brat standoff', '.txt and .ann per document'],
  ['jsonl', 'JSON Lines', 'one JSON object per document'],
];

/** older tells which of two releases came first (by creation, then version). */
export function older(a, b) {
  const t = (a.createdAt || '').localeCompare(b.createdAt || '');
  return t ? t < 0 : (a.name === b.name ? cmpVersion(a.version, b.version) <= 0 : true);
}

export async function render({ params, signal, title }) {
  const ref = params.ref;
  title(ref);
  if (!ref.includes('@')) throw notFound(`“${ref}” is not a release: a release is named name@version, e.g. demo@1.0.0.`);
  const { release: r, releases } = await gql(RELEASE, { ref }, { signal });
  if (!r) throw notFound(`There is no release ${ref}.`);
  const lineage = provenanceCard(r.id, { signal });
  const others = releases.edges.map((e) => e.node).filter((x) => x.ref !== r.ref);

  const downloads = [
    h('ul', { class: 'downloads' }, FORMATS.map(([f, label, hint]) => h('li', {},
      downloadButton(r[f], `Download ${label}`, { class: 'button', 'data-format': f }),
      h('span', { class: 'muted' }, hint)))),
    h('p', { class: 'muted' }, 'Each is a zip archive with a MANIFEST of SHA-256 hashes and DATASHEET.md; check one with ',
      h('code', {}, 'deidcorpus release verify FILE.zip'), '.')];

  return h('div', { class: 'page release-page', 'data-ref': r.ref },
    breadcrumbs([['Releases', '#/releases'], [r.ref]]),
    h('div', { class: 'title-row' },
      h('h1', {}, r.ref,
        h('span', { class: 'tag' }, r.corpus),
        r.share ? h('span', { class: 'tag share-tag' }, 'for outside sharing') : h('span', { class: 'tag muted-tag' }, 'inside only')),
      h('div', { class: 'actions' }, h('a', { class: 'button', href: href(['corpus', r.corpus]) }, 'Corpus now'))),
    h('p', { class: 'meta' }, `Created ${date(r.createdAt)}`, r.createdBy ? ` by ${r.createdBy}` : '', ' · root hash ',
      h('code', { class: 'hash', title: r.rootHash }, shortHash(r.rootHash))),
    figures([
      ['Documents', h('span', { class: 'documents', 'data-value': r.documents }, num(r.documents))],
      ['PHI spans', h('span', { class: 'spans', 'data-value': r.spans }, num(r.spans))],
      ['Annotation sets', r.sets.join(', ')],
      ['Root hash', h('code', { class: 'hash', title: r.rootHash }, shortHash(r.rootHash)), 'SHA-256 over every document and span'],
    ]),
    h('div', { class: 'grid' },
      card('Download', downloads),
      card('History',
        h('p', { class: 'parent' }, 'Parent: ', r.parentRef
          ? h('a', { href: href(['releases', r.parentRef]), class: 'parent-link' }, r.parentRef)
          : h('span', { class: 'muted' }, 'none (a first release)')),
        r.children?.length
          ? h('p', { class: 'children' }, 'Followed by: ', r.children.map((c, i) => [i ? ', ' : '', h('a', { href: href(['releases', c.ref]) }, c.ref)]))
          : null,
        diffForm(r, others))),
    card('Datasheet', markdown(r.datasheet, { shift: 2, cls: 'markdown datasheet' })),
    await lineage);
}

function diffForm(r, others) {
  if (!others.length) return h('p', { class: 'muted' }, 'There is no other release to compare with yet.');
  const preferred = r.parentRef || others.find((o) => o.name === r.name)?.ref || others[0].ref;
  const other = h('select', { id: 'diff-other', name: 'other' },
    others.map((o) => h('option', { value: o.ref, selected: o.ref === preferred }, `${o.ref} (${o.corpus})`)));
  const byRef = new Map(others.map((o) => [o.ref, o]));
  return h('form', {
    class: 'inline-form diff-form',
    onsubmit: (e) => {
      e.preventDefault();
      const o = byRef.get(other.value);
      // Always from the older to the newer release.
      const [a, b] = older(o, r) ? [o.ref, r.ref] : [r.ref, o.ref];
      location.hash = href(['releases', a, 'diff', b]);
    },
  }, h('label', { for: 'diff-other' }, 'Compare with '), other, h('button', { type: 'submit' }, 'Show changes'));
}

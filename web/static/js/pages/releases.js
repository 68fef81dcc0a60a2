// #/releases?created= — every release (name@version of a corpus and its
// annotation sets, frozen with a root hash), and a form to create one. The
// server alone decides whether a corpus may be shared outside: its refusal
// is shown as it gave it.

import { gql, schema } from '../api.js';
import { h, num, date, href, card, table, field } from '../dom.js';
import { can } from '../roles.js';
import { isSurrogate } from '../corpus-kind.js';

export const RELEASES = `query Releases {
  releases(first: 500, orderBy: {field: CREATED_AT, direction: DESC}) {
    totalCount
    edges { node { id ref name version corpus sets documents spans share rootHash createdBy createdAt parentRef } }
  }
}`;

const CORPORA = `query ReleaseCorpora {
  corpora(first: 500, orderBy: {field: NAME}) { edges { node { name kind provenance annotationSets { name kind } } } }
}`;

const CREATE = `mutation CreateRelease($input: ReleaseInput!) {
  createRelease(input: $input) { id ref }
}`;

export const shortHash = (x) => (x ? x.slice(0, 12) : '—');

/** A semantic version as numbers [major, minor, patch] (null if it is not one). */
export function semver(v) {
  const m = /^v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(v || '');
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}
export function cmpVersion(a, b) {
  const x = semver(a) || [0, 0, 0];
  const y = semver(b) || [0, 0, 0];
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
}
const nextPatch = (v) => {
  const s = semver(v);
  return s ? `${s[0]}.${s[1]}.${s[2] + 1}` : '1.0.0';
};

export async function render({ query, signal, title }) {
  title('Releases');
  const [data, api] = await Promise.all([gql(RELEASES, {}, { signal }), schema().catch(() => null)]);
  const list = data.releases.edges.map((e) => e.node);
  const canCreate = can('createRelease') && (!api || api.mutation.has('createRelease'));
  const corpora = canCreate ? (await gql(CORPORA, {}, { signal })).corpora.edges.map((e) => e.node) : [];

  const t = table([
    { label: 'Release', value: (r) => h('a', { href: href(['releases', r.ref]), class: 'release-link' }, r.ref) },
    { label: 'Corpus', value: (r) => h('a', { href: href(['corpus', r.corpus]) }, r.corpus), rowHeader: false },
    { label: 'Sets', value: (r) => r.sets.join(', ') },
    { label: 'Documents', num: true, cls: 'documents', value: (r) => num(r.documents) },
    { label: 'Spans', num: true, cls: 'spans', value: (r) => num(r.spans) },
    { label: 'Sharing', value: (r) => (r.share ? h('span', { class: 'share yes', title: 'released for outside sharing: surrogate text that passed its check' }, 'outside') : h('span', { class: 'share no muted', title: 'for use inside only' }, 'inside only')) },
    { label: 'Parent', value: (r) => (r.parentRef ? h('a', { href: href(['releases', r.parentRef]) }, r.parentRef) : h('span', { class: 'muted' }, '—')) },
    { label: 'Root hash', value: (r) => h('code', { class: 'hash', title: r.rootHash }, shortHash(r.rootHash)) },
    { label: 'Created', value: (r) => h('span', { title: r.createdAt }, date(r.createdAt), r.createdBy ? h('span', { class: 'muted' }, ` by ${r.createdBy}`) : null) },
  ], list, {
    cls: 'compact releases',
    caption: 'A release freezes a corpus and its annotation sets; the root hash covers every document and span.',
    empty: canCreate ? 'No releases yet: create the first one with the form below.' : 'No releases yet.',
  });
  t.querySelectorAll?.('tbody tr').forEach((tr, i) => {
    tr.dataset.ref = list[i].ref;
    if (list[i].ref === query.created) tr.classList.add('highlight');
  });

  const created = query.created && list.some((r) => r.ref === query.created)
    ? h('p', { class: 'note-ok', role: 'status', id: 'created-note' }, 'Release ',
      h('a', { href: href(['releases', query.created]), id: 'created-link' }, query.created), ' created.')
    : null;
  if (created) setTimeout(() => document.getElementById('created-link')?.focus(), 0);

  return h('div', { class: 'page releases-page' },
    h('h1', {}, 'Releases'),
    created,
    card(`${num(data.releases.totalCount)} release${data.releases.totalCount === 1 ? '' : 's'}`, t),
    canCreate ? createForm(corpora, list, query) : null);
}


function createForm(corpora, releases, query) {
  const preferred = corpora.find((c) => c.name === query.corpus) || corpora.find((c) => c.name === 'demo') || corpora[0];
  const corpus = h('select', { id: 'rel-corpus', name: 'corpus', required: true },
    corpora.map((c) => h('option', { value: c.name, selected: c === preferred },
      `${c.name}${isSurrogate(c) ? ` (surrogate${c.provenance?.check?.ok ? ', check passed' : ''})` : ''}`)));
  const name = h('input', { id: 'rel-name', name: 'name', required: true, autocomplete: 'off', pattern: '[^@/\\s]+', title: 'No spaces, “@” or “/”' });
  const version = h('input', { id: 'rel-version', name: 'version', required: true, autocomplete: 'off', pattern: 'v?\\d+\\.\\d+\\.\\d+([\\-+].*)?', title: 'MAJOR.MINOR.PATCH, e.g. 1.0.0' });
  const parent = h('select', { id: 'rel-parent', name: 'parent' },
    h('option', { value: '' }, 'none (a first release)'),
    releases.map((r) => h('option', { value: r.ref }, `${r.ref} (${r.corpus})`)));
  const share = h('input', { id: 'rel-share', name: 'share', type: 'checkbox' });
  const pseudonymous = h('input', { type: 'checkbox', id: 'rel-pseudonymous', name: 'pseudonymousIDs' });
  const accept = h('input', { type: 'text', id: 'rel-accept', name: 'acceptUnannotated' });
  const description = h('textarea', { id: 'rel-description', name: 'description', rows: 3 });
  const sets = h('fieldset', { class: 'sets', id: 'rel-sets' }, h('legend', {}, 'Annotation sets'));
  const status = h('div', { class: 'form-status', role: 'status', id: 'rel-status' });
  const submit = h('button', { type: 'submit' }, 'Create release');

  const touched = new Set();
  for (const el of [name, version, parent]) el.addEventListener('input', () => touched.add(el));
  parent.addEventListener('change', () => touched.add(parent));

  const fillSets = () => {
    const c = corpora.find((x) => x.name === corpus.value);
    const list = c?.annotationSets || [];
    sets.replaceChildren(h('legend', {}, 'Annotation sets'),
      ...(list.length ? list.map((s, i) => h('label', { class: 'check' },
        h('input', { type: 'checkbox', name: 'set', value: s.name, id: `rel-set-${i}`, checked: s.name === 'gold' || (list.length === 1) }),
        ` ${s.name} `, h('span', { class: 'muted' }, `(${s.kind})`)))
        : [h('p', { class: 'muted' }, 'This corpus has no annotation sets.')]));
  };
  // Suggest a name from the corpus, and for a name already released the
  // next patch version following the newest release of that name.
  const suggest = () => {
    if (!touched.has(name)) name.value = corpus.value;
    const same = releases.filter((r) => r.name === name.value.trim()).sort((a, b) => cmpVersion(b.version, a.version));
    if (!touched.has(version)) version.value = same.length ? nextPatch(same[0].version) : '1.0.0';
    if (!touched.has(parent)) parent.value = same.length ? same[0].ref : '';
  };
  corpus.addEventListener('change', () => { fillSets(); suggest(); });
  name.addEventListener('input', suggest);
  fillSets();
  suggest();

  const fail = (message, { refused = false } = {}) => {
    status.className = `form-status error-inline${refused ? ' refused' : ''}`;
    status.setAttribute('role', 'alert');
    status.replaceChildren(h('strong', {}, refused ? 'Sharing refused: ' : 'Could not create the release: '), message);
  };

  const form = h('form', {
    class: 'run-form release-form', id: 'form-release', 'aria-label': 'Create a release', novalidate: true,
    onsubmit: async (e) => {
      e.preventDefault();
      status.className = 'form-status';
      status.setAttribute('role', 'status');
      const input = {
        corpus: corpus.value, name: name.value.trim(), version: version.value.trim(),
        sets: [...sets.querySelectorAll('input[name="set"]:checked')].map((x) => x.value),
        share: share.checked, pseudonymousIDs: pseudonymous.checked, description: description.value.trim(),
      };
      if (parent.value) input.parent = parent.value;
      if (share.checked && accept.value.trim()) input.acceptUnannotated = accept.value.trim();
      if (!input.corpus) return fail('Choose a corpus.');
      if (!input.name || /[@/\s]/.test(input.name)) return fail('Give the release a name without spaces, “@” or “/”.');
      if (!semver(input.version)) return fail(`“${input.version}” is not a semantic version (MAJOR.MINOR.PATCH, e.g. 1.0.0).`);
      if (!input.sets.length) return fail('Choose at least one annotation set.');
      submit.disabled = true;
      status.replaceChildren('Creating… (freezing and hashing the corpus)');
      try {
        const { createRelease: r } = await gql(CREATE, { input });
        location.hash = href(['releases'], { created: r.ref });
      } catch (err) {
        // The server says why outside sharing is refused (original text, a
        // failed check, leaks): that is the message to show.
        fail(err.message, { refused: input.share && /shar/i.test(err.message) });
        status.focus?.();
      } finally {
        submit.disabled = false;
      }
    },
  },
  h('div', { class: 'fields' },
    field('Corpus', corpus),
    field('Name', name, 'e.g. the corpus name'),
    field('Version', version, 'MAJOR.MINOR.PATCH'),
    field('Parent release', parent, 'the release this one follows'),
    sets,
    h('div', { class: 'field share-field' },
      h('label', { class: 'check', for: 'rel-share' }, share, ' For outside sharing'),
      h('small', { class: 'muted' }, 'Allowed only for surrogate text whose check found no leak and no misaligned span.')),
    field('Unannotated finds may be shared because', accept, 'only for sharing a corpus whose check found originals where the gold has no span'),
    h('div', { class: 'field share-field' },
      h('label', { class: 'check', for: 'rel-pseudonymous' }, pseudonymous, ' Pseudonymous ids'),
      h('small', { class: 'muted' }, 'Documents and patients named by keyed-hash numbers, not the corpus’s ids (often record numbers); a release that follows one has them too.'))),
  h('div', { class: 'field wide' }, h('label', { for: 'rel-description' }, 'Description'), description),
  h('div', { class: 'form-actions' }, submit, status));
  status.tabIndex = -1;

  return card('Create a release', corpora.length ? form : h('p', { class: 'empty' }, 'There is no corpus to release yet.'));
}

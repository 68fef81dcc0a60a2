// Colours of PHI categories, of a tag set's types and of comparison error
// kinds. The i2b2 2014 categories have fixed colours (the same in every
// chart and note); any other tag set's labels get one from a palette by a
// hash of their name, so a label keeps its colour across pages. Types, in
// the annotation view, take Paul Tol's colour-blind-safe qualitative
// colours in their tag set's order, so types next to each other (PATIENT,
// DOCTOR) never share one.

const I2B2 = {
  NAME: '#d1495b',
  PROFESSION: '#8f5db7',
  LOCATION: '#2a9d8f',
  AGE: '#e9a23b',
  DATE: '#3d7dd8',
  CONTACT: '#c2607e',
  ID: '#6d8a2e',
  OTHER: '#7a7a7a',
};

const PALETTE = ['#b5651d', '#1b998b', '#5c80bc', '#c1502e', '#8e6c8a', '#4f772d', '#d17a22', '#2e86ab', '#a23b72', '#546a7b'];

export function categoryColor(cat) {
  const key = (cat || '').toUpperCase();
  if (I2B2[key]) return I2B2[key];
  let hash = 0;
  for (const ch of key) hash = (hash * 31 + ch.codePointAt(0)) >>> 0;
  return PALETTE[hash % PALETTE.length];
}

// Paul Tol's "muted" and "bright" qualitative schemes (personal.sron.nl/
// ~pault), distinct for the common forms of colour blindness; the grey is
// left out, as it reads as "no type".
const TYPE_PALETTE = ['#CC6677', '#332288', '#DDCC77', '#117733', '#88CCEE', '#882255', '#44AA99', '#999933', '#AA4499',
  '#4477AA', '#EE6677', '#228833', '#CCBB44', '#66CCEE', '#AA3377'];

/** typeColors gives each type of a tag set's categories ([{name, types}]) its colour, in the tag set's order. */
export function typeColors(categories) {
  const out = new Map();
  for (const c of categories) for (const t of c.types) if (!out.has(t)) out.set(t, TYPE_PALETTE[out.size % TYPE_PALETTE.length]);
  return out;
}

/** Error kinds of a comparison, in the order the legend shows them. */
export const ERROR_KINDS = [
  { kind: 'missed', label: 'missed', help: 'in the reference, nothing overlapping in the compared set' },
  { kind: 'spurious', label: 'spurious', help: 'in the compared set, nothing overlapping in the reference' },
  { kind: 'tag-clash', label: 'tag-clash', help: 'same offsets, different type' },
  { kind: 'span-clash', label: 'span-clash', help: 'same type, overlapping but different offsets' },
  { kind: 'both-clash', label: 'both-clash', help: 'overlapping, different offsets and different type' },
  { kind: 'match', label: 'match', help: 'same offsets and type' },
];

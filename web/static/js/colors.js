// Colours of PHI categories and of comparison error kinds. The i2b2 2014
// categories have fixed colours (the same in every chart and note); any
// other tag set's labels get one from a palette by a hash of their name, so
// a label keeps its colour across pages.

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

/** Error kinds of a comparison, in the order the legend shows them. */
export const ERROR_KINDS = [
  { kind: 'missed', label: 'missed', help: 'in the reference, nothing overlapping in the compared set' },
  { kind: 'spurious', label: 'spurious', help: 'in the compared set, nothing overlapping in the reference' },
  { kind: 'tag-clash', label: 'tag-clash', help: 'same offsets, different type' },
  { kind: 'span-clash', label: 'span-clash', help: 'same type, overlapping but different offsets' },
  { kind: 'both-clash', label: 'both-clash', help: 'overlapping, different offsets and different type' },
  { kind: 'match', label: 'match', help: 'same offsets and type' },
];

// What kind of corpus this is. The server's Corpus.kind is the one answer:
// a corpus made by resynthesis is a surrogate, and so is one a curator
// imported or created as surrogate text. Ask for `kind provenance` in the
// query that fetches the corpus.

/** isSurrogate tells whether a corpus holds surrogate text (no real PHI). */
export const isSurrogate = (c) => c?.kind === 'surrogate';

/**
 * originalOf names the corpus a surrogate was resynthesized from, whose
 * documents have the same ids; null for any other corpus (an imported
 * surrogate has no original here).
 */
export const originalOf = (c) => (isSurrogate(c) && c.provenance?.source === 'resynthesis' && c.provenance.from) || null;

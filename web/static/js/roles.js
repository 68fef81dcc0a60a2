// What each role may do, for the dashboard only: the one place that decides
// which navigation entries, pages, forms and links a signed-in account sees.
// It mirrors the server's rules (package auth, rules.go) so that nobody is
// offered what the server would refuse; the server stays the authority, and
// a page that still meets a refusal shows it as a message.
//
// Pure (no DOM, no requests): session.js tells it the role, pages ask can().

export const ROLES = ['admin', 'curator', 'annotator', 'researcher'];

const everyone = ROLES;
const annotating = ['admin', 'curator', 'annotator'];
const curators = ['admin', 'curator'];
const admins = ['admin'];

// action -> [roles allowed, what it is (for a refusal message), the server
// rule it mirrors (auth/rules.go; web/e2e/roles.test.mjs compares them)].
// "Op:Self" mirrors a rule's Self exemption: acting for another account,
// which auth allows admins only.
const RULES = {
  auditLog: [admins, 'The audit log', 'Query.auditEntries'],
  accounts: [admins, 'Managing accounts', 'Query.users'],
  createAccount: [admins, 'Making accounts', 'Mutation.createUser'],
  changeAccount: [admins, 'Changing an account’s role, or disabling it', 'Mutation.updateUser'],
  assignCorpora: [admins, 'Assigning corpora to annotators', 'Mutation.assignCorpus'],
  // API tokens: everyone has their own; admins see, make and revoke any
  // account's (the rule's Self exemption, and the Token row filter).
  tokens: [everyone, 'API tokens', 'Query.tokens'],
  createToken: [everyone, 'Making API tokens', 'Mutation.createToken'],
  revokeToken: [everyone, 'Revoking API tokens', 'Mutation.revokeToken'],
  othersTokens: [admins, 'Tokens of other accounts', 'Mutation.createToken:Self'],
  // Original PHI beside its surrogate, the full check report, the mappings.
  originalText: [curators, 'The original note beside its surrogate', 'Query.surrogateMappings'],
  checkReport: [curators, 'The full resynthesis check report', 'Query.checkReport'],
  surrogateMappings: [curators, 'Surrogate mappings', 'Query.surrogateMappings'],
  resynthesize: [curators, 'Resynthesis', 'Mutation.startResynthesis'],
  deidentify: [curators, 'De-identification (tagging, then resynthesis)', 'Mutation.deidentify'],
  createRelease: [curators, 'Creating a release', 'Mutation.createRelease'],
  registerModel: [curators, 'Registering an external tagger', 'Mutation.registerExternalModel'],
  createCorpus: [curators, 'Creating or deriving a corpus', 'Mutation.createCorpus'],
  import: [annotating, 'Importing documents', 'Mutation.startImport'],
  // Hand annotation (the server lets annotators edit only their own sets)
  // and adjudication of several sets into one.
  annotate: [annotating, 'Annotating', 'Mutation.addSpan'],
  adjudicate: [curators, 'Adjudicating', 'Query.disagreements'],
  assign: [curators, 'Assigning documents to annotators', 'Mutation.assignDocuments'],
  // Runs on what the account sees.
  train: [everyone, 'Training', 'Mutation.startTraining'],
  tag: [everyone, 'Tagging', 'Mutation.startTagging'],
  evaluate: [everyone, 'Evaluation', 'Mutation.startEvaluation'],
  export: [everyone, 'Export', 'Mutation.startExport'],
  experiment: [everyone, 'Experiments', 'Mutation.startExperiment'],
};

/** mirrors lists {action, roles, op}: each action with the server rule it mirrors (for tests). */
export function mirrors() {
  return Object.entries(RULES).map(([action, [roles, , op]]) => ({ action, roles, op }));
}

/** What each role sees, in a sentence (Settings, empty states). */
export const SCOPE = {
  admin: 'You see and may do everything, including the audit log and accounts.',
  curator: 'You see every corpus, original text and surrogate mappings; you run resynthesis and make releases. The audit log and accounts are for admins.',
  annotator: 'You see the corpora assigned to you (an admin assigns them), import into them, and run training, tagging, evaluation and exports on them.',
  researcher: 'You see surrogate corpora only (PHI replaced by resynthesis) and releases of them, and run training, tagging, evaluation and exports on those. Original notes are never shown to researchers.',
};

let role = null;

/** setRole is session.js telling who is signed in (null: nobody). */
export function setRole(r) {
  role = r || null;
}

/** allowed tells whether role r may do action (an unknown action: nobody). */
export function allowed(r, action) {
  const rule = RULES[action];
  return Boolean(rule && r && rule[0].includes(r));
}

/** can tells whether the signed-in account may do action; no action: yes. */
export function can(action) {
  return !action || [].concat(action).every((a) => allowed(role, a));
}

/** seesAllCorpora tells whether the role sees every corpus (auth.Viewer.SeesAllCorpora). */
export function seesAllCorpora() {
  return role === 'admin' || role === 'curator';
}

/** aRole is a role with its article: "an admin", "a curator". */
export function aRole(r) {
  return `${/^[aeiou]/.test(r) ? 'an' : 'a'} ${r}`;
}

/** refusal says why the signed-in account may not do action. */
export function refusal(action, name) {
  const a = [].concat(action).find((x) => !allowed(role, x));
  const rule = RULES[a];
  if (!rule) return 'Your account may not do this.';
  const roles = rule[0];
  const list = roles.length === 1 ? roles[0] : `${roles.slice(0, -1).join(', ')} or ${roles.at(-1)}`;
  const who = name ? `you are signed in as ${name}, ${aRole(role)}` : `you are ${aRole(role)}`;
  return `${rule[1]} needs the ${list} role; ${who}.`;
}

// Every page of the dashboard: a hash path pattern and the module that
// renders it. A page module exports `render(ctx)` returning a Node, where
// ctx = {params, query, signal, title(t)}; ctx.signal aborts when the user
// leaves the page (cancel fetches, close subscriptions on it).
//
// `requires` names the root fields a page needs ('jobs' for a Query field,
// 'mutation:startTagging', 'subscription:job', or a list): the page is
// routed and shown in the navigation only once the server's schema has them,
// so the jobs, evaluation and release pages can land before or after their
// API without a dead link in between.
//
// `allow` names the roles.js action a page needs: it is in the navigation
// only for roles that may use it, and others opening it get a clear refusal.

export const routes = [
  { path: '', nav: 'Corpora', page: () => import('./pages/corpora.js') },
  { path: 'compare', nav: 'Compare', requires: 'compareCorpora', page: () => import('./pages/corpus-compare.js') },
  { path: 'corpus/:name', page: () => import('./pages/corpus.js') },
  { path: 'corpus/:name/patient/:patient', page: () => import('./pages/patient.js') },
  { path: 'corpus/:name/doc/:doc', page: () => import('./pages/document.js') },
  { path: 'corpus/:name/doc/:doc/original', allow: 'originalText', page: () => import('./pages/original.js') },
  { path: 'corpus/:name/annotate', allow: 'annotate', requires: 'mutation:addSpan', page: () => import('./pages/annotate.js') },
  { path: 'corpus/:name/adjudicate', allow: 'adjudicate', requires: ['disagreements', 'agreement', 'mutation:acceptSpan'], page: () => import('./pages/adjudicate.js') },
  { path: 'runs', nav: 'Runs', requires: ['jobs', 'mutation:startTagging', 'subscription:job'], page: () => import('./pages/runs.js') },
  { path: 'risk/:id', requires: 'jobs', page: () => import('./pages/risk.js') },
  { path: 'evaluations', nav: 'Evaluations', requires: 'evaluations', page: () => import('./pages/evaluations.js') },
  { path: 'evaluations/:id', requires: 'evaluations', page: () => import('./pages/evaluation.js') },
  { path: 'evaluations/:a/vs/:b', requires: ['evaluations', 'compareEvaluations'], page: () => import('./pages/compare.js') },
  { path: 'models', nav: 'Models', requires: 'models', page: () => import('./pages/models.js') },
  { path: 'models/:name', requires: 'models', page: () => import('./pages/model.js') },
  { path: 'releases', nav: 'Releases', requires: 'releases', page: () => import('./pages/releases.js') },
  { path: 'releases/:ref', requires: ['releases', 'release'], page: () => import('./pages/release.js') },
  { path: 'releases/:a/diff/:b', requires: ['release', 'releaseDiff'], page: () => import('./pages/release-diff.js') },
  { path: 'audit', nav: 'Audit log', requires: 'auditEntries', allow: 'auditLog', page: () => import('./pages/audit.js') },
  { path: 'accounts', nav: 'Accounts', requires: ['users', 'mutation:createUser'], allow: 'accounts', page: () => import('./pages/accounts.js') },
  { path: 'accounts/:name', requires: ['users', 'mutation:updateUser'], allow: 'accounts', page: () => import('./pages/account.js') },
  { path: 'settings', page: () => import('./pages/settings.js') },
];

/** match finds the route of a hash path ("corpus/demo") and its params. */
export function match(path, available = () => true) {
  // available(requires) -> bool, see main.js
  const parts = path.split('/').filter(Boolean);
  for (const r of routes) {
    if (r.requires && !available(r.requires)) continue;
    const pat = r.path.split('/').filter(Boolean);
    if (pat.length !== parts.length) continue;
    const params = {};
    let ok = true;
    pat.forEach((p, i) => {
      if (p.startsWith(':')) params[p.slice(1)] = decodeURIComponent(parts[i]);
      else if (p !== parts[i]) ok = false;
    });
    if (ok) return { route: r, params };
  }
  return null;
}

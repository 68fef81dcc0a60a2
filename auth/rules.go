package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/corpus"
	"deidcorpus/ent/model"
	"deidcorpus/ent/release"
	"deidcorpus/internal/nearmiss"
	pipelinerelease "deidcorpus/pipeline/release"
)

// Rule says who may run one operation: a GraphQL root field ("Query.corpora"),
// a download ("download.corpus") or a CLI command ("cli.import"), and which of
// its arguments name objects the viewer must be able to see. Argument paths
// go into input objects with dots ("input.corpus").
type Rule struct {
	Roles []Role
	// Corpora: arguments naming corpora. Nodes: arguments holding ids of
	// objects. Jobs: arguments holding job ids. Releases: "name@version"
	// references. Models: model names.
	Corpora, Nodes, Jobs, Releases, Models []string
	// Self: an argument naming an account that must be the viewer's own
	// unless the viewer is an admin (absent means the viewer's own).
	Self string
	// Texts: arguments naming corpora that get new note text. Only curators
	// and admins add text to a surrogate corpus: doing so attests that it
	// holds no real PHI.
	Texts []string
	// NewModels: arguments naming a model the operation makes (ownModelName).
	NewModels []string
}

var (
	everyone   = []Role{Admin, Curator, Annotator, Researcher}
	annotating = []Role{Admin, Curator, Annotator}
	curators   = []Role{Admin, Curator}
	admins     = []Role{Admin}
)

// rules is the whole authorization table. An operation that is not here is
// refused to everybody, and the tests fail for any GraphQL field, download or
// CLI command without a rule.
var rules = map[string]Rule{
	// Reads. Row filters (filter.go) keep lists and lookups to what the
	// viewer may see; arguments are checked where a service reads the
	// database around the filters (statistics, archives).
	"Query.node":               {Roles: everyone},
	"Query.nodes":              {Roles: everyone},
	"Query.me":                 {Roles: everyone},
	"Query.corpora":            {Roles: everyone},
	"Query.corpusByName":       {Roles: everyone},
	"Query.documents":          {Roles: everyone},
	"Query.patients":           {Roles: everyone},
	"Query.spans":              {Roles: everyone},
	"Query.evaluations":        {Roles: everyone},
	"Query.jobs":               {Roles: everyone},
	"Query.jobKinds":           {Roles: everyone},
	"Query.models":             {Roles: everyone},
	"Query.releases":           {Roles: everyone},
	"Query.release":            {Roles: everyone},
	"Query.tagSets":            {Roles: everyone},
	"Query.mappings":           {Roles: everyone},
	"Query.formats":            {Roles: everyone},
	"Query.tokens":             {Roles: everyone},
	"Query.corpusStatistics":   {Roles: everyone, Nodes: []string{"corpus"}},
	"Query.compareCorpora":     {Roles: everyone, Corpora: []string{"a", "b"}},
	"Query.lineage":            {Roles: everyone, Nodes: []string{"id"}},
	"Query.compareEvaluations": {Roles: everyone, Nodes: []string{"a", "b"}},
	"Query.releaseDiff":        {Roles: everyone, Releases: []string{"a", "b"}},
	// Adjudication: one note's spans in several sets; counts and F1.
	"Query.disagreements": {Roles: curators, Corpora: []string{"corpus"}},
	"Query.agreement":     {Roles: annotating, Corpora: []string{"corpus"}},
	// What to annotate next: a model's doubt over a set's open notes.
	"Query.annotationQueue":   {Roles: annotating, Corpora: []string{"corpus"}, Models: []string{"model"}},
	"Query.checkReport":       {Roles: curators, Corpora: []string{"corpus"}},
	"Query.surrogateMappings": {Roles: curators, Corpora: []string{"corpus"}},
	"Query.surrogateIDs":      {Roles: curators, Corpora: []string{"corpus"}},
	"Query.users":             {Roles: admins},
	"Query.auditEntries":      {Roles: admins},

	// Corpora and their contents.
	"Mutation.createCorpus":     {Roles: curators},
	"Mutation.importDocuments":  {Roles: annotating, Corpora: []string{"input.corpus"}, Texts: []string{"input.corpus"}},
	"Mutation.startImport":      {Roles: annotating, Corpora: []string{"input.corpus"}, Texts: []string{"input.corpus"}},
	"Mutation.exportCorpus":     {Roles: everyone, Corpora: []string{"corpus"}},
	"Mutation.startExport":      {Roles: everyone, Corpora: []string{"corpus"}},
	"Mutation.deriveCorpus":     {Roles: curators, Corpora: []string{"corpus"}},
	"Mutation.startDerive":      {Roles: curators, Corpora: []string{"corpus"}},
	"Mutation.deleteCorpus":     {Roles: curators, Corpora: []string{"name"}},
	"Mutation.startResynthesis": {Roles: curators, Corpora: []string{"input.corpus"}},
	// Tags with the model, then resynthesizes as startResynthesis does.
	"Mutation.deidentify": {Roles: curators, Corpora: []string{"input.corpus"}, Models: []string{"input.model"}},
	// Lifts a quarantine: the curator vouches that the findings are no PHI.
	"Mutation.resolveCheckFindings": {Roles: curators, Corpora: []string{"corpus"}},
	"Mutation.createRelease":        {Roles: curators, Corpora: []string{"input.corpus"}},
	// Hand annotation: the store lets annotators edit only their own sets
	// (store/annotate.go).
	"Mutation.addSpan":           {Roles: annotating, Nodes: []string{"input.set", "input.document"}},
	"Mutation.changeSpan":        {Roles: annotating, Nodes: []string{"input.span"}},
	"Mutation.removeSpan":        {Roles: annotating, Nodes: []string{"span"}},
	"Mutation.setDocumentStatus": {Roles: annotating, Nodes: []string{"set", "document"}},
	"Mutation.undoEdit":          {Roles: annotating, Nodes: []string{"set", "document"}},
	"Mutation.assignDocuments":   {Roles: curators, Corpora: []string{"input.corpus"}},
	"Mutation.acceptSpan":        {Roles: annotating, Nodes: []string{"span", "into"}},
	// Runs on what the viewer sees.
	"Mutation.startEvaluation": {Roles: everyone, Corpora: []string{"input.corpus"}},
	"Mutation.startTraining":   {Roles: everyone, Corpora: []string{"input.corpus"}, NewModels: []string{"input.model"}},
	"Mutation.startTagging":    {Roles: everyone, Corpora: []string{"input.corpus"}, Models: []string{"input.model"}},
	"Mutation.startExperiment": {Roles: everyone, Corpora: []string{"input.corpus", "input.other"}},
	"Mutation.cancelJob":       {Roles: everyone, Jobs: []string{"id"}},
	"Mutation.retryJob":        {Roles: everyone, Jobs: []string{"id"}},
	// The server sends corpus text to an external tagger's endpoint.
	"Mutation.registerExternalModel": {Roles: curators, NewModels: []string{"name"}},
	// Accounts.
	"Mutation.createUser":     {Roles: admins},
	"Mutation.updateUser":     {Roles: admins},
	"Mutation.assignCorpus":   {Roles: admins, Corpora: []string{"corpus"}},
	"Mutation.unassignCorpus": {Roles: admins, Corpora: []string{"corpus"}},
	"Mutation.createToken":    {Roles: everyone, Self: "user"},
	"Mutation.revokeToken":    {Roles: everyone, Nodes: []string{"id"}},

	"Subscription.job": {Roles: everyone, Jobs: []string{"id"}},

	// Downloads (server/download.go).
	"download.corpus":   {Roles: everyone, Corpora: []string{"name"}},
	"download.release":  {Roles: everyone, Releases: []string{"ref"}},
	"download.artifact": {Roles: everyone, Nodes: []string{"id"}},

	// CLI commands that open the database. The CLI acts as the account of
	// --token, or else as the local operator with the admin role: whoever
	// can read the database file and its key has the data already.
	"cli.import": {Roles: annotating, Corpora: []string{"corpus"}, Texts: []string{"corpus"}},
	"cli.export": {Roles: everyone, Corpora: []string{"corpus"}},
	// The source's ids are record and accession numbers.
	"cli.export.sourceIDs": {Roles: curators, Corpora: []string{"corpus"}},
	"cli.resynth.ids":      {Roles: curators, Corpora: []string{"corpus"}},
	"cli.stats":            {Roles: everyone, Corpora: []string{"corpus", "compare"}},
	"cli.corpora":          {Roles: everyone},
	"cli.derive":           {Roles: curators, Corpora: []string{"corpus"}},
	"cli.resynth":          {Roles: curators, Corpora: []string{"corpus"}},
	"cli.deidentify":       {Roles: curators, Corpora: []string{"corpus"}, Models: []string{"model"}},
	"cli.resynth.resolve":  {Roles: curators, Corpora: []string{"corpus"}},
	"cli.train":            {Roles: everyone, Corpora: []string{"corpus"}, NewModels: []string{"model"}},
	"cli.tag":              {Roles: everyone, Corpora: []string{"corpus"}, Models: []string{"model"}},
	"cli.features":         {Roles: everyone, Corpora: []string{"corpus"}},
	"cli.models":           {Roles: everyone},
	"cli.evaluations":      {Roles: everyone, Corpora: []string{"corpus"}},
	"cli.models.register":  {Roles: curators, NewModels: []string{"name"}},
	"cli.models.export":    {Roles: everyone, Models: []string{"model"}},
	"cli.experiment":       {Roles: everyone, Corpora: []string{"corpus", "other"}},
	"cli.jobs":             {Roles: everyone},
	"cli.jobs.change":      {Roles: everyone, Jobs: []string{"id"}},
	"cli.release.create":   {Roles: curators, Corpora: []string{"corpus"}},
	"cli.release.read":     {Roles: everyone, Releases: []string{"ref", "other"}},
	"cli.release.list":     {Roles: everyone},
	"cli.keys":             {Roles: admins},
	"cli.audit":            {Roles: admins},
	"cli.users":            {Roles: admins},
	"cli.tokens":           {Roles: everyone, Self: "user"},

	// annotate assign, queue and agreement act under their GraphQL
	// operations' rules; a set's progress has no root field of its own.
	"cli.annotate.status": {Roles: annotating, Corpora: []string{"corpus"}},
	// Cuts a corpus into train, dev and test by patient.
	"cli.split": {Roles: curators, Corpora: []string{"corpus"}},
}

// RuleFor returns the rule of an operation.
func RuleFor(op string) (Rule, bool) {
	r, ok := rules[op]
	return r, ok
}

// Operations lists every operation with a rule.
func Operations() []string {
	ops := make([]string, 0, len(rules))
	for op := range rules {
		ops = append(ops, op)
	}
	slices.Sort(ops)
	return ops
}

// describeOp names an operation as its caller knows it: a command line's
// ("cli.release.create") as "this command", since the command line prints
// its name before the error, a GraphQL field as it is.
func describeOp(op string) string {
	if strings.HasPrefix(op, "cli.") {
		return "this command"
	}
	return op
}

// withArticle puts "a" or "an" before a role's name.
func withArticle(role string) string {
	if role != "" && strings.ContainsRune("aeiou", rune(role[0])) {
		return "an " + role
	}
	return "a " + role
}

// Check decides whether ctx's viewer may run op with args (raw argument
// values: input objects as maps). A context without a viewer is the process
// itself and may do everything, unless it is an HTTP request's: that is
// nobody and is refused (unauthorized). Refusals are forbidden errors; an
// object the viewer may not see is reported not found, as if it did not exist.
func Check(ctx context.Context, c *ent.Client, op string, args map[string]any) error {
	v := FromContext(ctx)
	if v == nil {
		if Anonymous(ctx) {
			return errAnonymous()
		}
		return nil
	}
	r, ok := rules[op]
	if !ok {
		return apperr.New(apperr.Forbidden, "%s has no access rule", op)
	}
	if !slices.Contains(r.Roles, v.Role) {
		return apperr.New(apperr.Forbidden, "%s needs the %s role (you are %s, %s)", describeOp(op), roleList(r.Roles), v.Name, withArticle(string(v.Role)))
	}
	if r.Self != "" && v.Role != Admin {
		if name, ok := lookup(args, r.Self).(string); ok && name != "" && name != v.Name {
			return apperr.New(apperr.Forbidden, "only admins act for other accounts (%s is not %s)", name, v.Name)
		}
	}
	// Objects named by id may be of any type (a token, an audit entry): the
	// row filters of the viewer decide.
	for _, path := range r.Nodes {
		if raw := lookup(args, path); raw != nil {
			id, err := toID(raw)
			if err != nil {
				return apperr.New(apperr.Invalid, "argument %s: %v", path, err)
			}
			if _, err := c.Noder(ctx, id); err != nil {
				return notFound(err, "no object with id %d", id)
			}
		}
	}
	for _, path := range r.Jobs {
		if raw := lookup(args, path); raw != nil {
			id, err := toID(raw)
			if err != nil {
				return apperr.New(apperr.Invalid, "argument %s: %v", path, err)
			}
			if _, err := c.Job.Get(ctx, id); err != nil {
				return notFound(err, "no job %d", id)
			}
		}
	}
	for _, path := range r.NewModels {
		if name, ok := lookup(args, path).(string); ok && name != "" {
			if err := ownModelName(v, name); err != nil {
				return err
			}
		}
	}
	if v.SeesAllCorpora() {
		return nil // they see every corpus, release and model
	}
	for _, path := range r.Corpora {
		if name, ok := lookup(args, path).(string); ok && name != "" {
			if ok, err := c.Corpus.Query().Where(corpus.Name(name)).Exist(ctx); err != nil {
				return err
			} else if !ok {
				return NoCorpus(ctx, c, name)
			}
		}
	}
	for _, path := range r.Texts {
		if name, ok := lookup(args, path).(string); ok && name != "" {
			surrogate, err := c.Corpus.Query().Where(corpus.Name(name), corpus.KindEQ(corpus.KindSurrogate)).Exist(ctx)
			if err != nil {
				return err
			}
			if surrogate {
				return apperr.New(apperr.Forbidden, "only curators and admins add text to a surrogate corpus (%s): doing so attests that it holds no real PHI", name)
			}
		}
	}
	for _, path := range r.Releases {
		if ref, ok := lookup(args, path).(string); ok && ref != "" {
			name, ver, err := pipelinerelease.ParseRef(ref)
			if err != nil {
				return apperr.Wrap(apperr.Invalid, err)
			}
			if ok, err := c.Release.Query().Where(release.Name(name), release.Version(ver)).Exist(ctx); err != nil || !ok {
				return notFound(err, "no release %s", ref)
			}
		}
	}
	for _, path := range r.Models {
		if name, ok := lookup(args, path).(string); ok && name != "" {
			if ok, err := c.Model.Query().Where(model.Name(name)).Exist(ctx); err != nil || !ok {
				return notFound(err, "no model named %q", name)
			}
		}
	}
	return nil
}

// NoCorpus is the not-found error for a corpus name: it names the corpora
// the viewer sees that a misspelling was probably meant to be (the row
// filters keep the others out of the suggestions as out of every answer).
func NoCorpus(ctx context.Context, c *ent.Client, name string) error {
	names, err := c.Corpus.Query().Select(corpus.FieldName).Strings(ctx)
	if err != nil {
		return err
	}
	if near := nearmiss.Among(name, names); len(near) > 0 {
		slices.Sort(near)
		return apperr.New(apperr.NotFound, "no corpus named %q; did you mean %s?", name, strings.Join(near, " or "))
	}
	return apperr.New(apperr.NotFound, "no corpus named %q", name)
}

// ownModelName refuses a name v may not give a model it makes. Model names
// are one namespace across the server: were a restricted viewer (annotator,
// researcher) free to pick any, "a model named X exists" would tell it of a
// model it may not see. So it names its models under its own account,
// "rita:crf-1", where only its own can be (account names hold no ':'), and
// nobody names one under another's account. The answer depends on the name
// alone, never on which models exist.
func ownModelName(v *Viewer, name string) error {
	owner, _, scoped := strings.Cut(name, ":")
	switch {
	case scoped && owner != v.Name:
		return apperr.New(apperr.Invalid, "model name %q is kept for account %s: name a model %s:NAME, or without a ':'", name, owner, v.Name)
	case !scoped && !v.SeesAllCorpora():
		return apperr.New(apperr.Invalid, "name the models you make under your account, %s:NAME (%s:%s): any other name could be taken by a model you may not see", v.Name, v.Name, name)
	}
	return nil
}

// notFound reports an object the viewer cannot see as missing; other
// failures (a row filter's refusal, the database) pass through.
func notFound(err error, format string, args ...any) error {
	if err == nil || ent.IsNotFound(err) {
		return apperr.New(apperr.NotFound, format, args...)
	}
	return err
}

func roleList(roles []Role) string {
	s := make([]string, len(roles))
	for i, r := range roles {
		s[i] = string(r)
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// lookup follows a dotted path into nested maps.
func lookup(args map[string]any, path string) any {
	var cur any = args
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

// toID reads an id given as a GraphQL ID (a string), a JSON number or an int.
func toID(v any) (int, error) {
	switch x := v.(type) {
	case int:
		return x, nil
	case int64:
		return int(x), nil
	case float64:
		return int(x), nil
	case json.Number:
		n, err := x.Int64()
		return int(n), err
	case string:
		if n, err := strconv.Atoi(x); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%q is not an ID: an ID is the number a query returns as id (corpora { id name } lists the corpora's)", fmt.Sprint(v))
}

package surrogate

import (
	"cmp"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"deidcorpus/internal/nearmiss"
	"deidcorpus/internal/strictjson"
	"deidcorpus/pipeline"
	"deidcorpus/pipeline/phi"
	"deidcorpus/pipeline/resources"
)

// ErrPolicy marks the errors of a policy (its file's, or its names'
// against a corpus), so that a caller who read it from a file can name it.
var ErrPolicy = errors.New("policy")

// Strategies a policy can choose for a type.
const (
	Keep         = "keep"         // left as is (listed by the check, not counted as a leak)
	Name         = "name"         // Census names of the same sex and shape
	Username     = "username"     // letters through the scope's letter map, digits at random (Stubbs)
	DateShift    = "date-shift"   // one shift per patient, each date in its own format
	DateShuffle  = "date-shuffle" // a date of the same pattern from another document (Deleger)
	Age          = "age"          // 90 and over become 90; the patient's other ages move with them
	Street       = "street"       // number, name and suffix of the same pattern
	City         = "city"         // a US city (digits: a number of the same shape)
	StateS       = "state"        // a US state, name or abbreviation as the original
	ZIP          = "zip"          // a real ZIP code, 5 or 9 digits as the original
	CountryS     = "country"      // a country, or nationality adjective, in the same language
	HospitalS    = "hospital"     // a listed hospital
	Organization = "organization" // a listed organization
	Profession   = "profession"   // a listed profession
	DepartmentS  = "department"   // the generic department (Stubbs & Uzuner Appendix A)
	Shape        = "shape"        // letters for letters, digits for digits, no leading zero
	Phone        = "phone"        // shape, with a real US area code where there is one
	Email        = "email"        // random letters of the same lengths, top-level domain kept
	URL          = "url"          // random letters of the same lengths, scheme, www and TLD kept
	IP           = "ip"           // a random address of the same family
	SSN          = "ssn"          // random digits of the same format, a valid area number
	SSNMask      = "ssn-mask"     // every digit becomes x (Deleger et al.)
)

var strategies = map[string]bool{Keep: true, Name: true, Username: true, DateShift: true, DateShuffle: true,
	Age: true, Street: true, City: true, StateS: true, ZIP: true, CountryS: true, HospitalS: true,
	Organization: true, Profession: true, DepartmentS: true, Shape: true, Phone: true, Email: true, URL: true,
	IP: true, SSN: true, SSNMask: true, Redact: true, Placeholder: true, Hash: true}

// Which surnames surrogates may be (Policy.Surnames).
const (
	SurnamesApart     = "apart"
	SurnamesFrequency = "frequency"
)

// What a policy does with span comments (Policy.Comments).
const (
	CommentsDrop = "drop"
	CommentsKeep = "keep"
)

// NoteTypeRule is when a note's type is kept (Policy.NoteTypes).
type NoteTypeRule struct {
	MinPatients int    `json:"minPatients"`
	Neutral     string `json:"neutral"`
}

// Scopes a surrogate is consistent within.
const (
	ScopePatient = "patient" // the same original gets the same surrogate in one patient's records
	ScopeCorpus  = "corpus"  // ... in the whole corpus (doctors, hospitals, phone numbers)
	// ScopeMention draws every mention's surrogate on its own (the "random"
	// replacement that Osborne et al. 2025 weigh against consistent
	// replacement): two mentions of one name are two names, so a leaked
	// original has no repeated surrogate beside it to stand apart from.
	// Mappings of this scope are not kept, and later runs draw anew.
	ScopeMention = "mention"
)

// Rule is a policy's choice for one type.
type Rule struct {
	Strategy string `json:"strategy"`
	Scope    string `json:"scope"`
	// Keep lists values of the type left as they are, compared without
	// case or accents: a corpus's home country ("España", 86% of
	// MEDDOCAN's countries), which HIPAA does not count as an identifier,
	// where keeping it is the release's choice. "home" stands for the
	// country of the notes' language pack in each of its forms (España,
	// Spain, español, española; the United States for English notes).
	// The check lists kept values as kept, not as leaks.
	Keep []string `json:"keep,omitempty"`
	// The options of the masking strategies (mask.go): Redact's Mask, one
	// character ("*" when empty), and KeepLength, a mask as long as the
	// value (else of redactLength characters); Placeholder's Format
	// (brackets, mimic, angle or philter); the Label a placeholder or a hash writes
	// instead of the span's type.
	Mask       string `json:"mask,omitempty"`
	KeepLength bool   `json:"keepLength,omitempty"`
	Format     string `json:"format,omitempty"`
	Label      string `json:"label,omitempty"`
}

// KeepHome is the Keep entry that names the notes' home country.
const KeepHome = "home"

// homeCountries are the countries the language packs are of.
var homeCountries = map[string]string{"es": "España", "en": "United States"}

// atHome returns the policy with each Keep entry "home" written out as the
// forms of the language's home country: p itself when no rule has one.
func (p *Policy) atHome(lang string) *Policy {
	home, ok := resources.ForLanguage(lang).CountryOf(homeCountries[lang])
	if !ok {
		return p
	}
	var out *Policy
	for t, r := range p.Types {
		i := slices.Index(r.Keep, KeepHome)
		if i < 0 {
			continue
		}
		if out == nil {
			cp := *p
			cp.Types = maps.Clone(p.Types)
			out = &cp
		}
		forms := countryForms(home)
		r.Keep = append(slices.Delete(slices.Clone(r.Keep), i, i+1), forms[:]...)
		out.Types[t] = r
	}
	if out == nil {
		return p
	}
	return out
}

// kept reports whether the rule leaves a value as it is.
func (r Rule) kept(v string) bool {
	return r.Strategy == Keep || slices.ContainsFunc(r.Keep, func(k string) bool { return fold(k) == fold(v) })
}

// Policy says how each PHI type is replaced. Types are keyed by the span's
// Type, then its Category, then "*".
type Policy struct {
	// Language of the notes for the surrogates that depend on it (month names,
	// professions, departments, nationality forms): "en", "es" or "auto"
	// (detected from the corpus text).
	Language string `json:"language"`
	// DateOrder of numeric dates: "MDY", "DMY" or "auto" (DMY for Spanish).
	DateOrder string `json:"dateOrder"`
	// DateShift bounds the per-patient shift in days. The defaults (one to ten
	// years, back or forward) change every year, so that a year written
	// alone never survives (Stubbs & Uzuner shifted by random years, months
	// and days). With Either the shift goes back as often as forward, by as
	// many days: shifted years then spread around the real ones instead of
	// all lying after them, which gave surrogate dates away (the
	// residual-risk experiment's distinguishability of MEDDOCAN's dates,
	// 0.79 forward only, 0.72 either way). Bounds given without either
	// shift forward only.
	DateShift struct {
		MinDays int  `json:"minDays"`
		MaxDays int  `json:"maxDays"`
		Either  bool `json:"either,omitempty"`
	} `json:"dateShift"`
	// Mapping reaches the rules of labels the policy does not name (a
	// corpus's own tag set) through a tag-set mapping to i2b2 2014 types:
	// "auto" (the default) uses whichever built-in mapping to i2b2-2014 has a
	// rule for the label (MEDDOCAN, PhysioNet, CCHMC, MIMIC placeholders);
	// "none" sends such labels to "*"; anything else names one built-in
	// mapping (phi.BuiltinMappings). A policy carries data, never a path: the
	// server that runs it reads no file a request names.
	Mapping string `json:"mapping,omitempty"`
	// MappingText is a mapping file's text (see phi.ParseMapping), the one
	// mapping used instead of Mapping's.
	MappingText string `json:"mappingText,omitempty"`
	// Resources names the embedded pack surrogates are drawn from
	// (resources.Languages); the language's pack when empty.
	Resources string `json:"resources,omitempty"`
	// ResourceFiles are a site's own lists, their text by file name, which
	// replace the pack's lists of the same names (see resources.LoadText).
	ResourceFiles map[string]string `json:"resourceFiles,omitempty"`
	// Propagate, on unless false, replaces an unannotated occurrence of a
	// value the patient's records annotate elsewhere (a name, place, id or
	// contact of four letters or digits or more) by that value's surrogate:
	// the gold's misses would otherwise stay in the text beside the
	// surrogate, which also gives the pair away (see propagate.go).
	Propagate *bool           `json:"propagate,omitempty"`
	Types     map[string]Rule `json:"types"`
	// Comments says what becomes of span comments and annotator notes,
	// free text that often restates the value its span marks: "drop" (the
	// default) or "keep", and then the check reads them as it reads text.
	Comments string `json:"comments,omitempty"`
	// Surnames says which names a surrogate may be: "frequency" (the
	// default) any of the pack by its frequency but those of the records
	// the surrogate goes to, so that surrogates are as common as real
	// names; "apart" (Deleger et al.) none that is an original surname
	// anywhere in the corpus, which leaves a corpus that holds every common
	// surname only the rare ones to draw, and a reader the common ones to
	// trust (MEDDOCAN's names: distinguishability 0.95 apart, 0.77-0.88 by
	// frequency).
	Surnames string `json:"surnames,omitempty"`
	// NoteTypes says when a note's type is kept: where it is a category,
	// written for at least MinPatients patients of the source and holding
	// no annotated value of the corpus ("Alta de Amparo Ybarrondo" is
	// neither). Other types become Neutral.
	NoteTypes NoteTypeRule `json:"noteTypes"`
	// MaxNoteLeakRate, when set, is the share of notes with a leaked value
	// above which a surrogate corpus made from a tagger's spans may not be
	// shared: the release gate (pipeline/gate) compares it with the
	// tagger's held-out estimate.
	MaxNoteLeakRate *float64 `json:"maxNoteLeakRate,omitempty"`

	labels *labelMapper // resolves Mapping or MappingText; made by Validate
}

// labelMapper maps labels through the policy's mappings, memoized: Rule runs
// for every span.
type labelMapper struct {
	maps  []*phi.Mapping
	cache sync.Map // category + "\x00" + type -> [2]string (i2b2 category, type; "" if unmapped)
}

func newLabelMapper(spec, text string) (*labelMapper, error) {
	lm := &labelMapper{}
	switch {
	case text != "":
		m, err := phi.ResolveMapping("", text, "mappingText")
		if err != nil {
			return nil, mappingTextError(err)
		}
		lm.maps = []*phi.Mapping{m}
	case spec == "none":
	case spec == "" || spec == "auto":
		for _, name := range phi.BuiltinMappings() {
			m, err := phi.ResolveMapping(name, "", "")
			if err != nil {
				return nil, err
			}
			if m.To == phi.I2B22014 {
				lm.maps = append(lm.maps, m)
			}
		}
	case isPath(spec):
		// A policy of an older version, or a request that hoped the server
		// would read a file for it: the path is never opened, nor echoed.
		return nil, fmt.Errorf("%w: mapping is a server path: a policy carries a mapping's text (mappingText) or names a built-in mapping (%s); resubmit with its text",
			ErrPolicy, strings.Join(phi.BuiltinMappings(), ", "))
	default:
		m, err := phi.ResolveMapping(spec, "", "")
		if err != nil {
			return nil, fmt.Errorf("%w: mapping: %w", ErrPolicy, err)
		}
		lm.maps = []*phi.Mapping{m}
	}
	return lm, nil
}

// isPath reports whether a policy's name for a mapping or a pack is a file
// system path rather than a built-in name (built-in names hold no separator
// and no dot).
func isPath(s string) bool { return strings.ContainsAny(s, `/\.~`) }

// mappingTextError names the field and line of a mapping text's error.
func mappingTextError(err error) error {
	var me *phi.MappingError
	if !errors.As(err, &me) {
		return fmt.Errorf("%w: mappingText: %w", ErrPolicy, err)
	}
	if me.Line == 0 {
		return fmt.Errorf("%w: mappingText: %s", ErrPolicy, me.Msg)
	}
	return fmt.Errorf("%w: mappingText line %d: %s", ErrPolicy, me.Line, me.Msg)
}

// mapped returns the i2b2 label of a corpus's label and the mapping that
// gave it; ok is false when no mapping names the label.
func (lm *labelMapper) mapped(category, typ string) (cat, newType, via string, ok bool) {
	key := category + "\x00" + typ
	if v, hit := lm.cache.Load(key); hit {
		r := v.([3]string)
		return r[0], r[1], r[2], r[2] != ""
	}
	var r [3]string
	for _, m := range lm.maps {
		if !m.Names(category, typ) && len(lm.maps) > 1 {
			continue
		}
		if c, t, keep, err := m.Map(category, typ); err == nil && keep {
			r = [3]string{c, t, m.Name}
			break
		}
	}
	lm.cache.Store(key, r)
	return r[0], r[1], r[2], r[2] != ""
}

//go:embed policy.json
var defaultPolicy []byte

// DefaultPolicy returns the policy of SPEC section 5, from the papers: names,
// dates, locations, contacts and IDs replaced, OTHER kept (Deleger et al.).
func DefaultPolicy() *Policy {
	p, err := ParsePolicy(defaultPolicy)
	if err != nil {
		panic("surrogate: default policy: " + err.Error())
	}
	return p
}

// ParsePolicy reads a policy file (JSON). Types it does not name take the
// default policy's rule.
func ParsePolicy(data []byte) (*Policy, error) {
	var p Policy
	if err := strictjson.Decode(data, &p); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPolicy, err)
	}
	if p.Types == nil {
		p.Types = map[string]Rule{}
	}
	if p.Language == "" {
		p.Language = "auto"
	}
	if p.DateOrder == "" {
		p.DateOrder = "auto"
	}
	if p.Mapping == "" && p.MappingText == "" {
		p.Mapping = "auto"
	}
	var def Policy
	if err := json.Unmarshal(defaultPolicy, &def); err != nil {
		return nil, err
	}
	for t, r := range p.Types {
		// A rule may leave its scope out: the default policy's for the
		// type, else one per patient (as a person's values are).
		if r.Scope == "" {
			r.Scope = cmp.Or(def.Types[t].Scope, ScopePatient)
			p.Types[t] = r
		}
	}
	for t, r := range def.Types {
		if _, ok := p.Types[t]; !ok {
			p.Types[t] = r
		}
	}
	if p.DateShift.MinDays == 0 && p.DateShift.MaxDays == 0 {
		p.DateShift = def.DateShift
	}
	if p.Surnames == "" {
		p.Surnames = def.Surnames
	}
	if p.Comments == "" {
		p.Comments = CommentsDrop
	}
	if p.NoteTypes.MinPatients == 0 {
		p.NoteTypes.MinPatients = def.NoteTypes.MinPatients
	}
	if p.NoteTypes.Neutral == "" {
		p.NoteTypes.Neutral = def.NoteTypes.Neutral
	}
	return &p, p.Validate()
}

// Validate checks every rule's strategy and scope and the shift bounds.
func (p *Policy) Validate() error {
	switch p.Language {
	case "auto", "en", "es":
	default:
		return fmt.Errorf("%w: language %q: want auto, en or es", ErrPolicy, p.Language)
	}
	switch p.DateOrder {
	case "auto", "MDY", "DMY":
	default:
		return fmt.Errorf("%w: dateOrder %q: want auto, MDY or DMY", ErrPolicy, p.DateOrder)
	}
	if p.DateShift.MinDays > p.DateShift.MaxDays {
		return fmt.Errorf("%w: dateShift minDays %d > maxDays %d", ErrPolicy, p.DateShift.MinDays, p.DateShift.MaxDays)
	}
	if p.DateShift.Either && p.DateShift.MinDays <= 0 {
		return fmt.Errorf("%w: dateShift either: minDays %d must be positive (the days are counted back or forward)", ErrPolicy, p.DateShift.MinDays)
	}
	if p.DateShift.MinDays <= 0 && p.DateShift.MaxDays >= 0 {
		return fmt.Errorf("%w: dateShift [%d, %d] allows a shift of 0 days", ErrPolicy, p.DateShift.MinDays, p.DateShift.MaxDays)
	}
	switch p.Comments {
	case CommentsDrop, CommentsKeep:
	default:
		return fmt.Errorf("%w: comments %q: want drop or keep", ErrPolicy, p.Comments)
	}
	switch p.Surnames {
	case "", SurnamesApart, SurnamesFrequency:
	default:
		return fmt.Errorf("%w: surnames %q: want apart or frequency", ErrPolicy, p.Surnames)
	}
	if p.NoteTypes.MinPatients < 1 {
		return fmt.Errorf("%w: noteTypes.minPatients %d: want 1 or more", ErrPolicy, p.NoteTypes.MinPatients)
	}
	if strings.TrimSpace(p.NoteTypes.Neutral) == "" {
		return fmt.Errorf("%w: noteTypes.neutral is empty: name the type other notes get", ErrPolicy)
	}
	if err := p.checkResources(); err != nil {
		return err
	}
	if r := p.MaxNoteLeakRate; r != nil && !(*r >= 0 && *r <= 1) {
		return fmt.Errorf("%w: maxNoteLeakRate %g: want a share of notes in [0, 1], such as 0.01", ErrPolicy, *r)
	}
	if p.MappingText != "" && p.Mapping != "" {
		return fmt.Errorf("%w: give mapping (auto, none or a built-in mapping's name) or mappingText, not both", ErrPolicy)
	}
	if len(p.MappingText) > MaxMappingText {
		return fmt.Errorf("%w: mappingText holds %d bytes, more than a mapping's %d", ErrPolicy, len(p.MappingText), MaxMappingText)
	}
	if p.labels == nil {
		lm, err := newLabelMapper(p.Mapping, p.MappingText)
		if err != nil {
			return err
		}
		p.labels = lm
	}
	keys := make([]string, 0, len(p.Types))
	for k := range p.Types {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, t := range keys {
		r := p.Types[t]
		if !strategies[r.Strategy] {
			return fmt.Errorf("%w: type %s: %s", ErrPolicy, t, unknownStrategy(r.Strategy))
		}
		if r.Scope != ScopePatient && r.Scope != ScopeCorpus && r.Scope != ScopeMention {
			return fmt.Errorf("%w: type %s: scope %q: want patient, corpus or mention", ErrPolicy, t, r.Scope)
		}
		if err := r.checkMask(); err != nil {
			return fmt.Errorf("%w: type %s: %w", ErrPolicy, t, err)
		}
	}
	return nil
}

// Limits of what a policy carries, as a job's parameters hold it: a mapping
// is a page of rules; a site's lists are its region's (the whole embedded
// English pack is 1.4 MB).
const (
	MaxMappingText   = 1 << 20
	MaxResourceFiles = 4 << 20
)

// checkResources refuses a pack that is not built in and lists beyond
// MaxResourceFiles or of no list's name; the lists' contents are read when
// a run starts (resources.LoadText), its language known.
func (p *Policy) checkResources() error {
	packs := strings.Join(resources.Languages(), ", ")
	switch {
	case p.Resources == "" || slices.Contains(resources.Languages(), p.Resources):
	case isPath(p.Resources):
		return fmt.Errorf("%w: resources is a server path: a policy names a built-in pack (%s) and carries a site's own lists as text (resourceFiles); resubmit with their text", ErrPolicy, packs)
	default:
		return fmt.Errorf("%w: resources: no built-in pack %q (known: %s)", ErrPolicy, p.Resources, packs)
	}
	size := 0
	for _, name := range slices.Sorted(maps.Keys(p.ResourceFiles)) {
		if !slices.Contains(resources.Files(), name) {
			return fmt.Errorf("%w: resourceFiles: %q is no list's name (known: %s)", ErrPolicy, name, strings.Join(resources.Files(), ", "))
		}
		size += len(p.ResourceFiles[name])
	}
	if size > MaxResourceFiles {
		return fmt.Errorf("%w: resourceFiles hold %d bytes, more than the %d a policy may carry", ErrPolicy, size, MaxResourceFiles)
	}
	return nil
}

// Rule returns the rule for a span's type and category: the policy's rule
// for the type, else for the category, else for the i2b2 label a mapping
// gives the label (see Mapping), else "*".
func (p *Policy) Rule(category, typ string) Rule {
	if r, ok := p.direct(category, typ); ok {
		return r
	}
	if p.labels != nil {
		if c, t, _, ok := p.labels.mapped(category, typ); ok {
			if r, ok := p.direct(c, t); ok {
				return r
			}
		}
	}
	if r, ok := p.Types["*"]; ok {
		return r
	}
	return Rule{Strategy: Shape, Scope: ScopePatient}
}

// CheckNames refuses a policy that names a type no label of the corpus
// (labels: its category and type pairs) can reach and that is no type or
// category of the corpus's tag set (declared; nil for an open one) or of
// i2b2 2014's, nor "*": most likely misspelt, its rule would never apply
// while the type it was meant for fell back to another.
func (p *Policy) CheckNames(labels [][2]string, declared *phi.TagSet) error {
	known := map[string]bool{}
	for _, ts := range []*phi.TagSet{phi.I2B2(), declared} {
		if ts == nil {
			continue
		}
		for _, c := range ts.Categories {
			known[c.Name] = true
			for _, t := range c.Types {
				known[t] = true
			}
		}
	}
	for _, l := range labels {
		known[l[0]], known[l[1]] = true, true
	}
	names := slices.Sorted(maps.Keys(known))
	for _, t := range slices.Sorted(maps.Keys(p.Types)) {
		if known[t] || t == "*" {
			continue
		}
		hint := ""
		if meant := nearmiss.Among(t, names); len(meant) > 0 {
			hint = "; did you mean " + strings.Join(meant, " or ") + "?"
		}
		return fmt.Errorf("%w: types: %q is no label of the corpus, no type of its tag set and no i2b2 2014 type%s", ErrPolicy, t, hint)
	}
	return nil
}

// names reports whether the policy has a rule of its own for a label,
// directly or through its mappings, rather than its "*" fallback.
func (p *Policy) names(category, typ string) bool {
	if _, ok := p.direct(category, typ); ok {
		return true
	}
	if p.labels != nil {
		if c, t, _, ok := p.labels.mapped(category, typ); ok {
			_, ok := p.direct(c, t)
			return ok
		}
	}
	return false
}

func (p *Policy) direct(category, typ string) (Rule, bool) {
	if r, ok := p.Types[typ]; ok {
		return r, true
	}
	r, ok := p.Types[category]
	return r, ok
}

// LabelRule is how a run reached one label's rule.
type LabelRule struct {
	Label    string // the corpus's label, CATEGORY/TYPE
	Via      string // the mapping that gave its i2b2 label, "" if the policy names it
	As       string // the i2b2 label it was mapped to
	Strategy string
}

// explain tells, for each label, which rule applies and through which mapping.
func (p *Policy) explain(labels [][2]string) []LabelRule {
	var out []LabelRule
	for _, l := range labels {
		lr := LabelRule{Label: pipeline.Span{Category: l[0], Type: l[1]}.Label(), Strategy: p.Rule(l[0], l[1]).Strategy}
		if _, ok := p.direct(l[0], l[1]); !ok && p.labels != nil {
			if c, t, via, ok := p.labels.mapped(l[0], l[1]); ok {
				lr.Via, lr.As = via, pipeline.Span{Category: c, Type: t}.Label()
			}
		}
		out = append(out, lr)
	}
	return out
}

// propagatedCategories are the i2b2 categories whose values a run replaces
// where the gold missed them (see Policy.Propagate): dates and ages have
// rules of their own (a patient's shift moves them all), and a profession
// or an OTHER value is no identifier alone.
var propagatedCategories = map[string]bool{"NAME": true, "LOCATION": true, "ID": true, "CONTACT": true}

// propagates reports whether the policy replaces the unannotated
// occurrences of a label's values: propagation is on, the label's i2b2
// category is a name, a location, an id or a contact, and its strategy
// replaces a value by one surrogate (not a department's generic name).
func (p *Policy) propagates(category, typ string) bool {
	return p.propagating() && p.searched(category, typ)
}

// propagating reports whether the policy propagates at all.
func (p *Policy) propagating() bool { return p.Propagate == nil || *p.Propagate }

// searched reports whether a label's values are looked for outside the
// spans, by propagation where the policy propagates and by the check always.
func (p *Policy) searched(category, typ string) bool {
	switch p.Rule(category, typ).Strategy {
	case Keep, Age, DateShift, DateShuffle, DepartmentS:
		return false
	}
	return propagatedCategories[p.categoryOf(category, typ)]
}

// categoryOf is a label's i2b2 category: its type's in i2b2 2014, else the
// one the policy's mappings give it (MEDDOCAN's TERRITORIO is LOCATION),
// else its own.
func (p *Policy) categoryOf(category, typ string) string {
	if c, ok := phi.I2B2().CategoryOf(typ); ok {
		return c
	}
	if p.labels != nil {
		if c, _, _, ok := p.labels.mapped(category, typ); ok {
			return c
		}
	}
	return category
}

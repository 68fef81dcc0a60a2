package phi

import (
	"cmp"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"deidcorpus/pipeline"
)

// A tag-set mapping is data, not code (SPEC section 2), so that a derived
// corpus can name the exact file that made it and users can write their own.
// A mapping file is UTF-8 text, one rule a line, fields separated by
// whitespace, '#' starting a comment:
//
//	@from     meddocan          # source tag set (optional; checks the sources)
//	@to       i2b2-2014         # target tag set (optional; checks the targets, fills categories)
//	@default  error             # unmatched labels: error (the default), keep, drop, or a LABEL
//	FECHAS                DATE          # rename (category from @to: DATE/DATE)
//	NOMBRE_SUJETO_ASISTENCIA  NAME/PATIENT
//	NAME/DOCTOR           NAME          # match category and type
//	LOCATION/*            LOCATION      # every type of a category: merging
//	SEXO_SUJETO_ASISTENCIA  -           # drop the spans
//	AGE                   =             # keep unchanged
//
// A source is TYPE, CATEGORY/TYPE or CATEGORY/*; the most specific rule wins
// (CATEGORY/TYPE, then TYPE, then CATEGORY/*, then @default).

//go:embed mappings/*.map
var builtinFS embed.FS

// Mapping relabels, merges and drops span classes.
type Mapping struct {
	Name string // built-in name, or the file's base name without extension
	// Label is what the mapping was read from, as errors name it: the
	// built-in name, or the file's path.
	Label string
	From  string // declared source tag set; may be empty
	To    string // declared target tag set; may be empty
	// Hash is "sha256:" and the hex digest of the mapping file's bytes, so that
	// a derived corpus's provenance pins the exact rules that made it.
	Hash string

	def   action
	exact map[[2]string]action // {category, type}
	types map[string]action
	cats  map[string]action
}

type actionKind int

const (
	actError actionKind = iota
	actKeep
	actDrop
	actRelabel
)

type action struct {
	kind     actionKind
	cat, typ string // for actRelabel
}

// MappingError locates a problem in a mapping file.
type MappingError struct {
	File string
	Line int
	Msg  string
}

func (e *MappingError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("mapping %s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("mapping %s: %s", e.File, e.Msg)
}

// BuiltinMappings lists the names of the mappings compiled into the binary.
func BuiltinMappings() []string {
	entries, _ := fs.ReadDir(builtinFS, "mappings") // the embedded directory always exists
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".map"))
	}
	sort.Strings(names)
	return names
}

// ResolveMapping is the one reading of a mapping argument, wherever it comes
// from (GraphQL, a job's parameters, the command line): name is a built-in
// mapping (see BuiltinMappings), text a mapping file's contents, which label
// names in errors and, without its directory and extension, in the mapping's
// Name. Give one of the two; neither means no mapping (nil). Nothing here
// reads a path: only the command line reads files (ReadMappingArg).
func ResolveMapping(name, text, label string) (*Mapping, error) {
	switch {
	case name != "" && text != "":
		return nil, errors.New("give a built-in mapping's name or a mapping's text, not both")
	case name != "":
		data, err := builtinFS.ReadFile("mappings/" + name + ".map")
		if err != nil || strings.ContainsAny(name, `/\`) {
			return nil, fmt.Errorf("no built-in mapping %q (known: %s); give a mapping file's text instead", name, strings.Join(BuiltinMappings(), ", "))
		}
		return ParseMapping(name, data)
	case text != "":
		if label == "" {
			label = "mapping"
		}
		m, err := ParseMapping(label, []byte(text))
		if m != nil {
			m.Name = strings.TrimSuffix(filepath.Base(label), filepath.Ext(label))
		}
		return m, err
	}
	return nil, nil
}

// ReadMappingArg is the command line's --mapping NAME|FILE: a built-in
// mapping's name stays a name; anything else is a file, read into text with
// its path as the label. Pass the results to ResolveMapping, or on to a job.
func ReadMappingArg(nameOrPath string) (name, text, label string, err error) {
	if slices.Contains(BuiltinMappings(), nameOrPath) {
		return nameOrPath, "", "", nil
	}
	data, err := os.ReadFile(nameOrPath)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", "", fmt.Errorf("mapping %q is neither a built-in mapping (%s) nor a readable file", nameOrPath, strings.Join(BuiltinMappings(), ", "))
	}
	if err != nil {
		return "", "", "", fmt.Errorf("mapping %s: %w", nameOrPath, err)
	}
	if len(data) == 0 {
		return "", "", "", fmt.Errorf("mapping %s: the file is empty", nameOrPath)
	}
	return "", string(data), nameOrPath, nil
}

// LoadMapping returns a built-in mapping by name or the mapping file at a
// path, as the command line reads them (ReadMappingArg, ResolveMapping).
func LoadMapping(nameOrPath string) (*Mapping, error) {
	name, text, label, err := ReadMappingArg(nameOrPath)
	if err != nil {
		return nil, err
	}
	return ResolveMapping(name, text, label)
}

// ParseMapping parses a mapping file's contents; name becomes the mapping's
// Name and the file name in errors.
func ParseMapping(name string, data []byte) (*Mapping, error) {
	m := &Mapping{
		Name:  name,
		Label: name,
		exact: map[[2]string]action{},
		types: map[string]action{},
		cats:  map[string]action{},
	}
	sum := sha256.Sum256(data)
	m.Hash = "sha256:" + hex.EncodeToString(sum[:])
	fail := func(line int, format string, args ...any) (*Mapping, error) {
		return nil, &MappingError{File: name, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	text := string(data)
	if !utf8.ValidString(text) {
		return fail(0, "not UTF-8 text")
	}
	var from, to *TagSet
	seen := map[string]int{}
	haveRules := false
	defVal, defLine := "", 0
	for i, line := range strings.Split(strings.TrimPrefix(text, "\ufeff"), "\n") {
		n := i + 1
		if c := strings.IndexByte(line, '#'); c >= 0 {
			line = line[:c]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			// The line is not quoted: it may be anything a user pasted (the
			// line number finds it); the messages below quote one label.
			return fail(n, "want 2 fields (SOURCE TARGET or @DIRECTIVE VALUE), got %d", len(f))
		}
		if strings.HasPrefix(f[0], "@") {
			if haveRules {
				return fail(n, "directive %s must come before the first rule", f[0])
			}
			switch f[0] {
			case "@from", "@to":
				ts, ok := knownTagSet(f[1])
				if !ok {
					return fail(n, "%s: %v", f[0], UnknownTagSet(f[1], mappingTagSets()))
				}
				if f[0] == "@from" {
					m.From, from = f[1], ts
				} else {
					m.To, to = f[1], ts
				}
			case "@default":
				if defLine > 0 {
					return fail(n, "@default already given on line %d", defLine)
				}
				defVal, defLine = f[1], n
			default:
				return fail(n, "unknown directive %s (known: @from, @to, @default)", f[0])
			}
			continue
		}
		haveRules = true
		src, tgt := f[0], f[1]
		if prev, dup := seen[src]; dup {
			return fail(n, "source %s already mapped on line %d", src, prev)
		}
		seen[src] = n
		a, err := parseTarget(tgt, to, false)
		if err != nil {
			return fail(n, "target %s: %v", tgt, err)
		}
		cat, typ, hasCat := strings.Cut(src, "/")
		if !hasCat {
			cat, typ = "", src
		}
		switch {
		case cat == "" && hasCat, typ == "":
			return fail(n, "source %q: want TYPE, CATEGORY/TYPE or CATEGORY/*", src)
		case typ == "*":
			if from != nil && !from.hasCategory(cat) {
				return fail(n, "source %s: no category %s in tag set %s", src, cat, from.Name)
			}
			m.cats[cat] = a
		default:
			if from != nil {
				want, ok := from.CategoryOf(typ)
				if !ok {
					return fail(n, "source %s: no type %s in tag set %s", src, typ, from.Name)
				}
				if hasCat && want != cat {
					return fail(n, "source %s: type %s belongs to category %s in tag set %s", src, typ, want, from.Name)
				}
			}
			if hasCat {
				m.exact[[2]string{cat, typ}] = a
			} else {
				m.types[typ] = a
			}
		}
	}
	if defLine > 0 {
		// Resolved last, so that @default may precede @to.
		a, err := parseTarget(defVal, to, true)
		if err != nil {
			return fail(defLine, "@default: %v", err)
		}
		m.def = a
	}
	if !haveRules && m.def.kind == actError {
		return fail(0, "no rules and no @default: the mapping would reject every span")
	}
	return m, nil
}

func parseTarget(s string, to *TagSet, isDefault bool) (action, error) {
	switch s {
	case "-", "drop":
		return action{kind: actDrop}, nil
	case "=", "keep":
		return action{kind: actKeep}, nil
	case "error":
		if isDefault {
			return action{kind: actError}, nil
		}
	}
	cat, typ, hasCat := strings.Cut(s, "/")
	if !hasCat {
		cat, typ = "", s
	}
	if typ == "" || (hasCat && cat == "") || strings.Contains(typ, "/") {
		return action{}, errors.New("want TYPE, CATEGORY/TYPE, - (drop) or = (keep)")
	}
	if to == nil {
		if cat == "" {
			cat = typ
		}
		return action{kind: actRelabel, cat: cat, typ: typ}, nil
	}
	c, t, err := Normalize(to, cat, typ)
	if err != nil {
		return action{}, err
	}
	return action{kind: actRelabel, cat: c, typ: t}, nil
}

func (ts *TagSet) hasCategory(name string) bool {
	for _, c := range ts.Categories {
		if c.Name == name {
			return true
		}
	}
	return false
}

// Map returns the label a (category, type) pair maps to; keep is false when
// the mapping drops such spans. An empty category matches rules by type only.
func (m *Mapping) Map(category, typ string) (cat, newType string, keep bool, err error) {
	a, ok := m.exact[[2]string{category, typ}]
	if !ok {
		a, ok = m.types[typ]
	}
	if !ok {
		a, ok = m.cats[category]
	}
	if !ok {
		a = m.def
	}
	switch a.kind {
	case actKeep:
		return category, typ, true, nil
	case actDrop:
		return "", "", false, nil
	case actRelabel:
		return a.cat, a.typ, true, nil
	}
	label := pipeline.Span{Category: category, Type: typ}.Label()
	return "", "", false, fmt.Errorf("mapping %s has no rule for label %s", cmp.Or(m.Label, m.Name), label)
}

// Names reports whether the mapping has a rule of its own for a label (not
// its @default), that is, whether it is a mapping of that label's tag set.
func (m *Mapping) Names(category, typ string) bool {
	if _, ok := m.exact[[2]string{category, typ}]; ok {
		return true
	}
	if _, ok := m.types[typ]; ok {
		return true
	}
	_, ok := m.cats[category]
	return ok
}

// Apply returns a copy of doc with every span relabelled or dropped by the
// mapping; doc itself is not modified. It fails on the first label the
// mapping has no rule for (with @default error), naming the span.
func (m *Mapping) Apply(doc pipeline.Document) (pipeline.Document, error) {
	out := doc
	out.Spans = make([]pipeline.Span, 0, len(doc.Spans))
	for _, s := range doc.Spans {
		cat, typ, keep, err := m.Map(s.Category, s.Type)
		if err != nil {
			return pipeline.Document{}, fmt.Errorf("document %s: %w", doc.ID, &pipeline.SpanError{Span: s, Msg: err.Error()})
		}
		if !keep {
			continue
		}
		s.Category, s.Type = cat, typ
		out.Spans = append(out.Spans, s)
	}
	return out, nil
}

// String names the mapping and its content hash, as a derived corpus's
// provenance records it.
func (m *Mapping) String() string { return m.Name + " (" + m.Hash + ")" }

package stats

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"deidcorpus/pipeline/phi"
)

// Group dimensions of a comparison.
const (
	ByCategory = "category"
	ByType     = "type"
)

// Side is what a comparison needs of one annotation set of one corpus. It is
// filled by streaming: every document's text through AddDocument and every
// span of the set through AddSpan; only distinct terms are kept, as hashes
// (termHash), and the exact texts of names.
type Side struct {
	Corpus        string
	AnnotationSet string
	By            string
	Documents     int
	Tokens        *Vocabulary // case-folded whitespace tokens of the documents
	PHI           *Vocabulary // case-folded span texts, all groups
	Groups        map[string]*SideGroup
	Names         map[string]int // name spans' exact texts (IsName) and their counts
	// Reference marks side A, whose groups need no vocabularies of their
	// own (B's spans are looked up in A's PHI as a whole): set it before
	// adding spans to save the time and memory.
	Reference bool
	key, buf  []byte
}

// SideGroup is one group (a category or a type) of a Side.
type SideGroup struct {
	Category, Type string // Type is empty when grouping by category
	Total          int
	Unique         int         // distinct exact span texts
	PHI            *Vocabulary // case-folded span texts of this group
	// texts are the group's distinct exact texts, each with its folded
	// term's indexes in the side's PHI and the group's: a text met again
	// costs one lookup.
	texts map[termHash]termRef
	name  bool // its spans are names (IsName)
}

// termRef is where a span text's folded term is counted: its index in the
// side's PHI and in its group's (-1 for none).
type termRef struct{ all, group int32 }

// NewSide starts a side grouped by ByCategory or ByType.
func NewSide(corpus, set, by string) (*Side, error) {
	if by != ByCategory && by != ByType {
		return nil, fmt.Errorf("a comparison groups by %s or %s, not %q", ByCategory, ByType, by)
	}
	return &Side{Corpus: corpus, AnnotationSet: set, By: by, Tokens: NewVocabulary(), PHI: NewVocabulary(),
		Groups: map[string]*SideGroup{}, Names: map[string]int{}}, nil
}

// AddDocument adds one document's text.
func (s *Side) AddDocument(text []byte) {
	s.Documents++
	s.Tokens.AddText(text)
}

// AddSpan adds one span: its label and its exact text. The bytes are only
// read during the call (a database driver's buffers will do).
func (s *Side) AddSpan(category, typ, text []byte) {
	s.key = append(s.key[:0], category...)
	if s.By == ByType {
		s.key = append(append(s.key, 0), typ...)
	}
	g := s.Groups[string(s.key)]
	if g == nil {
		g = &SideGroup{Category: string(category), texts: map[termHash]termRef{}, name: IsName(string(category), string(typ))}
		if s.By == ByType {
			g.Type = string(typ)
		}
		if !s.Reference {
			g.PHI = NewVocabulary()
		}
		s.Groups[string(s.key)] = g
	}
	g.Total++
	h := hashTerm(text)
	ref, seen := g.texts[h]
	if !seen {
		g.Unique++
		s.buf = appendFold(s.buf[:0], text)
		folded := hashTerm(s.buf)
		ref = termRef{all: s.PHI.addHash(folded, 0), group: -1}
		if g.PHI != nil {
			ref.group = g.PHI.addHash(folded, 0)
		}
		g.texts[h] = ref
	}
	s.PHI.addAt(ref.all, 1)
	if ref.group >= 0 {
		g.PHI.addAt(ref.group, 1)
	}
	if g.name {
		s.Names[string(text)]++
	}
}

// IsName says whether spans of a label are names for the name-pattern table:
// those whose label maps to the i2b2 2014 category NAME (phi.ToI2B2), so that
// every tag set's names count and only they: i2b2's NAME, MEDDOCAN's
// NOMBRE_SUJETO_ASISTENCIA and NOMBRE_PERSONAL_SANITARIO (with the category
// NAME of its XML files or without, as its BRAT files give them), CCHMC's
// NAME and INITIALS, PhysioNet's PTName, HCPName, RelativeProxyName and
// PTNameInitial, MIMIC's name placeholders (not HOSPITAL_WARD_NAME, a place).
// A label no built-in mapping knows is a name when its category is NAME.
func IsName(category, typ string) bool {
	if c, _, ok := phi.ToI2B2(category, typ); ok {
		return c == "NAME"
	}
	return strings.EqualFold(category, "NAME")
}

// Comparison is what Compare finds between two corpora (A the reference, B
// the one compared with it).
type Comparison struct {
	By string      `json:"by"`
	A  SideSummary `json:"a"`
	B  SideSummary `json:"b"`
	// ChiSquare tests the spans' totals per group; ChiSquareUnique the
	// distinct texts per group (Deleger et al.'s Table 3 tests those).
	ChiSquare       ChiSquare         `json:"chiSquare"`
	ChiSquareUnique ChiSquare         `json:"chiSquareUnique"`
	OOV             OOV               `json:"oov"`
	Groups          []GroupComparison `json:"groups"`
	NamePatterns    []PatternPair     `json:"namePatterns"`
}

// SideSummary is one corpus's totals in a comparison.
type SideSummary struct {
	Corpus        string `json:"corpus"`
	AnnotationSet string `json:"annotationSet"`
	Documents     int    `json:"documents"`
	Tokens        int    `json:"tokens"`     // whitespace tokens
	Vocabulary    int    `json:"vocabulary"` // distinct case-folded tokens
	Spans         int    `json:"spans"`
	PHITexts      int    `json:"phiTexts"` // distinct case-folded span texts
	NameSpans     int    `json:"nameSpans"`
	// NamePatterns is the name-pattern table (Yeniterzi Table 7); its
	// counts add up to NameSpans.
	NamePatterns []PatternCount `json:"namePatterns"`
}

// OOV is how much of B is out of A's vocabulary.
type OOV struct {
	// TokenRate is the share of B's whitespace tokens (occurrences) whose
	// case-folded form is no token of A; TokenTypeRate the same over B's
	// distinct case-folded tokens.
	TokenRate     float64 `json:"tokenRate"`
	TokenTypeRate float64 `json:"tokenTypeRate"`
	// PHIRate is the share of B's spans whose case-folded text is the text
	// of no span of A (of any type); PHITypeRate the same over B's distinct
	// case-folded span texts.
	PHIRate       float64 `json:"phiRate"`
	PHITypeRate   float64 `json:"phiTypeRate"`
	Tokens        int     `json:"tokens"`
	OOVTokens     int     `json:"oovTokens"`
	TokenTypes    int     `json:"tokenTypes"`
	OOVTokenTypes int     `json:"oovTokenTypes"`
	Spans         int     `json:"spans"`
	OOVSpans      int     `json:"oovSpans"`
	PHITexts      int     `json:"phiTexts"`
	OOVPHITexts   int     `json:"oovPHITexts"`
}

// GroupComparison is one group's row: Deleger Table 3's totals and unique
// counts for both corpora, the group's chi-square cell, and B's PHI OOV rate
// in the group.
type GroupComparison struct {
	Group    string    `json:"group"`    // the category, or the type
	Category string    `json:"category"` // the group's category
	A        GroupSide `json:"a"`
	B        GroupSide `json:"b"`
	// ExpectedA, ExpectedB, Residual, Contribution and P are the group's
	// part of ChiSquare (see Cell); UniqueResidual and UniqueP of
	// ChiSquareUnique.
	ExpectedA      float64 `json:"expectedA"`
	ExpectedB      float64 `json:"expectedB"`
	Residual       float64 `json:"residual"`
	Contribution   float64 `json:"contribution"`
	P              float64 `json:"p"`
	UniqueResidual float64 `json:"uniqueResidual"`
	UniqueP        float64 `json:"uniqueP"`
	// PHIOOVRate is the share of B's spans in this group whose case-folded
	// text is the text of no span of A (of any group).
	PHIOOVRate float64 `json:"phiOOVRate"`
	OOVSpans   int     `json:"oovSpans"`
}

// GroupSide is one corpus's counts in a group.
type GroupSide struct {
	Total  int     `json:"total"`
	Unique int     `json:"unique"` // distinct exact span texts
	Share  float64 `json:"share"`  // Total over the corpus's spans
}

// Compare compares B with A: the chi-square tests over their groups, B's
// out-of-vocabulary rates against A, and both name-pattern tables.
func Compare(a, b *Side) (*Comparison, error) {
	if a.By != b.By {
		return nil, fmt.Errorf("sides grouped by %s and %s", a.By, b.By)
	}
	if b.Reference {
		return nil, fmt.Errorf("side B (%s) is marked as a reference: it has no vocabularies per group", b.Corpus)
	}
	c := &Comparison{By: a.By, A: summary(a), B: summary(b)}

	keys := map[string]*SideGroup{}
	for k, g := range a.Groups {
		keys[k] = g
	}
	for k, g := range b.Groups {
		keys[k] = g
	}
	order := make([]string, 0, len(keys))
	for k := range keys {
		order = append(order, k)
	}
	slices.SortFunc(order, func(x, y string) int {
		gx, gy := keys[x], keys[y]
		return cmp.Or(strings.Compare(gx.Category, gy.Category), strings.Compare(gx.Type, gy.Type))
	})
	names := make([]string, len(order))
	ta, tb, ua, ub := make([]int, len(order)), make([]int, len(order)), make([]int, len(order)), make([]int, len(order))
	for i, k := range order {
		g := keys[k]
		names[i] = g.Category
		if g.Type != "" {
			names[i] = g.Type
		}
		if ga := a.Groups[k]; ga != nil {
			ta[i], ua[i] = ga.Total, ga.Unique
		}
		if gb := b.Groups[k]; gb != nil {
			tb[i], ub[i] = gb.Total, gb.Unique
		}
	}
	var cells, ucells []Cell
	c.ChiSquare, cells = PearsonChiSquare(names, ta, tb)
	c.ChiSquareUnique, ucells = PearsonChiSquare(names, ua, ub)

	c.Groups = make([]GroupComparison, len(order))
	for i, k := range order {
		g := &c.Groups[i]
		*g = GroupComparison{
			Group: names[i], Category: keys[k].Category,
			A:         GroupSide{Total: ta[i], Unique: ua[i], Share: ratio(ta[i], c.A.Spans)},
			B:         GroupSide{Total: tb[i], Unique: ub[i], Share: ratio(tb[i], c.B.Spans)},
			ExpectedA: cells[i].ExpectedA, ExpectedB: cells[i].ExpectedB, Residual: cells[i].Residual,
			Contribution: cells[i].Contribution, P: cells[i].P,
			UniqueResidual: ucells[i].Residual, UniqueP: ucells[i].P,
		}
		if ta[i] == 0 && tb[i] == 0 {
			g.P = 1
		}
		if ua[i] == 0 && ub[i] == 0 {
			g.UniqueP = 1
		}
		if gb := b.Groups[k]; gb != nil && gb.PHI != nil {
			g.OOVSpans, _ = gb.PHI.OOV(a.PHI)
			g.PHIOOVRate = ratio(g.OOVSpans, gb.Total)
		}
	}

	o := &c.OOV
	o.Tokens, o.TokenTypes = b.Tokens.Total(), b.Tokens.Len()
	o.OOVTokens, o.OOVTokenTypes = b.Tokens.OOV(a.Tokens)
	o.Spans, o.PHITexts = b.PHI.Total(), b.PHI.Len()
	o.OOVSpans, o.OOVPHITexts = b.PHI.OOV(a.PHI)
	o.TokenRate, o.TokenTypeRate = ratio(o.OOVTokens, o.Tokens), ratio(o.OOVTokenTypes, o.TokenTypes)
	o.PHIRate, o.PHITypeRate = ratio(o.OOVSpans, o.Spans), ratio(o.OOVPHITexts, o.PHITexts)

	c.NamePatterns = ComparePatterns(c.A.NamePatterns, c.B.NamePatterns)
	return c, nil
}

func summary(s *Side) SideSummary {
	pats := NamePatternCounts(s.Names)
	n := 0
	for _, p := range pats {
		n += p.Count
	}
	return SideSummary{Corpus: s.Corpus, AnnotationSet: s.AnnotationSet, Documents: s.Documents,
		Tokens: s.Tokens.Total(), Vocabulary: s.Tokens.Len(), Spans: s.PHI.Total(), PHITexts: s.PHI.Len(),
		NameSpans: n, NamePatterns: pats}
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

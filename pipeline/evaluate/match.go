package evaluate

import (
	"slices"

	"deidcorpus/pipeline"
	"deidcorpus/pipeline/phi"
)

// Mode is how two annotations are matched.
type Mode string

const (
	// Token splits every tag's text into [a-zA-Z0-9]+ runs (ASCII only, as
	// the i2b2 script does) and matches tokens by offsets and label.
	Token Mode = "token"
	// Strict matches tags with the same offsets and label.
	Strict Mode = "strict"
	// Relaxed matches tags with the same start and label whose ends differ
	// by at most 2 characters.
	Relaxed Mode = "relaxed"
)

// relaxedSlack is how far the end of a relaxed match may move (i2b2 script:
// PHITag.fuzzy_end_equality(2)).
const relaxedSlack = 2

// item is one tag or token reduced to what matching looks at; grp interns
// the (category, type) label.
type item struct {
	start, end int32
	grp        int32
}

// Label is one (category, type) label found in the scored documents, and
// whether its type is in the HIPAA subset in use.
type Label struct {
	Category, Type string
	HIPAA          bool
}

// labelSet interns the labels of a set of pairs.
type labelSet struct {
	groups []Label
	index  map[[2]string]int32
}

func newLabelSet(pairs []Pair, hipaa map[string]bool) *labelSet {
	ls := &labelSet{index: map[[2]string]int32{}}
	for _, p := range pairs {
		for _, d := range [2]*pipeline.Document{p.Gold, p.System} {
			for _, s := range d.Spans {
				ls.intern(s.Category, s.Type, hipaa)
			}
		}
	}
	return ls
}

func (ls *labelSet) intern(cat, typ string, hipaa map[string]bool) int32 {
	k := [2]string{cat, typ}
	if g, ok := ls.index[k]; ok {
		return g
	}
	g := int32(len(ls.groups))
	ls.groups = append(ls.groups, Label{Category: cat, Type: typ, HIPAA: hipaa[typ]})
	ls.index[k] = g
	return g
}

func (ls *labelSet) spanItems(d *pipeline.Document) []item {
	out := make([]item, len(d.Spans))
	for i, s := range d.Spans {
		out[i] = item{int32(s.Start), int32(s.End), ls.index[[2]string{s.Category, s.Type}]}
	}
	return out
}

// tokenItems splits each span's text into the i2b2 script's tokens. The text
// is the document's at the span's offsets (the script slices the note text),
// or the span's own text for offsets-only documents. A span without any
// ASCII letter or digit yields one empty token at its end, as the script's
// tokenizer does.
// ix indexes the pair's text (nil without one).
func (ls *labelSet) tokenItems(d *pipeline.Document, ix *pipeline.Index) ([]item, error) {
	out := make([]item, 0, 2*len(d.Spans))
	for _, s := range d.Spans {
		g := ls.index[[2]string{s.Category, s.Type}]
		covered := s.Text
		if ix != nil {
			if s.Start < 0 || s.End > ix.Len() || s.Start > s.End {
				return nil, inputErrorf("document %s: span %s [%d:%d] lies outside the text", d.ID, s.Label(), s.Start, s.End)
			}
			covered = ix.Slice(s.Start, s.End)
		} else if covered == "" {
			return nil, inputErrorf("document %s: token scoring needs the note text or the span text, and span %s [%d:%d] has neither", d.ID, s.Label(), s.Start, s.End)
		}
		cp, tokStart, in, any := 0, 0, false, false
		for _, r := range covered {
			alnum := r < 0x80 && isASCIIAlnum(byte(r))
			switch {
			case alnum && !in:
				in, tokStart = true, cp
			case !alnum && in:
				in, any = false, true
				out = append(out, item{int32(s.Start + tokStart), int32(s.Start + cp), g})
			}
			cp++
		}
		if in {
			any = true
			out = append(out, item{int32(s.Start + tokStart), int32(s.Start + cp), g})
		}
		if !any {
			out = append(out, item{int32(s.Start + cp), int32(s.Start + cp), g})
		}
	}
	return out, nil
}

func isASCIIAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// cell holds one label group's counts in one document. For token and strict
// matching a, b, c are TP, FP, FN. For relaxed matching they are the sizes of
// the gold and system sets and the number of their elements with a match on
// the other side (d), because the script's relaxed TP depends on which set is
// smaller; see relaxedCounts.
type cell struct{ a, b, c, d int32 }

func (x cell) add(y cell) cell { return cell{x.a + y.a, x.b + y.b, x.c + y.c, x.d + y.d} }

// counts reads summed cells of a mode as TP, FP and FN.
func (x cell) counts(m Mode) Counts {
	if m == Relaxed {
		return relaxedCounts(x)
	}
	return Counts{TP: int(x.a), FP: int(x.b), FN: int(x.c)}
}

func cmpItem(x, y item) int {
	switch {
	case x.grp != y.grp:
		return int(x.grp - y.grp)
	case x.start != y.start:
		return int(x.start - y.start)
	}
	return int(x.end - y.end)
}

// sortedSet sorts items and drops duplicates: the script compares Python
// sets, so a tag listed twice counts once.
func sortedSet(items []item) []item {
	slices.SortFunc(items, cmpItem)
	return slices.Compact(items)
}

// exactCells counts TP, FP and FN per label group for exact (token or strict)
// matching. gold and sys are consumed (sorted in place).
func exactCells(cells []cell, gold, sys []item) {
	gold, sys = sortedSet(gold), sortedSet(sys)
	i, j := 0, 0
	for i < len(gold) || j < len(sys) {
		var c int
		switch {
		case i == len(gold):
			c = 1
		case j == len(sys):
			c = -1
		default:
			c = cmpItem(gold[i], sys[j])
		}
		switch {
		case c == 0:
			cells[gold[i].grp].a++
			i, j = i+1, j+1
		case c < 0:
			cells[gold[i].grp].c++
			i++
		default:
			cells[sys[j].grp].b++
			j++
		}
	}
}

// binaryCounts is exact matching on offsets alone, over the items whose group
// is in scope: the script's "Binary" evaluations key tags on start and end.
// bufG and bufS are scratch space.
func binaryCounts(gold, sys []item, in []bool, bufG, bufS []item) Counts {
	keep := func(dst, items []item) []item {
		for _, it := range items {
			if in[it.grp] {
				dst = append(dst, item{it.start, it.end, 0})
			}
		}
		return sortedSet(dst)
	}
	g, s := keep(bufG[:0], gold), keep(bufS[:0], sys)
	var c Counts
	for i, j := 0, 0; i < len(g) && j < len(s); {
		switch k := cmpItem(g[i], s[j]); {
		case k == 0:
			c.TP++
			i, j = i+1, j+1
		case k < 0:
			i++
		default:
			j++
		}
	}
	c.FN = len(g) - c.TP
	c.FP = len(s) - c.TP
	return c
}

// relaxedCells fills, per label group, the sizes of the gold and system sets
// and how many of their elements have a relaxed match on the other side.
//
// The script builds Python sets whose equality is the relaxed one, so a tag
// whose end lies within 2 of an earlier tag with the same start and label is
// dropped when the set is built; the earlier tag (in document order) stays.
func relaxedCells(cells []cell, gold, sys []item) {
	g, s := relaxedSet(gold), relaxedSet(sys)
	for _, it := range g {
		cells[it.grp].a++
	}
	for _, it := range s {
		cells[it.grp].b++
	}
	// Walk both, sorted by (group, start), one run of equal (group, start)
	// at a time: only tags in the same run can match.
	i, j := 0, 0
	for i < len(g) && j < len(s) {
		gi, sj := g[i], s[j]
		switch {
		case gi.grp != sj.grp || gi.start != sj.start:
			if gi.grp < sj.grp || gi.grp == sj.grp && gi.start < sj.start {
				i++
			} else {
				j++
			}
			continue
		}
		ie, je := i, j
		for ie < len(g) && g[ie].grp == gi.grp && g[ie].start == gi.start {
			ie++
		}
		for je < len(s) && s[je].grp == sj.grp && s[je].start == sj.start {
			je++
		}
		for _, x := range g[i:ie] {
			if anyNear(x, s[j:je]) {
				cells[x.grp].c++
			}
		}
		for _, y := range s[j:je] {
			if anyNear(y, g[i:ie]) {
				cells[y.grp].d++
			}
		}
		i, j = ie, je
	}
}

func anyNear(x item, run []item) bool {
	for _, y := range run {
		if d := x.end - y.end; d <= relaxedSlack && d >= -relaxedSlack {
			return true
		}
	}
	return false
}

// relaxedSet builds the script's relaxed set: items sorted by (group, start)
// with document order kept inside a run, and an item dropped when an item
// already kept in its run ends within the slack.
func relaxedSet(items []item) []item {
	slices.SortStableFunc(items, func(x, y item) int {
		if x.grp != y.grp {
			return int(x.grp - y.grp)
		}
		return int(x.start - y.start)
	})
	out := items[:0] // in place: out never overtakes the range
	runStart := 0
	for _, it := range items {
		if len(out) == 0 || out[len(out)-1].grp != it.grp || out[len(out)-1].start != it.start {
			runStart = len(out)
			out = append(out, it)
			continue
		}
		if !anyNear(it, out[runStart:]) {
			out = append(out, it)
		}
	}
	return out
}

// relaxedCounts turns summed relaxed cells into TP, FP and FN the way
// Python's set operations do: gold.intersection(sys) iterates the smaller
// set (the system's on a tie) and counts its elements that have a match, so
// TP can differ from the number of matched gold tags when one tag matches
// several.
func relaxedCounts(c cell) Counts {
	nG, nS, gm, sm := int(c.a), int(c.b), int(c.c), int(c.d)
	tp := sm
	if nS > nG {
		tp = gm
	}
	return Counts{TP: tp, FP: nS - sm, FN: nG - gm}
}

// hipaaSet is the HIPAA subset in use.
func hipaaSet(paper bool) map[string]bool { return phi.HIPAATypes(paper) }

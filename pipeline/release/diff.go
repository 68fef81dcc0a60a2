package release

import (
	"sort"

	"deidcorpus/pipeline"
)

// Diff is what changed from one snapshot to another.
type Diff struct {
	DocumentsAdded   []string     `json:"documentsAdded"`
	DocumentsRemoved []string     `json:"documentsRemoved"`
	DocumentsChanged []string     `json:"documentsChanged"` // text changed
	SpansAdded       []SpanChange `json:"spansAdded"`
	SpansRemoved     []SpanChange `json:"spansRemoved"`
	SpansRelabelled  []SpanChange `json:"spansRelabelled"`
}

// SpanChange is one span that differs, in a set and document.
type SpanChange struct {
	Set      string `json:"set"`
	Document string `json:"document"`
	Start    int    `json:"start"`
	End      int    `json:"end"`
	Text     string `json:"text"`
	Type     string `json:"type"`              // the type in the newer snapshot (the older, when removed)
	WasType  string `json:"wasType,omitempty"` // relabelled: the older type
}

// Compare lists the differences from a to b. Documents are matched by id
// (the union over sets); spans by set, document and offsets.
func Compare(a, b Snapshot) Diff {
	d := Diff{DocumentsAdded: []string{}, DocumentsRemoved: []string{}, DocumentsChanged: []string{},
		SpansAdded: []SpanChange{}, SpansRemoved: []SpanChange{}, SpansRelabelled: []SpanChange{}}
	textA, textB := texts(a), texts(b)
	for id, t := range textB {
		if ta, ok := textA[id]; !ok {
			d.DocumentsAdded = append(d.DocumentsAdded, id)
		} else if ta != t {
			d.DocumentsChanged = append(d.DocumentsChanged, id)
		}
	}
	for id := range textA {
		if _, ok := textB[id]; !ok {
			d.DocumentsRemoved = append(d.DocumentsRemoved, id)
		}
	}
	sets := map[string]bool{}
	for s := range a.Sets {
		sets[s] = true
	}
	for s := range b.Sets {
		sets[s] = true
	}
	for set := range sets {
		sa, sb := spans(set, a.Sets[set]), spans(set, b.Sets[set])
		for k, s := range sb {
			old, ok := sa[k]
			switch {
			case !ok:
				d.SpansAdded = append(d.SpansAdded, s)
			case old.Type != s.Type:
				s.WasType = old.Type
				d.SpansRelabelled = append(d.SpansRelabelled, s)
			}
		}
		for k, s := range sa {
			if _, ok := sb[k]; !ok {
				d.SpansRemoved = append(d.SpansRemoved, s)
			}
		}
	}
	sort.Strings(d.DocumentsAdded)
	sort.Strings(d.DocumentsRemoved)
	sort.Strings(d.DocumentsChanged)
	for _, l := range [][]SpanChange{d.SpansAdded, d.SpansRemoved, d.SpansRelabelled} {
		sort.Slice(l, func(i, j int) bool {
			x, y := l[i], l[j]
			if x.Set != y.Set {
				return x.Set < y.Set
			}
			if x.Document != y.Document {
				return x.Document < y.Document
			}
			if x.Start != y.Start {
				return x.Start < y.Start
			}
			return x.End < y.End
		})
	}
	return d
}

// Empty reports whether the snapshots had the same content.
func (d Diff) Empty() bool {
	return len(d.DocumentsAdded)+len(d.DocumentsRemoved)+len(d.DocumentsChanged)+
		len(d.SpansAdded)+len(d.SpansRemoved)+len(d.SpansRelabelled) == 0
}

func texts(s Snapshot) map[string]string {
	out := map[string]string{}
	for _, docs := range s.Sets {
		for _, d := range docs {
			out[d.ID] = d.Text
		}
	}
	return out
}

type spanKey struct {
	doc        string
	start, end int
}

func spans(set string, docs []pipeline.Document) map[spanKey]SpanChange {
	out := map[spanKey]SpanChange{}
	for _, d := range docs {
		for _, s := range d.Spans {
			out[spanKey{d.ID, s.Start, s.End}] = SpanChange{Set: set, Document: d.ID, Start: s.Start, End: s.End, Text: s.Text, Type: s.Type}
		}
	}
	return out
}

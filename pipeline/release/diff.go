package release

import (
	"errors"
	"iter"
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
// (the union over sets); spans by set, document and offsets, where a's
// offsets in a document whose text changed are first carried over the edit
// (textEdit): a span the edit only moved is no difference.
func Compare(a, b Snapshot) Diff {
	d := Diff{DocumentsAdded: []string{}, DocumentsRemoved: []string{}, DocumentsChanged: []string{},
		SpansAdded: []SpanChange{}, SpansRemoved: []SpanChange{}, SpansRelabelled: []SpanChange{}}
	textA, textB := texts(a), texts(b)
	edits := map[string]textEdit{}
	for id, t := range textB {
		if ta, ok := textA[id]; !ok {
			d.DocumentsAdded = append(d.DocumentsAdded, id)
		} else if ta != t {
			d.DocumentsChanged = append(d.DocumentsChanged, id)
			edits[id] = editBetween(ta, t)
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
		sa, sb := spans(set, a.Sets[set], edits), spans(set, b.Sets[set], nil)
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

// Reader gives a snapshot's documents to fn, set after set, a batch at a
// time (as Each reads a stored one); it may be called more than once.
type Reader func(fn func(set string, docs []pipeline.Document) error) error

// CompareReaders is Compare over two snapshots read a batch at a time,
// twice each: first for their content hashes, merged in set and id order
// to find the ids whose documents differ in some set, then to keep only
// those documents, which Compare compares. Memory holds a batch, runs of
// hashes and what differs, not the snapshots: the diff of two releases of a
// big corpus that differ in a few notes is small.
func CompareReaders(a, b Reader) (Diff, error) {
	ma, mb := newManifestBuilder(), newManifestBuilder()
	defer ma.Close()
	defer mb.Close()
	for _, side := range []struct {
		read Reader
		m    *manifestBuilder
	}{{a, ma}, {b, mb}} {
		if err := side.read(func(set string, docs []pipeline.Document) error {
			side.m.add(set, docs)
			return nil
		}); err != nil {
			return Diff{}, err
		}
	}
	changed, err := differingIDs(ma, mb)
	if err != nil {
		return Diff{}, err
	}
	keep := func(read Reader) (Snapshot, error) {
		s := Snapshot{Sets: map[string][]pipeline.Document{}}
		err := read(func(set string, docs []pipeline.Document) error {
			for _, d := range docs {
				if changed[d.ID] {
					s.Sets[set] = append(s.Sets[set], d)
				}
			}
			return nil
		})
		return s, err
	}
	sa, err := keep(a)
	if err != nil {
		return Diff{}, err
	}
	sb, err := keep(b)
	if err != nil {
		return Diff{}, err
	}
	return Compare(sa, sb), nil
}

// differingIDs merges two manifests' entries, both in set and id order, and
// returns the ids of the documents one lacks or whose hashes differ.
func differingIDs(ma, mb *manifestBuilder) (map[string]bool, error) {
	var errA, errB error
	pull := func(m *manifestBuilder, err *error) (func() (digestEntry, bool), func()) {
		return iter.Pull(func(yield func(digestEntry) bool) {
			_, *err = m.each(func(e digestEntry) error {
				if !yield(e) {
					return errStopped
				}
				return nil
			})
		})
	}
	nextA, stopA := pull(ma, &errA)
	defer stopA()
	nextB, stopB := pull(mb, &errB)
	defer stopB()
	changed := map[string]bool{}
	ea, okA := nextA()
	eb, okB := nextB()
	for okA || okB {
		switch c := ea.compare(eb); {
		case !okB || okA && c < 0:
			changed[ea.id] = true
			ea, okA = nextA()
		case !okA || c > 0:
			changed[eb.id] = true
			eb, okB = nextB()
		default:
			if ea.hash != eb.hash {
				changed[ea.id] = true
			}
			ea, okA = nextA()
			eb, okB = nextB()
		}
	}
	return changed, errors.Join(errA, errB)
}

// errStopped ends a manifest's walk that its reader left early.
var errStopped = errors.New("stopped")

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

// spans keys a set's spans by document and offsets; a document's edit, if
// given, carries the offsets into the newer text (a span the edit touched
// gets a key no span of the newer text has), while the change keeps them.
func spans(set string, docs []pipeline.Document, edits map[string]textEdit) map[spanKey]SpanChange {
	out := map[spanKey]SpanChange{}
	for _, d := range docs {
		edit, edited := edits[d.ID]
		for i, s := range d.Spans {
			k := spanKey{d.ID, s.Start, s.End}
			if edited {
				var ok bool
				if k.start, k.end, ok = edit.carry(s.Start, s.End); !ok {
					k.start, k.end = -1-i, -1 // its own, unmatched
				}
			}
			out[k] = SpanChange{Set: set, Document: d.ID, Start: s.Start, End: s.End, Text: s.Text, Type: s.Type}
		}
	}
	return out
}

// textEdit is how a document's text changed, seen as one edit: the older
// text's code points [from, to) became others, and what follows moved by
// delta. Their common start and end are what the edit left alone; two edits
// far apart are seen as one spanning both.
type textEdit struct{ from, to, delta int }

func editBetween(older, newer string) textEdit {
	a, b := []rune(older), []rune(newer)
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return textEdit{from: p, to: len(a) - s, delta: len(b) - len(a)}
}

// carry gives an older span's offsets in the newer text, unless the edit
// touched it.
func (e textEdit) carry(start, end int) (int, int, bool) {
	switch {
	case end <= e.from:
		return start, end, true
	case start >= e.to:
		return start + e.delta, end + e.delta, true
	}
	return 0, 0, false
}

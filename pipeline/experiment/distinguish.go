package experiment

import (
	"cmp"
	"context"
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"unicode"

	"deidcorpus/pipeline"
)

// Distinguishability is how well a classifier that knows some answers tells
// a real value from a surrogate in the released text: logistic regression on
// the string and its context, trained and tested by patient folds on
// real-versus-surrogate labels. Each replaced gold span gives two examples in
// the same place of the released text, its original (real) and its surrogate,
// so that what the classifier learns is what the strings look like, not where
// the tagger misses (that is the parrot attack's part); a leaked span stands
// as the real string it is. The classifier's scores rank a release's leaks
// among its surrogates. AUC 0.5: indistinguishable; 1: every real value
// stands out. Partly leaked spans are left out (they are both), and values
// the policy keeps (the same string either way).
type Distinguishability struct {
	AUC        float64 `json:"auc"`
	Folds      int     `json:"folds"`
	Originals  int     `json:"originals"` // real values: replaced spans' originals and leaks
	Surrogates int     `json:"surrogates"`
	ByType     []AUC   `json:"byType"`
	// Features are the AUCs of classifiers that see only one group of
	// features (with the type): which kind of evidence gives the strings
	// away. They name kinds, never strings, so the figures hold no PHI.
	Features []AUC `json:"features"`
}

// AUC is one type's or feature group's ROC AUC.
type AUC struct {
	Label      string  `json:"label"`
	AUC        float64 `json:"auc"`
	Originals  int     `json:"originals"`
	Surrogates int     `json:"surrogates"`
}

// featureGroups name the classifier's kinds of evidence.
// words: the string's words; characters: its character trigrams; shape:
// letters, digits and punctuation, length, accents, case; context: the two
// words either side.
var featureGroups = []string{"words", "characters", "shape", "context"}

const (
	hashBits  = 18
	riskFolds = 5
)

// item is one carried span as the classifier sees it.
type item struct {
	doc      int
	typ      string
	label    bool // a leaked original
	features map[string][]uint32
}

// distinguish trains and tests the classifier by patient folds.
func distinguish(ctx context.Context, released []pipeline.Document, carried [][]Carried, seed uint64) (Distinguishability, error) {
	var items []item
	for i, cs := range carried {
		text := []rune(released[i].Text)
		for _, c := range cs {
			if c.Partial || c.Kept {
				continue
			}
			items = append(items, item{doc: i, typ: c.Type, label: c.Leaked, features: spanFeatures(text, c, c.Text)})
			if !c.Leaked {
				items = append(items, item{doc: i, typ: c.Type, label: true, features: spanFeatures(text, c, c.Original)})
			}
		}
	}
	var out Distinguishability
	for _, it := range items {
		if it.label {
			out.Originals++
		} else {
			out.Surrogates++
		}
	}
	if out.Originals == 0 || out.Surrogates == 0 {
		return out, nil
	}
	k := min(riskFolds, len(groupByPatient(released)))
	if k < 2 {
		return out, nil
	}
	assign, err := AssignFolds(released, k, seed^0xbb67ae8584caa73b)
	if err != nil {
		return out, err
	}
	out.Folds = k
	scores, err := crossScores(ctx, items, assign, k, featureGroups)
	if err != nil {
		return out, err
	}
	out.AUC = auc(items, scores, func(item) bool { return true })
	types := map[string]bool{}
	for _, it := range items {
		types[it.typ] = true
	}
	for _, t := range slices.Sorted(mapKeys(types)) {
		a := AUC{Label: t}
		for _, it := range items {
			if it.typ == t && it.label {
				a.Originals++
			} else if it.typ == t {
				a.Surrogates++
			}
		}
		if a.Originals == 0 || a.Surrogates == 0 {
			continue
		}
		a.AUC = auc(items, scores, func(it item) bool { return it.typ == t })
		out.ByType = append(out.ByType, a)
	}
	for _, g := range featureGroups {
		s, err := crossScores(ctx, items, assign, k, []string{g})
		if err != nil {
			return out, err
		}
		out.Features = append(out.Features, AUC{Label: g, AUC: auc(items, s, func(item) bool { return true }),
			Originals: out.Originals, Surrogates: out.Surrogates})
	}
	slices.SortFunc(out.Features, func(a, b AUC) int { return cmp.Compare(b.AUC, a.AUC) })
	return out, nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// crossScores gives every item the score of a classifier trained on the
// other folds' items, seeing the type and the named feature groups.
func crossScores(ctx context.Context, items []item, assign []int, k int, groups []string) ([]float64, error) {
	vecs := make([][]uint32, len(items))
	for i, it := range items {
		v := []uint32{hashFeature("type", it.typ)}
		for _, g := range groups {
			v = append(v, it.features[g]...)
		}
		vecs[i] = v
	}
	scores := make([]float64, len(items))
	for f := range k {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var train []int
		for i, it := range items {
			if assign[it.doc] != f {
				train = append(train, i)
			}
		}
		w := logistic(items, vecs, train)
		for i, it := range items {
			if assign[it.doc] == f {
				scores[i] = dot(w, vecs[i])
			}
		}
	}
	return scores, nil
}

// logistic fits L2-regularized logistic regression by AdaGrad over a few
// passes, the classes weighted to count equally.
func logistic(items []item, vecs [][]uint32, train []int) []float64 {
	w := make([]float64, 1<<hashBits)
	g2 := make([]float64, 1<<hashBits)
	var pos int
	for _, i := range train {
		if items[i].label {
			pos++
		}
	}
	neg := len(train) - pos
	if pos == 0 || neg == 0 {
		return w
	}
	wPos, wNeg := float64(len(train))/(2*float64(pos)), float64(len(train))/(2*float64(neg))
	const (
		passes = 6
		rate   = 0.5
		l2     = 1e-4
	)
	order := slices.Clone(train)
	for pass := range passes {
		// A fixed interleaving per pass: reverse every other pass.
		if pass%2 == 1 {
			slices.Reverse(order)
		}
		for _, i := range order {
			y, cw := 0.0, wNeg
			if items[i].label {
				y, cw = 1, wPos
			}
			p := 1 / (1 + math.Exp(-dot(w, vecs[i])))
			grad := cw * (p - y)
			for _, j := range vecs[i] {
				gj := grad + l2*w[j]
				g2[j] += gj * gj
				w[j] -= rate * gj / math.Sqrt(g2[j]+1e-8)
			}
		}
	}
	return w
}

func dot(w []float64, v []uint32) float64 {
	s := 0.0
	for _, j := range v {
		s += w[j]
	}
	return s
}

// auc is the ROC AUC of the scores of the items keep selects (the
// Mann-Whitney statistic, ties counting half).
func auc(items []item, scores []float64, keep func(item) bool) float64 {
	type scored struct {
		s     float64
		label bool
	}
	var xs []scored
	var pos, neg float64
	for i, it := range items {
		if !keep(it) {
			continue
		}
		xs = append(xs, scored{scores[i], it.label})
		if it.label {
			pos++
		} else {
			neg++
		}
	}
	if pos == 0 || neg == 0 {
		return 0.5
	}
	slices.SortFunc(xs, func(a, b scored) int { return cmp.Compare(a.s, b.s) })
	var rankSum float64
	for i := 0; i < len(xs); {
		j := i
		for j < len(xs) && xs[j].s == xs[i].s {
			j++
		}
		mid := float64(i+j+1) / 2 // mean rank, from 1
		for m := i; m < j; m++ {
			if xs[m].label {
				rankSum += mid
			}
		}
		i = j
	}
	return (rankSum - pos*(pos+1)/2) / (pos * neg)
}

func hashFeature(group, value string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(group))
	h.Write([]byte{0})
	h.Write([]byte(value))
	return h.Sum32() & (1<<hashBits - 1)
}

// spanFeatures are the features, by group, of a string standing at a
// carried span's place in the released text.
func spanFeatures(text []rune, c Carried, str string) map[string][]uint32 {
	f := map[string][]uint32{}
	add := func(group, value string) { f[group] = append(f[group], hashFeature(group, value)) }
	s := strings.ToLower(str)
	for _, w := range words(s) {
		add("words", w)
	}
	padded := []rune(" " + s + " ")
	for i := 0; i+3 <= len(padded); i++ {
		add("characters", string(padded[i:i+3]))
	}
	add("shape", shape(str))
	add("shape", "len:"+strings.Repeat("+", min(len([]rune(str))/3, 12)))
	for _, r := range str {
		if r > unicode.MaxASCII && unicode.IsLetter(r) {
			add("shape", "accent")
			break
		}
	}
	if strings.ToUpper(str) == str && strings.ToLower(str) != str {
		add("shape", "upper")
	}
	before := words(strings.ToLower(string(text[max(0, c.Start-40):c.Start])))
	after := words(strings.ToLower(string(text[c.End:min(len(text), c.End+40)])))
	for i := 1; i <= 2; i++ {
		if len(before) >= i {
			add("context", "l"+string(rune('0'+i))+":"+before[len(before)-i])
		}
		if len(after) >= i {
			add("context", "r"+string(rune('0'+i))+":"+after[i-1])
		}
	}
	return f
}

// words splits lowercase text at everything but letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// shape writes letters as a or A, digits as 9 and keeps other characters,
// runs of a class collapsed.
func shape(s string) string {
	var b strings.Builder
	var last rune
	for _, r := range s {
		c := r
		switch {
		case unicode.IsUpper(r):
			c = 'A'
		case unicode.IsLetter(r):
			c = 'a'
		case unicode.IsDigit(r):
			c = '9'
		}
		if c != last {
			b.WriteRune(c)
		}
		last = c
	}
	return b.String()
}

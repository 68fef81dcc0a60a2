package tagger

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FeatureConfig chooses the features generated for every token. Generation is
// a step of its own (as in CRFsuite): the same attributes feed training,
// tagging and the CRFsuite export.
type FeatureConfig struct {
	// Window is how many neighbouring tokens on each side contribute their
	// words and shapes. It crosses line breaks (Boag et al. 2.2): a field's
	// value often sits on the line after its name.
	Window int `json:"window"`
	// Affixes is the longest prefix and suffix, in code points.
	Affixes int `json:"affixes"`
	// Bigrams adds the word pairs around the token.
	Bigrams bool `json:"bigrams"`
	// ChunkShape adds the shape of the whitespace-delimited chunk a token is
	// part of ("22-7-04" -> d-d-d for each of its five tokens): the
	// tokenizer splits glued PHI apart, this keeps the gestalt.
	ChunkShape bool `json:"chunk_shape"`
	// Templates adds the regular-expression templates (Yang Table 2).
	Templates bool `json:"templates"`
	// Lexicon names a registered Lexicon (RegisterLexicon) for dictionary
	// membership features; "" for none.
	Lexicon string `json:"lexicon,omitempty"`
	// Gazetteer adds membership in the PHI phrases seen in training, per type.
	// Training documents see a gazetteer built from the other folds only, so
	// that the CRF learns how far to trust an unseen document's matches.
	Gazetteer      bool `json:"gazetteer"`
	GazetteerFolds int  `json:"gazetteer_folds"`
	// Triggers adds trigger words learnt from the training data: words that
	// precede PHI of one type within TriggerWindow words, at least TriggerMin
	// times and in at least TriggerPrecision of their occurrences.
	Triggers         bool    `json:"triggers"`
	TriggerWindow    int     `json:"trigger_window"`
	TriggerMin       int     `json:"trigger_min"`
	TriggerPrecision float64 `json:"trigger_precision"`
	// Layout adds line keys ("Nombre: ..."), section headings, sentence and
	// line starts and the position in the document.
	Layout bool `json:"layout"`
}

// DefaultFeatures is the feature set the accuracy figures were measured with.
func DefaultFeatures() FeatureConfig {
	return FeatureConfig{
		Window: 2, Affixes: 4, Bigrams: true, ChunkShape: true, Templates: true,
		Lexicon:   ResourcesLexicon,
		Gazetteer: true, GazetteerFolds: 5,
		Triggers: true, TriggerWindow: 3, TriggerMin: 3, TriggerPrecision: 0.05,
		Layout: true,
	}
}

func (c FeatureConfig) validate() error {
	switch {
	case c.Window < 0 || c.Window > 10:
		return fmt.Errorf("window %d out of range [0, 10]", c.Window)
	case c.Affixes < 0 || c.Affixes > 10:
		return fmt.Errorf("affixes %d out of range [0, 10]", c.Affixes)
	case c.Triggers && (c.TriggerWindow < 1 || c.TriggerMin < 1 || c.TriggerPrecision < 0 || c.TriggerPrecision > 1):
		return fmt.Errorf("trigger options out of range (window >= 1, min >= 1, precision in [0, 1])")
	case c.Gazetteer && c.GazetteerFolds < 2:
		return fmt.Errorf("gazetteer_folds %d: need at least 2", c.GazetteerFolds)
	}
	if c.Lexicon != "" {
		if _, ok := lookupLexicon(c.Lexicon); !ok {
			return fmt.Errorf("unknown lexicon %q (registered: %s)", c.Lexicon, strings.Join(lexiconNames(), ", "))
		}
	}
	return nil
}

// extractor generates the attributes of a document's tokens. It holds what
// was learnt from the training data (trigger words, the gazetteer), never
// labels.
type extractor struct {
	cfg      FeatureConfig
	types    []SpanType
	triggers map[string][]int // word -> type indices it announces
	gaz      *phraseSet
	lex      Lexicon
}

// docFeatures is what a document's tokens need computed once: lower-cased
// words, shapes, and which templates and lists cover each token.
type docFeatures struct {
	tk    *Tokens
	lower []string
	shape []string
	tmpl  []uint32 // template bits covering the token
	tmplB []uint32 // templates whose match starts at the token
	// matches are the templates' token ranges, by template; the trusted
	// templates of post-processing reuse them.
	matches [][][2]int
	chunk   []string // shape of the token's whitespace-delimited chunk, "" for a lone token
	lists   [][]listHit
}

type listHit struct {
	name  string
	begin bool
}

// phraseMemo remembers what a finder answered for one-word phrases, the
// first and most often the only phrase matchPhrases tries at a token. One
// per tagging worker; nil when training.
type phraseMemo struct {
	lex, gaz map[string]phraseAnswer
}

type phraseAnswer struct {
	lists  []string
	longer bool
}

// phraseMemoWords bounds each of a phraseMemo's maps: past it, the next
// document starts them again.
const phraseMemoWords = 1 << 16

// begin readies the memo for a document.
func (m *phraseMemo) begin() {
	if m.lex == nil || len(m.lex) >= phraseMemoWords || len(m.gaz) >= phraseMemoWords {
		m.lex, m.gaz = map[string]phraseAnswer{}, map[string]phraseAnswer{}
	}
}

// prepare computes what the document's tokens need once. memo, when not nil,
// keeps the dictionaries' answers for one word across documents.
func (x *extractor) prepare(tk *Tokens, memo *phraseMemo) *docFeatures {
	n := len(tk.Tokens)
	d := &docFeatures{tk: tk, lower: make([]string, n), shape: make([]string, n)}
	for i := range tk.Tokens {
		w := tk.Word(i)
		d.lower[i] = strings.ToLower(w)
		d.shape[i] = shapeOf(w)
	}
	if x.cfg.ChunkShape {
		d.chunk = make([]string, n)
		for i := 0; i < n; {
			j := i + 1
			for j < n && tk.Tokens[j].Flags&SpaceBefore == 0 {
				j++
			}
			if j-i > 1 {
				cs := clip(shapeOf(tk.Text[tk.Tokens[i].Start:tk.Tokens[j-1].End]), 12)
				for k := i; k < j; k++ {
					d.chunk[k] = cs
				}
			}
			i = j
		}
	}
	if x.cfg.Templates {
		d.tmpl, d.tmplB = make([]uint32, n), make([]uint32, n)
		d.matches = matchTemplates(tk)
		for k, ms := range d.matches {
			for _, r := range ms {
				d.tmplB[r[0]] |= 1 << k
				for j := r[0]; j < r[1]; j++ {
					d.tmpl[j] |= 1 << k
				}
			}
		}
	}
	if x.lex != nil || x.gaz != nil {
		d.lists = make([][]listHit, n)
		var lexWords, gazWords map[string]phraseAnswer
		if memo != nil {
			memo.begin()
			lexWords, gazWords = memo.lex, memo.gaz
		}
		if x.lex != nil {
			f, ok := x.lex.(phraseFinder)
			if !ok {
				f = everyPhrase{x.lex}
			}
			matchPhrases(d, x.lex.MaxWords(), f, "d=", lexWords)
		}
		if x.gaz != nil {
			matchPhrases(d, x.gaz.maxWords, x.gaz, "g=", gazWords)
		}
	}
	return d
}

// matchTemplates returns, per template, the token ranges [first, last) of
// its matches. Matches of one template do not overlap: a token inside an
// earlier match is not tried, as FindAll would not try it.
func matchTemplates(tk *Tokens) [][][2]int {
	text := tk.Text
	out := make([][][2]int, len(templates))
	for k, t := range templates {
		if t.gate != "" && !strings.Contains(text, t.gate) {
			continue
		}
		covered := 0
		for i, tok := range tk.Tokens {
			if tok.Start < covered {
				continue
			}
			e := t.matchAt(tk, tok, true)
			if e < 0 {
				continue
			}
			covered = e
			j := i
			for j < len(tk.Tokens) && tk.Tokens[j].End <= e {
				j++
			}
			if j > i {
				out[k] = append(out[k], [2]int{i, j})
			}
		}
	}
	return out
}

// matchAt returns the end (a byte offset) of t's match beginning at tok, or
// -1 for none. The match may run to the end of tok's line, at most
// templateReach bytes; one that the window cut is dropped, since a \b there
// may be false. With useStart, a token t.start refuses is not tried.
func (t *template) matchAt(tk *Tokens, tok Token, useStart bool) int {
	text := tk.Text
	lineEnd := tk.Tokens[tk.Lines[tok.Line].Last-1].End
	end := min(lineEnd, tok.Start+templateReach)
	for end < lineEnd && !utf8.RuneStart(text[end]) {
		end++
	}
	if useStart && !t.start(text[tok.Start:tok.End], text[tok.Start:end]) {
		return -1
	}
	m := t.anchored.FindStringIndex(text[tok.Start:end])
	if m == nil || m[1] == 0 {
		return -1
	}
	e := tok.Start + m[1]
	if e == end && end < lineEnd {
		if r, _ := utf8.DecodeRuneInString(text[end:]); unicode.IsLetter(r) || unicode.IsDigit(r) {
			return -1
		}
	}
	return e
}

// markTokens calls f for every token lying inside the byte range [s, e).
func markTokens(tk *Tokens, s, e int, f func(i int, begin bool)) {
	i := sort.Search(len(tk.Tokens), func(i int) bool { return tk.Tokens[i].Start >= s })
	for first := true; i < len(tk.Tokens) && tk.Tokens[i].End <= e; i++ {
		f(i, first)
		first = false
	}
}

// matchPhrases finds, at every token, the longest phrase of up to maxWords
// tokens that the finder knows, and marks its tokens with the lists it is
// in. Phrases are tried shortest first, each the last one extended by a
// token, until none of the finder's is longer and begins with it. words,
// when not nil, keeps the finder's answers for one-word phrases.
func matchPhrases(d *docFeatures, maxWords int, f phraseFinder, prefix string, words map[string]phraseAnswer) {
	tk := d.tk
	// Every phrase is written to one builder and read back as a slice of
	// it, so that trying a phrase allocates nothing.
	var b strings.Builder
	for i := 0; i < len(tk.Tokens); i++ {
		if !isWordy(d.lower[i]) {
			continue
		}
		from := b.Len()
		var names []string
		last := i
		for k := i; k < min(i+maxWords, len(tk.Tokens)); k++ {
			if k > i && tk.Tokens[k].Flags&SpaceBefore != 0 {
				b.WriteByte(' ')
			}
			b.WriteString(d.lower[k])
			lists, longer := findPhrase(f, b.String()[from:], k == i, words)
			if len(lists) > 0 {
				names, last = lists, k+1
			}
			if !longer {
				break
			}
		}
		for k := i; k < last; k++ {
			for _, name := range names {
				d.lists[k] = append(d.lists[k], listHit{prefix + name, k == i})
			}
		}
	}
}

// findPhrase asks f about phrase, or words for a one-word phrase it holds
// (keeping f's answer there when words is not nil).
func findPhrase(f phraseFinder, phrase string, oneWord bool, words map[string]phraseAnswer) ([]string, bool) {
	if !oneWord || words == nil {
		return f.find(phrase)
	}
	if a, ok := words[phrase]; ok {
		return a.lists, a.longer
	}
	lists, longer := f.find(phrase)
	words[strings.Clone(phrase)] = phraseAnswer{lists, longer} // a slice of the builder, which grows on
	return lists, longer
}

func isWordy(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// shapeOf maps upper-case letters to X, lower-case to x, digits to d and keeps
// other characters, collapsing repeats ("Núñez" -> "Xx", "03/03" -> "d/d").
func shapeOf(w string) string {
	var buf [16]byte
	b := buf[:0]
	var last byte
	for _, r := range w {
		var c byte
		switch {
		case unicode.IsUpper(r):
			c = 'X'
		case unicode.IsLower(r) || unicode.IsLetter(r):
			c = 'x'
		case unicode.IsDigit(r):
			c = 'd'
		case r < utf8.RuneSelf:
			c = byte(r)
		default:
			c = '*'
		}
		if c != last {
			b = append(b, c)
			last = c
		}
	}
	return string(b)
}

// attrs hands attributes to f, each written into one reused buffer.
type attrs struct {
	buf []byte
	f   func([]byte)
}

func (a *attrs) put(name, value string) {
	a.buf = append(append(a.buf[:0], name...), value...)
	a.f(a.buf)
}

// emit calls f with every attribute of token i. The slice passed to f is
// reused: f must copy it to keep it.
func (x *extractor) emit(d *docFeatures, i int, buf []byte, f func([]byte)) []byte {
	buf = x.emitWord(d, i, buf, f)
	buf = x.emitWindow(d, i, buf, f)
	return x.emitContext(d, i, buf, f)
}

// emitWord emits the attributes token i's word alone decides: the word, its
// shape, length and affixes. Tagging computes them once per distinct word
// (wordCache).
func (x *extractor) emitWord(d *docFeatures, i int, buf []byte, f func([]byte)) []byte {
	a := attrs{buf, f}
	w := d.tk.Word(i)
	lw := d.lower[i]
	a.put("bias", "")
	a.put("w=", lw)
	if w != lw {
		a.put("W=", w)
	}
	a.put("s=", d.shape[i])
	if r, _ := utf8.DecodeRuneInString(w); unicode.IsDigit(r) {
		a.put("dl=", strconv.Itoa(len(w)))
	}
	if x.cfg.Affixes > 0 && isWordy(lw) {
		runes := utf8.RuneCountInString(lw)
		for k := 1; k <= x.cfg.Affixes && k < runes; k++ {
			a.put(names.prefix[k], prefixRunes(lw, k))
			a.put(names.suffix[k], suffixRunes(lw, k))
		}
	}
	return a.buf
}

// emitWindow emits the attributes of the words within Window tokens of
// token i, and "<s>" or "</s>" past the document's edges.
func (x *extractor) emitWindow(d *docFeatures, i int, buf []byte, f func([]byte)) []byte {
	n := len(d.tk.Tokens)
	for k := 1; k <= x.cfg.Window; k++ {
		if i-k >= 0 {
			buf = x.emitNeighbour(d, i-k, -k, buf, f)
		} else {
			buf = emitEdge(-k, buf, f)
		}
		if i+k < n {
			buf = x.emitNeighbour(d, i+k, k, buf, f)
		} else {
			buf = emitEdge(k, buf, f)
		}
	}
	return buf
}

// emitEdge emits what stands for a word k places away past the document's
// start (k < 0) or end.
func emitEdge(k int, buf []byte, f func([]byte)) []byte {
	a := attrs{buf, f}
	if k < 0 {
		a.put(names.before[-k], "<s>")
	} else {
		a.put(names.after[k], "</s>")
	}
	return a.buf
}

// emitNeighbour emits the attributes token j's word gives the token k places
// from it (k < 0: j comes first): the word, and an adjacent token's shape.
// Like emitWord's, they depend on the word alone.
func (x *extractor) emitNeighbour(d *docFeatures, j, k int, buf []byte, f func([]byte)) []byte {
	a := attrs{buf, f}
	if k < 0 {
		a.put(names.before[-k], d.lower[j])
		if k == -1 {
			a.put("s[-1]=", d.shape[j])
		}
	} else {
		a.put(names.after[k], d.lower[j])
		if k == 1 {
			a.put("s[1]=", d.shape[j])
		}
	}
	return a.buf
}

// emitContext emits the attributes that depend on more than the words
// around token i: chunk shapes, bigrams, templates, lists, triggers and
// layout.
func (x *extractor) emitContext(d *docFeatures, i int, buf []byte, f func([]byte)) []byte {
	a := attrs{buf, f}
	tk := d.tk
	n := len(tk.Tokens)
	lw := d.lower[i]
	if d.chunk != nil && d.chunk[i] != "" {
		a.put("cs=", d.chunk[i])
	}
	if x.cfg.Bigrams {
		if i > 0 {
			a.buf = append(append(append(append(a.buf[:0], "b[-1]="...), d.lower[i-1]...), '|'), lw...)
			a.f(a.buf)
		}
		if i+1 < n {
			a.buf = append(append(append(append(a.buf[:0], "b[1]="...), lw...), '|'), d.lower[i+1]...)
			a.f(a.buf)
		}
	}
	if d.tmpl != nil {
		for k, t := range templates {
			if d.tmpl[i]&(1<<k) != 0 {
				if d.tmplB[i]&(1<<k) != 0 {
					a.put("reB=", t.Name)
				} else {
					a.put("reI=", t.Name)
				}
			}
			if i > 0 && d.tmpl[i-1]&(1<<k) != 0 && d.tmpl[i]&(1<<k) == 0 {
				a.put("re[-1]=", t.Name)
			}
			if i+1 < n && d.tmpl[i+1]&(1<<k) != 0 && d.tmpl[i]&(1<<k) == 0 {
				a.put("re[1]=", t.Name)
			}
		}
	}
	if x.gaz != nil {
		for _, ty := range x.gaz.parts[lw] {
			a.put("gp=", ty)
		}
	}
	if d.lists != nil {
		for _, h := range d.lists[i] {
			if h.begin {
				a.put(h.name, "/B")
			} else {
				a.put(h.name, "/I")
			}
		}
		if i > 0 {
			for _, h := range d.lists[i-1] {
				a.put(h.name, "[-1]")
			}
		}
		if i+1 < n {
			for _, h := range d.lists[i+1] {
				a.put(h.name, "[1]")
			}
		}
	}
	if x.cfg.Triggers && len(x.triggers) > 0 {
		var seen [8]int
		ns := 0
		for k, back := i-1, 0; k >= 0 && back < x.cfg.TriggerWindow; k-- {
			if !isWordy(d.lower[k]) {
				continue
			}
			back++
			for _, ty := range x.triggers[d.lower[k]] {
				name := x.types[ty].Type
				if back == 1 {
					a.put("tr1=", name)
				}
				dup := false
				for _, s := range seen[:ns] {
					dup = dup || s == ty
				}
				if !dup && ns < len(seen) {
					seen[ns] = ty
					ns++
					a.put("tr=", name)
				}
			}
		}
	}
	if x.cfg.Layout {
		tok := tk.Tokens[i]
		if tok.Flags&LineStart != 0 {
			a.put("ls", "")
		}
		if tok.Flags&SentStart != 0 {
			a.put("ss", "")
		}
		if tok.Flags&BlankBefore != 0 {
			a.put("bl", "")
		}
		if i > 0 && tok.Flags&SpaceBefore == 0 {
			a.put("glued", "")
		}
		ln := &tk.Lines[tok.Line]
		if ln.Key != "" {
			if i >= ln.KeyEnd {
				a.put("k=", clip(ln.Key, 40))
				a.put("kp=", smallInts[min(i-ln.KeyEnd, 4)])
			} else {
				a.put("inkey", "")
			}
		}
		if ln.Section != "" {
			a.put("sec=", clip(ln.Section, 40))
		}
		a.put("ln=", smallInts[min(tok.Line, 12)])
		if tok.Line == len(tk.Lines)-1 {
			a.put("lastline", "")
		}
	}
	return a.buf
}

// names are the attribute prefixes that carry a number, built once.
var names = func() (n struct{ prefix, suffix, before, after [11]string }) {
	for k := 1; k <= 10; k++ {
		ks := strconv.Itoa(k)
		n.prefix[k], n.suffix[k] = "p"+ks+"=", "x"+ks+"="
		n.before[k], n.after[k] = "w[-"+ks+"]=", "w["+ks+"]="
	}
	return n
}()

var smallInts = func() (s [13]string) {
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func prefixRunes(s string, k int) string {
	for i := range s {
		if k == 0 {
			return s[:i]
		}
		k--
	}
	return s
}

func suffixRunes(s string, k int) string {
	i := len(s)
	for ; k > 0 && i > 0; k-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}

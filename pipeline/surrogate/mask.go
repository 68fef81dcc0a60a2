package surrogate

import (
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"deidcorpus/pipeline"
)

// Masking strategies write a mask in place of a value instead of a
// realistic surrogate, as Presidio's anonymizer operators and Philter's
// filters do: the spans keep their type and take the mask as their text.
const (
	// Redact replaces the value's characters by the rule's Mask character,
	// as many as the value has with KeepLength, else redactLength of them
	// (Presidio's "mask", Philter's "MASK" and "STATIC_REPLACE").
	Redact = "redact"
	// Placeholder writes the value's label between brackets: "[PATIENT]",
	// MIMIC's "[**PATIENT**]", Presidio's "<PATIENT>" or Philter's
	// "{{{REDACTED-PATIENT}}}" (Presidio's "replace", Philter's "REDACT").
	Placeholder = "placeholder"
	// Hash writes the label and the first hashHex hex digits of the value's
	// HMAC-SHA256 under the run's secret: "PATIENT-3fa2b1c9d0", the same for
	// a value throughout its rule's scope (Presidio's "hash", Philter's
	// "HASH_SHA256_REPLACE", both unkeyed, which a dictionary of names
	// reverses).
	Hash = "hash"
)

// MaskOptions tells the options of the masking strategies, for a curator
// writing a policy (`resynth --print-policy`).
func MaskOptions() string {
	return fmt.Sprintf(`masks: "redact" ("mask": one character, default %s; "keepLength": true for a mask as long as the value, else %d characters), `+
		`"placeholder" ("format": brackets [TYPE], mimic [**TYPE**], angle <TYPE> or philter {{{REDACTED-TYPE}}}; "label" instead of the type), `+
		`"hash" (TYPE-<%d hex digits of the value's keyed hash>, the same within the rule's scope; "label" instead of the type); see docs/resynthesis.md`,
		defaultMask, redactLength, hashHex)
}

// masks are the masking strategies.
var masks = map[string]bool{Redact: true, Placeholder: true, Hash: true}

// Placeholder formats (Rule.Format).
const (
	FormatBrackets = "brackets" // [LABEL], the default
	FormatMIMIC    = "mimic"    // [**LABEL**], as MIMIC's de-identified notes
	FormatAngle    = "angle"    // <LABEL>, as Presidio's replace operator
	FormatPhilter  = "philter"  // {{{REDACTED-LABEL}}}, as Philter's REDACT
)

var placeholderForms = map[string][2]string{FormatBrackets: {"[", "]"}, FormatMIMIC: {"[**", "**]"}, FormatAngle: {"<", ">"},
	FormatPhilter: {"{{{REDACTED-", "}}}"}}

const (
	// defaultMask is Redact's character when the rule names none.
	defaultMask = "*"
	// redactLength is the length of a redacted value whose length is not
	// kept: a value's length is no part of what a reader learns.
	redactLength = 5
	// hashHex is how many hex digits of the HMAC a hash mask writes: 40
	// bits, which two of 10,000 values of a type share once in 22,000
	// corpora.
	hashHex = 10
	// neutralLabel is a mask's label where its own would hold a value of
	// the corpus or is no plain label (see maskLabel).
	neutralLabel = "PHI"
	// maxLabel is the most characters a rule's label has.
	maxLabel = 40
)

// checkMask checks the masking options of a rule: each belongs to its
// strategy, and holds what it must.
func (r Rule) checkMask() error {
	only := func(field string, set bool, strategies ...string) error {
		if set && !slices.Contains(strategies, r.Strategy) {
			return fmt.Errorf("%s is an option of %s, not of strategy %q", field, strings.Join(strategies, " and "), r.Strategy)
		}
		return nil
	}
	for _, err := range []error{
		only("mask", r.Mask != "", Redact), only("keepLength", r.KeepLength, Redact),
		only("format", r.Format != "", Placeholder), only("label", r.Label != "", Placeholder, Hash),
	} {
		if err != nil {
			return err
		}
	}
	if r.Mask != "" {
		c, size := utf8.DecodeRuneInString(r.Mask)
		if size != len(r.Mask) || c == utf8.RuneError || !unicode.IsPrint(c) || unicode.IsSpace(c) {
			return fmt.Errorf("mask %q: want one printable character, not a space (such as * or X)", r.Mask)
		}
	}
	if _, ok := placeholderForms[r.Format]; r.Format != "" && !ok {
		return fmt.Errorf("format %q: want %s, %s, %s or %s", r.Format, FormatBrackets, FormatMIMIC, FormatAngle, FormatPhilter)
	}
	if r.Label != "" && !plainLabel(r.Label) {
		return fmt.Errorf("label %q: want 1 to %d letters, digits, spaces or _-./", r.Label, maxLabel)
	}
	return nil
}

// plainLabel reports whether a label can stand in a mask: letters, digits,
// spaces and _-./, no bracket or asterisk that would end the mask early.
func plainLabel(s string) bool {
	n := 0
	for _, c := range s {
		n++
		if !unicode.IsLetter(c) && !unicode.IsDigit(c) && !strings.ContainsRune(" _-./", c) {
			return false
		}
	}
	return n > 0 && n <= maxLabel && strings.TrimSpace(s) == s
}

// searchedAsName reports whether a label's values are names whose parts
// (a surname alone, a name without its first name) are propagated and
// looked for by the check: the name strategy's, and a name category's
// masked, which a surname left alone beside "[PATIENT]" would give away.
func (p *Policy) searchedAsName(r Rule, category, typ string) bool {
	return r.Strategy == Name || masks[r.Strategy] && p.categoryOf(category, typ) == "NAME"
}

// maskLabel is the label a placeholder or hash writes for a span: the
// rule's label, else the span's type. A type the policy names is its tag
// set's code ("DATE" is no copy of the surname Date); any other label is a
// string a user brought (a type of an open tag set reaching the rule
// through "*", a rule's label), written only where holds finds none of the
// corpus's values in it, else neutralLabel.
func (p *Policy) maskLabel(r Rule, s pipeline.Span, holds func(string) bool) string {
	label := cmp.Or(r.Label, s.Type)
	switch {
	case !plainLabel(label):
		return neutralLabel
	case label == s.Type && p.names(s.Category, s.Type):
		return label
	case holds(label):
		return neutralLabel
	}
	return label
}

// mask returns the mask of one span under a masking rule: the same for a
// value throughout its scope (tab's; a mention's own for ScopeMention). A
// hash is stored as a mapping, so that a later run keeps it whatever its
// seed; redaction and placeholders follow from the rule alone.
func (g *gen) mask(tab *table, d *pipeline.Document, s pipeline.Span, rule Rule) string {
	e := g.e
	label := func() string {
		return e.r.Policy.maskLabel(rule, s, func(l string) bool { return e.orig.within(l) || e.wide.holdsWord(l) })
	}
	switch rule.Strategy {
	case Redact:
		return redact(s.Text, rule)
	case Placeholder:
		form := placeholderForms[cmp.Or(rule.Format, FormatBrackets)]
		return form[0] + label() + form[1]
	}
	if m, ok := tab.get(s.Type, s.Text); ok && m.Strategy == Hash {
		return m.Surrogate
	}
	scope := tab.scope
	if rule.Scope == ScopeMention {
		scope += "\x00" + d.ID + "\x00" + strconv.Itoa(s.Start)
	}
	sur := label() + "-" + valueHash(e.r.Seed, scope, s.Type, s.Text)
	if rule.Scope != ScopeMention {
		tab.add(Mapping{Category: s.Category, Type: s.Type, Original: s.Text, Surrogate: sur, Strategy: Hash})
	}
	return sur
}

// redact writes a value's mask: the rule's character, as many times as the
// value has characters or redactLength times. A mask that would spell the
// value itself (a value "XXXXX" under mask X) is written with another
// character.
func redact(v string, rule Rule) string {
	c := cmp.Or(rule.Mask, defaultMask)
	n := redactLength
	if rule.KeepLength {
		n = utf8.RuneCountInString(v)
	}
	m := strings.Repeat(c, n)
	if fold(m) == fold(v) {
		other := defaultMask
		if c == defaultMask {
			other = "#"
		}
		m = strings.Repeat(other, n)
	}
	return m
}

// valueHash is the first hashHex hex digits of a value's HMAC-SHA256 in a
// scope and type, keyed by the run's seed: a job's seed is its secret one
// (keyed by the key file, see store.SecretSeed), so neither the seed in a
// corpus's provenance nor a dictionary of names gives a value back. The
// value is folded, as mappings are looked up.
func valueHash(seed uint64, scope, typ, value string) string {
	key := sha256.New()
	key.Write([]byte("deidcorpus mask hash\x00"))
	key.Write(binary.BigEndian.AppendUint64(nil, seed))
	mac := hmac.New(sha256.New, key.Sum(nil))
	for _, part := range []string{scope, typ, fold(value)} {
		mac.Write([]byte(part))
		mac.Write([]byte{0})
	}
	return hex.EncodeToString(mac.Sum(nil))[:hashHex]
}

// maskCode returns where, in a masked span's text, its label stands when
// the text is the mask its rule writes and the label is a code (the span's
// type, which the policy names, or neutralLabel): a replaced value that
// the label spells is no copy of it. ok is false for any other span.
func (p *Policy) maskCode(s pipeline.Span) (start, end int, ok bool) {
	r := p.Rule(s.Category, s.Type)
	var label string
	switch r.Strategy {
	case Placeholder:
		form := placeholderForms[cmp.Or(r.Format, FormatBrackets)]
		inner, found := strings.CutPrefix(s.Text, form[0])
		if inner, found = strings.CutSuffix(inner, form[1]); !found {
			return 0, 0, false
		}
		label, start = inner, len(form[0])
	case Hash:
		i := strings.LastIndexByte(s.Text, '-')
		if i < 0 || len(s.Text)-i-1 != hashHex || strings.Trim(s.Text[i+1:], "0123456789abcdef") != "" {
			return 0, 0, false
		}
		label = s.Text[:i]
	default:
		return 0, 0, false
	}
	if label != neutralLabel && (label != s.Type || !p.names(s.Category, s.Type)) {
		return 0, 0, false
	}
	return start, start + len(label), true
}

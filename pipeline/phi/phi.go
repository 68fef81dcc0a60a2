// Package phi defines the PHI tag sets deidcorpus knows (the i2b2 2014 set and
// its HIPAA subset, MEDDOCAN's) and validates span labels against a corpus's
// declared tag set. A corpus declares "i2b2-2014" or "meddocan", whose labels
// are checked and whose categories are filled in where a format carries only
// the type, or "open", which takes any label.
package phi

import (
	"fmt"
	"sort"
	"strings"

	"deidcorpus/internal/nearmiss"
)

// Tag set names a corpus can declare (MEDDOCAN's is MEDDOCANName).
const (
	I2B22014 = "i2b2-2014"
	Open     = "open"
)

// TagSet is a named set of categories, each with its types.
type TagSet struct {
	Name       string
	Categories []Category
	byType     map[string]string // type -> category
}

// Category is a coarse PHI class and its fine types.
type Category struct {
	Name  string
	Types []string
}

// i2b2 is the 2014 i2b2/UTHealth tag set (Stubbs & Uzuner 2015, Figure 1).
var i2b2 = newTagSet(I2B22014, []Category{
	{"NAME", []string{"PATIENT", "DOCTOR", "USERNAME"}},
	{"PROFESSION", []string{"PROFESSION"}},
	{"LOCATION", []string{"ROOM", "DEPARTMENT", "HOSPITAL", "ORGANIZATION", "STREET", "CITY", "STATE", "COUNTRY", "ZIP", "LOCATION-OTHER"}},
	{"AGE", []string{"AGE"}},
	{"DATE", []string{"DATE"}},
	{"CONTACT", []string{"PHONE", "FAX", "EMAIL", "URL", "IPADDR"}},
	{"ID", []string{"SSN", "MEDICALRECORD", "HEALTHPLAN", "ACCOUNT", "LICENSE", "VEHICLE", "DEVICE", "BIOID", "IDNUM"}},
	{"OTHER", []string{"OTHER"}},
})

func newTagSet(name string, cats []Category) *TagSet {
	ts := &TagSet{Name: name, Categories: cats, byType: map[string]string{}}
	for _, c := range cats {
		for _, t := range c.Types {
			ts.byType[t] = c.Name
		}
	}
	return ts
}

// I2B2 returns the i2b2 2014 tag set.
func I2B2() *TagSet { return i2b2 }

// Lookup returns the tag set a corpus may declare with the given name; "open"
// yields nil with ok.
func Lookup(name string) (ts *TagSet, ok bool) {
	switch name {
	case I2B22014:
		return i2b2, true
	case MEDDOCANName:
		return meddocan, true
	case Open:
		return nil, true
	}
	return nil, false
}

// Names lists the tag sets a corpus may declare.
func Names() []string { return []string{I2B22014, MEDDOCANName, Open} }

// UnknownTagSet is the error for a tag set name that is none of known: it
// names the one a misspelling was probably meant to be, else every one.
func UnknownTagSet(name string, known []string) error {
	if near := nearmiss.Among(name, known); len(near) > 0 {
		return fmt.Errorf("unknown tag set %q; did you mean %s?", name, strings.Join(near, " or "))
	}
	return fmt.Errorf("unknown tag set %q (known: %s)", name, strings.Join(known, ", "))
}

// CategoryOf returns the category of a type, and whether the type is known.
func (ts *TagSet) CategoryOf(typ string) (string, bool) {
	c, ok := ts.byType[typ]
	return c, ok
}

// NearTypes are the set's types a mistyped one was probably meant to be:
// one edit away, case and '-' for '_' set aside.
func (ts *TagSet) NearTypes(typ string) []string {
	return nearmiss.Among(typ, ts.Types())
}

// Types lists every type of the set, in declaration order.
func (ts *TagSet) Types() []string {
	var out []string
	for _, c := range ts.Categories {
		out = append(out, c.Types...)
	}
	return out
}

// UnknownTypeError is a type a tag set does not have, with the set's types
// it may have been meant to be.
type UnknownTypeError struct {
	Type   string
	TagSet *TagSet
	Near   []string
}

func (e *UnknownTypeError) Error() string {
	if len(e.Near) > 0 {
		return fmt.Sprintf("unknown type %q in tag set %s; did you mean %s?", e.Type, e.TagSet.Name, strings.Join(e.Near, " or "))
	}
	return fmt.Sprintf("unknown type %q in tag set %s (known: %s)", e.Type, e.TagSet.Name, strings.Join(e.TagSet.Types(), ", "))
}

// Normalize checks a (category, type) pair against a declared tag set and fills
// in the category when only the type is given. With a nil tag set (open) any
// non-empty label passes and an empty category becomes the type.
func Normalize(ts *TagSet, category, typ string) (string, string, error) {
	typ = strings.TrimSpace(typ)
	category = strings.TrimSpace(category)
	if typ == "" {
		return "", "", fmt.Errorf("missing TYPE")
	}
	if ts == nil {
		if category == "" {
			category = typ
		}
		return category, typ, nil
	}
	want, ok := ts.byType[typ]
	if !ok {
		return "", "", &UnknownTypeError{Type: typ, TagSet: ts, Near: ts.NearTypes(typ)}
	}
	if category != "" && category != want {
		return "", "", fmt.Errorf("type %s belongs to category %s, not %s", typ, want, category)
	}
	return want, typ, nil
}

// HIPAA subsets of the i2b2 2014 types used for scoring.
//
// The official i2b2 2014 evaluation script's list leaves out IDNUM (a typo
// upstream); Stubbs & Uzuner 2015 section 8 includes it. Scores default to the
// script's list so that figures are comparable with published ones.
var (
	hipaaScript = []string{"PATIENT", "AGE", "CITY", "STREET", "ZIP", "ORGANIZATION", "DATE", "PHONE", "FAX",
		"EMAIL", "SSN", "MEDICALRECORD", "HEALTHPLAN", "ACCOUNT", "LICENSE", "VEHICLE", "DEVICE", "BIOID"}
	hipaaPaper = append(append([]string(nil), hipaaScript...), "IDNUM")
)

// HIPAATypes returns the HIPAA subset of i2b2 2014 types: the official script's
// list, or with paper=true the list of Stubbs & Uzuner section 8 (adds IDNUM).
func HIPAATypes(paper bool) map[string]bool {
	list := hipaaScript
	if paper {
		list = hipaaPaper
	}
	m := make(map[string]bool, len(list))
	for _, t := range list {
		m[t] = true
	}
	return m
}

// SortedKeys returns a map's keys in order; handy for stable reports.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

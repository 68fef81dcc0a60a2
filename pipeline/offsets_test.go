package pipeline

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestIndexRoundTrip(t *testing.T) {
	for _, text := range []string{"", "plain ascii", "País: España.", "a\u00e9\U0001F600b", "bad\xffbyte"} {
		ix := NewIndex(text)
		if want := utf8.RuneCountInString(text); ix.Len() != want {
			t.Fatalf("%q: Len = %d, want %d", text, ix.Len(), want)
		}
		cp := 0
		for b := range text {
			if got := ix.Byte(cp); got != b {
				t.Fatalf("%q: Byte(%d) = %d, want %d", text, cp, got, b)
			}
			if got := ix.CodePoint(b); got != cp {
				t.Fatalf("%q: CodePoint(%d) = %d, want %d", text, b, got, cp)
			}
			cp++
		}
		if ix.Byte(cp) != len(text) || ix.CodePoint(len(text)) != cp {
			t.Fatalf("%q: end offsets do not map", text)
		}
	}
	ix := NewIndex("País: España.")
	if got := ix.Slice(6, 12); got != "España" {
		t.Fatalf("Slice = %q", got)
	}
}

func TestValidate(t *testing.T) {
	d := Document{Text: "Seen by Dr. Núñez on 3/4.", Spans: []Span{
		{Start: 12, End: 17, Text: "Núñez", Category: "NAME", Type: "DOCTOR"},
		{Start: 21, End: 24, Text: "3/4", Category: "DATE", Type: "DATE"},
	}}
	if err := d.Validate(false); err != nil {
		t.Fatal(err)
	}
	cases := map[string]Span{
		"past the end":    {Start: 21, End: 40, Type: "DATE"},
		"does not match":  {Start: 21, End: 24, Text: "3/5", Type: "DATE"},
		"not before end":  {Start: 5, End: 5, Type: "DATE"},
		"missing label":   {Start: 1, End: 2},
		"overlaps":        {Start: 15, End: 19, Type: "DATE"},
		"negative offset": {Start: -1, End: 2, Type: "DATE"},
	}
	for want, s := range cases {
		bad := d
		bad.Spans = append(append([]Span(nil), d.Spans...), s)
		err := bad.Validate(false)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v", want, err)
		}
	}
	// A mismatch is located, but neither text (PHI) is quoted.
	bad := d
	bad.Spans = []Span{{Start: 12, End: 17, Text: "Nuñez", Type: "DOCTOR"}}
	err := bad.Validate(false)
	if err == nil || strings.Contains(err.Error(), "Nuñez") || strings.Contains(err.Error(), "Núñez") ||
		!strings.Contains(err.Error(), "first difference at character 2") {
		t.Errorf("mismatch: got %v", err)
	}
	if strings.Contains(err.Error(), "byte-order mark") {
		t.Errorf("a text without a byte-order mark is said to have one: %v", err)
	}
	// Offsets that did not count a byte-order mark the text starts with.
	bom := Document{Text: "\ufeff" + d.Text, Spans: []Span{{Start: 12, End: 17, Text: "Núñez", Type: "DOCTOR"}}}
	if err := bom.Validate(false); err == nil || !strings.Contains(err.Error(), "starts with a byte-order mark (U+FEFF)") {
		t.Errorf("byte-order mark: got %v", err)
	}
	// Offsets wrong otherwise in a text that has one: no word of the mark.
	bom.Spans[0].Start, bom.Spans[0].End = 14, 19
	if err := bom.Validate(false); err == nil || strings.Contains(err.Error(), "byte-order mark") {
		t.Errorf("offsets two off in a text with a byte-order mark: got %v", err)
	}
}

// byteOffsets must agree with Index on every offset, including invalid UTF-8
// and offsets outside the text.
func TestByteOffsetsAgreeWithIndex(t *testing.T) {
	for _, text := range []string{"", "plain ascii", "País: España.", "a\u00e9\U0001F600b", "bad\xffbyte"} {
		ix := NewIndex(text)
		var cps []int
		for cp := -2; cp <= ix.Len()+2; cp++ {
			cps = append(cps, cp)
		}
		for _, sub := range [][]int{cps, cps[2:3], cps[len(cps)-3:]} {
			bytes := ByteOffsets(text, sub)
			for i, cp := range sub {
				want := -1
				if cp >= 0 && cp <= ix.Len() {
					want = ix.Byte(cp)
				}
				if bytes[i] != want {
					t.Fatalf("%q: byte offset of %d = %d, want %d", text, cp, bytes[i], want)
				}
			}
		}
	}
}

// Of two overlapping spans the later one given is in error, whichever starts
// first, and the error names the earlier one by its id.
func TestValidateBlamesTheLaterOfTwoOverlappingSpans(t *testing.T) {
	text := "Seen by Dr. Núñez on 3/4."
	first := Span{ID: "T1", Start: 12, End: 17, Category: "NAME", Type: "DOCTOR"}
	for _, c := range []struct {
		later Span
		want  string
	}{
		{Span{ID: "T9", Start: 12, End: 17, Type: "PATIENT"}, "has the offsets of T1 (NAME/DOCTOR) [12:17]"},
		{Span{ID: "T9", Start: 8, End: 14, Type: "PATIENT"}, "overlaps T1 (NAME/DOCTOR) [12:17]"},
		{Span{ID: "T9", Start: 15, End: 20, Type: "PATIENT"}, "overlaps T1 (NAME/DOCTOR) [12:17]"},
	} {
		d := Document{Text: text, Spans: []Span{first, {Start: 21, End: 24, Type: "DATE"}, c.later}}
		var se *SpanError
		if err := d.Validate(false); !errors.As(err, &se) || se.Span != c.later || se.Msg != c.want {
			t.Errorf("%+v after T1: got %v, want %q on T9", c.later, err, c.want)
		}
	}
	// The first line in error is the one named, though a later line's span
	// starts before both (T3 lies inside T2, which overlaps T1).
	d := Document{Text: text, Spans: []Span{{ID: "T1", Start: 5, End: 8, Type: "A"}, {ID: "T2", Start: 0, End: 10, Type: "B"}, {ID: "T3", Start: 1, End: 2, Type: "C"}}}
	var se *SpanError
	if err := d.Validate(false); !errors.As(err, &se) || se.Span.ID != "T2" || se.Msg != "overlaps T1 (A) [5:8]" {
		t.Errorf("T1 [5:8], T2 [0:10], T3 [1:2]: got %v, want T2 overlapping T1", err)
	}
}

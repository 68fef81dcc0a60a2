package tagger

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Token is one token of a document. Start and End are byte offsets into the
// text (End exclusive); callers convert to code points with pipeline.Index.
type Token struct {
	Start, End int
	Line       int // index into Tokens.Lines
	Flags      Flag
}

// Flag marks boundaries at a token.
type Flag uint8

const (
	LineStart   Flag = 1 << iota // first token of a line
	SentStart                    // first token of a sentence (line starts included)
	BlankBefore                  // a blank line (or the document start) precedes the token
	SpaceBefore                  // whitespace separates the token from the previous one
)

// Line is one line of text and what the tokenizer learnt about its layout:
// clinical notes are full of "Key: value" fields and headings, and the key or
// heading a token sits under is often the best clue to its PHI type.
type Line struct {
	First, Last int    // token range [First, Last)
	Key         string // lower-cased field name before a ':' near the line start, or that of a key-only previous line
	KeyEnd      int    // index of the first token after the key's ':' (tokens before it are the key itself)
	Heading     bool   // a short line that opens a section
	Section     string // lower-cased text of the nearest heading above, "" before the first
}

// Tokens is a tokenized document.
type Tokens struct {
	Text   string
	Tokens []Token
	Lines  []Line
}

// Word returns token i's text.
func (t *Tokens) Word(i int) string { return t.Text[t.Tokens[i].Start:t.Tokens[i].End] }

type runeClass uint8

const (
	clSpace runeClass = iota
	clNewline
	clLetter
	clDigit
	clOther
	clInvisible // a byte-order mark: no token, and no space either (other format characters, joiners, belong to their words)
)

func classify(r rune) runeClass {
	switch {
	case r == '\n':
		return clNewline
	case r < utf8.RuneSelf:
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
			return clLetter
		case '0' <= r && r <= '9':
			return clDigit
		case r == ' ' || r == '\t' || r == '\r' || r == '\f' || r == '\v':
			return clSpace
		}
		return clOther
	case unicode.IsLetter(r) || unicode.IsMark(r):
		return clLetter
	case unicode.IsDigit(r):
		return clDigit
	case unicode.IsSpace(r):
		return clSpace
	case r == '\ufeff':
		return clInvisible
	}
	return clOther
}

// Tokenize splits clinical text into tokens finer than whitespace, because PHI
// hides inside glued tokens (Yang & Garibaldi section 2): letters and digits
// part ("70yoM" -> 70 yo M, "3041023MARY" -> 3041023 MARY), a lower-to-upper
// change starts a new token ("TThSa" -> T Th Sa), and every punctuation mark
// is a token of its own ("T-Th-Sa" -> T - Th - Sa). Any span boundary of the
// corpora falls on these token boundaries, so mapping gold spans to tokens
// loses (almost) nothing.
func Tokenize(text string) *Tokens {
	t := &Tokens{Text: text, Tokens: make([]Token, 0, len(text)/4)}
	var (
		flags    = LineStart | SentStart | BlankBefore
		newlines = 0
		start    = -1 // start of the current letter or digit run
		cls      runeClass
		prevUp   bool // previous rune in the run is upper case
		prevLow  bool
	)
	emit := func(s, e int) {
		if newlines > 0 {
			flags |= LineStart | SentStart
			if newlines > 1 {
				flags |= BlankBefore
			}
		}
		t.Tokens = append(t.Tokens, Token{Start: s, End: e, Flags: flags})
		flags, newlines = 0, 0
	}
	flush := func(end int) {
		if start >= 0 {
			emit(start, end)
			start = -1
		}
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		c := classify(r)
		switch c {
		case clSpace, clNewline:
			flush(i)
			flags |= SpaceBefore
			if c == clNewline {
				newlines++
			}
		case clInvisible:
			flush(i)
		case clOther:
			flush(i)
			emit(i, i+size)
		default:
			up, low := unicode.IsUpper(r), unicode.IsLower(r)
			if start >= 0 && c == cls && c == clLetter {
				split := prevLow && up
				if !split && prevUp && up {
					// "THSa": split before the last capital of a run when a
					// lower-case letter follows it.
					if n, _ := utf8.DecodeRuneInString(text[i+size:]); unicode.IsLower(n) {
						split = true
					}
				}
				if split {
					flush(i)
				}
			} else if start >= 0 && c != cls {
				flush(i)
			}
			if start < 0 {
				start, cls = i, c
			}
			prevUp, prevLow = up, low
		}
		i += size
	}
	flush(len(text))
	t.markLines()
	return t
}

// markLines groups tokens into lines and finds sentence starts, field keys
// and headings.
func (t *Tokens) markLines() {
	toks := t.Tokens
	for i := 0; i < len(toks); {
		j := i + 1
		for j < len(toks) && toks[j].Flags&LineStart == 0 {
			j++
		}
		t.Lines = append(t.Lines, Line{First: i, Last: j, KeyEnd: i})
		i = j
	}
	section := ""
	prevKeyOnly := ""
	for li := range t.Lines {
		ln := &t.Lines[li]
		for k := ln.First; k < ln.Last; k++ {
			toks[k].Line = li
			if k > ln.First && t.sentenceEnds(k-1) && toks[k].Flags&SpaceBefore != 0 && startsUpper(t.Word(k)) {
				toks[k].Flags |= SentStart
			}
		}
		n := ln.Last - ln.First
		// A key is at most five tokens followed by ':'.
		for k := ln.First; k < ln.Last && k <= ln.First+5; k++ {
			if t.Word(k) == ":" {
				if k > ln.First {
					ln.Key = t.joinLower(ln.First, k)
					ln.KeyEnd = k + 1
				}
				break
			}
		}
		if ln.Key == "" && prevKeyOnly != "" {
			ln.Key = prevKeyOnly
		}
		prevKeyOnly = ""
		if ln.KeyEnd == ln.Last && ln.KeyEnd > ln.First {
			prevKeyOnly = ln.Key
		}
		if n > 0 && n <= 6 && t.looksLikeHeading(ln) {
			ln.Heading = true
			section = t.joinLower(ln.First, ln.Last)
		}
		ln.Section = section
	}
}

// looksLikeHeading: a short line of several words ending in ':' or '.' with
// nothing after a key, or written in capitals. A one-word "Name:" line is a
// field whose value follows on the next line, and a two-word line ending in
// '.' is as often a value ("Rivera Bueno.") as a heading.
func (t *Tokens) looksLikeHeading(ln *Line) bool {
	n := ln.Last - ln.First
	switch last := t.Word(ln.Last - 1); {
	case last == ":" && ln.KeyEnd == ln.Last:
		return n >= 3
	case last == "." && ln.KeyEnd == ln.First:
		return n >= 4
	}
	letters := 0
	for k := ln.First; k < ln.Last; k++ {
		for _, r := range t.Word(k) {
			if unicode.IsLower(r) {
				return false
			}
			if unicode.IsUpper(r) {
				letters++
			}
		}
	}
	return letters >= 4
}

func (t *Tokens) sentenceEnds(k int) bool {
	w := t.Word(k)
	return w == "." || w == "!" || w == "?"
}

func startsUpper(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r)
}

func (t *Tokens) joinLower(from, to int) string {
	var b strings.Builder
	for k := from; k < to; k++ {
		w := t.Word(k)
		if w == ":" || w == "." {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strings.ToLower(w))
	}
	return b.String()
}

package surrogate

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// A date is parsed into parts, each a literal to copy or a field to write back
// from the shifted date in the original's own format: "Monday, January 10th"
// keeps its weekday, month name, ordinal and comma; "03/03/1946" its order,
// separators and zero padding; "Fall '02" its season and two-digit year.

type fieldKind uint8

const (
	fLit fieldKind = iota
	fDay
	fMonth     // numeric month
	fMonthName // month word
	fYear      // four digits
	fYear2     // two digits
	fWeekday
	fSeason
	fDecade  // "1990" of "1990s"
	fDecade2 // "90" of "90's"
	fOrdinal // "th" after a day
)

type datePart struct {
	kind  fieldKind
	delta int // a further day or month of a range ("5 y 7 de marzo", "febrero y abril"): its distance from the first
	lit   string
	pad   bool // zero-pad numbers to two digits
	abbr  int  // letters of an abbreviated month or weekday name; 0 = full
	lc    letterCase
	lang  string
}

type date struct {
	parts                  []datePart
	y, m, d, wd, season    int
	hasY, hasM, hasD, hasW bool
	hasSeason, hasDecade   bool
	ambiguous              bool // a bare day and month whose order is only assumed
}

var (
	monthNames = map[string][]string{
		"en": {"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"},
		"es": {"enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"},
	}
	weekdayNames = map[string][]string{ // time.Weekday order
		"en": {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"},
		"es": {"domingo", "lunes", "martes", "miércoles", "jueves", "viernes", "sábado"},
	}
	seasonNames = map[string][]string{ // winter, spring, summer, fall
		"en": {"winter", "spring", "summer", "fall"},
		"es": {"invierno", "primavera", "verano", "otoño"},
	}
	dateWords = map[string][]dateWord{} // every reading of a word, full names first
)

// dateReading is how a corpus's dates are read: the order of a numeric
// date's day and month, and the language whose reading of a word both
// languages know wins ("mar" is March in English, marzo in Spanish).
type dateReading struct {
	dmy  bool
	lang string
}

// readingFor is how a policy reads the dates of a corpus in a language.
func readingFor(pol *Policy, lang string) dateReading {
	return dateReading{dmy: pol.DateOrder == "DMY" || pol.DateOrder == "auto" && lang == "es", lang: lang}
}

// lookupDateWord returns the reading of a folded word in the corpus's
// language if it has one, else the first.
func lookupDateWord(f, lang string) (dateWord, bool) {
	ws := dateWords[f]
	if len(ws) == 0 {
		return dateWord{}, false
	}
	for _, w := range ws {
		if w.lang == lang {
			return w, true
		}
	}
	return ws[0], true
}

// dateWord is what a month, weekday or season word (or its three- or
// four-letter abbreviation) stands for.
type dateWord struct {
	kind fieldKind
	val  int
	lang string
	abbr int
}

func init() {
	add := func(names map[string][]string, kind fieldKind, base int) {
		for lang, list := range names {
			for i, n := range list {
				f := fold(n)
				dateWords[f] = append([]dateWord{{kind, i + base, lang, 0}}, dateWords[f]...)
				if kind == fSeason {
					continue
				}
				for _, k := range []int{3, 4} {
					if len([]rune(f)) > k {
						a := string([]rune(f)[:k])
						dateWords[a] = append(dateWords[a], dateWord{kind, i + base, lang, k})
					}
				}
			}
		}
	}
	add(map[string][]string{"en": monthNames["en"]}, fMonthName, 1)
	add(map[string][]string{"es": monthNames["es"]}, fMonthName, 1)
	add(weekdayNames, fWeekday, 0)
	add(seasonNames, fSeason, 0)
	dateWords["autumn"] = []dateWord{{fSeason, 3, "en", 0}}
}

// parseDate reads a date phrase; rd says how to read a numeric date whose
// order its numbers do not settle, and words of two languages.
func parseDate(s string, rd dateReading) (*date, bool) {
	dmy := rd.dmy
	d := &date{}
	type num struct {
		part       int // index in parts
		v, width   int
		apostrophe bool // "'92"
		plural     bool // "90s", "90's"
	}
	var nums []num
	rs := []rune(s)
	for i := 0; i < len(rs); {
		r := rs[i]
		j := i + 1
		switch {
		case r >= '0' && r <= '9':
			for j < len(rs) && rs[j] >= '0' && rs[j] <= '9' {
				j++
			}
			v, _ := strconv.Atoi(string(rs[i:j]))
			n := num{part: len(d.parts), v: v, width: j - i}
			if i > 0 && (rs[i-1] == '\'' || rs[i-1] == '’') {
				n.apostrophe = true
			}
			if j < len(rs) && rs[j] == 's' && (j+1 == len(rs) || !unicode.IsLetter(rs[j+1])) ||
				j+1 < len(rs) && (rs[j] == '\'' || rs[j] == '’') && rs[j+1] == 's' {
				n.plural = true
			}
			nums = append(nums, n)
			d.parts = append(d.parts, datePart{kind: fLit, lit: string(rs[i:j])})
		case unicode.IsLetter(r):
			for j < len(rs) && unicode.IsLetter(rs[j]) {
				j++
			}
			w := string(rs[i:j])
			p := datePart{kind: fLit, lit: w}
			if dw, ok := lookupDateWord(fold(w), rd.lang); ok {
				p = datePart{kind: dw.kind, abbr: dw.abbr, lc: caseOf(w), lang: dw.lang}
				if len([]rune(w)) == 1 {
					p.lc = caseTitle
				}
				switch dw.kind {
				case fMonthName:
					if d.hasM { // a range of months: "febrero y abril de 2002"
						if !joined(d.parts) {
							return nil, false
						}
						p.delta = dw.val - d.m
						break
					}
					d.m, d.hasM = dw.val, true
				case fWeekday:
					d.wd, d.hasW = dw.val, true
				case fSeason:
					d.season, d.hasSeason = dw.val, true
				}
			} else if o := strings.ToLower(w); (o == "st" || o == "nd" || o == "rd" || o == "th") &&
				i > 0 && rs[i-1] >= '0' && rs[i-1] <= '9' {
				p = datePart{kind: fOrdinal, lc: caseOf(w)}
			}
			d.parts = append(d.parts, p)
		default:
			d.parts = append(d.parts, datePart{kind: fLit, lit: string(r)})
		}
		i = j
	}
	set := func(n num, k fieldKind) {
		d.parts[n.part].kind = k
		d.parts[n.part].lit = ""
	}
	switch {
	case len(nums) == 0:
	case d.hasM: // a month word: numbers are a day and a year
		for _, n := range nums {
			switch {
			case n.width == 4 && !d.hasY:
				d.y, d.hasY = n.v, true
				set(n, fYear)
			case n.apostrophe && n.width == 2 && !d.hasY:
				d.y, d.hasY = year2(n.v), true
				set(n, fYear2)
			case n.v >= 1 && n.v <= 31 && !d.hasD && n.width <= 2:
				d.d, d.hasD = n.v, true
				set(n, fDay)
				d.parts[n.part].pad = n.width == 2 && n.v < 10
			case n.v >= 1 && n.v <= 31 && d.hasD && !d.hasY && n.width <= 2 && joined(d.parts[:n.part]):
				set(n, fDay) // a range of days: "5 y 7 de marzo"
				d.parts[n.part].delta = n.v - d.d
				d.parts[n.part].pad = n.width == 2 && n.v < 10
			case n.width == 2 && d.hasD && !d.hasY:
				d.y, d.hasY = year2(n.v), true
				set(n, fYear2)
			default:
				return nil, false
			}
		}
	case len(nums) == 3 && sameSeparators(d.parts, nums[0].part, nums[1].part, nums[2].part):
		a, b, c := nums[0], nums[1], nums[2]
		var yn, mn, dn num
		switch {
		case a.width == 4:
			yn, mn, dn = a, b, c
		case dmy && !(a.v <= 12 && b.v > 12) || !dmy && a.v > 12 && b.v <= 12:
			dn, mn, yn = a, b, c
		default:
			mn, dn, yn = a, b, c
		}
		if yn.width != 4 && yn.width != 2 || mn.width > 2 || dn.width > 2 {
			return nil, false
		}
		d.m, d.d, d.hasM, d.hasD, d.hasY = mn.v, dn.v, true, true, true
		set(mn, fMonth)
		set(dn, fDay)
		if yn.width == 4 {
			d.y = yn.v
			set(yn, fYear)
		} else {
			d.y = year2(yn.v)
			set(yn, fYear2)
		}
		pad := mn.width == 2 && dn.width == 2 || mn.width == 2 && mn.v < 10 || dn.width == 2 && dn.v < 10
		d.parts[mn.part].pad, d.parts[dn.part].pad = pad, pad
	case len(nums) == 2 && sameSeparators(d.parts, nums[0].part, nums[1].part):
		a, b := nums[0], nums[1]
		switch {
		case b.width == 4 && a.width <= 2: // 11/2017
			d.m, d.y, d.hasM, d.hasY = a.v, b.v, true, true
			set(a, fMonth)
			set(b, fYear)
			d.parts[a.part].pad = a.width == 2
		case a.width == 4 && b.width <= 2: // 2017-11
			d.y, d.m, d.hasY, d.hasM = a.v, b.v, true, true
			set(a, fYear)
			set(b, fMonth)
			d.parts[b.part].pad = b.width == 2
		case a.width <= 2 && b.width == 2 && b.v > 31: // 11/95
			d.m, d.y, d.hasM, d.hasY = a.v, year2(b.v), true, true
			set(a, fMonth)
			set(b, fYear2)
			d.parts[a.part].pad = a.width == 2
		case a.width <= 2 && b.width <= 2: // 02/03: day and month, or month and year
			dn, mn := a, b
			if !dmy && !(a.v > 12 && b.v <= 12) || dmy && a.v <= 12 && b.v > 12 {
				dn, mn = b, a
			}
			d.m, d.d, d.hasM, d.hasD = mn.v, dn.v, true, true
			set(mn, fMonth)
			set(dn, fDay)
			pad := a.width == 2 && b.width == 2
			d.parts[mn.part].pad, d.parts[dn.part].pad = pad, pad
			d.ambiguous = a.v <= 12 && b.v <= 12 // 8/31: a day above 12 settles the order
		default:
			return nil, false
		}
	case len(nums) == 1:
		n := nums[0]
		switch {
		case n.plural && n.width == 4 && n.v%10 == 0:
			d.y, d.hasY, d.hasDecade = n.v, true, true
			set(n, fDecade)
		case n.plural && n.width == 2 && n.v%10 == 0:
			d.y, d.hasY, d.hasDecade = year2(n.v), true, true
			set(n, fDecade2)
		case n.width == 4 && n.v >= 1800 && n.v <= 2200:
			d.y, d.hasY = n.v, true
			set(n, fYear)
		case n.width == 2 && n.apostrophe:
			d.y, d.hasY = year2(n.v), true
			set(n, fYear2)
		default:
			return nil, false
		}
	default:
		return nil, false
	}
	if !(d.hasY || d.hasM || d.hasW || d.hasSeason) || d.hasSeason && (d.hasM || d.hasD) {
		return nil, false
	}
	if d.hasM && (d.m < 1 || d.m > 12) || d.hasD && !d.hasM {
		return nil, false
	}
	if d.hasD {
		y := 2000 // a leap year, so that a yearless February 29 is valid
		if d.hasY {
			y = d.y
		}
		if d.d < 1 || d.d > daysIn(y, d.m) {
			return nil, false
		}
	}
	return d, true
}

// joined reports whether the parts so far end with a word or sign that joins
// two days or months of a range ("y", "e", "and", "a", "al", "-", ",", "/").
func joined(parts []datePart) bool {
	for i := len(parts) - 1; i >= 0; i-- {
		p := parts[i]
		if p.kind != fLit {
			return false
		}
		switch strings.ToLower(strings.TrimSpace(p.lit)) {
		case "":
			continue
		case "y", "e", "and", "a", "al", "-", ",", "/", "o", "or":
			return true
		}
		return false
	}
	return false
}

// year2 reads a two-digit year with a pivot: 00-30 are 2000s, others 1900s.
func year2(v int) int {
	if v <= 30 {
		return 2000 + v
	}
	return 1900 + v
}

func daysIn(y, m int) int {
	return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// sameSeparators reports whether the numbers at parts idx are separated by one
// and the same character among / - . (so "12/12/2016" is a numeric date but
// "12 12 2016" and "1/12-2017" are not).
func sameSeparators(parts []datePart, idx ...int) bool {
	sep := ""
	for k := 1; k < len(idx); k++ {
		if idx[k] != idx[k-1]+2 {
			return false
		}
		s := parts[idx[k-1]+1].lit
		if s != "/" && s != "-" && s != "." || sep != "" && s != sep {
			return false
		}
		sep = s
	}
	return true
}

// anchor is the day a date stands for when shifted: partial dates take the
// middle of what they name, so that each moves by the patient's shift at its
// own precision.
func (d *date) anchor() time.Time {
	y, m, day := 2000, 6, 15
	if d.hasY {
		y = d.y
		if d.hasDecade {
			y += 5
		}
	}
	switch {
	case d.hasM && d.hasD:
		m, day = d.m, d.d
	case d.hasM:
		m = d.m
	case d.hasSeason:
		m = []int{1, 4, 7, 10}[d.season]
	case d.hasY:
		m, day = 7, 2
	}
	return time.Date(y, time.Month(m), day, 12, 0, 0, 0, time.UTC)
}

// shifted writes the date moved by days in its own format.
func (d *date) shifted(days int) string {
	t := d.anchor().AddDate(0, 0, days)
	var b strings.Builder
	for i, p := range d.parts {
		switch p.kind {
		case fLit:
			b.WriteString(p.lit)
		case fDay:
			writeNum(&b, t.AddDate(0, 0, p.delta).Day(), p.pad)
		case fMonth:
			writeNum(&b, int(t.Month()), p.pad)
		case fYear:
			fmt.Fprintf(&b, "%04d", t.Year())
		case fYear2:
			fmt.Fprintf(&b, "%02d", t.Year()%100)
		case fDecade:
			fmt.Fprintf(&b, "%04d", t.Year()/10*10)
		case fDecade2:
			fmt.Fprintf(&b, "%02d", t.Year()/10*10%100)
		case fMonthName:
			m := ((int(t.Month())-1+p.delta)%12 + 12) % 12
			b.WriteString(word(monthNames[p.lang][m], p))
		case fWeekday:
			wd := int(t.Weekday())
			if !d.hasM || !d.hasD { // a weekday alone moves with the shift
				wd = ((d.wd+days)%7 + 7) % 7
			}
			b.WriteString(word(weekdayNames[p.lang][wd], p))
		case fSeason:
			b.WriteString(word(seasonNames[p.lang][(int(t.Month())%12)/3], p))
		case fOrdinal:
			day := t.Day()
			if i > 0 && d.parts[i-1].kind != fDay {
				day = 0
			}
			b.WriteString(withCase(ordinal(day), p.lc))
		}
	}
	return b.String()
}

func writeNum(b *strings.Builder, v int, pad bool) {
	if pad && v < 10 {
		b.WriteByte('0')
	}
	b.WriteString(strconv.Itoa(v))
}

// word writes a month, weekday or season name as the original was written:
// abbreviated to as many letters, in its letter case.
func word(name string, p datePart) string {
	if p.abbr > 0 {
		r := []rune(name)
		if p.abbr < len(r) {
			name = string(r[:p.abbr])
		}
	}
	if p.lc == caseTitle {
		r := []rune(strings.ToLower(name))
		r[0] = unicode.ToUpper(r[0])
		return string(r)
	}
	return withCase(name, p.lc)
}

func ordinal(day int) string {
	switch {
	case day%100 >= 11 && day%100 <= 13:
		return "th"
	case day%10 == 1:
		return "st"
	case day%10 == 2:
		return "nd"
	case day%10 == 3:
		return "rd"
	}
	return "th"
}

// pattern names a date's format for Deleger's shuffle: dates of one pattern
// replace each other ("D/M/Y", "Month D", ...).
func (d *date) pattern() string {
	var b strings.Builder
	for _, p := range d.parts {
		switch p.kind {
		case fLit:
			if isDigits(p.lit) {
				b.WriteString("9")
			} else {
				b.WriteString(fold(p.lit))
			}
		default:
			fmt.Fprintf(&b, "<%d:%d:%v>", p.kind, p.abbr, p.pad)
		}
	}
	return b.String()
}

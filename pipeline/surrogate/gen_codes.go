package surrogate

import (
	"math"
	"strconv"
	"strings"
	"unicode"
)

// collegiatePrefix splits a Spanish collegiate number ("28 28 17103",
// "08-08-25574") into its two leading province numbers (01-52: the college's
// province, then the province of the first registration), which say where,
// not who, and are kept, and its number, which shape redraws. A number drawn
// whole would give its kind away: "16 59 44561" names no province.
func collegiatePrefix(s, lang string) (prefix, rest string, ok bool) {
	if lang != "es" || len(s) < 9 {
		return "", "", false
	}
	province := func(d string) bool { n, err := strconv.Atoi(d); return err == nil && isDigits(d) && n >= 1 && n <= 52 }
	sep := s[2]
	if (sep != ' ' && sep != '-') || s[5] != sep || !province(s[:2]) || !province(s[3:5]) || !isDigits(s[6:]) || len(s)-6 < 3 {
		return "", "", false
	}
	return s[:6], s[6:], true
}

// insurancePrefix splits a Spanish social security number ("28 12345678
// 40", "08/76457156/14") into its province of affiliation (01-52) and the
// rest.
func insurancePrefix(s, lang string) (prefix, rest string, ok bool) {
	if lang != "es" || len(s) != 14 || (s[2] != ' ' && s[2] != '/') || s[11] != s[2] || !isDigits(s[:2]) {
		return "", "", false
	}
	if n, _ := strconv.Atoi(s[:2]); n < 1 || n > 52 || !isDigits(s[3:11]) || !isDigits(s[12:]) {
		return "", "", false
	}
	return s[:3], s[3:], true
}

// provincePrefix writes the province numbers of a collegiate or social
// security number's prefix ("29 29 ") as those of the surrogates of the
// patient's towns in those provinces ("36 36 " when Málaga became Vigo): one
// place across a note. A province no town of the patient's lies in stays.
func (g *gen) provincePrefix(pre string) string {
	b := []byte(pre)
	for i := 0; i+2 <= len(b); i += 3 {
		if p, ok := g.surrogateProvince(string(b[i : i+2])); ok {
			copy(b[i:], p)
		}
	}
	return string(b)
}

// surrogateProvince returns the province number of the surrogate of the
// patient's first listed town of province d.
func (g *gen) surrogateProvince(d string) (string, bool) {
	if g.inCityOf {
		return "", false
	}
	for _, a := range g.patientCities() {
		p, ok := g.e.res.PlaceOfCity(a.Text)
		if !ok || len(p.ZIPs) == 0 || !strings.HasPrefix(p.ZIPs[0], d) {
			continue
		}
		if sp, ok := g.surrogatePlace(a); ok && len(sp.ZIPs) > 0 && len(sp.ZIPs[0]) >= 2 && isDigits(sp.ZIPs[0][:2]) {
			return sp.ZIPs[0][:2], true
		}
	}
	return "", false
}

// codeStrategy are the strategies that rewrite a value's codes (digits and
// short letter codes) and keep its words.
var codeStrategy = map[string]bool{Shape: true, Phone: true, SSN: true}

// wordsOnly reports whether a strategy that rewrites codes, addresses or
// links meets a value without any: words it would have to make letter soup of.
func wordsOnly(strategy, v string) bool {
	switch {
	case codeStrategy[strategy]:
		return !hasCode(v)
	case strategy == Email:
		return !strings.Contains(v, "@") && !hasCode(v)
	case strategy == URL:
		return !strings.Contains(v, ".") && !strings.Contains(v, "/") && !hasCode(v)
	}
	return false
}

// hasCode reports whether a value holds something shape replaces: a digit,
// or a letter code.
func hasCode(s string) bool {
	for _, t := range codeTokens(s) {
		if t.code {
			return true
		}
	}
	return false
}

// codeToken is a run of letters or digits, or of anything else.
type codeToken struct {
	text string
	code bool // digits, or letters that are a code: replaced
	word bool // a run of letters
}

// codeTokens splits a value into runs and tells codes from words: a run of
// letters is a code when it is mixed with digits ("5B", "AB1234"), or is an
// upper-case run of at most three letters ("MRN", "A"); "y" is a word.
func codeTokens(s string) []codeToken {
	var out []codeToken
	rs := []rune(s)
	for i := 0; i < len(rs); {
		j := i + 1
		alnum := unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i])
		for j < len(rs) && (unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j]) || unicode.IsMark(rs[j])) == alnum {
			j++
		}
		tok := string(rs[i:j])
		t := codeToken{text: tok}
		if alnum {
			digits := strings.ContainsFunc(tok, unicode.IsDigit)
			letters := strings.ContainsFunc(tok, unicode.IsLetter)
			n := j - i
			t.word = letters && !digits
			t.code = digits || n <= 3 && strings.ToUpper(tok) == tok
		}
		out = append(out, t)
		i = j
	}
	return out
}

// shape replaces the codes of a value: digits by random digits, the first
// digit of each run not zero (Deleger et al.), code letters by random
// letters of the same case; words and punctuation stay. A Spanish DNI or NIE
// ("12345678Z", "X1234567L") gets the check letter of its new number.
func (g *gen) shape(s string) string { return g.shapeLeading(s, false) }

// houseNumber is shape for the numbers of an address (house, floor, door,
// kilometre), whose first digits run as Benford's law says, 1 six times as
// often as 9, and did so in MEDDOCAN's streets: drawn evenly, an 8 or a 9
// gave a surrogate address away.
func (g *gen) houseNumber(s string) string { return g.shapeLeading(s, true) }

// leadDigit draws the first digit of a run: 1-9 evenly, or by Benford's law.
func (g *gen) leadDigit(benford bool) byte {
	if !benford {
		return byte('1' + g.rng.IntN(9))
	}
	u := g.rng.Float64()
	for d := 1; d < 9; d++ {
		if u < math.Log10(float64(d)+1) { // P(first digit <= d)
			return byte('0' + d)
		}
	}
	return '9'
}

// shapeLeading is shape with the first digit of each run drawn by leadDigit.
func (g *gen) shapeLeading(s string, benford bool) string {
	var b strings.Builder
	for _, t := range codeTokens(s) {
		if !t.code {
			b.WriteString(t.text)
			continue
		}
		prevDigit := false
		for _, r := range t.text {
			switch {
			case r >= '0' && r <= '9':
				if prevDigit {
					b.WriteByte(byte('0' + g.rng.IntN(10)))
				} else {
					b.WriteByte(g.leadDigit(benford))
				}
				prevDigit = true
				continue
			case unicode.IsUpper(r):
				b.WriteByte(byte('A' + g.rng.IntN(26)))
			case unicode.IsLower(r):
				b.WriteByte(byte('a' + g.rng.IntN(26)))
			default:
				b.WriteRune(r)
			}
			prevDigit = false
		}
	}
	return fixDNI(s, b.String())
}

// dniLetters are the check letters of a DNI number modulo 23.
const dniLetters = "TRWAGMYFPDXBNJZSQVHLCKE"

// fixDNI gives a shaped Spanish DNI or NIE the check letter of its number
// when the original was one (8 digits, or X/Y/Z and 7 digits, then a letter,
// a hyphen or space allowed before it).
func fixDNI(orig, sur string) string {
	o, ok := dniParts(orig, true)
	if !ok {
		return sur
	}
	if o.prefix != 0 { // a NIE's X, Y or Z stays: it tells when it was issued, not whose it is
		sur = string(orig[0]) + sur[1:]
	}
	p, ok := dniParts(sur, false) // its letter is the one to compute
	if !ok || len(p.digits) != len(o.digits) {
		return sur
	}
	num := p.digits
	if p.prefix != 0 {
		num = string(rune('0'+strings.IndexByte("XYZ", p.prefix))) + num
	}
	n, err := strconv.Atoi(num)
	if err != nil {
		return sur
	}
	letter := dniLetters[n%23]
	if unicode.IsLower(rune(orig[len(orig)-1])) {
		letter += 'a' - 'A'
	}
	return sur[:len(sur)-1] + string(letter)
}

type dni struct {
	prefix byte // X, Y or Z for a NIE
	digits string
}

// dniParts reads a DNI or NIE; checked requires its letter to be a check letter.
func dniParts(s string, checked bool) (dni, bool) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if t != s && strings.ToLower(strings.TrimSpace(s)) != s || len(t) < 9 {
		return dni{}, false
	}
	last := t[len(t)-1]
	if last < 'A' || last > 'Z' || checked && !strings.ContainsRune(dniLetters, rune(last)) {
		return dni{}, false
	}
	body := strings.TrimRight(t[:len(t)-1], " -")
	var d dni
	if body != "" && strings.IndexByte("XYZ", body[0]) >= 0 {
		d.prefix, body = body[0], body[1:]
	}
	if !isDigits(body) || d.prefix == 0 && len(body) != 8 || d.prefix != 0 && len(body) != 7 {
		return dni{}, false
	}
	d.digits = body
	return d, true
}

// phone keeps the number's format; a ten-digit (or 1 + ten-digit) number gets
// a real US area code and an exchange not starting with 0 or 1 (Deleger et
// al.); a Spanish number (nine digits, after +34 or 0034) keeps its first
// digit, which tells a landline (9), a mobile (6, 7) or a service (8).
// Words ("ext") stay.
func (g *gen) phone(s string) string {
	var digits []int // byte positions of digits
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			digits = append(digits, i)
		}
	}
	out := []byte(s)
	for k, i := range digits {
		if k == 0 || s[i-1] < '0' || s[i-1] > '9' {
			out[i] = byte('1' + g.rng.IntN(9))
		} else {
			out[i] = byte('0' + g.rng.IntN(10))
		}
	}
	n := len(digits)
	if g.e.lang == "es" {
		start := 0
		switch {
		case n >= 11 && strings.HasPrefix(digitsOf(s), "34"):
			start = 2
		case n >= 13 && strings.HasPrefix(digitsOf(s), "0034"):
			start = 4
		}
		for k := 0; k < start; k++ {
			out[digits[k]] = s[digits[k]]
		}
		if start < n && strings.IndexByte("6789", s[digits[start]]) >= 0 {
			out[digits[start]] = s[digits[start]]
		}
		return string(out)
	}
	start := -1
	if n == 10 {
		start = 0
	} else if n == 11 && s[digits[0]] == '1' {
		out[digits[0]] = '1'
		start = 1
	}
	if start >= 0 {
		codes := g.e.res.AreaCodes()
		ac := codes[g.rng.IntN(len(codes))]
		for k := 0; k < 3; k++ {
			out[digits[start+k]] = ac[k]
		}
		out[digits[start+3]] = byte('2' + g.rng.IntN(8))
	}
	return string(out)
}

func digitsOf(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

// ip draws an address of the same family: four octets 1-254, or the shape of
// an IPv6 address with hexadecimal letters.
func (g *gen) ip(s string) string {
	if parts := strings.Split(s, "."); len(parts) == 4 {
		for i := range parts {
			parts[i] = strconv.Itoa(1 + g.rng.IntN(254))
		}
		return strings.Join(parts, ".")
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= '0' && r <= '9':
			return rune('0' + g.rng.IntN(10))
		case r >= 'a' && r <= 'f':
			return rune('a' + g.rng.IntN(6))
		case r >= 'A' && r <= 'F':
			return rune('A' + g.rng.IntN(6))
		}
		return r
	}, s)
}

// ssn keeps the format with an area number SSA could issue (001-899, not 666).
func (g *gen) ssn(s string) string {
	out := g.shape(s)
	var pos []int
	for i := 0; i < len(out) && len(pos) < 3; i++ {
		if out[i] >= '0' && out[i] <= '9' {
			pos = append(pos, i)
		}
	}
	if len(pos) == 3 {
		b := []byte(out)
		b[pos[0]] = byte('1' + g.rng.IntN(8))
		if b[pos[0]] == '6' && b[pos[1]] == '6' && b[pos[2]] == '6' {
			b[pos[2]] = '5'
		}
		out = string(b)
	}
	return out
}

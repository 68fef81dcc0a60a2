package tagger

import (
	"regexp"
	"strings"
)

// template is one regular-expression template of Yang & Garibaldi's Table 2,
// widened to the Spanish of MEDDOCAN. A template is first a feature: the CRF
// learns how far to trust it for each label. Those whose training matches
// are almost always gold spans of one type also become trusted patterns in
// post-processing (bindTemplates).
//
// Templates are tried anchored at the tokens that can start a match rather
// than scanned over the whole text: most need a digit first, and scanning
// every template over every byte cost half the tagging time.
type template struct {
	Name     string
	anchored *regexp.Regexp
	// start tells whether a match can begin at a token: w is the token, rest
	// the text the match may cover (from the token to the end of its line,
	// templateReach bytes at most, or to the next character boundary past
	// them). It must hold wherever the pattern matches; it only saves trying
	// the pattern where it cannot.
	start func(w, rest string) bool
	gate  string // the document must contain this, if set
}

func newTemplate(name, pattern string, start func(w, rest string) bool, gate string) template {
	return template{Name: name, anchored: regexp.MustCompile(`^(?:` + pattern + `)`), start: start, gate: gate}
}

const (
	monthsRe = `(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|jun(?:e)?|jul(?:y)?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|` +
		`ene(?:ro)?|febrero|marzo|abr(?:il)?|mayo|junio|julio|ago(?:sto)?|sep(?:tiembre)?|set(?:iembre)?|oct(?:ubre)?|nov(?:iembre)?|dic(?:iembre)?)`
	emailPattern = `[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+`
	urlPattern   = `(?i)\b(?:https?://|www\.)[^\s<>"]+[^\s<>".,;:)]`
	ipPattern    = `\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\b`
	ssnPattern   = `\b\d{3}-\d{2}-\d{4}\b`
)

// dateNumPattern is a numeric date with one separator throughout and
// plausible day and month numbers (either order), so that dosing schedules
// ("10-0-10") and scores ("2-3/10") are not dates.
var dateNumPattern = func() string {
	dm := `(?:0?[1-9]|[12]\d|3[01])`
	var alts []string
	for _, sep := range []string{"/", "-", `\.`} {
		alts = append(alts, dm+sep+dm+sep+`(?:\d{4}|\d{2})`)
	}
	return `(?:` + strings.Join(alts, "|") + `)\b`
}()

func digitStart(w, _ string) bool { return leadingDigit(w) }

func leadingDigit(w string) bool { return w != "" && '0' <= w[0] && w[0] <= '9' }

// mixedStart: the text goes on from the token with a run of ASCII letters
// followed by a digit, or of digits followed by an ASCII letter, as an
// identifier mixing the two must (USERNAME, MRN_ALNUM, ID_MIXED).
func mixedStart(_, rest string) bool {
	letter := func(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }
	digit := func(c byte) bool { return '0' <= c && c <= '9' }
	i := 0
	for i < len(rest) && letter(rest[i]) {
		i++
	}
	if i > 0 {
		return i < len(rest) && digit(rest[i])
	}
	for i < len(rest) && digit(rest[i]) {
		i++
	}
	return i > 0 && i < len(rest) && letter(rest[i])
}

// emailStart: an address's '@' lies ahead on the line.
func emailStart(w, rest string) bool { return isWordy(w) && strings.IndexByte(rest, '@') >= 0 }

func monthOrDigitStart(w, _ string) bool {
	if leadingDigit(w) {
		return true
	}
	if len(w) < 3 {
		return false
	}
	return monthPrefixes[strings.ToLower(w[:3])]
}

var monthPrefixes = map[string]bool{}

func init() {
	for _, p := range strings.Fields("jan feb mar apr may jun jul aug sep oct nov dec ene abr ago dic set") {
		monthPrefixes[p] = true
	}
}

// templates are tried at every token their start function admits; every
// token a match covers gets the feature.
var templates = []template{
	newTemplate("DATE_ISO", `\d{4}-\d{1,2}-\d{1,2}\b`, digitStart, ""),
	newTemplate("DATE_NUM", dateNumPattern, digitStart, ""),
	newTemplate("DATE_MY", `\d{1,2}/(?:\d{4}|\d{2})\b`, digitStart, ""),
	newTemplate("DATE_TEXT", `(?i)(?:\d{1,2}(?:\s*de)?[\s.-]*)?`+monthsRe+`\.?(?:[\s,.-]*(?:de|del|of)?\s*'?(?:\d{4}|\d{2}))?\b`, monthOrDigitStart, ""),
	// A month with its year ("enero 2001", "abril de 2002", "sep-04"): as a
	// trusted template it catches the dates written in words the CRF misses.
	newTemplate("DATE_MY_TEXT", `(?i)`+monthsRe+`\.?[\s,.-]*(?:de|del|of)?\s*'?(?:\d{4}|\d{2})\b`, monthOrDigitStart, ""),
	newTemplate("YEAR", `(?:19|20)\d{2}\b`, digitStart, ""),
	newTemplate("DECADE", `(?:\d{2}|\d{4})\s?'?s\b`, digitStart, ""),
	newTemplate("AGE", `(?i)\d{1,3}\s*(?:-\s*)?(?:años|año|a\.|yo|y/o|y\.o\.?|ym|years?(?:[- ]old)?|yrs?(?:[- ]old)?|meses|mes|months?|mos|semanas|weeks?|días|days?)\b`, digitStart, ""),
	newTemplate("USERNAME", `[A-Za-z]{2,3}\d{1,3}\b`, mixedStart, ""),
	newTemplate("PHONE_US", `(?:\(\d{3}\)\s*|\d{3}[-. ])\d{3}[-. ]\d{4}\b`, func(w, _ string) bool { return leadingDigit(w) || w == "(" }, ""),
	newTemplate("PHONE_ES", `(?:\+\s?34[\s.-]?)?[6789]\d{1,2}(?:[\s.-]?\d{2,3}){2,3}\b`, func(w, _ string) bool { return leadingDigit(w) || w == "+" }, ""),
	newTemplate("MRN", `\d{6,8}\b`, digitStart, ""),
	newTemplate("MRN_ALNUM", `(?:\d{3,4}[A-Za-z]{1,2}\d{4,5}|[A-Z]{2,4}\d{3,8})\b`, mixedStart, ""),
	newTemplate("IDNUM", `\d{1,2}[- ]\d{6,8}\b`, digitStart, ""),
	newTemplate("ID_MIXED", `(?:\d+[A-Za-z]+\d*|[A-Za-z]+\d+[A-Za-z]*)\b`, mixedStart, ""),
	newTemplate("ID_SPACED", `\d{2}(?: \d{2,8}){1,3}\b`, digitStart, ""),
	// Spanish postal codes are written "E-41013" as often as "41013".
	newTemplate("ZIP", `(?:E-)?\d{5}(?:-\d{4})?\b`, func(w, _ string) bool { return leadingDigit(w) || w == "E" }, ""),
	newTemplate("EMAIL", emailPattern, emailStart, "@"),
	newTemplate("URL", urlPattern, func(w, _ string) bool {
		return strings.EqualFold(w, "www") || strings.HasPrefix(strings.ToLower(w), "http")
	}, ""),
	newTemplate("IPADDR", ipPattern, digitStart, ""),
	newTemplate("SSN", ssnPattern, digitStart, ""),
}

// templateReach bounds how far past its first token a template match may
// run.
const templateReach = 64

// Patterns shared by the templates and the rules for rare types.
var (
	emailRe = regexp.MustCompile(emailPattern)
	urlRe   = regexp.MustCompile(urlPattern)
	ipRe    = regexp.MustCompile(ipPattern)
	ssnRe   = regexp.MustCompile(ssnPattern)
)

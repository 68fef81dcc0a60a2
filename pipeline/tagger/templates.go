package tagger

import "regexp"

// template is one regular-expression template of Yang & Garibaldi's Table 2,
// widened to the Spanish of MEDDOCAN. A template is a feature, not a
// decision: the CRF learns how far to trust each one for each label.
type template struct {
	Name string
	re   *regexp.Regexp
}

const (
	monthsRe = `(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|jun(?:e)?|jul(?:y)?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|` +
		`ene(?:ro)?|febrero|marzo|abr(?:il)?|mayo|junio|julio|ago(?:sto)?|sep(?:tiembre)?|set(?:iembre)?|oct(?:ubre)?|nov(?:iembre)?|dic(?:iembre)?)`
)

// templates are matched against a document's whole text (case-insensitively
// where letters matter); every token a match covers gets the feature.
var templates = []template{
	{"DATE_ISO", regexp.MustCompile(`\b\d{4}-\d{1,2}-\d{1,2}\b`)},
	{"DATE_NUM", regexp.MustCompile(`\b\d{1,2}[-/.]\d{1,2}[-/.](?:\d{4}|\d{2})\b`)},
	{"DATE_MY", regexp.MustCompile(`\b\d{1,2}/(?:\d{4}|\d{2})\b`)},
	{"DATE_TEXT", regexp.MustCompile(`(?i)\b(?:\d{1,2}(?:\s*de)?[\s.-]*)?` + monthsRe + `\.?(?:[\s,.-]*(?:de|del|of)?\s*'?(?:\d{4}|\d{2}))?\b`)},
	{"YEAR", regexp.MustCompile(`\b(?:19|20)\d{2}\b`)},
	{"DECADE", regexp.MustCompile(`\b(?:\d{2}|\d{4})\s?'?s\b`)},
	{"AGE", regexp.MustCompile(`(?i)\b\d{1,3}\s*(?:-\s*)?(?:años|año|a\.|yo|y/o|y\.o\.?|ym|years?(?:[- ]old)?|yrs?(?:[- ]old)?|meses|mes|months?|mos|semanas|weeks?|días|days?)\b`)},
	{"USERNAME", regexp.MustCompile(`\b[A-Za-z]{2,3}\d{1,3}\b`)},
	{"PHONE_US", regexp.MustCompile(`(?:\(\d{3}\)\s*|\b\d{3}[-. ])\d{3}[-. ]\d{4}\b`)},
	{"PHONE_ES", regexp.MustCompile(`(?:\+\s?34[\s.-]?|\b)[6789]\d{1,2}(?:[\s.-]?\d{2,3}){2,3}\b`)},
	{"MRN", regexp.MustCompile(`\b\d{6,8}\b`)},
	{"MRN_ALNUM", regexp.MustCompile(`\b(?:\d{3,4}[A-Za-z]{1,2}\d{4,5}|[A-Z]{2,4}\d{3,8})\b`)},
	{"IDNUM", regexp.MustCompile(`\b\d{1,2}[- ]\d{6,8}\b`)},
	{"ID_MIXED", regexp.MustCompile(`\b(?:\d+[A-Za-z]+\d*|[A-Za-z]+\d+[A-Za-z]*)\b`)},
	{"ID_SPACED", regexp.MustCompile(`\b\d{2}(?: \d{2,8}){1,3}\b`)},
	{"ZIP", regexp.MustCompile(`\b\d{5}(?:-\d{4})?\b`)},
	{"EMAIL", emailRe},
	{"URL", urlRe},
	{"IPADDR", ipRe},
	{"SSN", ssnRe},
}

// Patterns shared by the templates and the rules for rare types.
var (
	emailRe = regexp.MustCompile(`[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+`)
	urlRe   = regexp.MustCompile(`(?i)\b(?:https?://|www\.)[^\s<>"]+[^\s<>".,;:)]`)
	ipRe    = regexp.MustCompile(`\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\b`)
	ssnRe   = regexp.MustCompile(`\b\d{3}-\d{2}-\d{4}\b`)
)

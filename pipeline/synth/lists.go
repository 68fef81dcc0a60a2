package synth

import (
	_ "embed"
	"strings"
)

// The name and place lists are small samples of public data (see
// data/NOTICE); the full surrogate resources live in pipeline/resources.
var (
	//go:embed data/first_female.txt
	femaleData string
	//go:embed data/first_male.txt
	maleData string
	//go:embed data/last.txt
	lastData string
	//go:embed data/hospitals.txt
	hospitalData string
	//go:embed data/places.tsv
	placeData string

	femaleNames = lines(femaleData)
	maleNames   = lines(maleData)
	lastNames   = lines(lastData)
	hospitals   = lines(hospitalData)
	places      = parsePlaces(placeData)
)

type place struct{ city, state, zip string }

func lines(s string) []string { return strings.Split(strings.TrimSpace(s), "\n") }

func parsePlaces(s string) []place {
	var out []place
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		f := strings.Split(l, "\t")
		out = append(out, place{f[0], f[1], f[2]})
	}
	return out
}

package strictjson

import (
	"strings"
	"testing"
)

type inner struct {
	MaxIterations int     `json:"max_iterations"`
	L2            float64 `json:"l2"`
	Name          string  `json:"name"`
}

type Common struct {
	Language string `json:"language"`
}

type config struct {
	Common
	Training inner              `json:"training"`
	Bias     map[string]float64 `json:"recall_bias,omitempty"`
	Rules    map[string]inner   `json:"rules"`
	Steps    []inner            `json:"steps"`
	Label    string
}

func TestDecodeSaysWhereAndWhat(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"training": {"iterations": 20}}`, `line 1, column 15: training.iterations: unknown field (known here: l2, max_iterations, name)`},
		{`{"training": {"max_iteration": 20}}`, `training.max_iteration: unknown field; did you mean max_iterations?`},
		{`{"rules": {"DATE": {"l3": 1}}}`, `line 1, column 21: rules.DATE.l3: unknown field; did you mean l2?`},
		{"{\"steps\": [{\"l2\": 1},\n  {\"l2\": 2, \"l3\": [1, {}]}]}", `line 2, column 13: steps[1].l3: unknown field; did you mean l2?`},
		{`{"rules": {"a.b": {}, "DATE": {"l2": 1, "x": {"l3": 0}}}}`, `line 1, column 41: rules.DATE.x: unknown field`},
		{`{"traning": {}}`, `traning: unknown field; did you mean training?`},
		{`{"Training": {"L2": 1}, "rules": {"DATE": {"nme": "x"}}}`, `rules.DATE.nme: unknown field`}, // keys match without regard to case
		{`{"languag": "es"}`, `languag: unknown field; did you mean language?`},                       // an embedded struct's fields are the struct's
		{"{\n  \"training\": {\"l2\": 1,}\n}", `line 2, column 24: invalid character '}'`},
		{`{"training": {"max_iterations": "20"}}`, `line 1, column 37: training.max_iterations: want a whole number, not a string`},
		{`{"training": {"max_iterations": 1.5}}`, `training.max_iterations: want a whole number, not the number 1.5`},
		{`{"recall_bias": 0.4}`, `recall_bias: want an object, not the number 0.4`},
		{`{"recall_bias": {"DATE": "x"}}`, `recall_bias.DATE: want a number, not a string`},
		{`{"rules": {"DATE": {"name": 3}}}`, `rules.DATE.name: want a string, not the number 3`},
		{`{"steps": [{"l2": 1}, {"l2": true}]}`, `steps[1].l2: want a number, not true`},
		{`{"training": {"scop": 1}} {}`, `training.scop: unknown field`},
		{"{} {}", `line 1, column 4: text after the end of the JSON value`},
		{"{\"training\": {\"l2\": 1}", `line 1, column 23: the text ends inside a value`},
		{"  ", `empty: want a JSON object`},
	} {
		var cfg config
		err := Decode([]byte(c.in), &cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.in, err, c.want)
		}
	}
	var cfg config
	in := "\ufeff" + `{"training": {"l2": 0.5}, "recall_bias": {"*": 1}, "Label": "x", "language": "es"}`
	if err := Decode([]byte(in), &cfg); err != nil || cfg.Training.L2 != 0.5 || cfg.Bias["*"] != 1 || cfg.Label != "x" || cfg.Language != "es" {
		t.Errorf("valid input after a byte-order mark: %+v, %v", cfg, err)
	}
}

package strictjson

import (
	"strings"
	"testing"
)

type inner struct {
	MaxIterations int     `json:"max_iterations"`
	L2            float64 `json:"l2"`
}

type config struct {
	Training inner              `json:"training"`
	Bias     map[string]float64 `json:"recall_bias,omitempty"`
	Rules    map[string]inner   `json:"rules"`
	Name     string
}

func TestDecodeSaysWhereAndWhat(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"training": {"iterations": 20}}`, `training.iterations: unknown field (known here: l2, max_iterations)`},
		{`{"training": {"max_iteration": 20}}`, `training.max_iteration: unknown field; did you mean max_iterations? (known here: l2, max_iterations)`},
		{`{"rules": {"DATE": {"l3": 1}}}`, `rules.DATE.l3: unknown field; did you mean l2?`},
		{`{"traning": {}}`, `traning: unknown field; did you mean training?`},
		{"{\n  \"training\": {\"l2\": 1,}\n}", `line 2, column 24: invalid character '}'`},
		{`{"training": {"max_iterations": "20"}}`, `training.max_iterations: want a whole number, not a string`},
		{`{"recall_bias": 0.4}`, `recall_bias: want an object, not a number`},
		{`{"training": {"max_iterations": 1.5}}`, `training.max_iterations: want a whole number, not a number 1.5`},
		{"{} {}", `line 1, column 4: text after the end of the JSON value`},
		{"  ", `empty: want a JSON object`},
	} {
		var cfg config
		err := Decode([]byte(c.in), &cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.in, err, c.want)
		}
	}
	var cfg config
	if err := Decode([]byte(`{"training": {"l2": 0.5}, "recall_bias": {"*": 1}, "Name": "x"}`), &cfg); err != nil || cfg.Training.L2 != 0.5 || cfg.Bias["*"] != 1 || cfg.Name != "x" {
		t.Errorf("valid input: %+v, %v", cfg, err)
	}
}

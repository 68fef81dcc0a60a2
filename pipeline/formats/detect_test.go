package formats

import "testing"

func TestDetect(t *testing.T) {
	cases := []struct {
		files []File
		want  string
	}{
		{[]File{{Name: "a/100-01.xml", Data: []byte("<deIdi2b2><TEXT>x</TEXT></deIdi2b2>")}, {Name: "README.md"}}, "i2b2"},
		{[]File{{Name: "train.xml", Data: []byte(`<ROOT><RECORD ID="1"><TEXT>x</TEXT></RECORD></ROOT>`)}}, "i2b2-2006"},
		{[]File{{Name: "1.ann"}, {Name: "1.txt"}, {Name: "x.xml", Data: []byte("<a/>")}}, "brat"},
		{[]File{{Name: "cdm.zip:NOTE.csv"}, {Name: "cdm.zip:NOTE_NLP.csv"}, {Name: "cdm.zip:person.csv"}}, "omop"},
		{[]File{{Name: "notes.csv"}}, "csv"},
		{[]File{{Name: "id.text"}, {Name: "id.phi"}}, "physionet"},
	}
	for _, c := range cases {
		d, ok, err := Detect(Files(c.files))
		if err != nil || !ok || d.Format != c.want {
			t.Errorf("%v: got %+v %v %v, want %s", c.files[0].Name, d, ok, err, c.want)
		}
	}
	if _, ok, err := Detect(Files([]File{{Name: "notes.pdf"}})); ok || err != nil {
		t.Errorf("a pdf was taken for a format")
	}
}

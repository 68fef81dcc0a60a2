package formats

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"deidcorpus/pipeline"
)

// With KeepGoing, Scan reads on past a bad file: every bad file is named, up
// to KeepGoing of them, and the good files' documents still reach fn; the
// function's own error still stops it at once. Without it, the first bad
// file stops the scan. Per-file formats (i2b2) and paired ones (brat) alike.
func TestScanKeepGoing(t *testing.T) {
	i2b2 := func(text, tags string) []byte {
		return []byte(`<?xml version="1.0" encoding="UTF-8" ?>` + "\n<deIdi2b2>\n<TEXT><![CDATA[" + text + "]]></TEXT>\n<TAGS>\n" +
			tags + "</TAGS>\n</deIdi2b2>\n")
	}
	good := `<DATE id="P0" start="8" end="11" text="3/4" TYPE="DATE" comment="" />` + "\n"
	cases := []struct {
		format string
		files  []File
		bad    []string // the files named, in order
	}{
		{"i2b2", []File{
			{Name: "100-01.xml", Data: i2b2("Seen on 3/4.", good)},
			{Name: "100-02.xml", Data: i2b2("Seen on 3/4.", `<DATE id="P0" start="8" end="99" text="3/4" TYPE="DATE" comment="" />`+"\n")},
			{Name: "200-01.xml", Data: i2b2("Seen on 3/4.", good)},
			{Name: "300-01.xml", Data: []byte("<deIdi2b2><TEXT>cut")},
			{Name: "400-01.xml", Data: i2b2("Seen on 3/4.", `<DATE id="P0" start="8" end="11" text="3/4" TYPE="NOPE" comment="" />`+"\n")},
		}, []string{"100-02.xml", "300-01.xml", "400-01.xml"}},
		{"brat", []File{
			{Name: "a.txt", Data: []byte("Seen on 3/4.")}, {Name: "a.ann", Data: []byte("T1\tDATE 8 11\t3/4\n")},
			{Name: "b.txt", Data: []byte("Seen on 3/4.")}, {Name: "b.ann", Data: []byte("T1\tDATE 8 x\t3/4\n")},
			{Name: "c.txt", Data: []byte("Seen on 3/4.")}, {Name: "c.ann", Data: []byte("T1\tDATE 8 11\t3/4\n")},
			{Name: "d.ann", Data: []byte("T1\tDATE 8 11\t3/4\n")},
			{Name: "e.txt", Data: []byte("Seen on 3/4.")}, {Name: "e.ann", Data: []byte("T1\tNOPE 8 11\t3/4\n")},
		}, []string{"b.ann", "e.ann", "d.ann"}}, // the unpaired file is found at the end
	}
	for _, c := range cases {
		f, err := Lookup(c.format)
		if err != nil {
			t.Fatal(err)
		}
		for _, keep := range []int{0, 2, 20} {
			opt := i2b2Labels
			opt.KeepGoing = keep
			var ids []string
			err := f.Scan(Files(c.files), opt, func(d pipeline.Document) error {
				ids = append(ids, d.ID)
				return nil
			})
			want := c.bad
			if keep < len(c.bad) {
				want = c.bad[:max(keep, 1)]
			}
			if err == nil {
				t.Fatalf("%s, keep going %d: no error", c.format, keep)
			}
			var named []string
			for _, l := range strings.Split(err.Error(), "\n") {
				for _, b := range c.bad {
					if strings.HasPrefix(l, b+":") {
						named = append(named, b)
					}
				}
			}
			if !slices.Equal(named, want) {
				t.Errorf("%s, keep going %d: files named %v, want %v:\n%v", c.format, keep, named, want, err)
			}
			var fe *Error
			if !errors.As(err, &fe) || fe.File != want[0] {
				t.Errorf("%s, keep going %d: the first error is no *Error of %s: %v", c.format, keep, want[0], err)
			}
			if keep == 20 && !strings.HasPrefix(err.Error(), "3 files with errors:\n") {
				t.Errorf("%s: %q", c.format, err)
			}
			if keep == 2 && !strings.HasPrefix(err.Error(), "the first 2 files with errors (reading stopped there: fix them and run again to see any more):\n") {
				t.Errorf("%s: %q", c.format, err)
			}
			if keep == 20 && len(ids) != 2 {
				t.Errorf("%s: the good files' documents %v, want 2", c.format, ids)
			}
		}
		// The function's error stops the scan at once, whatever KeepGoing says.
		stop := errors.New("stop")
		opt := i2b2Labels
		opt.KeepGoing = 20
		calls := 0
		err = f.Scan(Files(c.files), opt, func(pipeline.Document) error { calls++; return stop })
		if err != stop || calls != 1 {
			t.Errorf("%s: fn's error: %v after %d calls", c.format, err, calls)
		}
	}
}

// Files that share a problem are one line: the problem, how many files and
// the first three; a problem of one file alone stays its own line.
func TestScanGroupsProblems(t *testing.T) {
	doc := func(typ string) []byte {
		return []byte(`<?xml version="1.0" encoding="UTF-8" ?>` + "\n<deIdi2b2>\n<TEXT><![CDATA[Seen on 3/4.]]></TEXT>\n<TAGS>\n" +
			`<DATE id="P0" start="8" end="11" text="3/4" TYPE="` + typ + `" comment="" />` + "\n</TAGS>\n</deIdi2b2>\n")
	}
	var files []File
	for i := range 6 {
		files = append(files, File{Name: fmt.Sprintf("%d-01.xml", 100+i), Data: doc("NOPE")})
	}
	files = append(files, File{Name: "200-01.xml", Data: doc("DAET")})
	f, err := Lookup("i2b2")
	require.NoError(t, err)
	opt := i2b2Labels
	opt.KeepGoing = 20
	err = f.Scan(Files(files), opt, func(pipeline.Document) error { return nil })
	require.Error(t, err)
	lines := strings.Split(err.Error(), "\n")
	require.Len(t, lines, 3, err.Error())
	assert.Equal(t, "7 files with errors:", lines[0])
	assert.True(t, strings.HasPrefix(lines[1], `unknown type "NOPE" in tag set i2b2-2014`), lines[1])
	assert.True(t, strings.HasSuffix(lines[1], "(6 files: 100-01.xml:5, 101-01.xml:5, 102-01.xml:5 and 3 more)"), lines[1])
	assert.True(t, strings.HasPrefix(lines[2], `200-01.xml:5: tag P0 (DATE/DAET): unknown type "DAET"`), lines[2])
	var fe *Error
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "100-01.xml", fe.File)
}

// problem is a Problem: its detail differs from file to file.
type problem string

func (p problem) Error() string   { return "type " + string(p) + " is another set's" }
func (p problem) Problem() string { return "types of another set" }
func (p problem) Detail() string  { return string(p) }

// Errors of one Problem are one line that lists their details once each.
func TestScanErrorsListDetails(t *testing.T) {
	e := &scanErrors{head: "4 files with errors:", errs: []error{
		&Error{File: "a.ann", Line: 1, Err: problem("CALLE")}, &Error{File: "b.ann", Line: 2, Err: problem("PAIS")},
		&Error{File: "c.ann", Line: 1, Err: problem("CALLE")}, &Error{File: "d.ann", Line: 3, Err: problem("FECHAS")},
	}}
	assert.Equal(t, "4 files with errors:\ntypes of another set: CALLE, PAIS, FECHAS (4 files: a.ann:1, b.ann:2, c.ann:1 and 1 more)", e.Error())
}

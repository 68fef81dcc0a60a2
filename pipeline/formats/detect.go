package formats

import (
	"bytes"
	"io"
	"path"
	"slices"
	"strings"
)

// Detected is the format Detect chose, and what it saw.
type Detected struct {
	Format string
	// Files counts the files that chose it; Exts are their extensions.
	Files int
	Exts  []string
}

// Detect says which format reads the files of src, for an import that names
// none: the one that reads most of them (an OMOP NOTE table by its name,
// i2b2 2006 XML, whose root holds RECORDs, by a look at the first XML file's
// beginning). ok is false when no file is one a format reads.
func Detect(src Source) (Detected, bool, error) {
	counts := map[string]*Detected{}
	var order []string // of first appearance, for ties
	xml := ""          // the format of the XML files, once one was looked at
	err := src(func(f File) error {
		name := formatOf(f.Name)
		if name == "i2b2" {
			if xml == "" {
				xml = xmlFlavour(f)
			}
			name = xml
		}
		if name == "" {
			return nil
		}
		d := counts[name]
		if d == nil {
			d = &Detected{Format: name}
			counts[name] = d
			order = append(order, name)
		}
		d.Files++
		if ext := strings.ToLower(path.Ext(f.Name)); !slices.Contains(d.Exts, ext) {
			d.Exts = append(d.Exts, ext)
		}
		return nil
	})
	if err != nil || len(order) == 0 {
		return Detected{}, false, err
	}
	best := counts[order[0]]
	for _, name := range order[1:] {
		if counts[name].Files > best.Files {
			best = counts[name]
		}
	}
	return *best, true, nil
}

// formatOf is the format a file of the name is taken for, "" for none:
// brat for .txt (a note without annotations) as for .ann, MIMIC's
// placeholders being rarer than plain notes.
func formatOf(name string) string {
	if omopTable(name) != "" {
		return "omop"
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".xml":
		return "i2b2"
	case ".txt", ".ann":
		return "brat"
	case ".csv":
		return "csv"
	case ".jsonl", ".ndjson":
		return "jsonl"
	case ".conll", ".bio":
		return "conll"
	case ".text", ".deid", ".phi", ".phrase":
		return "physionet"
	}
	return ""
}

// xmlFlavour tells i2b2 2006 XML (<ROOT><RECORD ID=...>) from i2b2 2014's
// by the file's first KiB. A file that cannot be read is taken for i2b2
// 2014's: reading it again, the import names what is wrong with it (over
// its limit, damaged).
func xmlFlavour(f File) string {
	r, err := f.reader()
	if err != nil {
		return "i2b2"
	}
	defer r.Close()
	head := make([]byte, 1024)
	n, _ := io.ReadFull(r, head)
	if bytes.Contains(head[:n], []byte("<RECORD")) {
		return "i2b2-2006"
	}
	return "i2b2"
}

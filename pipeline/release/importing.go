package release

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"strings"

	"deidcorpus/pipeline/formats"
)

// What an import reads of the release archives among its files (or unzipped
// ones): the format and tag set their release.json files name, and the
// splits they give their documents. Nothing here needs a database.

// Member is a file's name within the archive or directory it was read from
// ("notes.zip:release.json" -> "release.json").
func Member(name string) string { return name[strings.LastIndex(name, ":")+1:] }

// OwnFile reports whether a file, by its name, is one of a release archive's
// own files (in it, or in its unzipped folder, whose files are named by their
// paths): not a note.
func OwnFile(name string) bool {
	switch path.Base(Member(name)) {
	case ManifestFile, DatasheetFile, MetaFile:
		return true
	}
	return false
}

// Stated is what the release.json files read so far say of one field, and
// the first that said it; one that says nothing agrees with any.
type Stated struct{ Value, From string }

func (s *Stated) add(where, value, field string) error {
	switch {
	case value == "" || value == s.Value:
	case s.Value == "":
		s.Value, s.From = value, where
	default:
		return fmt.Errorf("%s is a release in %s %s and %s one in %s %s: import them one at a time, or give the %s",
			s.From, field, s.Value, where, field, value, field)
	}
	return nil
}

// Defaults are what the release.json files of an input say of the fields an
// import may leave out.
type Defaults struct{ Format, TagSet Stated }

// ReadDefaults reads the format (if format) and the tag set (if tagSet) the
// release.json files of src name. It reads the names of src's files and the
// head of each release.json, not its documents. A release.json that is no
// release's (no name or version, or not readable as one) is passed over: it
// gives the splits or fails the import only where Splits reads it. Two
// releases that disagree are an error, and so is a format no reader knows:
// the caller must say it.
func ReadDefaults(src formats.Source, format, tagSet bool) (Defaults, error) {
	var d Defaults
	err := src(func(f formats.File) error {
		if Member(f.Name) != MetaFile {
			return nil
		}
		m, err := readHead(f)
		if err != nil || m.Name == "" || m.Version == "" {
			return nil
		}
		where := cmp.Or(f.Path, f.Name)
		if format {
			if err := d.Format.add(where, m.Format, "format"); err != nil {
				return err
			}
		}
		if tagSet {
			if err := d.TagSet.add(where, m.TagSet, "tag set"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Defaults{}, err
	}
	if d.Format.Value != "" {
		if _, err := formats.Lookup(d.Format.Value); err != nil {
			return Defaults{}, fmt.Errorf("%s: format: %v: give the files' format", d.Format.From, err)
		}
	}
	return d, nil
}

// readHead reads a release.json's fields up to its manifest's documents.
func readHead(f formats.File) (Meta, error) {
	rc, err := f.Open()
	if err != nil {
		return Meta{}, err
	}
	defer rc.Close()
	stop := errors.New("stop")
	m, _, err := ReadMeta(rc, func(Entry) error { return stop })
	if err == stop {
		err = nil
	}
	return m, err
}

// Splits are the splits a release archive's release.json gives its
// documents (no i2b2, brat or MIMIC file can), by the id the archive's files
// give each back (its archive_id, else its id): an archive of a release
// imports with the splits it was released with. An id two entries give
// different splits keeps none.
type Splits struct {
	split map[string]string
	read  map[string]bool // the release.json files read, each once
	valid func(split string) error
}

// NewSplits returns Splits that refuse a split valid refuses.
func NewSplits(valid func(split string) error) *Splits {
	return &Splits{split: map[string]string{}, read: map[string]bool{}, valid: valid}
}

// Watch passes src's files on, and reads each release.json at the top of an
// archive or directory as it goes by, an entry at a time (ReadMeta). An
// import's first pass meets it (an archive holds it after the documents);
// the splits apply in the second. One that lists no release's documents
// changes nothing.
func (r *Splits) Watch(src formats.Source) formats.Source {
	return func(yield func(formats.File) error) error {
		return src(func(f formats.File) error {
			if Member(f.Name) == MetaFile && !r.read[f.Name] {
				r.read[f.Name] = true
				rc, err := f.Open()
				if err != nil {
					return err
				}
				defer rc.Close()
				_, _, err = ReadMeta(rc, func(e Entry) error {
					if err := r.valid(e.Split); err != nil {
						return fmt.Errorf("document %s: split: %w", e.ID, err)
					}
					id := cmp.Or(e.ArchiveID, e.ID)
					if prev, ok := r.split[id]; ok && prev != e.Split {
						e.Split = ""
					}
					r.split[id] = e.Split
					return nil
				})
				if err != nil {
					return &formats.Error{File: f.Name, Err: err}
				}
			}
			return yield(f)
		})
	}
}

// Of is the split release.json gave a document, "" for none.
func (r *Splits) Of(id string) string { return r.split[id] }

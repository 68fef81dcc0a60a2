package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"deidcorpus/apperr"
	"deidcorpus/auth"
	"deidcorpus/ent"
	"deidcorpus/internal/zipindex"
	"deidcorpus/pipeline/formats"
	"deidcorpus/pipeline/release"
	"deidcorpus/store"
)

func init() {
	register(&command{
		name:    "release",
		summary: "versioned, verifiable corpus releases: create, list, diff, export, verify",
		subs: []*command{{
			name:    "create",
			summary: "freeze a corpus's documents and annotation sets into an immutable release",
			args:    "--corpus NAME --name NAME --version X.Y.Z [--set gold] [--parent NAME@VERSION] [--share [--accept-unannotated REASON]] [--pseudonymous-ids] [--description TEXT]",
			examples: []string{
				"deidcorpus release create --corpus demo-twin --name notes --version 1.0.0 --share",
				"deidcorpus release create --corpus notes-r --name notes --version 1.1.0 --parent notes@1.0.0 --set gold,adjudicated",
			},
			setup: setupReleaseCreate,
		}, {
			name:     "list",
			summary:  "list the releases",
			examples: []string{"deidcorpus release list"},
			setup:    setupReleaseList,
		}, {
			name:    "diff",
			summary: "documents added, removed and changed, spans added, removed and relabelled between two releases",
			args:    "NAME@VERSION NAME@VERSION [--json]",
			examples: []string{
				"deidcorpus release diff notes@1.0.0 notes@1.1.0",
				"deidcorpus release diff notes@1.0.0 notes@1.1.0 --json",
			},
			setup: setupReleaseDiff,
		}, {
			name:    "export",
			summary: "write a release as a .zip archive with its MANIFEST and DATASHEET.md",
			args:    "[--release] NAME@VERSION [--format i2b2] --out FILE.zip",
			examples: []string{
				"deidcorpus release export --release notes@1.0.0 --out notes-1.0.0.zip",
				"deidcorpus release export --release notes@1.0.0 --format jsonl --out notes-1.0.0-jsonl.zip",
			},
			setup: setupReleaseExport,
		}, {
			name:     "verify",
			summary:  "recompute every hash of release archives (or their unzipped folders), without a database; fails on any change",
			args:     "ARCHIVE.zip|FOLDER...",
			examples: []string{"deidcorpus release verify notes-1.0.0.zip"},
			setup:    setupReleaseVerify,
		}},
	})
}

func setupReleaseCreate(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	corpus := fs.String("corpus", "", "the corpus to freeze (required)")
	name := fs.String("name", "", "the release's name (required)")
	ver := fs.String("version", "", "its semantic version, MAJOR.MINOR.PATCH (required)")
	sets := listFlag{}
	fs.Var(&sets, "set", "annotation `SET` to include; repeat it or give a comma-separated list (default gold)")
	parent := fs.String("parent", "", "name@version of the release of the same corpus this one follows")
	share := fs.Bool("share", false, "for outside sharing (surrogate text that passed its check only)")
	pseudonymous := fs.Bool("pseudonymous-ids", false, "replace the corpus's document and patient ids by keyed hashes "+
		"(the same in every version of the release's line; one that follows such a release has them too)")
	accept := fs.String("accept-unannotated", "", "with --share: why the originals the surrogate text holds where the gold has no span "+
		"(unannotated finds, read with resynth report) may be shared; kept with the release, out of its archive")
	description := fs.String("description", "", "a description for the datasheet")
	return func(ctx context.Context, args []string) error {
		if *corpus == "" || *name == "" || *ver == "" || len(args) > 0 {
			return usageErr("--corpus, --name and --version are required, and nothing else")
		}
		if *accept != "" && !*share {
			return usageErr("--accept-unannotated goes with --share: a release not shared outside needs no reason")
		}
		st, ctx, err := openStore(ctx, e, *db, "cli.release.create", map[string]any{"corpus": *corpus, "name": *name, "version": *ver,
			"parent": *parent, "share": *share, "pseudonymousIDs": *pseudonymous, "acceptUnannotated": *accept != ""})
		if err != nil {
			return err
		}
		defer st.Close()
		update, finish := progress(e.stderr, "freezing")
		r, err := st.CreateRelease(ctx, store.ReleaseOptions{Corpus: *corpus, Name: *name, Version: *ver, Sets: sets,
			Parent: *parent, Share: *share, PseudonymousIDs: *pseudonymous, AcceptUnannotated: *accept, Description: *description, By: auth.Name(ctx),
			Progress: update})
		finish()
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "released %s: %s, %s, root %s\n", release.Ref(r.Name, r.Version), counted(r.Documents, "document"), counted(r.Spans, "span"), r.RootHash)
		noteReleaseLine(ctx, e, st, r, *parent)
		return nil
	}
}

// noteReleaseLine says, after a release was made, what its line may not have
// meant: a parent shared outside whose child is not (--share is not
// inherited), or earlier versions of its name that it does not follow (no
// --parent: its datasheet names no parent). Advice that cannot be computed
// is no error: the release is made.
func noteReleaseLine(ctx context.Context, e *env, st *store.Store, r *ent.Release, parent string) {
	ref := release.Ref(r.Name, r.Version)
	if parent != "" {
		if p, err := st.ReleaseByRef(ctx, parent); err == nil && p.Share && !r.Share {
			fmt.Fprintf(e.stderr, "note: %s is shared but %s is not (--share is not inherited): no release that follows %s can be shared\n", parent, ref, ref)
		}
		return
	}
	all, err := st.Releases(ctx)
	if err != nil {
		return
	}
	latest := "" // the last of the name's other versions, in version order
	for _, o := range all {
		if o.Name == r.Name && o.Corpus == r.Corpus && o.ID != r.ID {
			latest = release.Ref(o.Name, o.Version)
		}
	}
	if latest != "" {
		fmt.Fprintf(e.stderr, "note: %s follows no release though %s was made before it (no --parent): its datasheet names no parent, "+
			"and a release cannot change\n", ref, latest)
	}
}

func setupReleaseList(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	corpus := fs.String("corpus", "", "only the releases of this corpus")
	asJSON := fs.Bool("json", false, "print the list as JSON (the root hash whole)")
	return func(ctx context.Context, args []string) error {
		if len(args) > 0 {
			return usageErr("release list takes no arguments")
		}
		st, ctx, err := openStore(ctx, e, *db, "cli.release.list", map[string]any{})
		if err != nil {
			return err
		}
		defer st.Close()
		all, err := st.Releases(ctx)
		if err != nil {
			return err
		}
		refs := map[int]string{}
		var rs []releaseRow
		for _, r := range all {
			refs[r.ID] = release.Ref(r.Name, r.Version)
		}
		for _, r := range all {
			if *corpus != "" && r.Corpus != *corpus {
				continue
			}
			row := releaseRow{Release: refs[r.ID], Corpus: r.Corpus, Sets: r.Sets, Documents: r.Documents, Spans: r.Spans,
				Share: r.Share, Root: r.RootHash, Created: r.CreatedAt.UTC().Format(time.RFC3339), CreatedBy: r.CreatedBy}
			if r.ParentID != nil {
				row.Parent = refs[*r.ParentID]
			}
			rs = append(rs, row)
		}
		if rs == nil && *corpus != "" {
			// No release of it: say so if no such corpus is known either.
			if _, err := st.CorpusByName(ctx, *corpus); err != nil {
				return err
			}
		}
		if *asJSON {
			if rs == nil {
				rs = []releaseRow{} // [], not null
			}
			return writeJSON(e.stdout, rs)
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "RELEASE\tPARENT\tCORPUS\tSETS\tDOCUMENTS\tSPANS\tSHARE\tCREATED\tROOT")
		for _, r := range rs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%v\t%s\t%s\n", r.Release, cmp.Or(r.Parent, "-"), r.Corpus, strings.Join(r.Sets, ","),
				r.Documents, r.Spans, r.Share, strings.Replace(r.Created[:16], "T", " ", 1), r.Root[:16])
		}
		return tw.Flush()
	}
}

// releaseRow is one release as release list prints it.
type releaseRow struct {
	Release   string   `json:"release"`
	Parent    string   `json:"parent,omitempty"`
	Corpus    string   `json:"corpus"`
	Sets      []string `json:"sets"`
	Documents int      `json:"documents"`
	Spans     int      `json:"spans"`
	Share     bool     `json:"share"`
	Root      string   `json:"rootHash"`
	Created   string   `json:"createdAt"`
	CreatedBy string   `json:"createdBy,omitempty"`
}

func setupReleaseDiff(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	asJSON := fs.Bool("json", false, "print the full diff as JSON")
	return func(ctx context.Context, args []string) error {
		if len(args) != 2 {
			return usageErr("release diff takes two releases: NAME@VERSION NAME@VERSION")
		}
		st, ctx, err := openStore(ctx, e, *db, "cli.release.read", map[string]any{"ref": args[0], "other": args[1]})
		if err != nil {
			return err
		}
		defer st.Close()
		d, err := st.DiffReleases(ctx, args[0], args[1])
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(d)
		}
		printDiff(e, args[0], args[1], d)
		return nil
	}
}

// releaseFormats are the formats a release archive can be written in: those
// that write the text, which the release's content hashes cover.
func releaseFormats() []string {
	var out []string
	for _, n := range formats.Names() {
		if f, _ := formats.Lookup(n); f.Write != nil && !f.RebuildsText {
			out = append(out, n)
		}
	}
	return out
}

func setupReleaseExport(e *env, fs *flag.FlagSet) action {
	db := dbFlag(fs, e)
	ref := fs.String("release", "", "the release, name@version (required)")
	format := fs.String("format", formats.Default, "the documents' format ("+strings.Join(releaseFormats(), ", ")+
		"; mimic only for a corpus of placeholder-redacted notes)")
	out := fs.String("out", "", "the archive to write, .zip (required)")
	return func(ctx context.Context, args []string) error {
		if *ref == "" && len(args) == 1 { // as diff and verify take theirs
			*ref, args = args[0], nil
		}
		if *ref == "" || *out == "" || len(args) > 0 {
			return usageErr("the release (--release or an argument, name@version) and --out are required, and nothing else")
		}
		if !strings.HasSuffix(strings.ToLower(*out), ".zip") {
			return usageErr("--out %s: a release is written as a .zip archive", *out)
		}
		if _, err := formats.Lookup(*format); err != nil { // a known one that cannot be a release's says why later
			_, err = formats.LookupAmong(*format, releaseFormats())
			return usageErr("--format: %v", err)
		}
		st, ctx, err := openStore(ctx, e, *db, "cli.release.read", map[string]any{"ref": *ref})
		if err != nil {
			return err
		}
		defer st.Close()
		// The archive is written as the release's snapshot is decoded, a
		// batch of documents at a time.
		update, finish := progress(e.stderr, "exporting")
		made, err := writeZip(*out, func(create func(string) (io.Writer, error)) error {
			return st.ExportReleaseTo(ctx, *ref, *format, create, update)
		})
		finish()
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "wrote %s (%s, MANIFEST and DATASHEET.md included)\n", *out, counted(made, "file"))
		return nil
	}
}

func setupReleaseVerify(e *env, fs *flag.FlagSet) action {
	return func(ctx context.Context, args []string) error { return verifyArchive(e, args) }
}

func printDiff(e *env, a, b string, d release.Diff) {
	fmt.Fprintf(e.stdout, "%s -> %s\n", a, b)
	fmt.Fprintf(e.stdout, "documents: %d added, %d removed, %d with changed text\n",
		len(d.DocumentsAdded), len(d.DocumentsRemoved), len(d.DocumentsChanged))
	fmt.Fprintf(e.stdout, "spans: %d added, %d removed, %d relabelled\n", len(d.SpansAdded), len(d.SpansRemoved), len(d.SpansRelabelled))
	for _, id := range d.DocumentsAdded {
		fmt.Fprintf(e.stdout, "+ document %s\n", id)
	}
	for _, id := range d.DocumentsRemoved {
		fmt.Fprintf(e.stdout, "- document %s\n", id)
	}
	for _, id := range d.DocumentsChanged {
		fmt.Fprintf(e.stdout, "~ document %s (text changed)\n", id)
	}
	for _, s := range d.SpansAdded {
		fmt.Fprintf(e.stdout, "+ %s %s [%d:%d] %s %q\n", s.Set, s.Document, s.Start, s.End, s.Type, s.Text)
	}
	for _, s := range d.SpansRemoved {
		fmt.Fprintf(e.stdout, "- %s %s [%d:%d] %s %q\n", s.Set, s.Document, s.Start, s.End, s.Type, s.Text)
	}
	for _, s := range d.SpansRelabelled {
		fmt.Fprintf(e.stdout, "~ %s %s [%d:%d] %s -> %s %q\n", s.Set, s.Document, s.Start, s.End, s.WasType, s.Type, s.Text)
	}
}

// verifyArchive checks release archives without a database.
func verifyArchive(e *env, paths []string) error {
	if len(paths) == 0 {
		return usageErr("release verify takes one or more archives")
	}
	if len(paths) == 1 {
		return verifyOne(e, paths[0])
	}
	// Every archive is checked and reported in turn; the exit status is the
	// first failure's.
	var first error
	failed := 0
	for _, p := range paths {
		if err := verifyOne(e, p); err != nil {
			fmt.Fprintln(e.stdout, err)
			if failed++; first == nil {
				first = err
			}
		}
	}
	if first != nil {
		return apperr.New(apperr.CodeOf(first), "%d of %d archives failed (see above)", failed, len(paths))
	}
	return nil
}

// verifyOne checks one archive, reading its index and its members from the
// disk one at a time.
func verifyOne(e *env, p string) error {
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return apperr.New(apperr.NotFound, "%s: no such file", p)
	}
	if err != nil {
		return apperr.New(apperr.Invalid, "%s: not a readable zip archive: %v", p, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return apperr.New(apperr.Invalid, "%s: not a readable zip archive: %v", p, err)
	}
	var v *release.Verification
	if st.IsDir() { // the archive unzipped
		v, err = release.VerifyFS(os.DirFS(p))
	} else {
		zr, zerr := zipindex.NewReader(f, st.Size())
		if zerr != nil {
			return apperr.New(apperr.Invalid, "%s: not a readable zip archive: %v", p, zerr)
		}
		v, err = release.VerifyZip(zr)
	}
	if err != nil { // one finding a line, indented under the archive's
		return apperr.New(apperr.Invalid, "%s: FAILED: %s", p, strings.ReplaceAll(err.Error(), "\n", "\n  "))
	}
	fmt.Fprintf(e.stdout, "%s: OK, %s, %s, %s, root %s\n", p, release.Ref(v.Name, v.Version), counted(v.Files, "file"), counted(v.Documents, "document"), v.Root)
	return nil
}

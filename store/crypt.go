package store

import (
	"context"
	"crypto/hmac"
	"errors"
	"fmt"
	"strconv"

	"entgo.io/ent/dialect"

	"deidcorpus/apperr"
	"deidcorpus/ent"
	"deidcorpus/ent/artifact"
	"deidcorpus/ent/corpus"
	"deidcorpus/ent/surrogatemapping"
	"deidcorpus/internal/keys"
)

// The original values of surrogate mappings are PHI. They are stored
// encrypted under the store's key ring (original_enc, key_id), bound to their
// keyed hash (original_hash), which is how they are looked up. Nothing here
// puts an original value into an error or a log.

// KeyRing returns the ring that encrypts the mappings, loading it (or, for
// a SQLite database without a configured key, creating its key file) on first
// use.
func (s *Store) KeyRing() (*keys.Ring, error) {
	s.ringMu.Lock()
	defer s.ringMu.Unlock()
	if s.ring != nil {
		return s.ring, nil
	}
	cfg := s.keyCfg
	if s.Dialect == dialect.SQLite && cfg.File == "" && cfg.Key == "" && cfg.DefaultFile == "" {
		// An in-memory database dies with the process, and so may its key.
		s.ring = keys.New()
		return s.ring, nil
	}
	if err := s.keyFileLost(cfg); err != nil {
		return nil, err
	}
	r, created, err := cfg.Open()
	if err != nil {
		if errors.Is(err, keys.ErrNoKey) {
			return nil, apperr.Wrap(apperr.Invalid, err)
		}
		return nil, err
	}
	if created {
		s.logger.Info("created the key file that encrypts the surrogate mappings; back it up, but never with the database's backups: whoever holds both reads the mappings",
			"keyFile", r.Path)
	}
	s.ring = r
	return r, nil
}

// sealOriginal encrypts an original value under the ring's current key and
// returns what a mapping row stores.
func sealOriginal(r *keys.Ring, original string) (enc []byte, hash, keyID string) {
	hash = r.Hash(original)
	keyID, enc = r.Encrypt([]byte(original), []byte(hash))
	return enc, hash, keyID
}

// openOriginal decrypts a mapping row's original value and checks it against
// the row's keyed hash.
func openOriginal(r *keys.Ring, id int, keyID string, enc []byte, hash string) (string, error) {
	pt, err := r.Decrypt(keyID, enc, []byte(hash))
	if err != nil {
		return "", fmt.Errorf("surrogate mapping %d: %w", id, err)
	}
	if !hmac.Equal([]byte(r.Hash(string(pt))), []byte(hash)) {
		return "", fmt.Errorf("surrogate mapping %d: the original value does not match its lookup hash (a different lookup key?)", id)
	}
	return string(pt), nil
}

// MappingOriginal decrypts a stored mapping's original value.
func (s *Store) MappingOriginal(_ context.Context, m *ent.SurrogateMapping) (string, error) {
	r, err := s.KeyRing()
	if err != nil {
		return "", err
	}
	return openOriginal(r, m.ID, m.KeyID, m.OriginalEnc, m.OriginalHash)
}

// MappingsOf finds a source corpus's mappings of one original value through
// its keyed hash, in the order they were made. It reads every mapping row of
// the corpus: no index leads by the hash (see the schema).
func (s *Store) MappingsOf(ctx context.Context, corpusID int, original string) ([]*ent.SurrogateMapping, error) {
	r, err := s.KeyRing()
	if err != nil {
		return nil, err
	}
	return s.Client.SurrogateMapping.Query().
		Where(surrogatemapping.CorpusID(corpusID), surrogatemapping.OriginalHash(r.Hash(original))).
		Order(ent.Asc(surrogatemapping.FieldID)).All(ctx)
}

// SecretSeed turns the seed of a resynthesis of a source corpus into the
// one its random choices are drawn from: keyed by the lookup key, so that the
// seed written in a corpus's provenance and datasheet does not let a reader
// redraw the patients' date shifts (and so recover real dates), and by the
// source corpus, so that a patient id in two corpora resynthesized with one
// seed does not get the same shift in both (one known original date would
// give away the other's). The same seed and source give the same output
// under the same key; the lookup key does not rotate.
func (s *Store) SecretSeed(seed uint64, sourceID int) (uint64, error) {
	r, err := s.KeyRing()
	if err != nil {
		return 0, err
	}
	h := r.Hash("resynthesis seed", strconv.FormatUint(seed, 10), strconv.Itoa(sourceID))
	return strconv.ParseUint(h[:16], 16, 64)
}

// KeyUse is how many mappings one key encrypts, and whether the ring opens
// them.
type KeyUse struct {
	KeyID    string `json:"key_id"`
	Mappings int    `json:"count"`
	// Problem says why the ring cannot open a mapping under the key: it
	// lacks the key id, or a key of that id is another key (every new key
	// file's first key is k1).
	Problem string `json:"-"`
}

// KeyUsage counts the mappings under each key id, and tries the ring on one
// mapping of each.
func (s *Store) KeyUsage(ctx context.Context) ([]KeyUse, error) {
	var out []KeyUse
	err := s.Client.SurrogateMapping.Query().GroupBy(surrogatemapping.FieldKeyID).
		Aggregate(ent.Count()).Scan(ctx, &out)
	if err != nil {
		return nil, err
	}
	r, err := s.KeyRing()
	if err != nil {
		return nil, err
	}
	for i := range out {
		u := &out[i]
		if !r.Has(u.KeyID) {
			u.Problem = "not in the key ring"
			continue
		}
		m, err := s.Client.SurrogateMapping.Query().Where(surrogatemapping.KeyID(u.KeyID)).First(ctx)
		if err != nil {
			return nil, err
		}
		if _, err := openOriginal(r, m.ID, m.KeyID, m.OriginalEnc, m.OriginalHash); err != nil {
			u.Problem = "the ring's " + u.KeyID + " is another key: " + err.Error()
		}
	}
	return out, nil
}

// Reencrypted counts what Reencrypt moved under the ring's current key.
type Reencrypted struct {
	Mappings, Artifacts int
	// Corpora whose data key was wrapped again: their notes and spans stay
	// sealed under the same data key (see rewrapDataKeys).
	Corpora int
}

// Reencrypt makes r the store's ring and re-encrypts, in one transaction,
// every mapping and sealed artifact not yet under r's current key, and
// wraps again every corpus's data key not yet under it. Every key they use
// must still be in r.
func (s *Store) Reencrypt(ctx context.Context, r *keys.Ring) (Reencrypted, error) {
	cur := r.Current()
	var out Reencrypted
	err := s.withTx(ctx, func(tx *ent.Tx) error {
		var err error
		if out.Corpora, err = rewrapDataKeys(ctx, tx, r); err != nil {
			return err
		}
		as, err := tx.Artifact.Query().Where(artifact.KeyIDNEQ(""), artifact.KeyIDNEQ(cur)).All(ctx)
		if err != nil {
			return err
		}
		for _, a := range as {
			pt, err := r.Decrypt(a.KeyID, a.Data, artifactAD(a.Sha256))
			if err != nil {
				return fmt.Errorf("artifact %d: %w", a.ID, err)
			}
			if err := sealArtifact(ctx, tx, r, a, pt); err != nil {
				return err
			}
			out.Artifacts++
		}
		ms, err := tx.SurrogateMapping.Query().Where(surrogatemapping.KeyIDNEQ(cur)).
			Order(ent.Asc(surrogatemapping.FieldID)).All(ctx)
		if err != nil {
			return err
		}
		for _, m := range ms {
			original, err := openOriginal(r, m.ID, m.KeyID, m.OriginalEnc, m.OriginalHash)
			if err != nil {
				return err
			}
			enc, hash, keyID := sealOriginal(r, original)
			if err := tx.SurrogateMapping.UpdateOneID(m.ID).SetOriginalEnc(enc).SetOriginalHash(hash).
				SetKeyID(keyID).Exec(ctx); err != nil {
				return err
			}
			out.Mappings++
		}
		return nil
	})
	if err != nil {
		return Reencrypted{}, err
	}
	s.ringMu.Lock()
	s.ring = r
	s.ringMu.Unlock()
	return out, nil
}

// rewrapDataKeys wraps every corpus data key not under r's current key
// under it. The notes and spans are not sealed again: a data key is random,
// its corpus's own, and never stored unwrapped, so wrapping it anew retires
// the old ring key for the corpus at the cost of one row, where sealing the
// rows again would rewrite every note and span (most of the database). What
// it does not do: whoever kept both the old key file and a copy of the
// database from before keeps the data key, and so reads notes added later;
// against that, export and re-import the corpus (a new corpus, a new data key).
func rewrapDataKeys(ctx context.Context, tx *ent.Tx, r *keys.Ring) (int, error) {
	cs, err := tx.Corpus.Query().Where(corpus.DataKeyIDNEQ(""), corpus.DataKeyIDNEQ(r.Current())).
		Select(corpus.FieldID, corpus.FieldDataKey, corpus.FieldDataKeyID).All(ctx)
	if err != nil {
		return 0, err
	}
	for _, c := range cs {
		key, err := r.Decrypt(c.DataKeyID, c.DataKey, dataKeyAD)
		if err != nil {
			return 0, fmt.Errorf("corpus %d's data key: %w", c.ID, err)
		}
		keyID, wrapped := r.Encrypt(key, dataKeyAD)
		if err := tx.Corpus.UpdateOneID(c.ID).SetDataKey(wrapped).SetDataKeyID(keyID).Exec(ctx); err != nil {
			return 0, err
		}
	}
	return len(cs), nil
}

// sealArtifact stores plaintext as a stored artifact's data, encrypted under
// the ring's current key.
func sealArtifact(ctx context.Context, tx *ent.Tx, r *keys.Ring, a *ent.Artifact, plaintext []byte) error {
	keyID, enc := r.Encrypt(plaintext, artifactAD(a.Sha256))
	return tx.Artifact.UpdateOneID(a.ID).SetData(enc).SetKeyID(keyID).Exec(ctx)
}
